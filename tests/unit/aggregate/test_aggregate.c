/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Aggregation of traces into a layout: the vote on files and pages, identity across boots, order, the on-disk
 * check, bounds, physical blocks, and the 'prefetchd aggregate' command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "aggregate.h"
#include "commands.h"
#include "format.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PG 4096u
#define KB(x) ((uint64_t)(x) * 1024)

/* ---- building traces ---- */

static struct pf_image *trace_new(uint8_t uuid_byte, uint64_t dev)
{
	struct pf_image *t = pf_image_new(PF_KIND_TRACE);
	assert_non_null(t);
	struct pf_fs fs = { .dev = dev, .block_size = 4096, .medium = PF_MEDIUM_SOLID, .mountpoint = "/" };
	memset(fs.uuid, uuid_byte, 16);
	assert_int_equal(pf_image_add_fs(t, &fs), 0);
	return t;
}

static int add_fs(struct pf_image *t, uint8_t uuid_byte, const char *mnt, uint64_t dev)
{
	struct pf_fs fs = { .dev = dev, .block_size = 4096, .medium = PF_MEDIUM_ROTATIONAL, .mountpoint = (char *)mnt };
	memset(fs.uuid, uuid_byte, 16);
	int i = pf_image_add_fs(t, &fs);
	assert_true(i >= 0);
	return i;
}

/* A file on fs 0 with the next first_order, size 64 KiB, no extents. */
static int add_file_fs(struct pf_image *t, uint32_t fs, uint64_t ino, const char *path, uint64_t size, uint32_t flags)
{
	struct pf_file f = { .fs = fs, .flags = flags, .ino = ino, .generation = 1,
			     .mode = (flags & PF_FILE_DIR) ? 040755 : 0100644, .size = size, .mtime_ns = 1000,
			     .first_ns = 1000000ull * (t->nfiles + 1), .first_order = t->nfiles + 1, .boots = 1,
			     .path = (char *)path };
	int i = pf_image_add_file(t, &f);
	assert_true(i >= 0);
	return i;
}

static int add_file(struct pf_image *t, uint64_t ino, const char *path)
{
	return add_file_fs(t, 0, ino, path, KB(64), 0);
}

static void add_ext(struct pf_image *t, int file, uint64_t off, uint64_t len)
{
	struct pf_extent e = { .file = (uint32_t)file, .offset = off, .length = len };
	assert_true(pf_image_add_extent(t, &e) >= 0);
}

static void add_phys(struct pf_image *t, int file, uint64_t off, uint64_t len, uint64_t phys)
{
	struct pf_extent e = { .file = (uint32_t)file, .flags = PF_EXT_PHYS_KNOWN, .offset = off, .length = len,
			       .physical = phys };
	assert_true(pf_image_add_extent(t, &e) >= 0);
}

static void free_all(struct pf_image **t, size_t n, struct pf_image *layout)
{
	for (size_t i = 0; i < n; i++)
		pf_image_free(t[i]);
	pf_image_free(layout);
}

static struct pf_image *run(struct pf_image **t, size_t n, const struct pf_aggregate_opts *o,
			    struct pf_aggregate_report *rep)
{
	struct pf_image *l = NULL;
	assert_int_equal(pf_aggregate(t, n, o, &l, rep), 0);
	assert_non_null(l);
	assert_int_equal(l->kind, PF_KIND_LAYOUT);
	/* every layout must survive its own format */
	void *buf;
	size_t len;
	struct pf_image *back = NULL;
	assert_int_equal(pf_image_encode(l, &buf, &len), 0);
	assert_int_equal(pf_image_decode(buf, len, &back), 0);
	free(buf);
	pf_image_free(back);
	/* the report adds up */
	assert_int_equal(rep->files_seen, rep->files_kept + rep->files_unstable + rep->files_vanished +
						 rep->files_changed + rep->files_cut);
	assert_int_equal(rep->files_kept, l->nfiles);
	assert_int_equal(rep->bytes_kept, pf_image_bytes(l));
	for (uint32_t i = 0; i < l->nfiles; i++)
		assert_int_equal(l->files[i].first_order, i + 1);
	return l;
}

static int find(const struct pf_image *l, const char *path)
{
	for (uint32_t i = 0; i < l->nfiles; i++)
		if (!strcmp(l->files[i].path, path))
			return (int)i;
	return -1;
}

/* The extents of layout file i as "off+len[@phys]" joined by spaces (KiB units). */
static const char *extents_of(const struct pf_image *l, int file)
{
	static char buf[512];
	buf[0] = '\0';
	for (uint32_t i = 0; i < l->nextents; i++) {
		const struct pf_extent *e = &l->extents[i];
		if ((int)e->file != file)
			continue;
		size_t n = strlen(buf);
		if (e->flags & PF_EXT_PHYS_KNOWN)
			snprintf(buf + n, sizeof(buf) - n, "%s%llu+%llu@%llu", n ? " " : "",
				 (unsigned long long)e->offset / 1024, (unsigned long long)e->length / 1024,
				 (unsigned long long)e->physical);
		else
			snprintf(buf + n, sizeof(buf) - n, "%s%llu+%llu", n ? " " : "", (unsigned long long)e->offset / 1024,
				 (unsigned long long)e->length / 1024);
	}
	return buf;
}

/* ---- tests ---- */

