/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The window to make room in (window.h): the stretch with the fewest blocks in the way, and the run
 * arithmetic around it; and the planner's move_all (the evacuation's plan: nothing counts as in place). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "evacuate.h"
#include "plan.h"
#include "replay_cost.h"
#include "runs.h"
#include "window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Free space in three places; the layout's blocks fill the gap of the middle one: that window wins, though
 * the largest free run is elsewhere. */
static void test_pick_counts_layout_blocks(void **state)
{
	(void)state;
	struct pf_brange fr[] = { { 100, 50 }, { 1000, 60 }, { 1070, 30 }, { 5000, 80 } };
	struct pf_seg sg[] = { { .owner = 0, .lblk = 0, .pblk = 1060, .len = 10 } };
	struct pf_window w;
	assert_int_equal(pf_window_pick(fr, 4, sg, 1, 100, 0, 10000, &w), 0);
	assert_int_equal(w.start, 1000);
	assert_int_equal(w.len, 100);
	assert_int_equal(w.good, 100);
	/* the same good count twice: the lower one */
	struct pf_brange fr2[] = { { 300, 40 }, { 900, 40 } };
	assert_int_equal(pf_window_pick(fr2, 2, NULL, 0, 40, 0, 2000, &w), 0);
	assert_int_equal(w.start, 300);
	assert_int_equal(w.good, 40);
}

/* A window ending where a run ends (the run longer than the window's tail room) and clamped to [lo, hi). */
static void test_pick_edges(void **state)
{
	(void)state;
	struct pf_brange fr[] = { { 0, 10 }, { 95, 5 } };
	struct pf_window w;
	assert_int_equal(pf_window_pick(fr, 2, NULL, 0, 20, 5, 100, &w), 0);
	assert_int_equal(w.start, 5); /* [5, 25): 5 free; [80, 100): 5 free; the lower */
	assert_int_equal(w.good, 5);
	assert_int_equal(pf_window_pick(fr, 2, NULL, 0, 200, 0, 100, &w), -ERANGE);
	/* nothing free at all: the window at lo, nothing good */
	assert_int_equal(pf_window_pick(NULL, 0, NULL, 0, 10, 7, 100, &w), 0);
	assert_int_equal(w.start, 7);
	assert_int_equal(w.good, 0);
}

/* The best window is checked against every start by brute force on a pseudo-random map. */
static void test_pick_brute_force(void **state)
{
	(void)state;
	enum { N = 600 };
	unsigned char good[N];
	unsigned x = 12345;
	for (int i = 0; i < N; i++) {
		x = x * 1103515245u + 12345u;
		good[i] = (x >> 16) % 3 == 0;
	}
	struct pf_brange fr[N];
	size_t n = 0;
	for (int i = 0; i < N; i++)
		if (good[i]) {
			if (n && fr[n - 1].start + fr[n - 1].count == (uint64_t)i)
				fr[n - 1].count++;
			else
				fr[n++] = (struct pf_brange){ (uint64_t)i, 1 };
		}
	for (uint64_t len = 1; len < 120; len += 17) {
		struct pf_window w;
		assert_int_equal(pf_window_pick(fr, n, NULL, 0, len, 0, N, &w), 0);
		uint64_t best = 0, at = 0;
		for (uint64_t s = 0; s + len <= N; s++) {
			uint64_t g = 0;
			for (uint64_t b = s; b < s + len; b++)
				g += good[b];
			if (g > best) {
				best = g;
				at = s;
			}
		}
		assert_int_equal(w.good, best);
		assert_int_equal(w.start, at);
	}
}

/* o (then freed) is exactly the runs of want: start, len, start, len, ... */
static void expect_runs(struct pf_brange *o, size_t n, const uint64_t *want, size_t nwant)
{
	assert_int_equal(n, nwant / 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(o[i].start, want[2 * i]);
		assert_int_equal(o[i].count, want[2 * i + 1]);
	}
	free(o);
}

static void test_runs_arithmetic(void **state)
{
	(void)state;
	struct pf_brange r[] = { { 50, 10 }, { 10, 5 }, { 15, 5 }, { 40, 12 }, { 70, 0 } };
	size_t n = pf_branges_normalize(r, 5, 0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].start, 10);
	assert_int_equal(r[0].count, 10);
	assert_int_equal(r[1].start, 40);
	assert_int_equal(r[1].count, 20);
	assert_int_equal(pf_runs_count_in(r, n, 12, 35), 8 + 7);
	struct pf_brange *o = NULL;
	size_t no = 0;
	assert_int_equal(pf_runs_clip(r, n, 12, 35, 1, &o, &no), 0); /* [12, 47) */
	expect_runs(o, no, (const uint64_t[]){ 12, 8, 40, 7 }, 4);
	assert_int_equal(pf_runs_clip(r, n, 12, 35, 0, &o, &no), 0);
	expect_runs(o, no, (const uint64_t[]){ 10, 2, 47, 13 }, 4);
	struct pf_brange one[] = { { 0, 100 } };
	assert_int_equal(pf_runs_clip(one, 1, 40, 10, 0, &o, &no), 0); /* a run straddling the window */
	expect_runs(o, no, (const uint64_t[]){ 0, 40, 50, 50 }, 4);
	assert_int_equal(pf_runs_complement(r, n, 0, 70, &o, &no), 0);
	expect_runs(o, no, (const uint64_t[]){ 0, 10, 20, 20, 60, 10 }, 6);
}

