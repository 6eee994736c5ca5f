/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/disk_model.c: the 7200 rpm model's moves (nothing, read through, seek), its transfer, and a request's
 * nanoseconds; bytes and blocks give the same times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "disk_model.h"

#include <math.h>

static void test_moves(void **state)
{
	(void)state;
	struct pf_disk_model d = pf_disk_7200rpm(1000000, 4096);
	int is_seek = -1;
	assert_true(pf_disk_move_s(&d, 7, 7, &is_seek) == 0);
	assert_false(is_seek);
	/* a short gap forward is read through; the same gap backwards is a seek */
	assert_true(fabs(pf_disk_move_s(&d, 100, 102, &is_seek) - 2 * 4096 / 100e6) < 1e-15);
	assert_false(is_seek);
	double back = pf_disk_move_s(&d, 102, 100, &is_seek);
	assert_true(is_seek);
	assert_true(fabs(back - (0.001 + 0.014 * sqrt(2 / 1e6) + 0.00417)) < 1e-15);
	/* the full stroke, either way */
	assert_true(fabs(pf_disk_move_s(&d, 0, 1000000, &is_seek) - (0.001 + 0.014 + 0.00417)) < 1e-15);
	assert_true(is_seek);
	/* a span of 0 counts as 1 */
	struct pf_disk_model z = pf_disk_7200rpm(0, 4096);
	assert_true(fabs(pf_disk_move_s(&z, 1, 0, &is_seek) - (0.001 + 0.014 + 0.00417)) < 1e-15);
	assert_true(fabs(pf_disk_transfer_s(&d, 25) - 25 * 4096 / 100e6) < 1e-15);
}

/* The simulated disk (bytes) and --check (blocks) charge the very same double for the same geometry. */
static void test_bytes_and_blocks_agree(void **state)
{
	(void)state;
	struct pf_disk_model bytes = pf_disk_7200rpm(262144ull * 4096, 1), blocks = pf_disk_7200rpm(262144, 4096);
	const uint64_t moves[][2] = { { 0, 0 }, { 0, 1 }, { 5, 130 }, { 130, 5 }, { 1000, 262144 }, { 77, 200 } };
	for (size_t i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
		int s1, s2;
		double a = pf_disk_move_s(&bytes, moves[i][0] * 4096, moves[i][1] * 4096, &s1);
		double b = pf_disk_move_s(&blocks, moves[i][0], moves[i][1], &s2);
		assert_true(a == b);
		assert_int_equal(s1, s2);
	}
	assert_true(pf_disk_transfer_s(&bytes, 40960) == pf_disk_transfer_s(&blocks, 10));
}

static void test_request_ns(void **state)
{
	(void)state;
	struct pf_disk_model d = pf_disk_7200rpm(64 << 20, 1);
	int is_seek;
	/* contiguous: transfer only, 1 MiB at 100 MB/s = 10485.76 us */
	assert_int_equal(pf_disk_request_ns(&d, 4096, 4096, 1 << 20, &is_seek), 10485760);
	assert_false(is_seek);
	/* back to the start from the far end: settle + full stroke + half a turn + 4 KiB */
	assert_int_equal(pf_disk_request_ns(&d, 64 << 20, 0, 4096, &is_seek), 19170000 + 40960);
	assert_true(is_seek);
	/* a slower disk (simdisk --rate 2) */
	d.rate = 2e6;
	assert_int_equal(pf_disk_request_ns(&d, 0, 0, 2000, &is_seek), 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moves),
		cmocka_unit_test(test_bytes_and_blocks_agree),
		cmocka_unit_test(test_request_ns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
