/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass's steps (lib/ext_meta_pass.h) on a real ext4 image made by mke2fs -d: their order, the
 * inode-table blocks, bitmaps and directory blocks each holds (checked against libext2fs's own answers), the walk down
 * the layout's paths through a directory the layout does not name, the directories it reports read, the head
 * pass's smaller set, and a sink's place moving file blocks but never inode tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ext_inode.h"
#include "ext_meta_pass.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MOVED (1ull << 30) /* where the test's place puts file blocks */

static char image[PATH_MAX + 16];

/* A file of `bytes` bytes at root/rel. */
static void write_file(const char *root, const char *rel, size_t bytes)
{
	char path[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < bytes; i++)
		fputc('a' + (int)(i % 26), f);
	assert_int_equal(fclose(f), 0);
}

static int make_image(void **state)
{
	(void)state;
	char root[PATH_MAX + 8], cmd[4 * PATH_MAX], d[PATH_MAX + 32];
	snprintf(root, sizeof(root), "%s/root", pf_test_dir);
	const char *dirs[] = { "", "/usr", "/usr/lib", "/usr/sbin" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "%s%s", root, dirs[i]);
		if (mkdir(d, 0755) < 0)
			return -1;
	}
	write_file(root, "usr/lib/a.so", 65536);
	write_file(root, "usr/lib/b.so", 8192);
	write_file(root, "usr/sbin/init", 20000);
	snprintf(image, sizeof(image), "%s/meta.img", pf_test_dir);
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F -t ext4 -b 4096 -d '%s' '%s' 8M >/dev/null 2>&1", root, image);
	return system(cmd) == 0 ? 0 : -1;
}

/* The layout: /mnt/usr and /mnt/usr/lib (directories), the two libraries, init (PF_FILE_INIT). */
static const char *const paths[] = { "/mnt/usr", "/mnt/usr/lib", "/mnt/usr/lib/a.so", "/mnt/usr/lib/b.so",
				     "/mnt/usr/sbin/init" };
enum { USR, LIB, A, B, INIT, NFILES };

static struct pf_image *layout(ext2_filsys fs)
{
	struct pf_image *l = pf_image_new(PF_KIND_LAYOUT);
	assert_non_null(l);
	struct pf_fs f = { .block_size = 4096, .mountpoint = "/mnt" };
	assert_int_equal(pf_image_add_fs(l, &f), 0);
	for (int i = 0; i < NFILES; i++) {
		ext2_ino_t ino;
		assert_int_equal(ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, paths[i] + 5, &ino), 0);
		struct pf_file pf = { .ino = ino, .path = (char *)paths[i], .first_order = (uint32_t)i + 1,
				      .flags = i <= LIB ? PF_FILE_DIR : i == INIT ? PF_FILE_INIT : 0 };
		assert_int_equal(pf_image_add_file(l, &pf), i);
	}
	return l;
}

struct rec {
	char names[32][16];
	struct pf_bvec steps[32];
	size_t n;
	unsigned dirs_read;
	int moving;
};

static int rec_read(void *arg, const struct pf_meta_step *s)
{
	struct rec *r = arg;
	assert_true(r->n < 32);
	snprintf(r->names[r->n], sizeof(r->names[0]), "%s", s->name);
	for (size_t i = 0; i < s->n; i++)
		assert_int_equal(pf_bvec_push(&r->steps[r->n], s->r[i].start, s->r[i].count), 0);
	r->n++;
	return 0;
}

static int rec_place(void *arg, uint64_t start, uint64_t count, struct pf_bvec *out)
{
	const struct rec *r = arg;
	return pf_bvec_push(out, r->moving ? start + MOVED : start, count);
}

static void rec_dir_read(void *arg, size_t layout, uint32_t file)
{
	assert_int_equal(layout, 0);
	((struct rec *)arg)->dirs_read |= 1u << file;
}

/* Does step k hold block b? */
static int holds(const struct rec *r, size_t k, uint64_t b)
{
	for (size_t i = 0; i < r->steps[k].n; i++)
		if (b >= r->steps[k].r[i].start && b < r->steps[k].r[i].start + r->steps[k].r[i].count)
			return 1;
	return 0;
}

static int collect(void *ctx, uint64_t start, uint64_t count)
{
	return pf_bvec_push(ctx, start, count);
}

