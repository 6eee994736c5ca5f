/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reorder planning: chunking, best fit, neighbour preference, splitting, reserve, failure only when the free
 * space runs out, and the incremental skip of data that is already sequential. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "check.h"
#include "plan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* n single-block segments of file 1, scattered (every other block from base). */
static struct pf_seg *scattered(size_t n, uint64_t base)
{
	struct pf_seg *s = calloc(n, sizeof(*s));
	for (size_t i = 0; i < n; i++)
		s[i] = (struct pf_seg){ .owner = 1, .lblk = i, .pblk = base + 2 * i, .len = 1 };
	return s;
}

/* Every move copies the chunk's blocks in layout order into contiguous destinations of its unit. */
static void check_consistent(const struct pf_plan *p)
{
	uint64_t moved = 0;
	for (size_t u = 0; u < p->nunits; u++) {
		const struct pf_unit *un = &p->units[u];
		uint64_t d = un->dst;
		for (size_t m = un->first; m < un->first + un->count; m++) {
			assert_int_equal(p->moves[m].dst, d);
			d += p->moves[m].len;
		}
		assert_int_equal(d, un->dst + un->len);
		moved += un->len;
	}
	assert_int_equal(moved, p->blocks_to_move);
	assert_int_equal(p->blocks_total, p->blocks_to_move + p->blocks_in_place + p->blocks_failed);
	/* destinations never overlap */
	for (size_t a = 0; a < p->nunits; a++)
		for (size_t b = a + 1; b < p->nunits; b++) {
			const struct pf_unit *x = &p->units[a], *y = &p->units[b];
			assert_true(x->dst + x->len <= y->dst || y->dst + y->len <= x->dst);
		}
}

static void test_chunking(void **state)
{
	(void)state;
	struct pf_seg *s = scattered(5000, 100000);
	struct pf_brange fr[] = { { 1000, 20000 } };
	struct pf_plan_params prm = { .chunk_blocks = 2000 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 5000, fr, 1, &prm, &p), 0);
	assert_int_equal(p.nchunks, 3);
	assert_int_equal(p.chunks[0].blocks, 2000);
	assert_int_equal(p.chunks[2].blocks, 1000);
	assert_int_equal(p.nunits, 3);
	/* one after the other, from the start of the area */
	assert_int_equal(p.units[0].dst, 1000);
	assert_int_equal(p.units[1].dst, 3000);
	assert_int_equal(p.units[2].dst, 5000);
	assert_int_equal(p.chunks_split, 0);
	assert_int_equal(p.chunks_failed, 0);
	assert_int_equal(p.blocks_to_move, 5000);
	/* layout order kept: logical block i lands at 1000 + i */
	for (size_t m = 0; m < p.nmoves; m++)
		assert_int_equal(p.moves[m].dst, 1000 + p.moves[m].lblk);
	check_consistent(&p);
	pf_plan_free(&p);
	free(s);
}

static void test_segments_cut_at_chunk_boundary(void **state)
{
	(void)state;
	struct pf_seg s[] = { { .owner = 7, .lblk = 0, .pblk = 500, .len = 30 }, { .owner = 8, .lblk = 0, .pblk = 100, .len = 30 } };
	struct pf_brange fr[] = { { 1000, 100 } };
	struct pf_plan_params prm = { .chunk_blocks = 25, .min_piece = 25 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 2, fr, 1, &prm, &p), 0);
	assert_int_equal(p.nchunks, 3);
	assert_int_equal(p.nsegs, 4); /* 25 | 5+20 | 10 */
	assert_int_equal(p.segs[1].lblk, 25);
	assert_int_equal(p.segs[1].pblk, 525);
	assert_int_equal(p.segs[1].len, 5);
	assert_int_equal(p.segs[2].owner, 8);
	assert_int_equal(p.segs[2].len, 20);
	/* chunk 0 is one run of 25: in place; chunks 1 and 2 move */
	assert_int_equal(p.chunks[0].state, PF_CHUNK_IN_PLACE);
	assert_int_equal(p.chunks[1].state, PF_CHUNK_PLACED);
	check_consistent(&p);
	pf_plan_free(&p);
}

static void test_best_fit(void **state)
{
	(void)state;
	/* two chunks, no area holds both: each chunk its best fit */
	struct pf_seg *s = scattered(4000, 100000);
	struct pf_brange fr[] = { { 100, 3000 }, { 10000, 2100 }, { 20000, 2500 }, { 30000, 2100 } };
	struct pf_plan_params prm = { .chunk_blocks = 2000 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 4000, fr, 4, &prm, &p), 0);
	assert_int_equal(p.nunits, 2);
	assert_int_equal(p.units[0].dst, 10000); /* smallest that fits, lowest address on a tie */
	assert_int_equal(p.units[1].dst, 30000);
	check_consistent(&p);
	pf_plan_free(&p);
	/* nearly as good (within need/8) and nearer the start of the disk wins */
	struct pf_brange fr2[] = { { 100, 2200 }, { 10000, 2100 }, { 20000, 2100 } };
	assert_int_equal(pf_plan_make(s, 4000, fr2, 3, &prm, &p), 0);
	assert_int_equal(p.units[0].dst, 100);
	assert_int_equal(p.units[1].dst, 10000);
	pf_plan_free(&p);
	free(s);
}