static void test_single_trace_passthrough(void **state)
{
	(void)state;
	struct pf_image *t[1] = { trace_new(0xaa, 0x801) };
	int dir = add_file_fs(t[0], 0, 2, "/etc", 4096, PF_FILE_DIR);
	int a = add_file(t[0], 11, "/etc/ld.so.cache");
	int b = add_file(t[0], 12, "/usr/lib/libc.so.6");
	t[0]->files[b].flags |= PF_FILE_EXEC;
	add_ext(t[0], dir, 0, PG);
	add_phys(t[0], a, 0, KB(8), 1000);
	add_ext(t[0], b, KB(16), KB(4));
	add_ext(t[0], b, 100, 10); /* unaligned: becomes page 0 */
	add_ext(t[0], a, KB(8), KB(4)); /* no physical: a separate extent after the known one */
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 1, NULL, &rep);
	assert_int_equal(rep.traces, 1);
	assert_int_equal(rep.files_seen, 3);
	assert_int_equal(rep.files_kept, 3);
	assert_int_equal(l->boots, 1);
	assert_int_equal(l->nfs, 1);
	assert_int_equal(l->fs[0].dev, 0x801);
	assert_int_equal(l->fs[0].uuid[5], 0xaa);
	assert_string_equal(l->files[0].path, "/etc");
	assert_string_equal(l->files[1].path, "/etc/ld.so.cache");
	assert_string_equal(l->files[2].path, "/usr/lib/libc.so.6");
	assert_int_equal(l->files[2].flags, PF_FILE_EXEC);
	assert_int_equal(l->files[1].ino, 11);
	assert_int_equal(l->files[1].boots, 1);
	assert_int_equal(l->files[1].first_ns, 2000000);
	assert_string_equal(extents_of(l, 0), "0+4");
	assert_string_equal(extents_of(l, 1), "0+8@1000 8+4");
	assert_string_equal(extents_of(l, 2), "0+4 16+4");
	/* extents in layout order: by file, then offset */
	for (uint32_t i = 1; i < l->nextents; i++)
		assert_true(l->extents[i - 1].file < l->extents[i].file ||
			    (l->extents[i - 1].file == l->extents[i].file &&
			     l->extents[i - 1].offset < l->extents[i].offset));
	assert_int_equal(rep.bytes_kept, KB(24));
	free_all(t, 1, l);
}

static void test_stable_and_unstable(void **state)
{
	(void)state;
	struct pf_image *t[3];
	for (int i = 0; i < 3; i++)
		t[i] = trace_new(1, 0x800 + i);
	for (int i = 0; i < 3; i++)
		add_file(t[i], 10, "/all");
	add_file(t[1], 20, "/two-newest");
	add_file(t[2], 20, "/two-newest");
	add_file(t[0], 30, "/first-and-last");
	add_file(t[2], 30, "/first-and-last");
	add_file(t[0], 40, "/only-oldest");
	add_file(t[2], 50, "/only-newest");
	add_file(t[0], 60, "/gone-from-two-newest");
	add_file(t[1], 70, "/only-middle");
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, NULL, &rep);
	assert_int_equal(rep.files_seen, 7);
	assert_int_equal(rep.files_kept, 3);
	assert_int_equal(rep.files_unstable, 4);
	assert_true(find(l, "/all") >= 0);
	assert_true(find(l, "/two-newest") >= 0);
	assert_true(find(l, "/first-and-last") >= 0);
	assert_int_equal(find(l, "/only-oldest"), -1);
	assert_int_equal(find(l, "/only-newest"), -1);
	assert_int_equal(find(l, "/gone-from-two-newest"), -1);
	assert_int_equal(find(l, "/only-middle"), -1);
	assert_int_equal(l->files[find(l, "/all")].boots, 3);
	assert_int_equal(l->files[find(l, "/two-newest")].boots, 2);
	assert_int_equal(l->boots, 3);
	free_all(t, 3, l);
}

/* Even counts: exactly half is enough only with the newest trace, so a file leaves once gone from the newer
 * half, and with two traces the newest decides. */
static void test_vote_even_counts(void **state)
{
	(void)state;
	struct pf_image *t[4];
	for (int i = 0; i < 4; i++)
		t[i] = trace_new(1, 0x800);
	add_file(t[0], 10, "/old-half");
	add_file(t[1], 10, "/old-half");
	add_file(t[2], 20, "/new-half");
	add_file(t[3], 20, "/new-half");
	add_file(t[1], 30, "/middle-two");
	add_file(t[2], 30, "/middle-two");
	for (int i = 0; i < 3; i++)
		add_file(t[i], 40, "/three-oldest");
	add_file(t[3], 50, "/only-newest");
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 4, NULL, &rep);
	assert_int_equal(l->nfiles, 2);
	assert_true(find(l, "/new-half") >= 0);
	assert_true(find(l, "/three-oldest") >= 0);
	assert_int_equal(rep.files_unstable, 3);
	pf_image_free(l);

	/* two traces: what the newest has */
	l = run(t + 2, 2, NULL, &rep);
	assert_int_equal(l->nfiles, 2);
	assert_true(find(l, "/new-half") >= 0);
	assert_true(find(l, "/only-newest") >= 0);
	assert_true(find(l, "/middle-two") < 0);
	assert_true(find(l, "/three-oldest") < 0);
	free_all(t, 4, l);
}

