/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replay planning (work list and its bins, physical sort, coalescing, block runs), the identity check, and pf_replay
 * end to end on a temporary file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "config.h"
#include "replay.h"
#include "replay_internal.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB (1ull << 20)

static struct pf_image *layout(void)
{
	struct pf_image *l = pf_image_new(PF_KIND_LAYOUT);
	struct pf_fs fs = { .block_size = 4096, .mountpoint = "/" };
	assert_int_equal(pf_image_add_fs(l, &fs), 0);
	/* files 0..2 data, 3 a directory touched 2nd, 4 inode-only touched last */
	static const struct {
		uint32_t flags, rank;
	} f[] = { { 0, 1 }, { 0, 3 }, { 0, 4 }, { PF_FILE_DIR, 2 }, { PF_FILE_METADATA, 9 } };
	for (int i = 0; i < 5; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/f%d", i);
		struct pf_file pf = { .flags = f[i].flags, .ino = 10 + i, .size = 100 * MiB, .first_order = f[i].rank,
				      .path = path };
		assert_int_equal(pf_image_add_file(l, &pf), i);
	}
	return l;
}

static void add_ext(struct pf_image *l, uint32_t file, uint64_t off, uint64_t len, int64_t phys_block)
{
	struct pf_extent e = { .file = file, .offset = off, .length = len };
	if (phys_block >= 0) {
		e.flags = PF_EXT_PHYS_KNOWN;
		e.physical = (uint64_t)phys_block;
	}
	assert_true(pf_image_add_extent(l, &e) >= 0);
}

static void test_build_order_and_touch_items(void **state)
{
	(void)state;
	struct pf_image *l = layout();
	add_ext(l, 0, 0, 8192, 100);
	add_ext(l, 0, 8192, 4096, 102);    /* contiguous with the previous one: merged */
	add_ext(l, 1, 0, 4096, -1);
	add_ext(l, 0, 1 * MiB, 4096, 500); /* file 0 again, later */
	add_ext(l, 2, 0, 4096, 7);
	struct pf_ritem *it;
	size_t n;
	assert_int_equal(pf_rplan_build(l, NULL, &it, &n), 0);
	assert_int_equal(n, 6);
	/* file 0 (rank 1), then the directory (rank 2) before file 1 (rank 3), ..., the inode-only file last */
	assert_int_equal(it[0].file, 0);
	assert_int_equal(it[0].length, 12288);
	assert_int_equal(it[0].physical, 100 * 4096);
	assert_true(it[0].phys_known);
	assert_int_equal(it[1].file, 3);
	assert_int_equal(it[1].kind, PF_RITEM_DIR);
	assert_int_equal(it[2].file, 1);
	assert_false(it[2].phys_known);
	assert_int_equal(it[3].file, 0);
	assert_int_equal(it[3].offset, MiB);
	assert_int_equal(it[4].file, 2);
	assert_int_equal(it[5].file, 4);
	assert_int_equal(it[5].kind, PF_RITEM_META);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(it[i].seq, i);
		assert_int_equal(it[i].bin, 0);
	}
	free(it);
	pf_image_free(l);
}

static void test_build_max_bytes(void **state)
{
	(void)state;
	struct pf_image *l = layout();
	add_ext(l, 0, 0, 8192, -1);
	add_ext(l, 1, 0, 10000, -1);
	add_ext(l, 2, 0, 4096, -1);
	struct pf_ritem *it;
	size_t n;
	struct pf_lorder_opts o = { .max_bytes = 12288 };
	assert_int_equal(pf_rplan_build(l, &o, &it, &n), 0);
	/* file 0 whole, file 1 cut to one page, file 2 dropped; the directory and the inode-only file kept */
	assert_int_equal(n, 4);
	assert_int_equal(it[0].length, 8192);
	assert_int_equal(it[1].kind, PF_RITEM_DIR);
	assert_int_equal(it[2].file, 1);
	assert_int_equal(it[2].length, 4096);
	assert_int_equal(it[3].kind, PF_RITEM_META);
	free(it);
	pf_image_free(l);

	/* an empty layout plans nothing */
	l = pf_image_new(PF_KIND_LAYOUT);
	assert_int_equal(pf_rplan_build(l, NULL, &it, &n), 0);
	assert_int_equal(n, 0);
	assert_null(it);
	pf_image_free(l);
}