/* One area holds every chunk to move: all of them go there in layout order, into the lowest such area (near
 * the inode tables), even when a smaller area would fit each chunk, and back there after a chunk in place. */
static void test_one_run(void **state)
{
	(void)state;
	struct pf_seg s[4001];
	for (int i = 0; i < 2000; i++)
		s[i] = (struct pf_seg){ .owner = 1, .lblk = (uint64_t)i, .pblk = 80000 + 2 * (uint64_t)i, .len = 1 };
	s[2000] = (struct pf_seg){ .owner = 2, .lblk = 0, .pblk = 50000, .len = 2000 }; /* chunk 1: in place */
	for (int i = 0; i < 2000; i++)
		s[2001 + i] = (struct pf_seg){ .owner = 3, .lblk = (uint64_t)i, .pblk = 90000 + 2 * (uint64_t)i, .len = 1 };
	struct pf_brange fr[] = { { 100, 1000 }, { 5000, 2000 }, { 10000, 9000 }, { 30000, 4000 }, { 60000, 2000 } };
	struct pf_plan_params prm = { .chunk_blocks = 2000 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 4001, fr, 5, &prm, &p), 0);
	assert_int_equal(p.chunks[1].state, PF_CHUNK_IN_PLACE);
	assert_int_equal(p.nunits, 2);
	assert_int_equal(p.units[0].dst, 10000); /* the first area holding all 4000, not the best fit at 5000 */
	assert_int_equal(p.units[1].dst, 12000); /* right after chunk 0 although chunk 1 lies elsewhere */
	check_consistent(&p);
	pf_plan_free(&p);
}

static void test_neighbour_preferred(void **state)
{
	(void)state;
	/* chunk 0 is already sequential at 50000..52000; chunk 1 goes right after it although a better fit exists */
	struct pf_seg s[2001];
	s[0] = (struct pf_seg){ .owner = 1, .lblk = 0, .pblk = 50000, .len = 2000 };
	for (int i = 0; i < 2000; i++)
		s[1 + i] = (struct pf_seg){ .owner = 2, .lblk = (uint64_t)i, .pblk = 80000 + 2 * (uint64_t)i, .len = 1 };
	struct pf_brange fr[] = { { 100, 2000 }, { 52000, 5000 } };
	struct pf_plan_params prm = { .chunk_blocks = 2000 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 2001, fr, 2, &prm, &p), 0);
	assert_int_equal(p.chunks[0].state, PF_CHUNK_IN_PLACE);
	assert_int_equal(p.nunits, 1);
	assert_int_equal(p.units[0].dst, 52000);
	/* and a neighbour with too little room is used for the first part, the rest split elsewhere */
	struct pf_brange fr2[] = { { 100, 2000 }, { 52000, 1200 } };
	struct pf_plan p2;
	assert_int_equal(pf_plan_make(s, 2001, fr2, 2, &prm, &p2), 0);
	assert_int_equal(p2.nunits, 2);
	assert_int_equal(p2.units[0].dst, 52000);
	assert_int_equal(p2.units[0].len, 1200);
	assert_int_equal(p2.units[1].dst, 100);
	assert_int_equal(p2.units[1].len, 800);
	assert_int_equal(p2.chunks_split, 1);
	check_consistent(&p);
	check_consistent(&p2);
	pf_plan_free(&p);
	pf_plan_free(&p2);
}

static void test_split_across_areas(void **state)
{
	(void)state;
	struct pf_seg *s = scattered(6000, 100000);
	/* no area holds a whole chunk of 2000 */
	struct pf_brange fr[] = { { 100, 1500 }, { 3000, 1500 }, { 6000, 1500 }, { 9000, 1500 }, { 12000, 1500 } };
	struct pf_plan_params prm = { .chunk_blocks = 2000 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 6000, fr, 5, &prm, &p), 0);
	assert_int_equal(p.chunks_failed, 0);
	assert_int_equal(p.blocks_to_move, 6000);
	assert_int_equal(p.chunks_split, 3);
	for (size_t u = 0; u < p.nunits; u++)
		assert_true(p.units[u].len >= 500); /* pieces of at least min_piece */
	check_consistent(&p);
	pf_plan_free(&p);
	free(s);
}

static void test_tiny_areas_no_failure(void **state)
{
	(void)state;
	struct pf_seg *s = scattered(2000, 100000);
	struct pf_brange fr[30];
	for (int i = 0; i < 30; i++)
		fr[i] = (struct pf_brange){ 1000 + 200 * (uint64_t)i, 100 };
	struct pf_plan_params prm = { .chunk_blocks = 2000 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 2000, fr, 30, &prm, &p), 0);
	assert_int_equal(p.chunks_failed, 0); /* 3000 free: it fits, in pieces */
	assert_int_equal(p.nunits, 20);
	check_consistent(&p);
	pf_plan_free(&p);
	free(s);
}