static void test_page_majority(void **state)
{
	(void)state;
	struct pf_image *t[3];
	int f[3];
	for (int i = 0; i < 3; i++) {
		t[i] = trace_new(1, 0x800);
		f[i] = add_file(t[i], 10, "/lib");
	}
	add_ext(t[0], f[0], 0, KB(12));      /* pages 0 1 2 */
	add_ext(t[1], f[1], KB(8), KB(8));   /* pages 2 3 (listed out of order) */
	add_ext(t[1], f[1], KB(4), KB(4));   /* page 1 */
	add_ext(t[2], f[2], KB(8), KB(4));   /* page 2 */
	add_ext(t[2], f[2], KB(20), KB(4));  /* page 5 */
	add_ext(t[2], f[2], KB(60), KB(40)); /* beyond the 64 KiB file: clipped to page 15 */
	add_ext(t[0], f[0], KB(60), KB(4));
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, NULL, &rep);
	assert_int_equal(l->nfiles, 1);
	/* page 0: 1 of 3, pages 1-2: 2 and 3 of 3, page 3: 1, page 5: 1, page 15: 2 */
	assert_string_equal(extents_of(l, 0), "4+8 60+4");
	assert_int_equal(rep.bytes_kept, KB(12));
	free_all(t, 3, l);
}

/* Intervals, not bitmaps: a sparse 16 TiB file costs nothing, and page rounding near the end of the range holds. */
static void test_sparse_huge_file(void **state)
{
	(void)state;
	const uint64_t TiB = 1ull << 40;
	struct pf_image *t[3];
	for (int i = 0; i < 3; i++) {
		t[i] = trace_new(1, 0x800);
		int f = add_file_fs(t[i], 0, 10, "/var/lib/vm.img", 16 * TiB + 100, 0);
		add_ext(t[i], f, 0, PG);
		add_ext(t[i], f, 9 * TiB + (uint64_t)i * PG, 2 * PG); /* pages 9T+1, 9T+2 in two traces */
		add_ext(t[i], f, 16 * TiB, 100);                       /* the partial last page */
	}
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, NULL, &rep);
	assert_int_equal(l->nextents, 3);
	assert_int_equal(l->extents[1].offset, 9 * TiB + PG);
	assert_int_equal(l->extents[1].length, 2 * PG);
	assert_int_equal(l->extents[2].offset, 16 * TiB);
	assert_int_equal(l->extents[2].length, PG);
	free_all(t, 3, l);
}

static void test_order_merged_rank(void **state)
{
	(void)state;
	static const char *const names[] = { "/a", "/b", "/c", "/d", "/e" };
	static const int order[3][5] = { { 0, 1, 2, 3, 4 }, { 1, 0, 2, 4, 3 }, { 0, 1, 3, 2, 4 } };
	struct pf_image *t[3];
	for (int i = 0; i < 3; i++) {
		t[i] = trace_new(1, 0x800);
		if (i == 1) /* a longer boot with more files: normalised ranks keep it from weighing more */
			for (int k = 0; k < 5; k++) {
				char p[32];
				snprintf(p, sizeof(p), "/noise%d", k);
				add_file(t[i], 900 + k, p);
			}
		for (int k = 0; k < 5; k++)
			add_file(t[i], 10 + order[i][k], names[order[i][k]]);
		if (i == 1) /* move the noise to the end of the order */
			for (uint32_t k = 0; k < t[i]->nfiles; k++)
				t[i]->files[k].first_order = k < 5 ? k + 6 : k - 4;
	}
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, NULL, &rep);
	assert_int_equal(l->nfiles, 5);
	for (int k = 0; k < 5; k++)
		assert_string_equal(l->files[k].path, names[k]);
	assert_int_equal(l->files[0].boots, 3);
	free_all(t, 3, l);
}

/* A boot that touches many more files inflates raw ranks: X is early in the small boot and late in the big one,
 * Y the reverse; only normalised ranks put X (0.5 and 0.8) before Y (0.4 and 1.0). */
static void test_order_normalised(void **state)
{
	(void)state;
	struct pf_image *t[3];
	for (int i = 0; i < 3; i++)
		t[i] = trace_new(1, 0x800);
	add_file(t[0], 1, "/a");
	add_file(t[0], 100, "/X"); /* 2 of 4 */
	add_file(t[0], 2, "/b");
	add_file(t[0], 3, "/c");
	for (int k = 1; k <= 20; k++) {
		char p[32];
		snprintf(p, sizeof(p), "/noise%d", k);
		add_file(t[1], k == 8 ? 200 : k == 16 ? 100 : 1000 + k, k == 8 ? "/Y" : k == 16 ? "/X" : p);
	}
	add_file(t[2], 4, "/d");
	add_file(t[2], 5, "/e");
	add_file(t[2], 6, "/f");
	add_file(t[2], 200, "/Y"); /* 4 of 4 */
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, NULL, &rep);
	assert_int_equal(l->nfiles, 2);
	assert_string_equal(l->files[0].path, "/X");
	assert_string_equal(l->files[1].path, "/Y");
	free_all(t, 3, l);
}

