/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reorder/relocate.c's simulation (pf_reloc_sim), which the predictions use, against real runs on an image:
 * the extent leaves a run adds (a file whose extents no longer fit in its inode) are where the simulation put
 * them, spares placed in owner order and outside the window to avoid, unused ones given back, and a second run
 * placing its spares on the free space the first left (its old copies freed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "relocate.h"
#include "support_mkfs.h"
#include "support_tmpdir.h"

#include <ext2fs/ext3_extents.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B 2000 /* the files and destinations lie from here on (free on a fresh 8 MiB, 1 KiB-block image) */

struct ext {
	uint64_t lblk, pblk, len;
};

static ext2_filsys open_image(const char *name)
{
	const char *img = pf_test_mkfs(name, "-t ext4 -b 1024 -O ^has_journal");
	assert_non_null(img);
	ext2_filsys fs = NULL;
	assert_int_equal(ext2fs_open(img, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs), 0);
	assert_int_equal(ext2fs_read_bitmaps(fs), 0);
	return fs;
}

/* A regular file in the root directory whose extents (at most 4: all in the inode) are x[0..n). */
static ext2_ino_t make_file(ext2_filsys fs, const char *name, const struct ext *x, size_t n)
{
	ext2_ino_t ino;
	assert_int_equal(ext2fs_new_inode(fs, EXT2_ROOT_INO, LINUX_S_IFREG | 0644, NULL, &ino), 0);
	ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
	struct ext2_inode in;
	memset(&in, 0, sizeof(in));
	in.i_mode = LINUX_S_IFREG | 0644;
	in.i_links_count = 1;
	in.i_flags = EXT4_EXTENTS_FL;
	struct ext3_extent_header *eh = (struct ext3_extent_header *)in.i_block;
	struct ext3_extent *e = (struct ext3_extent *)(eh + 1);
	eh->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);
	eh->eh_entries = ext2fs_cpu_to_le16((uint16_t)n);
	eh->eh_max = ext2fs_cpu_to_le16(4);
	uint64_t blocks = 0;
	for (size_t i = 0; i < n; i++) {
		assert_true(ext2fs_test_block_bitmap_range2(fs->block_map, x[i].pblk, (unsigned)x[i].len));
		ext2fs_block_alloc_stats_range(fs, x[i].pblk, (blk_t)x[i].len, +1);
		e[i].ee_block = ext2fs_cpu_to_le32((uint32_t)x[i].lblk);
		e[i].ee_len = ext2fs_cpu_to_le16((uint16_t)x[i].len);
		e[i].ee_start = ext2fs_cpu_to_le32((uint32_t)x[i].pblk);
		blocks += x[i].len;
	}
	in.i_size = (uint32_t)(blocks * fs->blocksize);
	assert_int_equal(ext2fs_iblk_set(fs, &in, blocks), 0);
	assert_int_equal(ext2fs_write_new_inode(fs, ino, &in), 0);
	assert_int_equal(ext2fs_link(fs, EXT2_ROOT_INO, name, ino, EXT2_FT_REG_FILE), 0);
	return ino;
}

/* A plan of one unit per move (the simulation and the run take it as it is). */
static void make_plan(struct pf_plan *p, const struct pf_move *m, size_t n)
{
	memset(p, 0, sizeof(*p));
	p->moves = calloc(n, sizeof(*p->moves));
	p->units = calloc(n, sizeof(*p->units));
	p->chunks = calloc(1, sizeof(*p->chunks));
	assert_true(p->moves && p->units && p->chunks);
	for (size_t i = 0; i < n; i++) {
		p->moves[i] = m[i];
		p->units[i] = (struct pf_unit){ .first = i, .count = 1, .dst = m[i].dst, .len = m[i].len };
		p->blocks_total += m[i].len;
	}
	p->nmoves = p->nunits = n;
	p->chunks[0] = (struct pf_chunk){ .blocks = p->blocks_total, .state = PF_CHUNK_SPLIT, .nunits = n };
	p->nchunks = 1;
	p->blocks_to_move = p->blocks_total;
}

static void run_plan(ext2_filsys fs, const struct pf_plan *p, const ext2_ino_t *inos, size_t n,
		     const struct pf_brange *avoid)
{
	struct pf_reloc *r = NULL;
	assert_int_equal(pf_reloc_begin(fs, p, inos, n, avoid, &r), 0);
	for (size_t u = 0; u < p->nunits; u++) {
		int partial = 0;
		assert_int_equal(pf_reloc_unit(r, p, u, inos, &partial), 0);
	}
	assert_int_equal(pf_reloc_end(r, p, p->nunits, 0, 1), 0);
}

/* The leaf ino's tree grew into (depth 1, one index entry), or 0 while it is all in the inode. */
static uint64_t leaf_of(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_inode in;
	assert_int_equal(ext2fs_read_inode(fs, ino, &in), 0);
	const struct ext3_extent_header *eh = (const struct ext3_extent_header *)in.i_block;
	if (!ext2fs_le16_to_cpu(eh->eh_depth))
		return 0;
	assert_int_equal(ext2fs_le16_to_cpu(eh->eh_depth), 1);
	assert_int_equal(ext2fs_le16_to_cpu(eh->eh_entries), 1);
	const struct ext3_extent_idx *ix = (const struct ext3_extent_idx *)(eh + 1);
	return ext2fs_le32_to_cpu(ix->ei_leaf) | (uint64_t)ext2fs_le16_to_cpu(ix->ei_leaf_hi) << 32;
}

static void fsck_clean(ext2_filsys fs)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "e2fsck -fn '%s' >/dev/null 2>&1", fs->device_name);
	assert_int_equal(ext2fs_close_free(&fs), 0);
	assert_int_equal(system(cmd), 0);
}