/* Slow flash: destinations in whole erase blocks only.  Erase blocks of 64 blocks, phase 16 (block b starts one
 * when (b + 16) % 64 == 0: 48, 112, ...); areas too small for one aligned erase block are skipped, the rest cut
 * to their aligned part; every unit starts on a boundary and every one but the layout's last (shorter) chunk's
 * ends on one; the usable space is what the aligned parts hold. */
static void test_erase_block_alignment(void **state)
{
	(void)state;
	struct pf_seg *s = scattered(1000, 100000);
	struct pf_brange fr[] = {
		{ 10, 100 },    /* [10, 110): holds no aligned [48, 112) */
		{ 200, 300 },   /* [200, 500): aligned [240, 496), 256 blocks */
		{ 1000, 60 },   /* too small */
		{ 2000, 1000 }, /* [2000, 3000): aligned [2032, 2992), 960 blocks */
	};
	struct pf_plan_params prm = { .chunk_blocks = 256, .min_piece = 64, .erase_blocks = 64, .erase_phase = 16 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 1000, fr, 4, &prm, &p), 0);
	assert_int_equal(p.free_blocks, 1460);
	assert_int_equal(p.usable_blocks, 256 + 960);
	assert_int_equal(p.chunks_failed, 0);
	assert_int_equal(p.blocks_to_move, 1000);
	int ends_off = 0;
	for (size_t u = 0; u < p.nunits; u++) {
		const struct pf_unit *un = &p.units[u];
		assert_int_equal((un->dst + 16) % 64, 0);
		ends_off += (un->dst + un->len + 16) % 64 != 0;
		assert_true((un->dst >= 240 && un->dst + un->len <= 496) || (un->dst >= 2032 && un->dst + un->len <= 2992));
	}
	assert_true(ends_off <= 1); /* 1000 = 3 * 256 + 232: the last chunk ends inside an erase block */
	check_consistent(&p);
	pf_plan_free(&p);
	/* no area holds a whole erase block: nothing usable, every chunk fails, nothing is placed */
	struct pf_brange small[] = { { 10, 100 }, { 1000, 60 } };
	assert_int_equal(pf_plan_make(s, 1000, small, 2, &prm, &p), 0);
	assert_int_equal(p.usable_blocks, 0);
	assert_int_equal(p.nunits, 0);
	assert_int_equal(p.blocks_failed, 1000);
	pf_plan_free(&p);
	free(s);
}

static void test_reserve(void **state)
{
	(void)state;
	struct pf_seg *s = scattered(2000, 100000);
	struct pf_brange fr[] = { { 100, 3000 } };
	struct pf_plan_params prm = { .chunk_blocks = 2000, .reserve_blocks = 1500 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 2000, fr, 1, &prm, &p), 0);
	assert_int_equal(p.usable_blocks, 1500);
	assert_int_equal(p.chunks_failed, 1);
	assert_int_equal(p.nmoves, 0);
	pf_plan_free(&p);
	prm.reserve_blocks = 1000;
	assert_int_equal(pf_plan_make(s, 2000, fr, 1, &prm, &p), 0);
	assert_int_equal(p.chunks_failed, 0);
	assert_int_equal(p.blocks_to_move, 2000);
	pf_plan_free(&p);
	free(s);
}

static void test_fails_only_when_space_runs_out(void **state)
{
	(void)state;
	struct pf_seg *s = scattered(5500, 100000);
	struct pf_brange fr[] = { { 100, 1000 }, { 2000, 1000 }, { 4000, 3000 } };
	struct pf_plan_params prm = { .chunk_blocks = 2000 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 5500, fr, 3, &prm, &p), 0);
	assert_int_equal(p.nchunks, 3);
	assert_int_equal(p.chunks[0].state != PF_CHUNK_FAILED, 1);
	assert_int_equal(p.chunks[1].state != PF_CHUNK_FAILED, 1);
	assert_int_equal(p.chunks[2].state, PF_CHUNK_FAILED); /* 1500 > 1000 left */
	assert_int_equal(p.blocks_to_move, 4000);
	assert_int_equal(p.blocks_failed, 1500);
	check_consistent(&p);
	pf_plan_free(&p);
	free(s);
}

