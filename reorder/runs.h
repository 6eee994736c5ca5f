/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sets of physical runs (lib's struct pf_brange, normalized by pf_branges_normalize): the arithmetic the
 * planner, making room and the discard share.  Pure functions (unit-tested in tests/unit/reorder/test_window.c). */
#ifndef PREFETCH_REORDER_RUNS_H
#define PREFETCH_REORDER_RUNS_H

#include "run.h"

#include <stddef.h>
#include <stdint.h>

/* The parts of normalized runs inside [start, start+len) (inside = 1) or outside it (inside = 0), as a new
 * malloc'd list.  Returns 0 or -ENOMEM. */
int pf_runs_clip(const struct pf_brange *r, size_t n, uint64_t start, uint64_t len, int inside, struct pf_brange **out,
		 size_t *nout);

/* [start, start+len) less the normalized runs taken, as a new malloc'd list.  Returns 0 or -ENOMEM. */
int pf_runs_complement(const struct pf_brange *taken, size_t n, uint64_t start, uint64_t len, struct pf_brange **out,
		       size_t *nout);

/* free_runs ∪ the segments' physical runs, normalized, as a new malloc'd list (free_runs may be NULL when
 * nfree is 0, segs when nsegs is 0).  Returns 0 or -ENOMEM. */
int pf_runs_with_segs(const struct pf_brange *free_runs, size_t nfree, const struct pf_seg *segs, size_t nsegs,
		      struct pf_brange **out, size_t *nout);

/* Blocks in all the runs. */
uint64_t pf_runs_total(const struct pf_brange *r, size_t n);

/* Blocks covered by normalized runs within [start, start+len). */
uint64_t pf_runs_count_in(const struct pf_brange *r, size_t n, uint64_t start, uint64_t len);

#endif
