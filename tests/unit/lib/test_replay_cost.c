/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/replay_cost.c: hand-made block lists whose model cost is known — requests and seeks, the merge gap, the
 * device cache shared by metadata passes (not by data), ordered passes, relocation by a plan's moves, the head carried from
 * pass to pass, and the gain. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "replay_cost.h"

#include <math.h>

#define SPAN 10000
#define T (4096 / 100e6) /* one block's transfer */

static double seek(double dist)
{
	return 0.001 + 0.014 * sqrt(dist / SPAN) + 0.00417;
}

static struct pf_disk_model disk(void)
{
	return pf_disk_7200rpm(SPAN, 4096);
}

static void assert_near(double a, double b)
{
	if (fabs(a - b) > 1e-12)
		fail_msg("%.12f != %.12f", a, b);
}

static void test_two_requests(void **state)
{
	(void)state;
	struct pf_disk_model d = disk();
	const struct pf_brange r[] = { { 5000, 4 }, { 1000, 10 } }; /* any order: a sorted sweep */
	struct pf_cost_pass p = { .r = r, .n = 2, .cache = PF_COST_DEVICE };
	struct pf_cost c;
	assert_int_equal(pf_replay_cost(&d, &p, 1, NULL, 0, &c), 0);
	assert_near(c.seconds, seek(1000) + 10 * T + seek(5000 - 1010) + 4 * T);
	assert_near(c.meta_s, c.seconds);
	assert_near(c.data_s, 0);
	assert_int_equal(c.requests, 2);
	assert_int_equal(c.seeks, 2);
	assert_int_equal(c.meta_blocks, 14);
}

/* The gap merges requests; reading through the gap costs the same as the disk reading through it alone. */
static void test_gap(void **state)
{
	(void)state;
	struct pf_disk_model d = disk();
	const struct pf_brange r[] = { { 5000, 1 }, { 5020, 1 }, { 5100, 1 } };
	struct pf_cost_pass p = { .r = r, .n = 3, .gap = 32, .cache = PF_COST_DEVICE };
	struct pf_cost c;
	assert_int_equal(pf_replay_cost(&d, &p, 1, NULL, 0, &c), 0);
	assert_int_equal(c.requests, 2); /* 5000-5020 one run; 5100 alone (79 blocks away) */
	assert_int_equal(c.meta_blocks, 22);
	assert_near(c.seconds, seek(5000) + 21 * T + 79 * T + T); /* 79 blocks read through: cheaper than a seek */
	assert_int_equal(c.seeks, 1);
	p.gap = 0;
	assert_int_equal(pf_replay_cost(&d, &p, 1, NULL, 0, &c), 0);
	assert_int_equal(c.requests, 3);
	assert_near(c.seconds, seek(5000) + 21 * T + 79 * T + T);
}

/* Metadata passes share the device's cache; the data sweep reads file pages, cached or not there. */
static void test_cache(void **state)
{
	(void)state;
	struct pf_disk_model d = disk();
	const struct pf_brange a[] = { { 5000, 8 } }, b[] = { { 4996, 16 } };
	struct pf_cost_pass p[] = {
		{ .r = a, .n = 1, .cache = PF_COST_DEVICE },
		{ .r = b, .n = 1, .cache = PF_COST_DEVICE },
		{ .r = a, .n = 1, .cache = PF_COST_FILES, .data = 1 },
	};
	struct pf_cost c;
	assert_int_equal(pf_replay_cost(&d, p, 3, NULL, 0, &c), 0);
	double first = seek(5000) + 8 * T;
	/* the second pass: [4996,5000) (back from 5008: a seek), then [5008,5012) (its 8 cached blocks read
	 * through by the head, not requested) */
	double second = seek(12) + 4 * T + 8 * T + 4 * T;
	/* the data pass: back to 5000 from 5012 */
	double third = seek(12) + 8 * T;
	assert_near(c.meta_s, first + second);
	assert_near(c.data_s, third);
	assert_near(c.seconds, first + second + third);
	assert_int_equal(c.requests, 4);
	assert_int_equal(c.meta_blocks, 16);
	assert_int_equal(c.data_blocks, 8);
}