static void test_incremental_skip(void **state)
{
	(void)state;
	/* already in layout order and contiguous: nothing to move */
	struct pf_seg seq[] = { { .owner = 1, .lblk = 0, .pblk = 5000, .len = 1500 },
				{ .owner = 2, .lblk = 0, .pblk = 6500, .len = 2500 } };
	struct pf_brange fr[] = { { 100, 3000 } };
	struct pf_plan_params prm = { .chunk_blocks = 2000 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(seq, 2, fr, 1, &prm, &p), 0);
	assert_int_equal(p.nmoves, 0);
	assert_int_equal(p.chunks_in_place, 2);
	pf_plan_free(&p);

	/* scattered data planned with splits; the result, planned again, moves nothing */
	struct pf_seg *s = scattered(6000, 100000);
	struct pf_brange fr2[] = { { 100, 1500 }, { 3000, 1500 }, { 6000, 1500 }, { 9000, 1700 }, { 12000, 5000 } };
	assert_int_equal(pf_plan_make(s, 6000, fr2, 5, &prm, &p), 0);
	assert_true(p.chunks_split > 0);
	struct pf_seg *after = calloc(p.nmoves, sizeof(*after));
	for (size_t m = 0; m < p.nmoves; m++)
		after[m] = (struct pf_seg){ .owner = p.moves[m].owner, .lblk = p.moves[m].lblk, .pblk = p.moves[m].dst,
					    .len = p.moves[m].len };
	struct pf_plan q;
	struct pf_brange fr3[] = { { 50000, 100000 } };
	assert_int_equal(pf_plan_make(after, p.nmoves, fr3, 1, &prm, &q), 0);
	assert_int_equal(q.nmoves, 0);
	assert_int_equal(q.blocks_in_place, 6000);
	pf_plan_free(&q);
	pf_plan_free(&p);
	free(after);
	free(s);

	/* a chunk of long runs stays; one with a short run moves */
	struct pf_seg mix[] = { { .owner = 1, .lblk = 0, .pblk = 10000, .len = 1000 },
				{ .owner = 1, .lblk = 1000, .pblk = 30000, .len = 1000 },
				{ .owner = 2, .lblk = 0, .pblk = 40000, .len = 1990 },
				{ .owner = 2, .lblk = 1990, .pblk = 60000, .len = 10 } };
	assert_int_equal(pf_plan_make(mix, 4, fr3, 1, &prm, &p), 0);
	assert_int_equal(p.chunks[0].state, PF_CHUNK_IN_PLACE);
	assert_int_equal(p.chunks[1].state, PF_CHUNK_PLACED);
	pf_plan_free(&p);
}

/* --check figures: the seek model and the planned placement */
static void test_figures(void **state)
{
	(void)state;
	struct pf_seg seq[] = { { .owner = 1, .lblk = 0, .pblk = 0, .len = 100 }, { .owner = 2, .lblk = 0, .pblk = 100, .len = 100 } };
	struct pf_layout_figures f;
	pf_figures(seq, 2, 4096, 1000000, &f);
	assert_int_equal(f.files, 2);
	assert_int_equal(f.blocks, 200);
	assert_int_equal(f.extents, 1);
	assert_int_equal(f.discontinuities, 0);
	assert_int_equal(f.seeks, 0);
	assert_true(fabs(f.read_s - 200 * 4096 / 100e6) < 1e-9);
	/* a far jump back costs a full-model seek: 1 ms + 14 ms * sqrt(d/span) + 4.17 ms */
	int is_seek;
	double t = pf_seek_time(1000000, 0, 4096, 1000000, &is_seek);
	assert_true(is_seek);
	assert_true(fabs(t - (0.001 + 0.014 + 0.00417)) < 1e-9);
	/* a short gap forward is read through */
	t = pf_seek_time(100, 102, 4096, 1000000, &is_seek);
	assert_false(is_seek);
	assert_true(fabs(t - 2 * 4096 / 100e6) < 1e-12);
	/* scattered, then as the plan would place it */
	struct pf_seg *s = scattered(3000, 500000);
	struct pf_brange fr[] = { { 1000, 10000 } };
	struct pf_plan_params prm = { .chunk_blocks = 2000 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 3000, fr, 1, &prm, &p), 0);
	struct pf_seg *after;
	size_t n;
	assert_int_equal(pf_plan_result(&p, &after, &n), 0);
	struct pf_layout_figures before, planned;
	pf_figures(s, 3000, 4096, 1000000, &before);
	pf_figures(after, n, 4096, 1000000, &planned);
	assert_int_equal(before.extents, 3000);
	assert_int_equal(planned.extents, 1);
	assert_int_equal(planned.blocks, 3000);
	assert_true(planned.read_s < before.read_s);
	free(after);
	pf_plan_free(&p);
	free(s);
}

static void test_bad_input(void **state)
{
	(void)state;
	struct pf_seg s[] = { { .owner = 1, .lblk = 0, .pblk = 5000, .len = 10 } };
	struct pf_brange overlap[] = { { 100, 50 }, { 120, 50 } };
	struct pf_plan_params prm = { .chunk_blocks = 0 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(s, 1, overlap, 1, &prm, &p), -EINVAL);
	prm.chunk_blocks = 10;
	assert_int_equal(pf_plan_make(s, 1, overlap, 2, &prm, &p), -EINVAL);
	assert_int_equal(pf_plan_make(NULL, 0, NULL, 0, &prm, &p), 0);
	assert_int_equal(p.nchunks, 0);
	pf_plan_free(&p);
}