/* init's files (PF_FILE_INIT) get bin 0 to themselves, wherever the layout has them; the rest follows from bin 1
 * and keeps its order; without such files the bins start at 0 as before (test_build_order_and_touch_items). */
static void test_init_head_bin(void **state)
{
	(void)state;
	struct pf_image *l = layout();
	l->files[1].flags |= PF_FILE_INIT;
	add_ext(l, 0, 0, 4096, 100);
	add_ext(l, 1, 0, 4096, 900);
	add_ext(l, 2, 0, 4096, 7);
	struct pf_ritem *it;
	size_t n;
	assert_int_equal(pf_rplan_build(l, NULL, &it, &n), 0);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(it[i].bin, it[i].file == 1 ? 0u : 1u);
	pf_rplan_sort_physical(it, n);
	assert_int_equal(it[0].file, 1); /* first in the sweep though its block is the highest */
	free(it);
	pf_image_free(l);
}

static void test_sort_physical(void **state)
{
	(void)state;
	struct pf_ritem it[] = {
		{ .file = 0, .bin = 1, .phys_known = 1, .physical = 10, .seq = 0 },
		{ .file = 1, .bin = 0, .phys_known = 1, .physical = 900, .seq = 1 },
		{ .file = 2, .bin = 0, .phys_known = 1, .physical = 300, .seq = 2 },
		{ .file = 3, .bin = 0, .phys_known = 0, .seq = 3 },
		{ .file = 4, .bin = 0, .kind = PF_RITEM_DIR, .seq = 4 },
		{ .file = 5, .bin = 0, .fs = 1, .phys_known = 1, .physical = 1, .seq = 5 },
		{ .file = 6, .bin = 0, .phys_known = 0, .seq = 6 },
	};
	pf_rplan_sort_physical(it, 7);
	/* bin 0: directory, unknowns in access order, physical order; then fs 1; then bin 1 */
	static const uint32_t want[] = { 4, 3, 6, 2, 1, 5, 0 };
	for (int i = 0; i < 7; i++)
		assert_int_equal(it[i].file, want[i]);
}

static void test_coalesce(void **state)
{
	(void)state;
	struct pf_ritem it[] = {
		{ .file = 1, .offset = 0, .length = 4096, .phys_known = 1, .physical = 8192 },
		{ .file = 1, .offset = 4096, .length = 8192, .phys_known = 1, .physical = 12288 }, /* merges */
		{ .file = 1, .offset = 12288, .length = 4096, .phys_known = 1, .physical = 0 },    /* not contiguous */
		{ .file = 1, .offset = 16384, .length = 4096, .phys_known = 1, .physical = 4096 }, /* merges */
		{ .file = 2, .offset = 20480, .length = 4096 },
		{ .file = 2, .offset = 24576, .length = 4096 },          /* both unknown: merges */
		{ .file = 2, .offset = 28672, .length = 4096, .bin = 1 }, /* another bin */
		{ .file = 2, .offset = 32768, .length = 4096, .bin = 1, .kind = PF_RITEM_DIR },
	};
	size_t n = pf_rplan_coalesce(it, 8);
	assert_int_equal(n, 5);
	assert_int_equal(it[0].length, 12288);
	assert_int_equal(it[1].offset, 12288);
	assert_int_equal(it[1].length, 8192);
	assert_int_equal(it[2].length, 8192);
	assert_int_equal(it[3].bin, 1);
	assert_int_equal(it[4].kind, PF_RITEM_DIR);
	assert_int_equal(pf_rplan_coalesce(it, 0), 0);
}