static void test_order_ties_and_dirs(void **state)
{
	(void)state;
	struct pf_image *t[2];
	for (int i = 0; i < 2; i++)
		t[i] = trace_new(1, 0x800);
	/* /x and /y swap ranks: equal mean rank, /y is earlier on average in time */
	int x0 = add_file(t[0], 10, "/x"), y0 = add_file(t[0], 11, "/y");
	int y1 = add_file(t[1], 11, "/y"), x1 = add_file(t[1], 10, "/x");
	t[0]->files[x0].first_ns = 100;
	t[0]->files[y0].first_ns = 110;
	t[1]->files[y1].first_ns = 50;
	t[1]->files[x1].first_ns = 400;
	for (int k = 0; k < 3; k++) /* same file count in both traces, so that the mean ranks tie exactly */
		add_file(t[0], 30 + k, "/dropped");
	/* a directory recorded after a file below it in the newest trace, and only there */
	add_file(t[1], 20, "/srv/data/file");
	add_file_fs(t[1], 0, 21, "/srv/data", 4096, PF_FILE_DIR);
	add_file_fs(t[1], 0, 22, "/srv", 4096, PF_FILE_DIR);
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 2, NULL, &rep);
	assert_int_equal(l->nfiles, 5);
	assert_string_equal(l->files[0].path, "/y");
	assert_string_equal(l->files[1].path, "/x");
	assert_int_equal(l->files[0].first_ns, 80);
	assert_int_equal(l->files[1].first_ns, 250);
	assert_string_equal(l->files[2].path, "/srv");
	assert_string_equal(l->files[3].path, "/srv/data");
	assert_string_equal(l->files[4].path, "/srv/data/file");
	free_all(t, 2, l);
}

static char tmpdir[160];

static void write_file(const char *path, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	for (size_t done = 0; done < size;) {
		size_t n = size - done < sizeof(buf) ? size - done : sizeof(buf);
		assert_int_equal(write(fd, buf, n), (ssize_t)n);
		done += n;
	}
	assert_int_equal(close(fd), 0);
}

static void add_real(struct pf_image *t, const char *path)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	struct pf_file f = { .fs = 0, .flags = S_ISDIR(st.st_mode) ? PF_FILE_DIR : 0, .ino = st.st_ino,
			     .mode = st.st_mode, .size = (uint64_t)st.st_size,
			     .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
			     .first_order = t->nfiles + 1, .boots = 1, .path = (char *)path };
	int i = pf_image_add_file(t, &f);
	assert_true(i >= 0);
	if (st.st_size)
		add_ext(t, i, 0, (uint64_t)st.st_size);
}

static void test_vanished_and_changed(void **state)
{
	(void)state;
	assert_non_null(pf_test_mkdtemp(tmpdir, sizeof(tmpdir), "pf-agg"));
	char p[5][192];
	for (int i = 0; i < 5; i++)
		snprintf(p[i], sizeof(p[i]), "%s/f%d", tmpdir, i);
	char repl[192];
	snprintf(repl, sizeof(repl), "%s/replacement", tmpdir);
	for (int i = 0; i < 5; i++)
		write_file(p[i], 8192);
	write_file(repl, 8192); /* exists before the traces: surely another inode than f4 */
	struct pf_image *t[3];
	for (int i = 0; i < 3; i++) {
		t[i] = trace_new(1, 0x800);
		add_real(t[i], tmpdir);
		for (int k = 0; k < 5; k++)
			add_real(t[i], p[k]);
	}
	assert_int_equal(unlink(p[1]), 0);          /* vanished */
	write_file(p[2], 12288);                     /* same inode, new size */
	struct timespec ts[2] = { { 1000000, 0 }, { 1000000, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, p[3], ts, 0), 0); /* same size, new mtime */
	assert_int_equal(rename(repl, p[4]), 0);    /* replaced: another inode under the old name */

	struct pf_aggregate_opts o = { .check_files = 1 };
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, &o, &rep);
	assert_int_equal(rep.files_seen, 6);
	assert_int_equal(rep.files_vanished, 1);
	assert_int_equal(rep.files_changed, 3);
	assert_int_equal(rep.files_kept, 2);
	/* the directory whose mtime moved with the new entries stays */
	assert_string_equal(l->files[0].path, tmpdir);
	assert_string_equal(l->files[1].path, p[0]);
	pf_image_free(l);

	/* without the check everything stays */
	o.check_files = 0;
	l = run(t, 3, &o, &rep);
	assert_int_equal(rep.files_kept, 6);
	free_all(t, 3, l);
	for (int i = 0; i < 5; i++)
		unlink(p[i]);
	assert_int_equal(rmdir(tmpdir), 0);
}

/* The same path with a new inode in the newest trace (package upgrade): the old identity goes, the new one
 * counts the path's boots and brings only its own pages. */
static void test_superseded_identity(void **state)
{
	(void)state;
	struct pf_image *t[3];
	for (int i = 0; i < 3; i++)
		t[i] = trace_new(1, 0x800);
	int a0 = add_file(t[0], 100, "/usr/lib/libfoo.so");
	int a1 = add_file(t[1], 100, "/usr/lib/libfoo.so");
	int b2 = add_file(t[2], 200, "/usr/lib/libfoo.so");
	add_ext(t[0], a0, 0, KB(16));
	add_ext(t[1], a1, 0, KB(16));
	add_ext(t[2], b2, KB(32), KB(4));
	/* a rename keeps the identity: counted as one file with the newest path */
	add_file(t[0], 300, "/old-name");
	add_file(t[1], 300, "/old-name");
	add_file(t[2], 300, "/new-name");
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, NULL, &rep);
	assert_int_equal(rep.files_seen, 3);
	assert_int_equal(rep.files_changed, 1);
	assert_int_equal(l->nfiles, 2);
	int i = find(l, "/usr/lib/libfoo.so");
	assert_true(i >= 0);
	assert_int_equal(l->files[i].ino, 200);
	assert_int_equal(l->files[i].boots, 3);
	assert_string_equal(extents_of(l, i), "32+4");
	assert_true(find(l, "/new-name") >= 0);
	assert_int_equal(l->files[find(l, "/new-name")].boots, 3);
	free_all(t, 3, l);
}

