/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Why the configured chunk size has no boots (see report_chunk_note.h). */
#include "report_chunk_note.h"

#include <inttypes.h>
#include <stdio.h>

int pf_report_chunk_note(const struct pf_boot_record *recs, size_t n, long configured, int reordering,
			 struct pf_note *note)
{
	const struct pf_boot_record *last = NULL; /* the latest record that knows its placement */
	for (size_t i = 0; i < n; i++) {
		if (recs[i].generation != 0 && recs[i].chunk == configured)
			return 0; /* the size has boots (a row of --by chunk-size, report_groups.c): it says the rest */
		if (recs[i].generation >= 0)
			last = &recs[i];
	}
	if (!n)
		return 0;
	char why[PF_NOTE_LINE_MAX - 64];
	if (last && last->generation > 0 && last->chunk >= 0)
		snprintf(why, sizeof(why),
			 "the files still lie where chunk size %" PRId64 " placed them (generation %" PRId64
			 "); prefetch-reorder --check compares sizes on this disk",
			 last->chunk, last->generation);
	else if (last && last->generation > 0)
		snprintf(why, sizeof(why),
			 "the files still lie where reorder generation %" PRId64
			 " placed them (its chunk size unknown); prefetch-reorder --check compares sizes on this disk",
			 last->generation);
	else if (!reordering)
		snprintf(why, sizeof(why),
			 "reordering is off (ENABLE_FILE_REORDERING=0), and the chunk size acts only through it");
	else
		snprintf(why, sizeof(why), "no reorder has placed the layout's files yet");
	pf_note(note, "CHUNK_SIZE_BLOCKS=%ld has no boots: %s", configured, why);
	return 1;
}
