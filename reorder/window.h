/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where to make room for the layout (evacuate.h): the stretch of the disk, as long as the set needs, that
 * holds the fewest blocks that are neither free nor the layout's own; and the run arithmetic that goes with
 * it.  Pure functions, no I/O (unit-tested in tests/unit/reorder/test_window.c). */
#ifndef PREFETCH_REORDER_WINDOW_H
#define PREFETCH_REORDER_WINDOW_H

#include "plan.h"

#include <stddef.h>
#include <stdint.h>

struct pf_window {
	uint64_t start, len;
	uint64_t good;             /* blocks in it that are free or the layout's */
};

/* The window of len blocks inside [lo, hi) with the most blocks free (free_runs) or holding the layout (segs'
 * pblk runs); among equals the lowest (nearest the inode tables with flex_bg).  free_runs sorted, disjoint.
 * Returns 0, -ENOMEM, or -ERANGE when [lo, hi) is shorter than len. */
int pf_window_pick(const struct pf_run *free_runs, size_t nfree, const struct pf_seg *segs, size_t nsegs,
		   uint64_t len, uint64_t lo, uint64_t hi, struct pf_window *out);

/* Sort runs by start and merge those that overlap or touch; empty ones dropped.  Returns the new count. */
size_t pf_runs_normalize(struct pf_run *r, size_t n);

/* The parts of normalized runs inside [start, start+len) (inside = 1) or outside it (inside = 0), as a new
 * malloc'd list.  Returns 0 or -ENOMEM. */
int pf_runs_clip(const struct pf_run *r, size_t n, uint64_t start, uint64_t len, int inside, struct pf_run **out,
		 size_t *nout);

/* [start, start+len) less the normalized runs taken, as a new malloc'd list.  Returns 0 or -ENOMEM. */
int pf_runs_complement(const struct pf_run *taken, size_t n, uint64_t start, uint64_t len, struct pf_run **out,
		       size_t *nout);

/* Blocks covered by normalized runs within [start, start+len). */
uint64_t pf_runs_count_in(const struct pf_run *r, size_t n, uint64_t start, uint64_t len);

#endif
