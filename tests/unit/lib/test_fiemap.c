/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/fiemap.c on a real file in the scratch directory: a sparse file of one-block extents walked in one batch
 * and in small ones (same extents, same order, the last one flagged), a range inside it, unwritten extents
 * handed out with their flag, and the errors (no FIEMAP on a pipe, a batch of 0).  Skipped, with a message,
 * where the scratch directory's filesystem has no FIEMAP. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fiemap.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 4096u
#define DATA_BLOCKS 40u /* one block written every other block: each its own extent */

/* The sparse file, open for reading; skips the test when its filesystem has no FIEMAP. */
static int sparse_file(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", pf_test_dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	char buf[BLOCK];
	memset(buf, 'x', sizeof(buf));
	for (unsigned i = 0; i < DATA_BLOCKS; i++)
		assert_int_equal(pwrite(fd, buf, BLOCK, (off_t)i * 2 * BLOCK), BLOCK);
	assert_int_equal(fsync(fd), 0); /* allocated now: no delayed-allocation extents */
	struct pf_fiemap w;
	assert_int_equal(pf_fiemap_open(&w, fd, 0, FIEMAP_MAX_OFFSET, 1), 0);
	int rc = pf_fiemap_next(&w);
	pf_fiemap_close(&w);
	if (rc == -EOPNOTSUPP) {
		close(fd);
		fprintf(stderr, "no FIEMAP on the filesystem of %s\n", pf_test_dir);
		skip();
	}
	assert_int_equal(rc, 1);
	return fd;
}

/* Every extent of a walk with this batch size, into x (room for max); returns how many, *batches how many calls
 * gave some. */
static unsigned walk(int fd, uint64_t start, uint64_t len, uint32_t batch, struct fiemap_extent *x, unsigned max,
		     unsigned *batches)
{
	struct pf_fiemap w;
	assert_int_equal(pf_fiemap_open(&w, fd, start, len, batch), 0);
	unsigned n = 0;
	*batches = 0;
	int rc;
	while ((rc = pf_fiemap_next(&w)) > 0) {
		assert_true(w.n >= 1 && w.n <= batch);
		assert_true(n + w.n <= max);
		assert_int_equal(w.from, n ? x[n - 1].fe_logical + x[n - 1].fe_length : start);
		memcpy(x + n, w.ext, w.n * sizeof(*x));
		n += w.n;
		(*batches)++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(pf_fiemap_next(&w), 0); /* stays at the end */
	pf_fiemap_close(&w);
	return n;
}

static void test_whole_file(void **state)
{
	(void)state;
	int fd = sparse_file("sparse");
	struct fiemap_extent one[64], small[64];
	unsigned b1, b3;
	unsigned n = walk(fd, 0, FIEMAP_MAX_OFFSET, 64, one, 64, &b1);
	assert_int_equal(n, DATA_BLOCKS);
	assert_int_equal(b1, 1);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(one[i].fe_logical, (uint64_t)i * 2 * BLOCK);
		assert_int_equal(one[i].fe_length, BLOCK);
		assert_int_equal(!!(one[i].fe_flags & FIEMAP_EXTENT_LAST), i == n - 1);
		assert_int_equal(one[i].fe_flags & PF_FIEMAP_NO_PLACE, 0);
	}
	/* three at a time: the same extents in the same order, over 14 calls */
	assert_int_equal(walk(fd, 0, FIEMAP_MAX_OFFSET, 3, small, 64, &b3), DATA_BLOCKS);
	assert_int_equal(b3, (DATA_BLOCKS + 2) / 3);
	assert_memory_equal(one, small, n * sizeof(*one));
	close(fd);
}

static void test_range(void **state)
{
	(void)state;
	int fd = sparse_file("range");
	struct fiemap_extent x[64];
	unsigned b;
	/* blocks 20..29: the data blocks 20, 22, 24, 26, 28 (extents 10..14), even asked two at a time */
	unsigned n = walk(fd, 20 * BLOCK, 10 * BLOCK, 2, x, 64, &b);
	assert_int_equal(n, 5);
	assert_int_equal(b, 3);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(x[i].fe_logical, (uint64_t)(20 + 2 * i) * BLOCK);
	/* starting inside the hole before block 20: the walk still begins at block 20's extent */
	n = walk(fd, 19 * BLOCK, BLOCK + 1, 8, x, 64, &b);
	assert_int_equal(n, 1);
	assert_int_equal(x[0].fe_logical, 20 * BLOCK);
	/* a range wholly in a hole: nothing */
	assert_int_equal(walk(fd, 21 * BLOCK, BLOCK, 8, x, 64, &b), 0);
	assert_int_equal(b, 0);
	close(fd);
}

static void test_unwritten(void **state)
{
	(void)state;
	int fd = sparse_file("prealloc");
	/* preallocated past the data: an unwritten extent, handed out with its flag */
	assert_int_equal(fallocate(fd, FALLOC_FL_KEEP_SIZE, 100 * BLOCK, 4 * BLOCK), 0);
	struct fiemap_extent x[64];
	unsigned b;
	unsigned n = walk(fd, 0, FIEMAP_MAX_OFFSET, 16, x, 64, &b);
	assert_int_equal(n, DATA_BLOCKS + 1);
	assert_int_equal(x[n - 1].fe_logical, 100 * BLOCK);
	assert_true(x[n - 1].fe_flags & FIEMAP_EXTENT_UNWRITTEN);
	assert_true(x[n - 1].fe_flags & FIEMAP_EXTENT_LAST);
	assert_false(x[n - 2].fe_flags & (FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_LAST));
	close(fd);
}

static void test_errors(void **state)
{
	(void)state;
	struct pf_fiemap w;
	assert_int_equal(pf_fiemap_open(&w, 0, 0, 1, 0), -EINVAL);
	assert_int_equal(pf_fiemap_next(&w), 0);
	pf_fiemap_close(&w);
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pf_fiemap_open(&w, p[0], 0, FIEMAP_MAX_OFFSET, 4), 0);
	int rc = pf_fiemap_next(&w);
	assert_true(rc < 0); /* the ioctl's -errno (a pipe has no extent map) */
	assert_int_equal(w.n, 0);
	assert_int_equal(pf_fiemap_next(&w), 0); /* and the walk is over */
	pf_fiemap_close(&w);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_file),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_unwritten),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