static void test_fs_by_uuid(void **state)
{
	(void)state;
	struct pf_image *t[3];
	t[0] = trace_new(7, 0x801);
	t[1] = trace_new(9, 0x10); /* another fs first in this trace: indexes differ */
	add_fs(t[1], 7, "/", 0x802);
	t[2] = trace_new(7, 0x803);
	t[2]->fs[0].block_size = 1024;
	add_file_fs(t[0], 0, 42, "/etc/fstab", KB(4), 0);
	add_file_fs(t[1], 1, 42, "/etc/fstab", KB(4), 0);
	add_file_fs(t[1], 0, 42, "/mnt/other", KB(4), 0); /* same inode number on another fs: another file */
	add_file_fs(t[2], 0, 42, "/etc/fstab", KB(4), 0);
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, NULL, &rep);
	assert_int_equal(rep.files_seen, 2);
	assert_int_equal(l->nfiles, 1);
	assert_int_equal(l->files[0].boots, 3);
	assert_int_equal(l->nfs, 2);
	int fs = (int)l->files[0].fs;
	assert_int_equal(l->fs[fs].uuid[0], 7);
	assert_int_equal(l->fs[fs].dev, 0x803);     /* newest */
	assert_int_equal(l->fs[fs].block_size, 1024);
	uint32_t fsi;
	assert_true(pf_image_find_fs(l, (const uint8_t[16]){ 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9 }, &fsi));
	assert_false(pf_image_find_fs(l, (const uint8_t[16]){ 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8 }, &fsi));
	free_all(t, 3, l);
}

static void test_different_filesystems(void **state)
{
	(void)state;
	struct pf_image *t[2];
	for (int i = 0; i < 2; i++) {
		t[i] = trace_new(1, 0x800 + i);
		int home = add_fs(t[i], 2, "/home", 0x900 + i);
		int e0 = add_file_fs(t[i], 0, 12, "/etc/passwd", KB(4), 0);
		int e1 = add_file_fs(t[i], (uint32_t)home, 12, "/home/u/.profile", KB(4), 0);
		add_phys(t[i], e0, 0, KB(4), 10);
		add_phys(t[i], e1, 0, KB(4), 20);
	}
	/* no UUID: recognised by mount point */
	struct pf_fs nouuid = { .block_size = 4096, .mountpoint = "/boot" };
	int b0 = pf_image_add_fs(t[0], &nouuid), b1 = pf_image_add_fs(t[1], &nouuid);
	add_file_fs(t[0], (uint32_t)b0, 5, "/boot/vmlinuz", KB(4), 0);
	add_file_fs(t[1], (uint32_t)b1, 5, "/boot/vmlinuz", KB(4), 0);
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 2, NULL, &rep);
	assert_int_equal(l->nfs, 3);
	assert_int_equal(l->nfiles, 3);
	int p = find(l, "/etc/passwd"), h = find(l, "/home/u/.profile"), b = find(l, "/boot/vmlinuz");
	assert_true(p >= 0 && h >= 0 && b >= 0);
	assert_int_equal(l->files[p].boots, 2);
	assert_int_equal(l->files[h].boots, 2);
	assert_int_equal(l->files[b].boots, 2);
	assert_string_equal(l->fs[l->files[h].fs].mountpoint, "/home");
	assert_string_equal(l->fs[l->files[b].fs].mountpoint, "/boot");
	assert_string_equal(l->fs[l->files[p].fs].mountpoint, "/");
	assert_string_equal(extents_of(l, h), "0+4@20");
	free_all(t, 2, l);
}

/* btrfs subvolumes: records with one UUID (PF_FS_SUBVOL), told apart by mount point; the same inode number in
 * both is two files.  A subvolume mounted elsewhere in the next boot is another record. */
static void test_btrfs_subvolumes(void **state)
{
	(void)state;
	struct pf_image *t[2];
	for (int i = 0; i < 2; i++) {
		t[i] = trace_new(5, 0x2a);
		t[i]->fs[0].flags = PF_FS_SUBVOL | (i ? PF_FS_GONE : 0);
		int home = add_fs(t[i], 5, "/home", 0x2b);
		t[i]->fs[home].flags = PF_FS_SUBVOL;
		add_file_fs(t[i], 0, 257, "/etc/passwd", KB(4), 0);
		add_file_fs(t[i], (uint32_t)home, 257, "/home/u/.profile", KB(4), 0);
	}
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 2, NULL, &rep);
	assert_int_equal(l->nfs, 2);
	assert_int_equal(l->nfiles, 2);
	int p = find(l, "/etc/passwd"), h = find(l, "/home/u/.profile");
	assert_true(p >= 0 && h >= 0);
	assert_true(l->files[p].fs != l->files[h].fs);
	assert_string_equal(l->fs[l->files[p].fs].mountpoint, "/");
	assert_string_equal(l->fs[l->files[h].fs].mountpoint, "/home");
	for (uint32_t i = 0; i < l->nfs; i++) /* the flag stays, gone does not */
		assert_int_equal(l->fs[i].flags, PF_FS_SUBVOL);
	free_all(t, 2, l);
}