/* The 95 % full image of 60-reorder-crash (tests/mkaged.sh 32 MB ext4 4 KiB, fill 95, seed 106): 8192 blocks,
 * 163 free in 36 areas (the largest 75), a layout of 461 scattered blocks.  The reorder moved 0 blocks with
 * 2000-block chunks and 77 with 32-block chunks: the reserve, not the fitting.  5 % of 8192 = 409 > 163 free:
 * nothing is usable; at 1 % (81), 82 are usable and a chunk moves whole.  With the same fragmented free space
 * three times over, the whole layout is placed: one chunk split over many areas, none fails. */
static const struct pf_brange full95_free[] = {
	{ 1588, 2 }, { 1606, 2 }, { 1660, 2 }, { 1752, 2 }, { 1806, 4 }, { 1884, 4 }, { 2160, 2 }, { 2171, 1 },
	{ 2173, 2 }, { 2240, 3 }, { 2279, 2 }, { 2307, 3 }, { 2510, 75 }, { 2647, 3 }, { 2764, 1 }, { 2975, 1 },
	{ 3676, 4 }, { 4290, 2 }, { 4808, 1 }, { 5307, 4 }, { 5643, 2 }, { 5760, 4 }, { 5800, 2 }, { 5876, 2 },
	{ 6122, 1 }, { 6147, 1 }, { 6228, 3 }, { 6255, 4 }, { 6285, 1 }, { 6321, 4 }, { 6339, 5 }, { 6360, 5 },
	{ 6366, 1 }, { 6404, 4 }, { 6431, 2 }, { 6490, 2 },
};
#define FULL95_NFREE (sizeof(full95_free) / sizeof(full95_free[0]))

static void test_full95(void **state)
{
	(void)state;
	struct pf_seg *s = scattered(461, 7000);
	struct pf_plan p;
	struct pf_plan_params prm = { .chunk_blocks = 2000, .reserve_blocks = 409 };
	assert_int_equal(pf_plan_make(s, 461, full95_free, FULL95_NFREE, &prm, &p), 0);
	assert_int_equal(p.free_blocks, 163);
	assert_int_equal(p.usable_blocks, 0);
	assert_int_equal(p.chunks_failed, 1);
	assert_int_equal(p.blocks_to_move, 0);
	pf_plan_free(&p);

	/* 32-block chunks, 1 % reserve: 82 usable; 32 + 32 placed, the next 32 would exceed, the last 13 fits */
	prm = (struct pf_plan_params){ .chunk_blocks = 32, .reserve_blocks = 81 };
	assert_int_equal(pf_plan_make(s, 461, full95_free, FULL95_NFREE, &prm, &p), 0);
	assert_int_equal(p.usable_blocks, 82);
	assert_int_equal(p.blocks_to_move, 77);
	assert_true(p.chunks_split >= 1);
	check_consistent(&p);
	uint64_t used = 0;
	for (size_t c = 0; c < p.nchunks; c++) {
		if (p.chunks[c].state == PF_CHUNK_FAILED) /* fails only when the space above the reserve is short */
			assert_true(used + p.chunks[c].blocks > p.usable_blocks);
		else if (p.chunks[c].state != PF_CHUNK_IN_PLACE)
			used += p.chunks[c].blocks;
	}
	pf_plan_free(&p);

	/* no reserve: 163 usable, five 32-block chunks fit */
	prm.reserve_blocks = 0;
	assert_int_equal(pf_plan_make(s, 461, full95_free, FULL95_NFREE, &prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 160);
	check_consistent(&p);
	pf_plan_free(&p);

	/* enough free space, just as fragmented: nothing fails, the 461-block chunk is split */
	struct pf_brange more[3 * FULL95_NFREE];
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < FULL95_NFREE; i++)
			more[k * FULL95_NFREE + i] = (struct pf_brange){ full95_free[i].start + k * 10000, full95_free[i].count };
	prm = (struct pf_plan_params){ .chunk_blocks = 2000 };
	assert_int_equal(pf_plan_make(s, 461, more, 3 * FULL95_NFREE, &prm, &p), 0);
	assert_int_equal(p.chunks_failed, 0);
	assert_int_equal(p.chunks_split, 1);
	assert_int_equal(p.blocks_to_move, 461);
	assert_true(p.nunits > 6); /* no area holds more than 75 */
	check_consistent(&p);
	pf_plan_free(&p);
	free(s);
}

/* A re-aggregated layout (the normal case at every shutdown): files 0..NF-1 of 5..40 blocks were laid out
 * by the last run one after the other from SET_BASE (with an optional hole after one file); the new layout
 * differs by a few swaps, a file added or removed.  4 KiB blocks, chunks of 2000, the seek model on. */
#define NF 300
#define SET_BASE 100000ULL
#define SPAN 1000000ULL

struct set {
	uint64_t pos[NF + 1], len[NF + 1];
	uint64_t end;
};