/* Slow flash: each file's ranges adjacent on the device merged through small holes, in first-touch order. */
static void test_merge_flash(void **state)
{
	(void)state;
	struct pf_ritem it[] = {
		{ .file = 1, .offset = 65536, .length = 4096, .phys_known = 1, .physical = 1065536, .seq = 0 },
		{ .file = 2, .offset = 0, .length = 4096, .phys_known = 1, .physical = 4096, .seq = 1 },
		/* file 1 from its start, 60 KiB before the first: too far (hole 16 KiB) */
		{ .file = 1, .offset = 0, .length = 4096, .phys_known = 1, .physical = 1000000, .seq = 2 },
		/* 8 KiB after the first, same distance on the device: merges into it, hole read through */
		{ .file = 1, .offset = 77824, .length = 4096, .phys_known = 1, .physical = 1077824, .seq = 3 },
		{ .kind = PF_RITEM_META, .file = 3, .seq = 4 },
		/* right after, but elsewhere on the device: not merged */
		{ .file = 1, .offset = 81920, .length = 4096, .phys_known = 1, .physical = 9000000, .seq = 5 },
		/* overlapping the first, earlier touched through file 2's run: the merged range keeps seq 0 */
		{ .file = 1, .offset = 69632, .length = 4096, .phys_known = 1, .physical = 1069632, .seq = 6 },
		/* unplaced, a small hole: merged; another bin: not */
		{ .file = 4, .offset = 0, .length = 4096, .seq = 7 },
		{ .file = 4, .offset = 8192, .length = 4096, .seq = 8 },
		{ .file = 4, .offset = 12288, .length = 4096, .seq = 9, .bin = 1 },
	};
	size_t n = pf_rplan_merge_flash(it, 10, 16384);
	assert_int_equal(n, 7);
	static const uint32_t want_file[] = { 1, 2, 1, 3, 1, 4, 4 };
	static const uint32_t want_seq[] = { 0, 1, 2, 4, 5, 7, 9 };
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(it[i].file, want_file[i]);
		assert_int_equal(it[i].seq, want_seq[i]);
	}
	assert_int_equal(it[0].offset, 65536);
	assert_int_equal(it[0].length, 16384); /* 64 KiB .. 80 KiB */
	assert_int_equal(it[5].length, 12288);
	assert_int_equal(pf_rplan_merge_flash(it, 0, 16384), 0);
}

static void test_branges(void **state)
{
	(void)state;
	struct pf_brange r[] = { { 100, 1 }, { 5, 2 }, { 6, 3 }, { 40, 0 }, { 20, 1 }, { 100, 1 }, { 130, 1 } };
	struct pf_brange c[7];
	memcpy(c, r, sizeof(r));
	assert_int_equal(pf_branges_count(c, 7), 7); /* 5-8, 20, 100, 130 */
	memcpy(c, r, sizeof(r));
	size_t n = pf_branges_normalize(c, 7, 0);
	assert_int_equal(n, 4);
	assert_int_equal(c[0].start, 5);
	assert_int_equal(c[0].count, 4);
	memcpy(c, r, sizeof(r));
	n = pf_branges_normalize(c, 7, 16); /* 5-8 and 20 join (gap 11); 100 alone; 130 joins? gap 29: no */
	assert_int_equal(n, 3);
	assert_int_equal(c[0].start, 5);
	assert_int_equal(c[0].count, 16);
	assert_int_equal(c[1].start, 100);
	assert_int_equal(c[2].start, 130);
	assert_int_equal(pf_branges_normalize(c, 0, 4), 0);
}

static void test_verify(void **state)
{
	(void)state;
	struct pf_file f = { .ino = 42, .size = 1000, .mtime_ns = 5000000123 };
	struct stat st = { .st_dev = 7, .st_ino = 42, .st_size = 1000, .st_mode = S_IFREG | 0644 };
	st.st_mtim.tv_sec = 5;
	st.st_mtim.tv_nsec = 123;
	assert_int_equal(pf_replay_verify(&f, &st, -1, 7), 0);
	assert_int_equal(pf_replay_verify(&f, &st, -1, 8), -EXDEV);
	st.st_size = 1001;
	assert_int_equal(pf_replay_verify(&f, &st, -1, 7), -ESTALE);
	st.st_size = 1000;
	st.st_mtim.tv_nsec = 124;
	assert_int_equal(pf_replay_verify(&f, &st, -1, 7), -ESTALE);
	st.st_mtim.tv_nsec = 123;
	st.st_ino = 43;
	assert_int_equal(pf_replay_verify(&f, &st, -1, 7), -ESTALE);
	st.st_ino = 42;
	st.st_mode = S_IFIFO | 0644;
	assert_int_equal(pf_replay_verify(&f, &st, -1, 7), -ESTALE);
	/* a directory: inode and type only (entries come and go) */
	f.flags = PF_FILE_DIR;
	st.st_mode = S_IFDIR | 0755;
	st.st_size = 4096;
	assert_int_equal(pf_replay_verify(&f, &st, -1, 7), 0);
	st.st_mode = S_IFREG | 0644;
	assert_int_equal(pf_replay_verify(&f, &st, -1, 7), -ESTALE);
}