/* move_all: a chunk already contiguous moves too (the plan that empties the window). */
static void test_move_all(void **state)
{
	(void)state;
	struct pf_seg sg[] = { { .owner = 0, .lblk = 0, .pblk = 500, .len = 100 } };
	struct pf_brange fr[] = { { 1000, 300 } };
	struct pf_plan_params prm = { .chunk_blocks = 50 };
	struct pf_plan p;
	assert_int_equal(pf_plan_make(sg, 1, fr, 1, &prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 0);
	pf_plan_free(&p);
	prm.move_all = 1;
	assert_int_equal(pf_plan_make(sg, 1, fr, 1, &prm, &p), 0);
	assert_int_equal(p.blocks_to_move, 100);
	assert_int_equal(p.units[0].dst, 1000);
	pf_plan_free(&p);
}

/* A plan of moves, for the composition tests: one placed chunk of one unit holding them all. */
static struct pf_plan moves_plan(const struct pf_move *m, size_t n)
{
	struct pf_plan p = { 0 };
	p.moves = malloc(n * sizeof(*m));
	memcpy(p.moves, m, n * sizeof(*m));
	p.nmoves = n;
	p.units = calloc(1, sizeof(*p.units));
	p.units[0] = (struct pf_unit){ .first = 0, .count = n };
	p.nunits = 1;
	p.chunks = calloc(1, sizeof(*p.chunks));
	p.chunks[0] = (struct pf_chunk){ .state = PF_CHUNK_PLACED, .first_unit = 0, .nunits = 1 };
	p.nchunks = 1;
	return p;
}

/* Where a block lies after the composed moves (itself when no move has it). */
static uint64_t where(const struct pf_cost_move *m, size_t n, uint64_t b)
{
	for (size_t i = 0; i < n; i++)
		if (b >= m[i].src && b < m[i].src + m[i].len)
			return m[i].dst + (b - m[i].src);
	return b;
}

/* The layout's segments after the evacuation: the part inside a move goes with it, the rest stays. */
static void test_moved_segs(void **state)
{
	(void)state;
	struct pf_move em[] = { { .owner = 0, .lblk = 0, .src = 110, .dst = 500, .len = 5 } };
	struct pf_plan out = moves_plan(em, 1);
	struct pf_seg sg[] = { { .owner = 3, .lblk = 7, .pblk = 100, .len = 20 } };
	struct pf_seg *o = NULL;
	size_t n = 0;
	assert_int_equal(pf_evac_moved_segs(&out, sg, 1, &o, &n), 0);
	assert_int_equal(n, 3);
	const uint64_t want[][3] = { { 7, 100, 10 }, { 17, 500, 5 }, { 22, 115, 5 } }; /* lblk, pblk, len */
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(o[i].owner, 3);
		assert_int_equal(o[i].lblk, want[i][0]);
		assert_int_equal(o[i].pblk, want[i][1]);
		assert_int_equal(o[i].len, want[i][2]);
	}
	free(o);
	pf_plan_free(&out);
}

/* Two plans in a row as one: a block evacuated and brought back by the second plan goes straight to its last
 * place; one evacuated only stays where the first put it; one the second plan moves from where it always was
 * goes there; every other block stays. */
static void test_compose(void **state)
{
	(void)state;
	struct pf_move em[] = { { .src = 100, .dst = 500, .len = 10 }, { .src = 120, .dst = 600, .len = 4 } };
	struct pf_move im[] = { { .src = 505, .dst = 100, .len = 5 }, { .src = 900, .dst = 105, .len = 3 } };
	struct pf_plan out = moves_plan(em, 2), in = moves_plan(im, 2);
	struct pf_cost_move *m = NULL;
	size_t n = 0;
	assert_int_equal(pf_evac_compose(&out, &in, &m, &n), 0);
	for (uint64_t b = 100; b < 105; b++)
		assert_int_equal(where(m, n, b), 500 + (b - 100)); /* evacuated, not brought back */
	for (uint64_t b = 105; b < 110; b++)
		assert_int_equal(where(m, n, b), 100 + (b - 105)); /* evacuated, then brought back */
	for (uint64_t b = 120; b < 124; b++)
		assert_int_equal(where(m, n, b), 600 + (b - 120));
	for (uint64_t b = 900; b < 903; b++)
		assert_int_equal(where(m, n, b), 105 + (b - 900));
	assert_int_equal(where(m, n, 505), 505); /* a destination of the first plan is no source */
	assert_int_equal(where(m, n, 110), 110);
	/* disjoint sources */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			assert_true(m[i].src + m[i].len <= m[j].src || m[j].src + m[j].len <= m[i].src);
	free(m);
	pf_plan_free(&out);
	pf_plan_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_counts_layout_blocks), cmocka_unit_test(test_pick_edges),
		cmocka_unit_test(test_pick_brute_force),	  cmocka_unit_test(test_runs_arithmetic),
		cmocka_unit_test(test_move_all),		  cmocka_unit_test(test_moved_segs),
		cmocka_unit_test(test_compose),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
