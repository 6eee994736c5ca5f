/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 'prefetchd report': statistics of the boot-time log per setup (the chart's and --json's; the table is
 * report_groups.h's).
 * Pure functions (no I/O but the FILE given), so that the figures can be unit-tested. */
#ifndef PREFETCH_REPORT_STATS_H
#define PREFETCH_REPORT_STATS_H

#include "boot_log.h"

#include <stddef.h>
#include <stdio.h>

struct pf_stat {
	size_t n;
	double mean, stddev, min, max; /* stddev: sample standard deviation (n-1); 0 for n < 2 */
};

struct pf_report_row {
	enum pf_setup setup;
	struct pf_stat boot_s;         /* uptime at boot end, s */
	struct pf_stat io_s;           /* disk busy time, s (boots with an unknown value are left out) */
	struct pf_stat read_mb;        /* MiB read from the disk */
};

/* Statistics of n values (n may be 0: all zero). */
void pf_stat_compute(const double *v, size_t n, struct pf_stat *out);

/* One row per setup (rows[setup]), from n records.  Returns 0 or -ENOMEM. */
int pf_report_rows(const struct pf_boot_record *recs, size_t n, struct pf_report_row rows[PF_SETUP_COUNT]);

#endif