/* The blocks of directory path (libext2fs's own answer), into v. */
static void dir_blocks(ext2_filsys fs, const char *path, struct pf_bvec *v)
{
	ext2_ino_t ino;
	assert_int_equal(ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &ino), 0);
	assert_int_equal(pf_ext_inode_blocks(fs, ino, 1, collect, v), 0);
	assert_true(v->n > 0);
}

static void run(ext2_filsys fs, const struct pf_image *l, int head, struct rec *r)
{
	struct pf_meta_layout ml = { l, 0 };
	struct pf_meta_opts o = { .ls = &ml, .nls = 1, .root = EXT2_ROOT_INO, .head = head };
	struct pf_meta_sink s = { .read = rec_read, .place = rec_place, .dir_read = rec_dir_read, .arg = r };
	assert_int_equal(pf_meta_pass(fs, &o, &s), 0);
}

static void free_rec(struct rec *r)
{
	for (size_t i = 0; i < 32; i++)
		free(r->steps[i].r);
}

static void test_full_pass(void **state)
{
	(void)state;
	ext2_filsys fs;
	assert_int_equal(ext2fs_open(image, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs), 0);
	struct pf_image *l = layout(fs);
	struct rec r = { 0 };
	run(fs, l, 0, &r);
	/* small files: no tree below an inode, so no tree-roots step; two levels below the root */
	const char *want[] = { "open", "inodes", "dirs+trees", "walk", "walk-inodes", "walk", "walk-inodes", "walk" };
	assert_int_equal(r.n, 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(r.names[i], want[i]);
	uint64_t blk;
	assert_int_equal(pf_ext_inode_table_block(fs, EXT2_ROOT_INO, &blk), 0);
	assert_true(holds(&r, 1, blk));
	for (int i = 0; i < NFILES; i++) {
		assert_int_equal(pf_ext_inode_table_block(fs, l->files[i].ino, &blk), 0);
		assert_true(holds(&r, 1, blk));
	}
	/* with the bitmaps of the files' group, where the boot creates and extends files beside them */
	assert_true(holds(&r, 1, ext2fs_block_bitmap_loc(fs, 0)));
	assert_true(holds(&r, 1, ext2fs_inode_bitmap_loc(fs, 0)));
	struct pf_bvec lib = { 0 }, sbin = { 0 }, root = { 0 };
	dir_blocks(fs, "usr/lib", &lib);
	dir_blocks(fs, "usr/sbin", &sbin);
	dir_blocks(fs, "", &root);
	assert_true(holds(&r, 2, lib.r[0].start));   /* the layout's directory, whole, from its inode */
	assert_false(holds(&r, 2, sbin.r[0].start)); /* not the layout's */
	assert_true(holds(&r, 3, root.r[0].start));  /* the walk starts at the root's blocks */
	assert_true(holds(&r, 7, sbin.r[0].start));  /* and goes down the paths, through usr/sbin */
	assert_int_equal(r.dirs_read, 1u << USR | 1u << LIB);
	free_rec(&r);

	/* the head: init's inode and the directory above it, with the root's blocks; not usr/lib */
	struct rec h = { 0 };
	run(fs, l, 1, &h);
	assert_int_equal(h.n, 3);
	assert_string_equal(h.names[1], "inodes");
	assert_string_equal(h.names[2], "dirs+trees");
	assert_int_equal(pf_ext_inode_table_block(fs, l->files[INIT].ino, &blk), 0);
	assert_true(holds(&h, 1, blk));
	assert_true(holds(&h, 1, root.r[0].start));
	assert_false(holds(&h, 1, ext2fs_block_bitmap_loc(fs, 0))); /* the head reads what init opens, no more */
	assert_false(holds(&h, 2, lib.r[0].start));
	assert_int_equal(h.dirs_read, 0);
	free_rec(&h);

	/* a sink's place moves file blocks (directories) but not inode tables */
	struct rec m = { .moving = 1 };
	run(fs, l, 0, &m);
	assert_int_equal(pf_ext_inode_table_block(fs, l->files[A].ino, &blk), 0);
	assert_true(holds(&m, 1, blk));
	assert_false(holds(&m, 2, lib.r[0].start));
	assert_true(holds(&m, 2, lib.r[0].start + MOVED));
	free_rec(&m);
	free(lib.r);
	free(sbin.r);
	free(root.r);
	pf_image_free(l);
	ext2fs_close_free(&fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_full_pass, make_image),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
