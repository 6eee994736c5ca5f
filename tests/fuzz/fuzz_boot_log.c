/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the boot log's readers — pf_boottime_parse (and through it pf_boot_record_parse),
 * pf_diskstats_parse over /proc/diskstats text, and pf_boot_end_parse over a boot-end file.
 *
 * The input is the text of each.  A record that parses must hold values in the ranges boot_log.h documents,
 * and what pf_boot_record_format writes of it must read back to the same line: 'prefetchd report' reads
 * the log that 'prefetchd boot' appends to. */
#include "fuzz.h"

#include "boot_end.h"
#include "boot_log.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static void check_record(const struct pf_boot_record *r)
{
	FUZZ_CHECK(memchr(r->boot_id, '\0', sizeof(r->boot_id)) && memchr(r->end_source, '\0', sizeof(r->end_source)) &&
		   memchr(r->disk, '\0', sizeof(r->disk)));
	FUZZ_CHECK(r->boot_s >= 0 && r->boot_s <= 1e7);
	FUZZ_CHECK((r->prefetch == 0 || r->prefetch == 1) && (r->reorder == 0 || r->reorder == 1));
	FUZZ_CHECK(r->io_ms >= -1 && r->reads >= -1 && r->sectors >= -1);
	FUZZ_CHECK(pf_boot_record_setup(r) < PF_SETUP_COUNT);

	/* written, read back, written again: the same line */
	char line[PF_BOOTTIME_LINE_MAX], again[PF_BOOTTIME_LINE_MAX];
	int len = pf_boot_record_format(r, line, sizeof(line));
	FUZZ_CHECK(len > 0);
	struct pf_boot_record back;
	FUZZ_CHECK(pf_boot_record_parse(line, &back) == 0);
	FUZZ_CHECK(pf_boot_record_format(&back, again, sizeof(again)) == len && !strcmp(line, again));
}

static void boottime(const char *text)
{
	struct pf_boot_record *recs = (struct pf_boot_record *)text; /* must be overwritten */
	size_t n = 1, bad = 1;
	int rc = pf_boottime_parse(text, &recs, &n, &bad);
	if (rc) {
		FUZZ_CHECK((rc == -EPROTO || rc == -ENOMEM) && recs == NULL && n == 0);
		return;
	}
	FUZZ_CHECK(n == 0 || recs != NULL);
	for (size_t i = 0; i < n; i++)
		check_record(&recs[i]);
	free(recs);
}

static void diskstats(const char *text, unsigned maj, unsigned min)
{
	char name[8]; /* shorter than a device name may be: the copy must be cut, not overflow */
	int64_t reads = -2, sectors = -2, io_ms = -2;
	int rc = pf_diskstats_parse(text, maj, min, name, sizeof(name), &reads, &sectors, &io_ms);
	FUZZ_CHECK(rc == 0 || rc == -ENOENT);
	if (rc == 0)
		FUZZ_CHECK(memchr(name, '\0', sizeof(name)) != NULL);
	else
		FUZZ_CHECK(reads == -2 && sectors == -2 && io_ms == -2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	boottime(text);

	/* the device of the first line, so that a matching line is found as often as not */
	unsigned maj = 8, min = 0;
	if (sscanf(text, "%u %u", &maj, &min) != 2)
		maj = 8, min = 0;
	diskstats(text, maj, min);
	diskstats(text, 8, 0);

	double up = -1;
	if (pf_boot_end_parse(text, &up) == 0)
		FUZZ_CHECK(isfinite(up) && up >= 0 && up <= 1e7);
	free(text);
	return 0;
}