static void make_set(struct set *st, int hole_after, uint64_t hole)
{
	uint64_t p = SET_BASE;
	for (int f = 0; f < NF; f++) {
		st->len[f] = 5 + (uint64_t)(f * 7919 % 36);
		st->pos[f] = p;
		p += st->len[f] + (f == hole_after ? hole : 0);
	}
	st->end = p;
	st->len[NF] = 20; /* a file new in the layout, still where it was written: far away */
	st->pos[NF] = 700000;
}

static size_t segs_for(const struct set *st, const int *order, size_t n, struct pf_seg *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct pf_seg){ .owner = (uint32_t)order[i], .lblk = 0, .pblk = st->pos[order[i]],
					  .len = st->len[order[i]] };
	return n;
}

static const struct pf_plan_params near_prm = { .chunk_blocks = 2000, .block_size = 4096, .span = SPAN };

static void test_near_swaps(void **state)
{
	(void)state;
	struct set st;
	make_set(&st, -1, 0);
	int order[NF];
	for (int i = 0; i < NF; i++)
		order[i] = i;
	struct pf_seg segs[NF];
	struct pf_brange fr[] = { { 1000, 5000 }, { st.end, 200000 } };
	struct pf_plan p;

	/* unchanged: nothing moves, all in place by contiguity */
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, NF, segs), fr, 2, &near_prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 0);
	assert_int_equal(p.blocks_near, 0);
	pf_plan_free(&p);

	/* a few adjacent swaps (services started in parallel): each costs one short seek; nothing moves */
	int sw[] = { 10, 57, 130, 131 + 40, 250 };
	for (size_t k = 0; k < sizeof(sw) / sizeof(*sw); k++) {
		int t = order[sw[k]];
		order[sw[k]] = order[sw[k] + 1];
		order[sw[k] + 1] = t;
	}
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, NF, segs), fr, 2, &near_prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 0);
	assert_int_equal(p.nunits, 0);
	assert_true(p.blocks_near > 0);
	assert_int_equal(p.blocks_in_place, p.blocks_total);
	check_consistent(&p);
	pf_plan_free(&p);

	/* without the seek model (block_size 0) the old rule moves the chunks with a swap */
	struct pf_plan_params old = near_prm;
	old.block_size = 0;
	assert_int_equal(pf_plan_make(segs, NF, fr, 2, &old, &p), 0);
	assert_true(p.blocks_to_move > 0);
	pf_plan_free(&p);

	/* chunks shuffled through and through: their blocks still lie together, and the rotational replay reads
	 * the set sorted by block, so nothing moves (the old rule moved them) */
	for (int i = 0; i < NF; i++)
		order[i] = i;
	for (int i = 0; i < 100; i++)
		order[i] = 99 - i;
	for (int i = 150; i < 210; i++)
		order[i] = 359 - i;
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, NF, segs), fr, 2, &near_prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 0);
	assert_int_equal(p.blocks_in_place, p.blocks_total);
	assert_false(p.compacted);
	pf_plan_free(&p);
	assert_int_equal(pf_plan_make(segs, NF, fr, 2, &old, &p), 0);
	assert_true(p.blocks_to_move >= 2000);
	pf_plan_free(&p);
}

/* Files of one chunk lying apart (written elsewhere, each a seek away) move: near enough is not "never";
 * the rest of the set stays, and what moves goes next to it. */
static void test_near_scattered(void **state)
{
	(void)state;
	struct set st;
	make_set(&st, -1, 0);
	int order[NF];
	for (int i = 0; i < NF; i++)
		order[i] = i;
	struct pf_seg segs[NF];
	segs_for(&st, order, NF, segs);
	uint64_t far = 0;
	for (int i = 100; i < 130; i++) { /* in the second chunk, together more than half of it */
		segs[i].pblk = 400000 + (uint64_t)(i - 100) * 3000;
		far += segs[i].len;
	}
	struct pf_brange fr[] = { { 1000, 5000 }, { st.end, 200000 } };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(segs, NF, fr, 2, &near_prm, &p), 0);
	assert_true(p.blocks_to_move >= far);
	assert_true(p.blocks_to_move * 2 < p.blocks_total);
	assert_false(p.compacted);
	for (size_t u = 0; u < p.nunits; u++)
		assert_true(p.units[u].dst >= st.end && p.units[u].dst < st.end + 4000);
	check_consistent(&p);
	pf_plan_free(&p);
}

/* A set that has spread over many shutdowns (here: after every 30th file a hole of 300 blocks, each a seek in
 * the sweep, yet no chunk over its allowance) is compacted: all of it into one run, in layout order. */
