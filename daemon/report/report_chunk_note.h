/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 'prefetchd report --by chunk-size': one line saying why the configured CHUNK_SIZE_BLOCKS has no boots, so that
 * an integrator who changed the size and rebooted is not left with a table that silently lacks it.  Pure. */
#ifndef PREFETCH_REPORT_CHUNK_NOTE_H
#define PREFETCH_REPORT_CHUNK_NOTE_H

#include "boot_log.h"
#include "note.h"

#include <stddef.h>

/* When no boot of recs (in log order) counts under chunk size `configured`: the reason in one line noted to note
 * (lib/note.h; the files still lie where an earlier size placed them, no reorder has placed them yet, or
 * reordering is off: `reordering` is ENABLE_FILE_REORDERING), and 1.  Otherwise (or with no records) nothing
 * noted and 0. */
int pf_report_chunk_note(const struct pf_boot_record *recs, size_t n, long configured, int reordering,
			 struct pf_note *note);

#endif