/* File a (owner 0): three extents; a range moved out of the middle of the third splits it: five entries, a
 * leaf.  File b (owner 1): three extents; its middle one moved whole right after its first: two entries, but
 * a spare was allocated (the count could have grown) and is given back.  a's destination follows b's, so
 * where each spare goes depends on the other (owner order). */
static const struct ext A_EXT[] = { { 0, B, 10 }, { 10, B + 100, 10 }, { 20, B + 200, 20 } };
static const struct ext B_EXT[] = { { 0, B + 300, 10 }, { 10, B + 400, 10 }, { 20, B + 500, 10 } };
static const struct pf_move RUN1[] = {
	{ .owner = 0, .lblk = 25, .src = B + 205, .dst = B + 320, .len = 5 },
	{ .owner = 1, .lblk = 10, .src = B + 400, .dst = B + 310, .len = 5 },
	{ .owner = 1, .lblk = 15, .src = B + 405, .dst = B + 315, .len = 5 },
};

static void one_run(const struct pf_brange *avoid, uint64_t want_leaf)
{
	ext2_filsys fs = open_image(avoid ? "avoid" : "one");
	ext2_ino_t inos[2] = { make_file(fs, "a", A_EXT, 3), make_file(fs, "b", B_EXT, 3) };
	struct pf_plan p;
	make_plan(&p, RUN1, 3);
	uint64_t need = 0;
	assert_int_equal(pf_reloc_spares_needed(fs, &p, inos, 2, NULL, &need), 0);
	assert_int_equal(need, 2);
	struct pf_reloc_sim *sim = NULL;
	assert_int_equal(pf_reloc_sim_new(fs, &sim), 0);
	assert_int_equal(pf_reloc_sim_run(sim, &p, inos, 2, avoid), 0);
	assert_int_equal(pf_reloc_sim_leaf(sim, inos[0]), want_leaf);
	assert_int_equal(pf_reloc_sim_leaf(sim, inos[1]), 0);
	pf_reloc_sim_free(sim);

	run_plan(fs, &p, inos, 2, avoid);
	assert_int_equal(leaf_of(fs, inos[0]), want_leaf);
	assert_int_equal(leaf_of(fs, inos[1]), 0);
	/* b's spare (after a's, one block on) is free again */
	assert_false(ext2fs_test_block_bitmap2(fs->block_map, want_leaf + 1));
	pf_plan_free(&p);
	fsck_clean(fs);
}

/* a's spare: the first free block after its destination, B+325 (B+320..324 are that destination). */
static void test_spare_after_destination(void **state)
{
	(void)state;
	one_run(NULL, B + 325);
}

/* The same blocks kept free (making room: the window): a's spare goes after them. */
static void test_spare_outside_avoid(void **state)
{
	(void)state;
	struct pf_brange window = { B + 325, 10 };
	one_run(&window, B + 335);
}

/* Two runs (making room: the evacuation, then the layout): the second's spare for file c lands on a block the
 * first freed (b's old copy at B+400), and a, grown in the first, keeps its leaf when the second moves more of
 * it (the leaf rewritten in place).  The simulation of both, made before either ran, says the same. */
static void test_second_run_on_the_first_ones_free_space(void **state)
{
	(void)state;
	ext2_filsys fs = open_image("two");
	static const struct ext C_EXT[] = { { 0, B + 600, 10 }, { 10, B + 700, 10 }, { 20, B + 800, 10 } };
	ext2_ino_t a = make_file(fs, "a", A_EXT, 3), b = make_file(fs, "b", B_EXT, 3), c = make_file(fs, "c", C_EXT, 3);
	ext2_ino_t inos1[2] = { a, b }, inos2[2] = { c, a };
	static const struct pf_move RUN2[] = {
		{ .owner = 0, .lblk = 22, .src = B + 802, .dst = B + 397, .len = 3 },
		{ .owner = 1, .lblk = 0, .src = B, .dst = B + 900, .len = 5 },
	};
	struct pf_plan p1, p2;
	make_plan(&p1, RUN1, 3);
	make_plan(&p2, RUN2, 2);

	struct pf_reloc_sim *sim = NULL;
	assert_int_equal(pf_reloc_sim_new(fs, &sim), 0);
	assert_int_equal(pf_reloc_sim_run(sim, &p1, inos1, 2, NULL), 0);
	uint64_t need = 0;
	assert_int_equal(pf_reloc_spares_needed(fs, &p2, inos2, 2, sim, &need), 0);
	assert_int_equal(need, 1); /* c only: a has a leaf by then */
	assert_int_equal(pf_reloc_sim_run(sim, &p2, inos2, 2, NULL), 0);
	uint64_t sim_a = pf_reloc_sim_leaf(sim, a), sim_c = pf_reloc_sim_leaf(sim, c);
	pf_reloc_sim_free(sim);
	assert_int_equal(sim_a, B + 325);
	assert_int_equal(sim_c, B + 400);

	run_plan(fs, &p1, inos1, 2, NULL);
	assert_int_equal(pf_reloc_spares_needed(fs, &p2, inos2, 2, NULL, &need), 0);
	assert_int_equal(need, 1);
	run_plan(fs, &p2, inos2, 2, NULL);
	assert_int_equal(leaf_of(fs, a), sim_a);
	assert_int_equal(leaf_of(fs, c), sim_c);
	assert_int_equal(leaf_of(fs, b), 0);
	pf_plan_free(&p1);
	pf_plan_free(&p2);
	fsck_clean(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spare_after_destination),
		cmocka_unit_test(test_spare_outside_avoid),
		cmocka_unit_test(test_second_run_on_the_first_ones_free_space),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