static void test_compact_spread(void **state)
{
	(void)state;
	struct set st;
	uint64_t pos = SET_BASE;
	for (int f = 0; f < NF; f++) {
		st.len[f] = 5 + (uint64_t)(f * 7919 % 36);
		st.pos[f] = pos;
		pos += st.len[f] + (f % 30 == 29 ? 300 : 0);
	}
	st.end = pos;
	int order[NF];
	for (int i = 0; i < NF; i++)
		order[i] = i;
	struct pf_seg segs[NF];
	struct pf_brange fr[] = { { 1000, 5000 }, { st.end, 200000 } };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, NF, segs), fr, 2, &near_prm, &p), 0);
	assert_true(p.compacted);
	assert_int_equal(p.blocks_to_move, p.blocks_total);
	assert_int_equal(p.nunits, p.nchunks);
	for (size_t u = 1; u < p.nunits; u++)
		assert_int_equal(p.units[u].dst, p.units[u - 1].dst + p.units[u - 1].len);
	check_consistent(&p);
	struct pf_seg *after = NULL;
	size_t n = 0;
	assert_int_equal(pf_plan_result(&p, &after, &n), 0);
	struct pf_layout_figures fig;
	pf_figures(after, n, 4096, SPAN, &fig);
	assert_int_equal(fig.discontinuities, 0);
	free(after);
	pf_plan_free(&p);

	/* holes of 8 blocks (read through, a third of a millisecond each): not worth a copy of the set */
	pos = SET_BASE;
	for (int f = 0; f < NF; f++) {
		st.pos[f] = pos;
		pos += st.len[f] + (f % 30 == 29 ? 8 : 0);
	}
	st.end = pos;
	struct pf_brange fr2[] = { { 1000, 5000 }, { st.end, 200000 } };
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, NF, segs), fr2, 2, &near_prm, &p), 0);
	assert_false(p.compacted);
	assert_int_equal(p.blocks_to_move, 0);
	pf_plan_free(&p);
}

static void test_near_insert(void **state)
{
	(void)state;
	struct set st;
	int order[NF + 1];
	struct pf_seg segs[NF + 1];
	struct pf_plan p;
	for (int i = 0, k = 0; i < NF; i++) {
		order[k++] = i;
		if (i == 150)
			order[k++] = NF; /* the new file, between 150 and 151 */
	}

	/* no free space next to its neighbours: only it moves, to the nearest area (after the set) */
	make_set(&st, -1, 0);
	struct pf_brange fr[] = { { 1000, 5000 }, { st.end, 200000 }, { 900000, 50000 } };
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, NF + 1, segs), fr, 3, &near_prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 20);
	assert_int_equal(p.nunits, 1);
	assert_int_equal(p.units[0].dst, st.end);
	assert_int_equal(p.moves[0].owner, NF);
	assert_int_equal(p.blocks_in_place, p.blocks_total - 20);
	check_consistent(&p);
	pf_plan_free(&p);

	/* free space right after its layout neighbour (a hole left by a file gone): it goes there */
	make_set(&st, 150, 30);
	struct pf_brange fr2[] = { { 1000, 5000 }, { st.pos[151] - 30, 30 }, { st.end, 200000 } };
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, NF + 1, segs), fr2, 3, &near_prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 20);
	assert_int_equal(p.nunits, 1);
	assert_int_equal(p.units[0].dst, st.pos[150] + st.len[150]);
	check_consistent(&p);
	pf_plan_free(&p);

	/* the next run, with it there: nothing moves (no ping-pong) */
	st.pos[NF] = st.pos[150] + st.len[150];
	struct pf_brange fr3[] = { { 1000, 5000 }, { st.pos[NF] + 20, 10 }, { st.end, 200000 } };
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, NF + 1, segs), fr3, 3, &near_prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 0);
	pf_plan_free(&p);

	/* moved to the nearest area last time (not adjacent): not moved again */
	make_set(&st, -1, 0);
	st.pos[NF] = st.end;
	struct pf_brange fr4[] = { { 1000, 5000 }, { st.end + 20, 200000 } };
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, NF + 1, segs), fr4, 2, &near_prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 0);
	assert_true(p.blocks_near >= 20);
	pf_plan_free(&p);
}

static void test_near_remove(void **state)
{
	(void)state;
	struct set st;
	make_set(&st, -1, 0);
	int order[NF];
	size_t n = 0;
	for (int i = 0; i < NF; i++)
		if (i != 42 && i != 200) /* gone from the layout (skipped as changed, or no longer read) */
			order[n++] = i;
	struct pf_seg segs[NF];
	struct pf_brange fr[] = { { 1000, 5000 }, { st.end, 200000 } };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(segs, segs_for(&st, order, n, segs), fr, 2, &near_prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 0);
	assert_int_equal(p.blocks_in_place, p.blocks_total);
	pf_plan_free(&p);
}

/* A second run right after a complete one moves nothing: the plan applied (moved blocks at their
 * destinations, their old places free), then planned again.  Sets whose first half's chunks read well only
 * with files of later chunks in the gaps between theirs, some of those later files far off.  (A property
 * check: these sets do not reproduce the scale-4 image where the next run moved a near-enough chunk again,
 * results/REORDER-BENCH.md; that one is checked end to end by results/bench-reorder-gain.sh SCALE=4.) */
#define NX_SPAN 400000

