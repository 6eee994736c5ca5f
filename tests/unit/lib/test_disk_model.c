/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/disk_model.c: the 7200 rpm model's moves (nothing, read through, seek), its transfer, and a request's
 * nanoseconds; bytes and blocks give the same times.  The flash models: a fixed cost per request over the
 * queue depth, no seeks, and writes by the erase blocks they touch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "disk_model.h"

#include <math.h>
#include <stdlib.h>

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

/* The SD card: request cost + transfer wherever the request lies, and 4 KiB reads at the A1 minimum. */
static void test_sd_reads(void **state)
{
	(void)state;
	struct pf_disk_model d = pf_disk_sd(1ull << 30, 1);
	int is_seek = -1;
	assert_true(pf_disk_move_s(&d, 1 << 29, 0, &is_seek) == 0);
	assert_false(is_seek);
	uint64_t near = pf_disk_request_ns(&d, 0, 0, 4096, &is_seek);
	assert_false(is_seek);
	/* 1500 IOPS: 666,667 ns per 4 KiB read, wherever it lies */
	assert_int_equal(near, 666667);
	assert_int_equal(pf_disk_request_ns(&d, 1 << 29, 12345 * 4096ull, 4096, &is_seek), near);
	/* 1 MiB: one request cost and the transfer at 45 MB/s */
	assert_int_equal(pf_disk_request_ns(&d, 0, 0, 1 << 20, &is_seek),
			 (uint64_t)((1.0 / 1500 - 4096 / 45e6 + (1 << 20) / 45e6) * 1e9 + 0.5));
	/* the same bytes in 256 requests cost 255 request costs more */
	uint64_t many = 0;
	for (int i = 0; i < 256; i++)
		many += pf_disk_request_ns(&d, 0, (uint64_t)i * 4096, 4096, &is_seek);
	uint64_t one = pf_disk_request_ns(&d, 0, 0, 1 << 20, &is_seek);
	assert_true(llabs((long long)(many - one) - (long long)(255 * PF_SD_REQUEST_S * 1e9)) < 300);
	assert_true(pf_disk_per_request_s(&d) == PF_SD_REQUEST_S);
}

/* The SD card's writes: programmed at the write rate; an erase block filled in order costs that alone, in one
 * request or many; a write elsewhere inside an erase block copies the old data before it, and closes the open
 * one by copying the old data after the last write. */
