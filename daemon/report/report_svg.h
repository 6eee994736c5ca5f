/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 'prefetchd report --svg' (and the boot lab's chart, which renders through it): every boot as a point over
 * time coloured by its setup (control boots hollow), so that learning and drift show; beside it per setup the
 * min-max whisker, the mean +- one standard deviation and the change against none; a line saying how many
 * boots and control boots back it.  Pure: returns the document as a string. */
#ifndef PREFETCH_REPORT_SVG_H
#define PREFETCH_REPORT_SVG_H

#include "report_stats.h"

/* Returns a malloc'd, NUL-terminated SVG document, or NULL when out of memory. */
char *pf_report_svg(const struct pf_report_row rows[PF_SETUP_COUNT], const struct pf_boot_record *recs, size_t n,
		    const char *title);

#endif