static void test_bounds(void **state)
{
	(void)state;
	struct pf_image *t[1] = { trace_new(1, 0x800) };
	for (int k = 0; k < 4; k++) {
		char p[16];
		snprintf(p, sizeof(p), "/f%d", k);
		int i = add_file(t[0], 10 + k, p);
		add_ext(t[0], i, 0, KB(4));
		add_ext(t[0], i, KB(16), KB(4)); /* two extents of 4 KiB: 8 KiB per file */
	}
	struct pf_aggregate_opts o = { .max_bytes = KB(20) };
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 1, &o, &rep);
	/* f0, f1 whole (16 KiB), f2 cut to its first 4 KiB, f3 cut */
	assert_int_equal(l->nfiles, 3);
	assert_string_equal(extents_of(l, 2), "0+4");
	assert_int_equal(rep.files_kept, 3);
	assert_int_equal(rep.files_cut, 1);
	assert_int_equal(rep.bytes_kept, KB(20));
	assert_int_equal(rep.bytes_cut, KB(12));
	pf_image_free(l);

	o = (struct pf_aggregate_opts){ .max_files = 2 };
	l = run(t, 1, &o, &rep);
	assert_int_equal(l->nfiles, 2);
	assert_string_equal(l->files[1].path, "/f1");
	assert_int_equal(rep.files_cut, 2);
	assert_int_equal(rep.bytes_cut, KB(16));
	pf_image_free(l);

	/* the bound falls exactly at a file's end: the next one is cut, not kept empty */
	o = (struct pf_aggregate_opts){ .max_bytes = KB(16), .max_files = 10 };
	l = run(t, 1, &o, &rep);
	assert_int_equal(l->nfiles, 2);
	assert_int_equal(rep.files_cut, 2);
	assert_int_equal(rep.bytes_kept, KB(16));
	free_all(t, 1, l);
}

static void test_physical_from_newest(void **state)
{
	(void)state;
	struct pf_image *t[2];
	int f[2];
	for (int i = 0; i < 2; i++) {
		t[i] = trace_new(1, 0x800);
		f[i] = add_file(t[i], 10, "/big");
	}
	/* older trace: all 16 KiB at block 500; newest: the first 8 KiB moved to block 100 (reorder ran) */
	add_phys(t[0], f[0], 0, KB(16), 500);
	add_phys(t[1], f[1], 0, KB(8), 100);
	add_ext(t[1], f[1], KB(8), KB(8));
	add_phys(t[1], f[1], KB(24), KB(4), 104); /* not contiguous in offset: its own extent */
	add_phys(t[1], f[1], KB(28), KB(4), 105); /* contiguous on both sides: merged */
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 2, NULL, &rep);
	assert_string_equal(extents_of(l, 0), "0+8@100 8+8@502 24+8@104");
	free_all(t, 2, l);
}

/* An incomplete trace votes for the files it has, never against the ones it lacks; complete traces still do. */
static void test_incomplete_traces(void **state)
{
	(void)state;
	struct pf_image *t[3];
	for (int i = 0; i < 3; i++)
		t[i] = trace_new(1, 0x800);
	t[2]->flags = PF_IMG_INCOMPLETE | PF_IMG_FILE_CAP;
	for (int i = 0; i < 3; i++)
		add_file(t[i], 10, "/all");
	add_file(t[0], 20, "/oldest-two");      /* lacking from the incomplete newest only: 2 of 2 voters */
	add_file(t[1], 20, "/oldest-two");
	add_file(t[1], 30, "/middle");          /* 1 of 2 voters, and the newer voter: kept */
	add_file(t[0], 40, "/oldest");          /* 1 of 2 voters, the complete t[1] lacks it: dropped */
	add_file(t[2], 50, "/only-incomplete"); /* 1 of 3 (it votes where it has the file): dropped */
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, NULL, &rep);
	assert_true(find(l, "/all") >= 0);
	assert_true(find(l, "/oldest-two") >= 0);
	assert_true(find(l, "/middle") >= 0);
	assert_int_equal(find(l, "/oldest"), -1);
	assert_int_equal(find(l, "/only-incomplete"), -1);
	assert_int_equal(rep.files_unstable, 2);
	assert_int_equal(l->flags, PF_IMG_INCOMPLETE | PF_IMG_FILE_CAP);
	pf_image_free(l);

	/* two traces, the newest incomplete: what it lacks stays (before, the newest alone decided) */
	l = run(t + 1, 2, NULL, &rep);
	assert_true(find(l, "/middle") >= 0);
	assert_true(find(l, "/oldest-two") >= 0);
	assert_true(find(l, "/only-incomplete") >= 0);
	free_all(t, 3, l);
}

/* A filesystem gone during a trace: that trace votes neither for nor against its files, nor on their pages. */
static void test_gone_filesystem(void **state)
{
	(void)state;
	struct pf_image *t[2];
	for (int i = 0; i < 2; i++) {
		t[i] = trace_new(1, 0x800);
		add_fs(t[i], 2, "/boot", 0x810);
		add_file(t[i], 10, "/a");
	}
	t[1]->flags = PF_IMG_INCOMPLETE | PF_IMG_FS_GONE;
	t[1]->fs[1].flags = PF_FS_GONE;
	int k0 = add_file_fs(t[0], 1, 20, "/boot/kernel", KB(64), 0);
	add_ext(t[0], k0, 0, KB(64));
	/* unmounted, then mounted again before the end: the file was reopened, its pages evicted */
	add_file_fs(t[1], 1, 20, "/boot/kernel", KB(64), PF_FILE_METADATA);
	add_file_fs(t[1], 1, 30, "/boot/only-gone", KB(64), 0);
	add_file(t[1], 40, "/newest-root-file"); /* the root filesystem was not gone: t[1] votes there */
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 2, NULL, &rep);
	int k = find(l, "/boot/kernel");
	assert_true(k >= 0);
	assert_string_equal(extents_of(l, k), "0+64"); /* t[1]'s empty record voted no page away */
	assert_int_equal(find(l, "/boot/only-gone"), -1);
	assert_true(find(l, "/a") >= 0);
	assert_true(find(l, "/newest-root-file") >= 0);
	assert_int_equal(l->flags, PF_IMG_INCOMPLETE | PF_IMG_FS_GONE);
	assert_int_equal(l->fs[1].flags, 0); /* gone in one trace is not a property of the layout's filesystem */
	free_all(t, 2, l);
}

