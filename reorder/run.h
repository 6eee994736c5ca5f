/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reorder's block runs, in a header of their own: the planner (plan.h), the arithmetic of runs (runs.h) and
 * the figures (check.h) all speak of them.  A physical extent is lib's run of blocks (block_ranges.h:
 * struct pf_brange, normalized by pf_branges_normalize); a segment is a piece of one file. */
#ifndef PREFETCH_REORDER_RUN_H
#define PREFETCH_REORDER_RUN_H

#include "block_ranges.h"

#include <stdint.h>

struct pf_seg {                /* part of one file: logical blocks [lblk, lblk+len) now at [pblk, pblk+len) */
	uint32_t owner;            /* the caller's file index (opaque here) */
	uint64_t lblk, pblk, len;
};

#endif