/* An ordered pass reads its runs as given (libext2fs walking extent trees, one block at a time, waiting for
 * each), a block named twice once; the same runs in a sorted pass cost a forward sweep. */
static void test_ordered(void **state)
{
	(void)state;
	struct pf_disk_model d = disk();
	const struct pf_brange r[] = { { 9000, 1 }, { 1000, 1 }, { 5000, 1 }, { 1000, 1 } };
	struct pf_cost_pass p = { .r = r, .n = 4, .gap = 32, .cache = PF_COST_DEVICE, .ordered = 1 };
	struct pf_cost c;
	assert_int_equal(pf_replay_cost(&d, &p, 1, NULL, 0, &c), 0);
	assert_int_equal(c.requests, 3);
	assert_int_equal(c.seeks, 3);
	assert_near(c.seconds, seek(9000) + seek(8001) + seek(3999) + 3 * T);
	/* what the ordered pass read, a sorted pass after it finds cached */
	struct pf_cost_pass two[] = { p, { .r = r, .n = 4, .cache = PF_COST_DEVICE } };
	assert_int_equal(pf_replay_cost(&d, two, 2, NULL, 0, &c), 0);
	assert_int_equal(c.requests, 3);
	p.ordered = 0;
	assert_int_equal(pf_replay_cost(&d, &p, 1, NULL, 0, &c), 0);
	assert_int_equal(c.requests, 3);
	assert_near(c.seconds, seek(1000) + seek(3999) + seek(3999) + 3 * T);
}

/* A plan's moves: the relocated passes read the copies, the others the old places. */
static void test_relocation(void **state)
{
	(void)state;
	struct pf_disk_model d = disk();
	const struct pf_brange r[] = { { 4998, 12 } };
	const struct pf_cost_move m[] = { { .src = 9000, .dst = 9500, .len = 4 }, { .src = 5000, .dst = 100, .len = 8 } };
	struct pf_cost_pass p = { .r = r, .n = 1, .cache = PF_COST_FILES, .relocate = 1, .data = 1 };
	struct pf_cost c;
	assert_int_equal(pf_replay_cost(&d, &p, 1, m, 2, &c), 0);
	/* [100,108) read through from 0 (100 blocks: cheaper than a seek), then [4998,5000), [5008,5010) */
	assert_int_equal(c.requests, 3);
	assert_near(c.seconds, 100 * T + 8 * T + seek(4998 - 108) + 2 * T + 8 * T + 2 * T);
	p.relocate = 0; /* the layout's record: where the blocks were */
	assert_int_equal(pf_replay_cost(&d, &p, 1, m, 2, &c), 0);
	assert_int_equal(c.requests, 1);
	assert_near(c.seconds, seek(4998) + 12 * T);
	/* no moves: nothing relocated either */
	p.relocate = 1;
	assert_int_equal(pf_replay_cost(&d, &p, 1, NULL, 0, &c), 0);
	assert_near(c.seconds, seek(4998) + 12 * T);
}

/* The head carries over: a second pass starting where the first ended costs no move. */
static void test_head_carries(void **state)
{
	(void)state;
	struct pf_disk_model d = disk();
	const struct pf_brange a[] = { { 3000, 5 } }, b[] = { { 3005, 5 } };
	struct pf_cost_pass p[] = { { .r = a, .n = 1 }, { .r = b, .n = 1, .cache = PF_COST_FILES, .data = 1 } };
	struct pf_cost c;
	assert_int_equal(pf_replay_cost(&d, p, 2, NULL, 0, &c), 0);
	assert_near(c.seconds, seek(3000) + 10 * T);
	assert_int_equal(c.seeks, 1);
	struct pf_cost_pass none = { 0 };
	assert_int_equal(pf_replay_cost(&d, &none, 1, NULL, 0, &c), 0);
	assert_near(c.seconds, 0);
}

