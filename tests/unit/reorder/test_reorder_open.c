/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reorder/reorder_open.c on images made by mke2fs: the checking open is read-only (an MMP filesystem is refused
 * at once, untouched), and the read-write reopen refuses, untouched, a filesystem that changed since it was
 * checked or gained MMP meanwhile; unchanged, it hands over a read-write handle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "clock.h"
#include "reorder_open.h"
#include "support_mkfs.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMG_BYTES (8u << 20)

/* An ext4 image made with mke2fs ARGS. */
static const char *mkimage(const char *name, const char *args)
{
	char a[256];
	snprintf(a, sizeof(a), "-t ext4 %s", args);
	const char *path = pf_test_mkfs(name, a);
	assert_non_null(path);
	return path;
}

static void run(const char *fmt, const char *img)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), fmt, img);
	assert_int_equal(system(cmd), 0);
}

/* The whole image (the caller frees it). */
static unsigned char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	unsigned char *b = malloc(IMG_BYTES);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, IMG_BYTES, f), IMG_BYTES);
	fclose(f);
	return b;
}

static void assert_unchanged(const char *path, unsigned char *before)
{
	unsigned char *now = slurp(path);
	assert_memory_equal(now, before, IMG_BYTES);
	free(now);
	free(before);
}

static const struct pf_open_opts WRITE = { .write = 1 };

/* The checking (read-only) open of a reorder, which must pass. */
static ext2_filsys checked(const char *img)
{
	ext2_filsys fs = NULL;
	char err[256] = "";
	assert_int_equal(pf_reorder_open(img, &WRITE, &fs, err, sizeof(err)), 0);
	assert_false(fs->flags & EXT2_FLAG_RW);
	return fs;
}

/* The read-write reopen of fs (checked on img) must be refused with want, mentioning what, at once (a
 * behaviour check, not a benchmark: the MMP protocol sleeps 2 x its interval of 5 s + 1 s), writing nothing. */
static void reopen_refused(const char *img, ext2_filsys fs, int want, const char *what)
{
	unsigned char *before = slurp(img);
	char err[256] = "";
	double t0 = pf_monotonic_s();
	assert_int_equal(pf_reorder_reopen_rw(img, &WRITE, &fs, err, sizeof(err)), want);
	assert_true(pf_monotonic_s() - t0 < 3.0);
	assert_non_null(strstr(err, what));
	assert_false(fs->flags & EXT2_FLAG_RW); /* still the read-only handle */
	ext2fs_close_free(&fs);
	assert_unchanged(img, before);
}

static void test_mmp_refused_read_only(void **state)
{
	(void)state;
	const char *img = mkimage("mmp", "-O mmp");
	for (int w = 0; w <= 1; w++) {
		struct pf_open_opts o = { .write = w };
		unsigned char *before = slurp(img);
		char err[256] = "";
		ext2_filsys fs = (ext2_filsys)1; /* must come back NULL */
		double t0 = pf_monotonic_s();
		assert_int_equal(pf_reorder_open(img, &o, &fs, err, sizeof(err)), PF_EFEATURE);
		assert_true(pf_monotonic_s() - t0 < 3.0); /* no MMP wait (reopen_refused) */
		assert_null(fs);
		assert_non_null(strstr(err, "unsupported feature mmp"));
		assert_unchanged(img, before);
	}
}

static void test_checking_open_is_read_only(void **state)
{
	(void)state;
	ext2_filsys fs = checked(mkimage("plain", ""));
	assert_non_null(fs->block_map);
	ext2fs_close_free(&fs);
}

static void test_reopen_unchanged(void **state)
{
	(void)state;
	const char *img = mkimage("same", "");
	ext2_filsys fs = checked(img);
	unsigned char *before = slurp(img);
	char err[256] = "";
	assert_int_equal(pf_reorder_reopen_rw(img, &WRITE, &fs, err, sizeof(err)), 0);
	assert_true(fs->flags & EXT2_FLAG_RW);
	assert_non_null(fs->block_map);
	assert_null(fs->orig_super); /* the superblock goes out whole (reorder_open.c) */
	assert_int_equal(ext2fs_close_free(&fs), 0);
	assert_unchanged(img, before); /* opened and closed read-write without a write: nothing written */
}

/* A filesystem written between the check and the reopen (here: debugfs) is not the one planned on. */
static void test_reopen_changed(void **state)
{
	(void)state;
	const char *img = mkimage("changed", "");
	ext2_filsys fs = checked(img);
	run("debugfs -w -R 'mkdir newdir' '%s' >/dev/null 2>&1", img);
	reopen_refused(img, fs, -EAGAIN, "changed since it was checked");
}

/* Only a bitmap differs (a block marked in use behind libext2fs's back, counts left alone). */
static void test_reopen_bitmap_changed(void **state)
{
	(void)state;
	const char *img = mkimage("bitmap", "-O ^metadata_csum");
	ext2_filsys fs = checked(img);
	blk64_t blk = ext2fs_blocks_count(fs->super) - 1;
	assert_false(ext2fs_test_block_bitmap2(fs->block_map, blk));
	/* set the bit of the last block in its group's bitmap on disk */
	dgrp_t g = ext2fs_group_of_blk2(fs, blk);
	uint64_t bit = blk - ext2fs_group_first_block2(fs, g);
	long off = (long)(ext2fs_block_bitmap_loc(fs, g) * fs->blocksize + bit / 8);
	FILE *f = fopen(img, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	int c = fgetc(f);
	assert_int_not_equal(c, EOF);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	fputc(c | (1 << (bit % 8)), f);
	assert_int_equal(fclose(f), 0);
	reopen_refused(img, fs, -EAGAIN, "changed since it was checked");
}

/* MMP turned on between the check and the reopen: refused without the protocol's writes and wait. */
static void test_reopen_gained_mmp(void **state)
{
	(void)state;
	const char *img = mkimage("gained", "");
	ext2_filsys fs = checked(img);
	run("tune2fs -O mmp '%s' >/dev/null 2>&1", img);
	reopen_refused(img, fs, PF_EFEATURE, "unsupported feature mmp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmp_refused_read_only),
		cmocka_unit_test(test_checking_open_is_read_only),
		cmocka_unit_test(test_reopen_unchanged),
		cmocka_unit_test(test_reopen_changed),
		cmocka_unit_test(test_reopen_bitmap_changed),
		cmocka_unit_test(test_reopen_gained_mmp),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