/* With the file open, its generation too, where the filesystem answers (ext*, btrfs, xfs; tmpfs: skipped). */
static void test_verify_generation(void **state)
{
	(void)state;
	char dir[96], path[128];
	assert_non_null(pf_test_mkdtemp(dir, sizeof(dir), "pf-replay-gen"));
	snprintf(path, sizeof(path), "%s/data", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	struct stat st;
	unsigned int gen;
	int answers = ioctl(fd, FS_IOC_GETVERSION, &gen) == 0;
	assert_int_equal(fstat(fd, &st), 0);
	struct pf_file f = { .ino = st.st_ino, .mode = st.st_mode, .size = (uint64_t)st.st_size,
			     .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec };
	f.generation = answers ? gen : 1;
	assert_int_equal(pf_replay_verify(&f, &st, fd, st.st_dev), 0);
	f.generation = answers ? gen + 1 : 2;
	assert_int_equal(pf_replay_verify(&f, &st, -1, st.st_dev), 0); /* by stat alone: no generation known */
	assert_int_equal(pf_replay_verify(&f, &st, fd, st.st_dev), answers ? -ESTALE : 0);
	f.generation = 0; /* none recorded: none compared */
	assert_int_equal(pf_replay_verify(&f, &st, fd, st.st_dev), 0);
	close(fd);
	pf_test_rmtree(dir);
	if (!answers)
		skip();
}

/* FIEMAP places the items of a file written in one go (skipped where the filesystem has no FIEMAP: tmpfs). */
static void test_fiemap(void **state)
{
	(void)state;
	char path[] = "/var/tmp/pf-fiemap.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static char buf[1 << 20];
	memset(buf, 'z', sizeof(buf));
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(fsync(fd), 0); /* allocated: no delayed-allocation extents */
	/* it[0]: a stale layout place (moved); it[1]: none known; it[2]: past the end, the layout says somewhere */
	struct pf_ritem it[3] = { { .offset = 0, .length = 4096, .phys_known = 1, .phys_src = PF_RPHYS_LAYOUT,
				    .physical = 4096 },
				  { .offset = 8192, .length = 4096 },
				  { .offset = 4 << 20, .length = 4096, .phys_known = 1, .phys_src = PF_RPHYS_LAYOUT,
				    .physical = 1 << 30 } };
	struct pf_ritem *p[3] = { &it[0], &it[1], &it[2] };
	struct pf_rvec more = { 0 };
	int rc = pf_replay_fiemap(fd, p, 3, &more);
	if (rc == -EOPNOTSUPP || rc == -ENOTTY) {
		close(fd);
		unlink(path);
		skip();
		return;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(more.n, 0);
	assert_true(it[0].phys_known && it[0].phys_src == PF_RPHYS_NOW);
	assert_true(it[1].phys_known && it[1].phys_src == PF_RPHYS_NOW);
	assert_false(it[2].phys_known);
	assert_int_equal(it[2].phys_src, PF_RPHYS_NONE);
	assert_true(it[0].physical > 4096 && it[1].physical > 0);
	assert_int_equal(it[0].physical % 4096, 0);
	assert_true(it[0].moved);
	assert_false(it[1].moved); /* it had no layout place to move from */
	assert_true(it[2].moved);
	uint64_t p0 = it[0].physical;

	/* A range over a hole and a second extent: one piece per place, the hole with the first. */
	assert_int_equal(pwrite(fd, buf, 65536, 3 << 20), 65536);
	assert_int_equal(fsync(fd), 0);
	struct pf_ritem r = { .file = 7, .bin = 2, .seq = 5, .offset = 0, .length = (3 << 20) + 65536 };
	struct pf_ritem *pr = &r;
	rc = pf_replay_fiemap(fd, &pr, 1, &more);
	assert_int_equal(rc, 0);
	assert_int_equal(r.physical, p0);
	if (more.n) { /* the second extent is not where the first one ends */
		assert_int_equal(more.n, 1);
		assert_int_equal(r.length, 3 << 20);
		assert_int_equal(more.v[0].offset, 3 << 20);
		assert_int_equal(more.v[0].length, 65536);
		assert_true(more.v[0].phys_known && more.v[0].phys_src == PF_RPHYS_NOW);
		assert_int_equal(more.v[0].file, 7);
		assert_int_equal(more.v[0].bin, 2);
		assert_int_equal(more.v[0].seq, 5);
	} else {
		assert_int_equal(r.length, (3 << 20) + 65536);
	}
	free(more.v);
	close(fd);
	unlink(path);

	/* FIEMAP refused (a pipe): an error, the layout's places stand. */
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	struct pf_ritem keep = { .offset = 0, .length = 4096, .phys_known = 1, .phys_src = PF_RPHYS_LAYOUT,
				 .physical = 12345 * 4096 };
	struct pf_ritem *pk = &keep;
	struct pf_rvec none = { 0 };
	assert_true(pf_replay_fiemap(pfd[0], &pk, 1, &none) < 0);
	assert_true(keep.phys_known && keep.phys_src == PF_RPHYS_LAYOUT && keep.physical == 12345 * 4096);
	assert_false(keep.moved);
	assert_int_equal(none.n, 0);
	close(pfd[0]);
	close(pfd[1]);
}

/* End to end on a file in a temporary directory (whatever filesystem it is on). */
static void test_replay_tmpfile(void **state)
{
	(void)state;
	char dir[96], path[128], gone[128];
	assert_non_null(pf_test_mkdtemp(dir, sizeof(dir), "pf-replay-unit"));
	snprintf(path, sizeof(path), "%s/data", dir);
	snprintf(gone, sizeof(gone), "%s/gone", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	static char buf[65536];
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	close(fd);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);

	struct pf_image *l = pf_image_new(PF_KIND_LAYOUT);
	struct pf_fs fs = { .mountpoint = dir };
	assert_int_equal(pf_image_add_fs(l, &fs), 0);
	struct pf_file f = { .ino = st.st_ino, .mode = st.st_mode, .size = (uint64_t)st.st_size,
			     .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, .first_order = 1,
			     .path = path };
	assert_int_equal(pf_image_add_file(l, &f), 0);
	f.path = gone;
	f.first_order = 2;
	assert_int_equal(pf_image_add_file(l, &f), 1);
	struct pf_extent e = { .file = 0, .offset = 0, .length = 65536 };
	assert_int_equal(pf_image_add_extent(l, &e), 0);
	e.file = 1;
	assert_int_equal(pf_image_add_extent(l, &e), 1);

	for (int medium = PF_MEDIUM_FORCE_ROTATIONAL; medium <= PF_MEDIUM_FORCE_SOLID; medium++) {
		struct pf_replay_opts o = { .medium_override = medium, .threads = 2, .timeout_s = 10 };
		struct pf_replay_stats s;
		assert_int_equal(pf_replay(l, &o, &s), 0);
		assert_int_equal(s.files, 1);
		assert_int_equal(s.files_skipped, 1);
		assert_int_equal(s.files_missing, 1);
		assert_int_equal(s.bytes, 65536);
		assert_int_equal(s.medium, medium == PF_MEDIUM_FORCE_SOLID ? PF_MEDIUM_SOLID : PF_MEDIUM_ROTATIONAL);
		assert_false(s.timed_out);
	}
	/* stopped before it starts: reads nothing, says so */
	volatile sig_atomic_t stop = 1;
	struct pf_replay_opts o = { .threads = 2, .stop = &stop };
	struct pf_replay_stats s;
	assert_int_equal(pf_replay(l, &o, &s), 0);
	assert_int_equal(s.bytes, 0);
	assert_true(s.stopped);
	/* the file changed: skipped, not read */
	fd = open(path, O_WRONLY | O_APPEND);
	assert_int_equal(write(fd, "y", 1), 1);
	close(fd);
	o.stop = NULL;
	assert_int_equal(pf_replay(l, &o, &s), 0);
	assert_int_equal(s.files, 0);
	assert_int_equal(s.files_changed, 1);
	assert_int_equal(s.bytes, 0);
	/* a trace is refused */
	l->kind = PF_KIND_TRACE;
	assert_int_equal(pf_replay(l, &o, &s), PF_EKIND);
	pf_image_free(l);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_order_and_touch_items),
		cmocka_unit_test(test_build_max_bytes),
		cmocka_unit_test(test_init_head_bin),
		cmocka_unit_test(test_sort_physical),
		cmocka_unit_test(test_coalesce),
		cmocka_unit_test(test_merge_flash),
		cmocka_unit_test(test_branges),
		cmocka_unit_test(test_verify),
		cmocka_unit_test(test_verify_generation),
		cmocka_unit_test(test_fiemap),
		cmocka_unit_test(test_replay_tmpfile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