static void test_gain(void **state)
{
	(void)state;
	assert_near(pf_replay_gain_percent(1.0, 0.8), 20);
	assert_near(pf_replay_gain_percent(0.68, 0.68 * 1.04), -4);
	assert_near(pf_replay_gain_percent(0, 1), 0);
}

/* On the SD model: no seeks, each request its fixed cost, once per 512 KiB it carries. */
static void test_flash_requests(void **state)
{
	(void)state;
	struct pf_disk_model d = pf_disk_sd(SPAN, 4096);
	const struct pf_brange r[] = { { 5000, 4 }, { 1000, 10 }, { 3000, 300 } }; /* 300 blocks: 1200 KiB, 3 requests */
	struct pf_cost_pass p = { .r = r, .n = 3, .cache = PF_COST_FILES };
	struct pf_cost c;
	assert_int_equal(pf_replay_cost(&d, &p, 1, NULL, 0, &c), 0);
	assert_int_equal(c.requests, 5);
	assert_int_equal(c.seeks, 0);
	assert_near(c.seconds, 5 * PF_SD_REQUEST_S + 314 * 4096 / PF_SD_RATE_BPS);
	/* the same blocks as one run: the fewest requests their bytes allow */
	const struct pf_brange one[] = { { 1000, 314 } };
	struct pf_cost_pass q = { .r = one, .n = 1, .cache = PF_COST_FILES };
	assert_int_equal(pf_replay_cost(&d, &q, 1, NULL, 0, &c), 0);
	assert_int_equal(c.requests, 3);
	assert_near(c.seconds, 3 * PF_SD_REQUEST_S + 314 * 4096 / PF_SD_RATE_BPS);
}

/* Two data passes (bins) sharing a block (a page two items of one file share): the second finds it in the
 * file's page cache, reads on from there, and never goes back for it; the device's cache does not count. */
static void test_files_cache(void **state)
{
	(void)state;
	struct pf_disk_model d = pf_disk_7200rpm(SPAN, 4096);
	const struct pf_brange meta[] = { { 5000, 10 } }, bin0[] = { { 1000, 10 } }, bin1[] = { { 1009, 10 } };
	struct pf_cost_pass p[] = { { .r = meta, .n = 1 },
				    { .r = bin0, .n = 1, .cache = PF_COST_FILES, .data = 1 },
				    { .r = bin1, .n = 1, .cache = PF_COST_FILES, .data = 1 } };
	struct pf_cost c;
	assert_int_equal(pf_replay_cost(&d, p, 3, NULL, 0, &c), 0);
	assert_int_equal(c.data_blocks, 19);
	assert_int_equal(c.requests, 3); /* meta, bin 0, bin 1's 9 blocks after the shared one */
	int seek;
	double want = pf_disk_move_s(&d, 0, 5000, &seek) + pf_disk_transfer_s(&d, 10) +
		      pf_disk_move_s(&d, 5010, 1000, &seek) + pf_disk_transfer_s(&d, 19);
	assert_near(c.seconds, want);
	/* data a device pass read is still read */
	const struct pf_brange same[] = { { 5000, 10 } };
	struct pf_cost_pass q[] = { { .r = meta, .n = 1 }, { .r = same, .n = 1, .cache = PF_COST_FILES, .data = 1 } };
	assert_int_equal(pf_replay_cost(&d, q, 2, NULL, 0, &c), 0);
	assert_int_equal(c.data_blocks, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_requests), cmocka_unit_test(test_gap),
		cmocka_unit_test(test_cache),        cmocka_unit_test(test_ordered),
		cmocka_unit_test(test_relocation),   cmocka_unit_test(test_files_cache),
		cmocka_unit_test(test_head_carries), cmocka_unit_test(test_gain),
		cmocka_unit_test(test_flash_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
