/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON pieces the report's writers share (report_boots.c, report_groups.c).  Pure writers (no I/O but the FILE
 * given). */
#ifndef PREFETCH_REPORT_JSON_H
#define PREFETCH_REPORT_JSON_H

#include "report_stats.h"

#include <stdio.h>

/* s as a JSON string, quoted and escaped. */
void pf_report_json_string(FILE *out, const char *s);

/* A statistic as a JSON object {n, mean, stddev, min, max}, or null without samples. */
void pf_report_json_stat(FILE *out, const struct pf_stat *st);

#endif