static void test_empty_and_errors(void **state)
{
	(void)state;
	struct pf_aggregate_report rep;
	struct pf_image *l = run(NULL, 0, NULL, &rep);
	assert_int_equal(l->nfiles, 0);
	assert_int_equal(l->nfs, 0);
	assert_int_equal(rep.files_seen, 0);
	assert_int_equal(rep.traces, 0);
	pf_image_free(l);

	/* traces without files */
	struct pf_image *t[2] = { trace_new(1, 1), trace_new(1, 2) };
	t[1]->flags = PF_IMG_INCOMPLETE;
	t[0]->lost_events = 3;
	t[1]->lost_events = 4;
	l = run(t, 2, NULL, &rep);
	assert_int_equal(l->nfiles, 0);
	assert_int_equal(l->nfs, 1);
	assert_int_equal(l->flags & PF_IMG_INCOMPLETE, PF_IMG_INCOMPLETE);
	assert_int_equal(l->lost_events, 7);
	pf_image_free(l);

	/* a layout is not a trace */
	struct pf_image *wrong[1] = { pf_image_new(PF_KIND_LAYOUT) };
	l = (struct pf_image *)1;
	assert_int_equal(pf_aggregate(wrong, 1, NULL, &l, &rep), PF_EKIND);
	assert_null(l);
	pf_image_free(wrong[0]);
	struct pf_image *many[PF_AGGREGATE_MAX_TRACES + 1] = { 0 };
	assert_int_equal(pf_aggregate(many, PF_AGGREGATE_MAX_TRACES + 1, NULL, &l, NULL), -E2BIG);
	free_all(t, 2, NULL);
}

/* ---- real boots: tests/data/debian12-boot (three boots of one Debian 12 system, same files, small swaps) ---- */

static uint64_t path_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a: a stable stand-in inode number */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* order, first_ts, path, size, resident_bytes; '-' for an order or time the tracer did not see */
static struct pf_image *load_tsv(const char *path)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return NULL;
	struct pf_image *t = trace_new(1, 0x801);
	char line[4200], ord[32], ts[32], p[4096];
	unsigned long long size, res;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%31[^\t]\t%31[^\t]\t%4095[^\t]\t%llu\t%llu", ord, ts, p, &size, &res) != 5)
			continue;
		struct pf_file f = { .fs = 0, .ino = path_hash(p), .mode = 0100644, .size = size, .boots = 1,
				     .first_order = ord[0] == '-' ? 0 : (uint32_t)atoi(ord),
				     .first_ns = ts[0] == '-' ? 0 : (uint64_t)(atof(ts) * 1e9), .path = p };
		int i = pf_image_add_file(t, &f);
		assert_true(i >= 0);
		if (res)
			add_ext(t, i, 0, res);
	}
	fclose(fp);
	return t;
}

static void test_real_boots(void **state)
{
	(void)state;
	struct pf_image *t[3];
	for (int i = 0; i < 3; i++) {
		char p[64];
		snprintf(p, sizeof(p), "tests/data/debian12-boot/boot%d.tsv", i + 1);
		if (!(t[i] = load_tsv(p))) {
			free_all(t, (size_t)i, NULL);
			skip(); /* not run from the top of the tree */
		}
	}
	struct pf_aggregate_opts o = { .max_bytes = 256ull << 20, .max_files = 20000 };
	struct pf_aggregate_report rep;
	struct pf_image *l = run(t, 3, &o, &rep);
	/* same files and resident bytes in every boot: all kept, nothing cut, the bytes of one boot */
	assert_int_equal(rep.files_seen, t[0]->nfiles);
	assert_int_equal(rep.files_kept, t[0]->nfiles);
	assert_int_equal(rep.bytes_kept, pf_image_bytes(t[0]));
	/* Spearman rank correlation of the layout order with each boot's order, over the traced files */
	for (int i = 0; i < 3; i++) {
		double d2 = 0;
		unsigned n = 0, last_traced = 0;
		for (uint32_t k = 0; k < l->nfiles; k++) {
			uint32_t o1 = 0;
			for (uint32_t j = 0; j < t[i]->nfiles; j++)
				if (t[i]->files[j].ino == l->files[k].ino)
					o1 = t[i]->files[j].first_order;
			if (!o1)
				continue;
			n++;
			assert_true(k + 1 > last_traced); /* traced files first, in one block */
			last_traced = k + 1;
			d2 += ((double)n - o1) * ((double)n - o1);
		}
		double rho = 1.0 - 6.0 * d2 / ((double)n * ((double)n * n - 1));
		print_message("boot %d: %u traced files, rank correlation with the layout %.4f\n", i + 1, n, rho);
		assert_true(rho > 0.99);
	}
	print_message("layout: %u files, %.1f MiB\n", l->nfiles, (double)rep.bytes_kept / 1048576.0);
	free_all(t, 3, l);
}

/* ---- the command line ---- */

static int cli(int argc, const char **argv)
{
	return cmd_aggregate(argc, (char **)argv);
}

