/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 'prefetchd report --boots / --csv / --json': the boot log boot by boot, for people and for scripts.  Pure
 * writers (no I/O but the FILE given). */
#ifndef PREFETCH_REPORT_BOOTS_H
#define PREFETCH_REPORT_BOOTS_H

#include "boot_log.h"
#include "compare.h"
#include "report_groups.h"
#include "report_stats.h"

#include <stddef.h>
#include <stdio.h>

/* How the replay boots compare with the control boots (the self-check's figures): n = 0 when unknown. */
struct pf_control_change {
	size_t n_control, n_replay;
	double control_s, replay_s; /* medians */
	double change;              /* replay / control - 1 */
	double allowance_s;         /* the larger of the margin and the interval's half-width */
	struct pf_comparison cmp;   /* the self-check's comparison (lib/compare.h), replays less controls */
};

/* One line per boot: number, date (UTC), setup, control, policy, boot time, MiB replayed / used / read by the
 * boot itself, I/O stall, disk busy time. */
void pf_report_boots_table(FILE *out, const struct pf_boot_record *recs, size_t n);

/* The same as CSV, with a header row. */
void pf_report_boots_csv(FILE *out, const struct pf_boot_record *recs, size_t n);

/* One JSON object: the log's path, every boot, the per-setup statistics, the groups of --by with their
 * comparisons, and the comparison with control boots (null when there is none). */
void pf_report_json(FILE *out, const char *log, const struct pf_boot_record *recs, size_t n,
		    const struct pf_report_row rows[PF_SETUP_COUNT], const struct pf_grouping *groups,
		    const struct pf_control_change *cc);


#endif