/* The free runs of a block map (used[b] != 0: in use) into fr; returns how many. */
static size_t free_runs_of(const unsigned char *used, uint64_t span, struct pf_brange *fr)
{
	size_t n = 0;
	for (uint64_t b = 0; b < span;) {
		if (used[b]) {
			b++;
			continue;
		}
		uint64_t e = b;
		while (e < span && !used[e])
			e++;
		fr[n++] = (struct pf_brange){ b, e - b };
		b = e;
	}
	return n;
}

static void test_next_run_moves_nothing(void **state)
{
	(void)state;
	unsigned char *used = malloc(NX_SPAN);
	struct pf_seg *segs = malloc(NF * sizeof(*segs)), *after = NULL;
	struct pf_brange *fr = malloc(NX_SPAN / 2 * sizeof(*fr));
	assert_non_null(used);
	assert_non_null(segs);
	assert_non_null(fr);
	for (unsigned seed = 1; seed <= 20; seed++) {
		/* the first half of the files in order, each followed by a gap; the second half partly in those gaps
		 * (the first half's chunks read well: near enough), partly far off (those chunks move) */
		unsigned x = seed * 2654435761u;
		memset(used, 0, NX_SPAN);
		memset(used, 1, 20000); /* metadata, other files */
		uint64_t len[NF], pos = 20000, far = 200000;
		for (int f = 0; f < NF; f++) {
			x = x * 1103515245u + 12345u;
			len[f] = 5 + (x >> 16) % 36;
		}
		for (int f = 0; f < NF / 2; f++) {
			int g = NF / 2 + f; /* its gap: file g's place, or other data of that size */
			segs[f] = (struct pf_seg){ .owner = (uint32_t)f, .pblk = pos, .len = len[f] };
			pos += len[f];
			if (f % 3 || (unsigned)(f / 3) % 4 >= seed % 4) {
				segs[g] = (struct pf_seg){ .owner = (uint32_t)g, .pblk = pos, .len = len[g] };
			} else {
				segs[g] = (struct pf_seg){ .owner = (uint32_t)g, .pblk = far, .len = len[g] };
				far += len[g] + 100; /* read through: one group, but a waste at every file */
			}
			pos += len[g];
		}
		memset(used + 20000, 1, pos - 20000);
		for (int f = NF / 2; f < NF; f++)
			memset(used + segs[f].pblk, 1, segs[f].len);
		struct pf_plan_params prm = { .chunk_blocks = 2000, .block_size = 4096, .span = NX_SPAN };
		struct pf_plan p, q;
		size_t nfree = free_runs_of(used, NX_SPAN, fr);
		assert_int_equal(pf_plan_make(segs, NF, fr, nfree, &prm, &p), 0);
		check_consistent(&p);
		for (size_t m = 0; m < p.nmoves; m++) {
			memset(used + p.moves[m].dst, 1, p.moves[m].len);
			memset(used + p.moves[m].src, 0, p.moves[m].len);
		}
		size_t n;
		assert_int_equal(pf_plan_result(&p, &after, &n), 0);
		size_t w = 0; /* as the next run collects them: adjacent pieces of a file merged */
		for (size_t i = 0; i < n; i++) {
			if (w && after[w - 1].owner == after[i].owner && after[w - 1].lblk + after[w - 1].len == after[i].lblk &&
			    after[w - 1].pblk + after[w - 1].len == after[i].pblk)
				after[w - 1].len += after[i].len;
			else
				after[w++] = after[i];
		}
		nfree = free_runs_of(used, NX_SPAN, fr);
		assert_int_equal(pf_plan_make(after, w, fr, nfree, &prm, &q), 0);
		if (q.blocks_to_move || getenv("PLAN_DEBUG"))
			print_message("seed %u: first run moved %llu of %llu (%llu near), the next %llu\n", seed,
				      (unsigned long long)p.blocks_to_move, (unsigned long long)p.blocks_total,
				      (unsigned long long)p.blocks_near, (unsigned long long)q.blocks_to_move);
		assert_int_equal(q.blocks_to_move, 0);
		pf_plan_free(&p);
		pf_plan_free(&q);
		free(after);
		after = NULL;
	}
	free(used);
	free(segs);
	free(fr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunking),
		cmocka_unit_test(test_segments_cut_at_chunk_boundary),
		cmocka_unit_test(test_best_fit),
		cmocka_unit_test(test_one_run),
		cmocka_unit_test(test_neighbour_preferred),
		cmocka_unit_test(test_split_across_areas),
		cmocka_unit_test(test_tiny_areas_no_failure),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_fails_only_when_space_runs_out),
		cmocka_unit_test(test_full95),
		cmocka_unit_test(test_incremental_skip),
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_near_swaps),
		cmocka_unit_test(test_near_scattered),
		cmocka_unit_test(test_compact_spread),
		cmocka_unit_test(test_near_insert),
		cmocka_unit_test(test_near_remove),
		cmocka_unit_test(test_erase_block_alignment),
		cmocka_unit_test(test_next_run_moves_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
