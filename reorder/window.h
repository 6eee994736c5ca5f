/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where to make room for the layout (evacuate.h): the stretch of the disk, as long as the set needs, where the
 * most blocks are free.  A pure function (unit-tested in tests/unit/reorder/test_window.c). */
#ifndef PREFETCH_REORDER_WINDOW_H
#define PREFETCH_REORDER_WINDOW_H

#include "plan.h"

#include <stddef.h>
#include <stdint.h>

struct pf_window {
	uint64_t start, len;
	uint64_t good;             /* blocks in it that are free (or the layout's: segs) */
};

/* The window of len blocks inside [lo, hi) with the most blocks free (free_runs) or holding the layout (segs'
 * pblk runs); among equals the lowest (nearest the inode tables with flex_bg).  free_runs sorted, disjoint.
 * Returns 0, -ENOMEM, or -ERANGE when [lo, hi) is shorter than len. */
int pf_window_pick(const struct pf_brange *free_runs, size_t nfree, const struct pf_seg *segs, size_t nsegs,
		   uint64_t len, uint64_t lo, uint64_t hi, struct pf_window *out);

#endif
