/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 'prefetchd report --svg': a bar chart of the mean boot time and disk busy time per setup, with error bars of
 * one standard deviation.  Pure: returns the document as a string. */
#ifndef PREFETCH_REPORT_SVG_H
#define PREFETCH_REPORT_SVG_H

#include "report_stats.h"

/* Returns a malloc'd, NUL-terminated SVG document, or NULL when out of memory. */
char *pf_report_svg(const struct pf_report_row rows[PF_SETUP_COUNT], const char *title);

#endif
