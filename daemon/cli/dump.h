/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Text form of a trace or layout, for people and scripts ('prefetchd dump'). */
#ifndef PREFETCH_DUMP_H
#define PREFETCH_DUMP_H

#include "format.h"

#include <stdint.h>
#include <stdio.h>

/* One extent a line, tab-separated: path, offset, length, order (index in the extent array = access
 * order), physical block ("-" when unknown).  Paths escape \, control characters and tabs as \ooo. */
void pf_dump_extents(FILE *out, const struct pf_image *img);
/* One file a line, tab-separated: order (first_order), flags (d = directory, x = exec, m = metadata only),
 * size, inode, first touch (ms), boots, fs index, path. */
void pf_dump_files(FILE *out, const struct pf_image *img);
/* Summary lines, each starting with "# ". */
void pf_dump_summary(FILE *out, const struct pf_image *img);

/* Estimated seeks: discontinuities in physical position (fs, block) between consecutive extents with a
 * known position, walking them in access order, and after sorting them by position (overlaps and adjacent
 * extents are no seek). */
void pf_dump_seeks(const struct pf_image *img, uint64_t *in_order, uint64_t *sorted);

#endif