static void test_cmd_aggregate(void **state)
{
	(void)state;
	char dir[160];
	assert_non_null(pf_test_mkdtemp(dir, sizeof(dir), "pf-aggcmd"));
	char tp[3][192], bad[192], out[192], conf[192];
	struct pf_image *t[3];
	for (int i = 0; i < 3; i++) {
		t[i] = trace_new(1, 0x800);
		for (int k = 0; k < 4; k++) {
			char p[32];
			snprintf(p, sizeof(p), "/not/here/f%d", k);
			int f = add_file(t[i], 10 + k, p);
			add_ext(t[i], f, 0, KB(64));
		}
		snprintf(tp[i], sizeof(tp[i]), "%s/trace%d", dir, i);
		assert_int_equal(pf_image_save(tp[i], t[i]), 0);
	}
	snprintf(bad, sizeof(bad), "%s/bad", dir);
	snprintf(out, sizeof(out), "%s/layout", dir);
	snprintf(conf, sizeof(conf), "%s/conf", dir);
	FILE *fp = fopen(bad, "w");
	assert_non_null(fp);
	fputs("PREFETCH not really", fp);
	fclose(fp);
	fp = fopen(conf, "w");
	assert_non_null(fp);
	fputs("MAX_PREFETCH_FILES=3\n", fp);
	fclose(fp);

	/* a bad trace is skipped; the files do not exist here, so --no-check keeps them; config bounds apply */
	const char *a1[] = { "aggregate", "--no-check", "--config", conf, "-o", out, tp[0], bad, tp[1], tp[2], NULL };
	assert_int_equal(cli(10, a1), PF_EXIT_OK);
	struct pf_image *l = NULL;
	assert_int_equal(pf_image_load(out, 0, PF_KIND_LAYOUT, &l), 0);
	assert_int_equal(l->boots, 3);
	assert_int_equal(l->nfiles, 3);
	pf_image_free(l);

	/* command-line bounds win over the config */
	const char *a2[] = { "aggregate", "--no-check", "--config", conf, "--max-files", "0", "--max-mb", "0",
			     "--output", out, tp[2], NULL };
	assert_int_equal(cli(11, a2), PF_EXIT_OK);
	assert_int_equal(pf_image_load(out, 0, PF_KIND_LAYOUT, &l), 0);
	assert_int_equal(l->nfiles, 4);
	pf_image_free(l);

	/* with the check, files that are not there vanish: an empty layout is still written */
	const char *a3[] = { "aggregate", "--output", out, "--config", "/nonexistent/prefetch", tp[2], NULL };
	assert_int_equal(cli(6, a3), PF_EXIT_OK);
	assert_int_equal(pf_image_load(out, 0, PF_KIND_LAYOUT, &l), 0);
	assert_int_equal(l->nfiles, 0);
	pf_image_free(l);

	/* nothing usable: failure, and the old layout is left alone */
	const char *a4[] = { "aggregate", "--output", out, bad, "/nonexistent/trace", NULL };
	assert_int_equal(cli(5, a4), PF_EXIT_FAILURE);
	assert_int_equal(pf_image_load(out, 0, PF_KIND_LAYOUT, &l), 0);
	pf_image_free(l);
	/* a layout given as a trace is refused like any bad trace */
	const char *a5[] = { "aggregate", "-o", out, out, NULL };
	assert_int_equal(cli(4, a5), PF_EXIT_FAILURE);

	/* usage errors */
	const char *u1[] = { "aggregate", tp[0], NULL };
	assert_int_equal(cli(2, u1), PF_EXIT_USAGE);
	const char *u2[] = { "aggregate", "-o", out, NULL };
	assert_int_equal(cli(3, u2), PF_EXIT_USAGE);
	const char *u3[] = { "aggregate", "-o", out, "--max-mb", "lots", tp[0], NULL };
	assert_int_equal(cli(6, u3), PF_EXIT_USAGE);
	const char *u4[] = { "aggregate", "--bogus", NULL };
	assert_int_equal(cli(2, u4), PF_EXIT_USAGE);
	const char *h[] = { "aggregate", "--help", NULL };
	assert_int_equal(cli(2, h), PF_EXIT_OK);

	for (int i = 0; i < 3; i++)
		unlink(tp[i]);
	unlink(bad);
	unlink(out);
	unlink(conf);
	assert_int_equal(rmdir(dir), 0);
	free_all(t, 3, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_trace_passthrough),
		cmocka_unit_test(test_stable_and_unstable),
		cmocka_unit_test(test_vote_even_counts),
		cmocka_unit_test(test_page_majority),
		cmocka_unit_test(test_sparse_huge_file),
		cmocka_unit_test(test_order_merged_rank),
		cmocka_unit_test(test_order_normalised),
		cmocka_unit_test(test_order_ties_and_dirs),
		cmocka_unit_test(test_vanished_and_changed),
		cmocka_unit_test(test_superseded_identity),
		cmocka_unit_test(test_fs_by_uuid),
		cmocka_unit_test(test_different_filesystems),
		cmocka_unit_test(test_btrfs_subvolumes),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_physical_from_newest),
		cmocka_unit_test(test_incomplete_traces),
		cmocka_unit_test(test_gone_filesystem),
		cmocka_unit_test(test_empty_and_errors),
		cmocka_unit_test(test_real_boots),
		cmocka_unit_test(test_cmd_aggregate),
	};
	return cmocka_run_group_tests_name("aggregate", tests, NULL, NULL);
}
