/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reorder's two kinds of block runs, in a header of their own: the planner (plan.h), the arithmetic of
 * runs (runs.h) and the figures (check.h) all speak of them. */
#ifndef PREFETCH_REORDER_RUN_H
#define PREFETCH_REORDER_RUN_H

#include <stdint.h>

struct pf_run {                /* a physical extent */
	uint64_t start, len;
};

struct pf_seg {                /* part of one file: logical blocks [lblk, lblk+len) now at [pblk, pblk+len) */
	uint32_t owner;            /* the caller's file index (opaque here) */
	uint64_t lblk, pblk, len;
};

#endif
