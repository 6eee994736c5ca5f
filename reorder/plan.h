/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Planning a reorder: pure functions, no I/O (unit-tested in tests/unit/reorder/test_plan.c).
 *
 * Input: the layout's blocks as segments in layout order (each a logical run of one file that is physically
 * contiguous now), and the free extents of the filesystem.  The block sequence is cut into chunks of
 * chunk_blocks; a chunk whose current placement is already sequential enough (every physical run at least
 * min_piece blocks) stays where it is.  When one free area holds all the chunks to move, they all go into the
 * lowest such area, one after the other in layout order (next to the inode tables at the start of the disk:
 * the boot's metadata reads and its data reads become one forward sweep; after a chunk in place the next one
 * goes back to that run).  Otherwise every chunk to move gets destinations: first the free space right after
 * the previous chunk's end (no seek between them), otherwise the smallest free area that holds the whole rest
 * (best fit; among areas at most rest/8 larger than that one, the lowest address: earlier layout parts nearer
 * the start of the disk and its metadata), otherwise the largest area and the rest elsewhere (split, pieces of at
 * least min_piece while that is possible, any size when not).  A chunk fails only when the free space minus
 * the reserve, less what earlier chunks took, cannot hold it (a chunk is moved whole or not at all: a later
 * run must not move a half-moved chunk again).  Chunk boundaries depend on the block sequence only, not on
 * where blocks lie, so a second run over an unchanged layout finds every chunk in place and moves nothing.
 * With pf_plan_params.block_size set, a nearly unchanged layout (swaps, a file added or removed) also moves
 * nothing or only what a seek model says is worth it (see there); a chunk kept in place but holding a file
 * to move alone is cut into several chunks (in place | moved | in place).  The model judges the set as
 * prefetchd's rotational replay reads it, sorted by block in one sweep, so a new order alone moves nothing;
 * and when the incremental plan leaves the set spread (holes, pieces apart) so that one run for all of it
 * would read faster by more than a move must save, the whole set goes into one run (compacted).
 */
#ifndef PREFETCH_REORDER_PLAN_H
#define PREFETCH_REORDER_PLAN_H

#include "run.h"

#include <stddef.h>
#include <stdint.h>

struct pf_move {               /* blocks to copy: owner's [lblk, lblk+len) from src to dst */
	uint32_t owner;
	uint64_t lblk, src, dst, len;
};

struct pf_unit {               /* one unit of work: moves[first..first+count) fill [dst, dst+len) in order */
	size_t first, count;
	uint64_t dst, len;
	size_t chunk;
};

enum pf_chunk_state { PF_CHUNK_IN_PLACE = 0, PF_CHUNK_PLACED, PF_CHUNK_SPLIT, PF_CHUNK_FAILED };

struct pf_chunk {
	uint64_t blocks;
	int state;                 /* enum pf_chunk_state */
	size_t first_unit, nunits; /* its units (none when in place or failed) */
	size_t first_seg, nsegs;   /* its segments in pf_plan.segs (the input cut at chunk boundaries) */
};

struct pf_plan_params {
	uint64_t chunk_blocks;     /* CHUNK_SIZE_BLOCKS (> 0) */
	uint64_t reserve_blocks;   /* free blocks never used */
	uint64_t min_piece;        /* 0 = chunk_blocks / 4 (at least 1) */
	uint64_t start;            /* where the first chunk prefers to go (e.g. the first data block) */
	/* added later (0 = off, the rule above only): with block_size set, a chunk also stays when its current
	 * placement reads about as fast as the planned one (--check's seek model, check.h): its extra read time
	 * (seeks, gaps read through) is below max(1 short seek, a third of its transfer time) — so a
	 * re-aggregated layout with a few swapped files does not move the whole set again.  "Reads" means in
	 * the sorted sweep of the whole set (seek or gap read through from the previous segment in block
	 * order), as prefetchd's rotational replay reads it.  Groups smaller than a chunk reached and left by a
	 * seek in that sweep (islands: a file new in the layout, still where it was written) are moved alone,
	 * into the free space where visiting them costs the sweep least, only when that saves at least one
	 * short seek; otherwise they too are near enough.  When more stays than moves (an incremental run), a
	 * chunk that moves goes to the free space after the previous chunk or else the area nearest it, not
	 * with the rest to a new area. */
	uint32_t block_size;
	uint64_t span;             /* blocks of the filesystem (the seek model's full stroke; 0 = guessed) */
	/* slow flash (0 or 1 = off): destinations only in whole erase blocks of erase_blocks blocks (block b
	 * starts one when (b + erase_phase) % erase_blocks == 0): every free area is cut to the erase blocks it
	 * holds whole and skipped when it holds none, so a unit starts on an erase-block boundary and, when
	 * chunk_blocks and min_piece are multiples of erase_blocks (the caller's part), ends on one too (all but
	 * the layout's last, shorter chunk).  usable_blocks counts only that aligned space. */
	uint64_t erase_blocks;
	uint64_t erase_phase;
	/* making room (evacuate.h): every chunk moves, none counts as in place (the segments are other files'
	 * blocks inside the window, which must be emptied whatever their shape) */
	int move_all;
};

struct pf_plan {
	struct pf_seg *segs;       /* input segments cut at chunk boundaries */
	size_t nsegs;
	struct pf_chunk *chunks;
	size_t nchunks;
	struct pf_move *moves;
	size_t nmoves;
	struct pf_unit *units;
	size_t nunits;
	uint64_t blocks_total, blocks_in_place, blocks_to_move, blocks_failed;
	uint64_t chunks_in_place, chunks_split, chunks_failed;
	uint64_t free_blocks, usable_blocks;
	uint64_t blocks_near;      /* of blocks_in_place: not contiguous but near enough (block_size rule) */
	int compacted;             /* the whole set moved into one run (block_size rule: it had spread) */
};

/* free must be sorted by start and not overlap.  Returns 0, -EINVAL or -ENOMEM. */
int pf_plan_make(const struct pf_seg *segs, size_t nsegs, const struct pf_brange *free_runs, size_t nfree,
		 const struct pf_plan_params *p, struct pf_plan *out);
void pf_plan_free(struct pf_plan *p);

/* The segments as they would lie after the plan: moved chunks at their destinations.  *out is malloc'd. */
int pf_plan_result(const struct pf_plan *p, struct pf_seg **out, size_t *n);

#endif
