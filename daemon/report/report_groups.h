/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 'prefetchd report --by KEY': the recorded boots grouped by one of the settings that can change a boot's time,
 * each group's boot times, and each group compared with a baseline group by lib/compare.h (the comparison the
 * self-check decides by): the difference of the medians with its 95 % interval and a verdict in words.  Pure
 * (no I/O but the FILE given).
 *
 * Groups, and what each is compared with:
 *   setup       off, trace, replay, narrow, replay+reorder (boot_log.h); the baseline is off, or trace when there
 *               are no off boots; replay+reorder is compared with replay (the reorder's own effect) when there
 *               are replay boots
 *   chunk-size  CHUNK_SIZE_BLOCKS of the reorder that placed the layout's files ("none": never reordered,
 *               "-": unknown); the first group is the baseline
 *   generation  the reorder generation (0: never reordered); the first group is the baseline
 *   kernel      the kernel release; medium the disk's class; the first group (by name) is the baseline */
#ifndef PREFETCH_REPORT_GROUPS_H
#define PREFETCH_REPORT_GROUPS_H

#include "boot_log.h"
#include "compare.h"
#include "report_stats.h"

#include <stddef.h>
#include <stdio.h>

enum pf_report_key { PF_BY_SETUP = 0, PF_BY_CHUNK, PF_BY_GENERATION, PF_BY_KERNEL, PF_BY_MEDIUM };

/* "setup", "chunk-size", "generation", "kernel", "medium" -> 0 and *k; else -EINVAL. */
int pf_report_key_parse(const char *name, enum pf_report_key *k);
const char *pf_report_key_name(enum pf_report_key k);
/* The group of a record under key k. */
void pf_report_key_of(const struct pf_boot_record *r, enum pf_report_key k, char *buf, size_t len);

struct pf_group {
	char key[72];
	struct pf_stat boot_s, io_s, stall_s; /* stall: PSI "some" where it can be the boot's own */
	double median_s;                      /* of the boot time (-1 without boots) */
	int against;                          /* the group compared with, -1 for none (the baseline) */
	struct pf_comparison cmp;             /* boot time: this group's less the other's */
};

struct pf_grouping {
	enum pf_report_key key;
	struct pf_group *g;
	size_t n;
	char note[256]; /* one line printed after the comparisons ("": none); the caller's (report_chunk_note.h) */
};

/* Group n records by key and compare.  Returns 0 or -ENOMEM; free with pf_grouping_free. */
int pf_report_group(const struct pf_boot_record *recs, size_t n, enum pf_report_key key, struct pf_grouping *out);
void pf_grouping_free(struct pf_grouping *g);

/* The groups' table, then one line per comparison: "A against B: DIFF s (95 % interval LO .. HI s; NA and NB
 * boots): VERDICT IN WORDS", then the note if there is one. */
void pf_report_groups_table(FILE *out, const struct pf_grouping *g);
/* The same fields as CSV with a header row, one row per group. */
void pf_report_groups_csv(FILE *out, const struct pf_grouping *g);
/* The same fields as one JSON object {"by": KEY, "groups": [...], "note": TEXT or null}, without a trailing
 * newline. */
void pf_report_groups_json(FILE *out, const struct pf_grouping *g);

#endif