static void test_sd_writes(void **state)
{
	(void)state;
	struct pf_disk_model d = pf_disk_sd(1ull << 30, 1);
	const double eb = 4 << 20, req = PF_SD_REQUEST_S, K4 = 4096;
	const double prog = eb / 10e6;
#define COPY(n) ((n) / 45e6 + (n) / 10e6)
#define NS(s) ((uint64_t)((s) * 1e9 + 0.5))
	int is_seek;
	/* nothing open: one whole aligned erase block; two */
	assert_int_equal(pf_disk_write_ns(&d, 0, 0, 4 << 20, 4 << 20, &is_seek), NS(req + prog));
	assert_int_equal(pf_disk_write_ns(&d, 0, 0, 0, 8 << 20, &is_seek), NS(req + 2 * prog));
	/* an aligned erase block in eight 512 KiB requests, each continuing the last: the same program time */
	uint64_t sum = 0, end = 0;
	for (uint64_t off = 4 << 20; off < 8 << 20; off += 512 << 10) {
		sum += pf_disk_write_ns(&d, 0, end, off, 512 << 10, &is_seek);
		end = off + (512 << 10);
	}
	assert_true(llabs((long long)sum - (long long)NS(8 * req + prog)) <= 8);
	/* 4 KiB inside one, nothing open: the data ahead of it copied */
	assert_int_equal(pf_disk_write_ns(&d, 0, 0, 4096, 4096, &is_seek), NS(req + K4 / 10e6 + COPY(K4)));
	assert_int_equal(pf_disk_write_ns(&d, 0, 0, 0, 4096, &is_seek), NS(req + K4 / 10e6));
	/* the next write elsewhere closes it: its rest copied; with the first, a read-modify-write of the block */
	uint64_t next = pf_disk_write_ns(&d, 0, 8192, 8 << 20, 4 << 20, &is_seek);
	assert_int_equal(next, NS(req + prog + COPY(eb - 8192)));
	uint64_t first = pf_disk_write_ns(&d, 0, 0, 4096, 4096, &is_seek);
	assert_true(llabs((long long)(first + next) - (long long)NS(2 * req + 2 * prog + (eb - K4) / 45e6)) <= 2);
	/* rewriting the open block away from where it ended: a close and a copy */
	assert_int_equal(pf_disk_write_ns(&d, 0, 8192, 0, 4096, &is_seek), NS(req + K4 / 10e6 + COPY(eb - 8192)));
	/* 8 MiB off by 4 KiB, nothing open: 4 KiB copied ahead; its end leaves the third open */
	assert_int_equal(pf_disk_write_ns(&d, 0, 0, 4096, 8 << 20, &is_seek), NS(req + 2 * prog + COPY(K4)));
	assert_false(is_seek);
	/* in blocks: the same */
	struct pf_disk_model b = pf_disk_sd(1 << 18, 4096);
	assert_int_equal(pf_disk_write_ns(&b, 0, 0, 1, 2048, &is_seek), NS(req + 2 * prog + COPY(K4)));
	assert_int_equal(pf_disk_write_ns(&b, 0, 1, 1, 2048, &is_seek), NS(req + 2 * prog));
#undef NS
#undef COPY
}

/* The SSD: the request cost over the effective queue depth; no erase-block cost; the disk's writes as reads. */
static void test_ssd_and_hdd_writes(void **state)
{
	(void)state;
	struct pf_disk_model d = pf_disk_ssd(1ull << 30, 1);
	int is_seek;
	double req = (1.0 / 13000 - 4096 / 560e6) / 8;
	assert_true(fabs(pf_disk_per_request_s(&d) - req) < 1e-15);
	assert_int_equal(pf_disk_request_ns(&d, 0, 1 << 29, 4096, &is_seek), (uint64_t)((req + 4096 / 560e6) * 1e9 + 0.5));
	assert_int_equal(pf_disk_write_ns(&d, 0, 0, 4096, 4096, &is_seek), (uint64_t)((req + 4096 / 530e6) * 1e9 + 0.5));
	struct pf_disk_model h = pf_disk_7200rpm(64 << 20, 1);
	int s1, s2;
	assert_int_equal(pf_disk_write_ns(&h, 64 << 20, 0, 0, 4096, &s1), pf_disk_request_ns(&h, 64 << 20, 0, 4096, &s2));
	assert_int_equal(s1, s2);
	assert_true(pf_disk_per_request_s(&h) == 0);
}

/* A verified copy's best pace: read, written and read back at the transfer rates. */
static void test_copy_bps(void **state)
{
	(void)state;
	struct pf_disk_model h = pf_disk_7200rpm(1 << 20, 4096), sd = pf_disk_sd(1 << 20, 4096),
			     ssd = pf_disk_ssd(1 << 20, 4096);
	assert_true(fabs(pf_disk_copy_bps(&h) - 100e6 / 3) < 1);
	assert_true(fabs(pf_disk_copy_bps(&sd) - 1 / (2 / 45e6 + 1 / 10e6)) < 1); /* 6.9 MB/s: writes rule */
	assert_true(fabs(pf_disk_copy_bps(&ssd) - 1 / (2 / 560e6 + 1 / 530e6)) < 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sd_reads),
		cmocka_unit_test(test_sd_writes),
		cmocka_unit_test(test_ssd_and_hdd_writes),
		cmocka_unit_test(test_moves),
		cmocka_unit_test(test_bytes_and_blocks_agree),
		cmocka_unit_test(test_request_ns),
		cmocka_unit_test(test_copy_bps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
