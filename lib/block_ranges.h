/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runs of device blocks: sorting and merging them as the replay's metadata pass reads them (one readahead per
 * merged run), and counting them.  Both programs use it: the replay to read, prefetch-reorder to predict what
 * that reading costs (replay_cost.h).  Pure functions. */
#ifndef PREFETCH_BLOCK_RANGES_H
#define PREFETCH_BLOCK_RANGES_H

#include <stddef.h>
#include <stdint.h>

/* The replay's metadata pass reads runs this close (in blocks) as one: reading through 128 KiB of 4 KiB
 * blocks costs less than a seek. */
#define PF_META_GAP_BLOCKS 32

/* A run of blocks: device blocks (the replay's, the reorder's physical extents), or a file's logical blocks
 * where its user says so. */
struct pf_brange {
	uint64_t start, count;
};

/* A growable list of runs (zero-initialised empty; free r when done). */
struct pf_bvec {
	struct pf_brange *r;
	size_t n, cap;
};

/* Append a run (an empty one is dropped).  Returns 0 or -ENOMEM. */
int pf_bvec_push(struct pf_bvec *v, uint64_t start, uint64_t count);

/* Sort and merge overlapping runs and those separated by at most max_gap blocks (reading through a short
 * gap costs less than a seek).  Empty runs are dropped.  Returns the new count. */
size_t pf_branges_normalize(struct pf_brange *r, size_t n, uint64_t max_gap);

/* Distinct blocks covered by a list of runs (sorts the list in place). */
uint64_t pf_branges_count(struct pf_brange *r, size_t n);

#endif
