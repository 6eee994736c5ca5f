/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reorder/journal_txn.c against the reader that matters, e2fsck's journal replay, on images made by mke2fs with
 * each journal format the writer knows (no checksums, 64-bit tags, checksum v2, checksum v3 with 64-bit tags):
 * a committed transaction left in the journal is replayed by `e2fsck -p` (a block beginning with the jbd2 magic
 * escaped and restored), an emptied one is not; and reorder/journal_io.c's superblock rule: a superblock whose
 * first 512 bytes changed keeps its checksum, so a tear at 512 bytes leaves a valid one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "journal_io.h"
#include "journal_txn.h"
#include "support_mkfs.h"
#include "support_tmpdir.h"

#include <endian.h>
#include <errno.h>
#include <sys/wait.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBLK 3

/* Set the journal superblock's incompatible features (as the kernel does at mount) and its checksum. */
static void set_journal_features(ext2_filsys fs, uint32_t incompat)
{
	blk64_t jb;
	struct ext2_inode in;
	assert_int_equal(ext2fs_read_inode(fs, fs->super->s_journal_inum, &in), 0);
	assert_int_equal(ext2fs_bmap2(fs, fs->super->s_journal_inum, &in, NULL, 0, 0, NULL, &jb), 0);
	unsigned char *b = malloc(fs->blocksize);
	assert_non_null(b);
	assert_int_equal(io_channel_read_blk64(fs->io, jb, 1, b), 0);
	uint32_t v = htobe32(incompat);
	memcpy(b + 0x28, &v, 4);
	b[0x50] = (incompat & 0x18) ? 4 : 0; /* crc32c */
	memset(b + 0xFC, 0, 4);
	if (incompat & 0x18) {
		v = htobe32(ext2fs_crc32c_le(~0u, b, 1024));
		memcpy(b + 0xFC, &v, 4);
	}
	assert_int_equal(io_channel_write_blk64(fs->io, jb, 1, b), 0);
	free(b);
}

static void fill(char *b, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(seed * 31 + i * 7);
}

/* Commit NBLK blocks (the second one beginning with the jbd2 magic) at free blocks; empty the journal again
 * when empty; then needs_recovery and e2fsck -p.  Returns whether the blocks read back as committed. */
static int replayed(const char *args, uint32_t incompat, int empty)
{
	const char *img = pf_test_mkfs("journal.img", args);
	assert_non_null(img);
	ext2_filsys fs;
	assert_int_equal(ext2fs_open(img, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs), 0);
	assert_int_equal(ext2fs_read_bitmaps(fs), 0);
	if (incompat)
		set_journal_features(fs, incompat);
	size_t bs = fs->blocksize;
	uint64_t blk[NBLK];
	char *data[NBLK];
	blk64_t goal = ext2fs_blocks_count(fs->super) / 2;
	for (int i = 0; i < NBLK; i++) {
		blk64_t b;
		assert_int_equal(ext2fs_new_block2(fs, goal, fs->block_map, &b), 0);
		ext2fs_mark_block_bitmap2(fs->block_map, b); /* in memory only: the next one differs */
		blk[i] = b;
		goal = b + 1;
		data[i] = malloc(bs);
		assert_non_null(data[i]);
		fill(data[i], bs, i + 1);
	}
	uint32_t magic = htobe32(0xC03B3998u);
	memcpy(data[1], &magic, 4);
	struct pf_jtxn *j;
	char why[160];
	assert_int_equal(pf_jtxn_open(fs, fs->io, &j, why, sizeof(why)), 0);
	assert_true(pf_jtxn_capacity(j) >= NBLK);
	assert_int_equal(pf_jtxn_commit(j, blk, data, NBLK), 0);
	if (empty)
		assert_int_equal(pf_jtxn_empty(j), 0);
	pf_jtxn_close(j);
	ext2fs_set_feature_journal_needs_recovery(fs->super);
	ext2fs_mark_super_dirty(fs);
	fs->flags &= ~EXT2_FLAG_BB_DIRTY; /* the bitmap as on the disk: the blocks stay free */
	assert_int_equal(ext2fs_close_free(&fs), 0);

	char cmd[512];
	snprintf(cmd, sizeof(cmd), "e2fsck -p '%s' >/dev/null 2>&1", img);
	int rc = system(cmd);
	assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) <= 1);
	snprintf(cmd, sizeof(cmd), "e2fsck -fn '%s' >/dev/null 2>&1", img);
	assert_int_equal(system(cmd), 0);

	assert_int_equal(ext2fs_open(img, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs), 0);
	assert_false(ext2fs_has_feature_journal_needs_recovery(fs->super));
	int same = 1;
	char *b = malloc(bs);
	assert_non_null(b);
	for (int i = 0; i < NBLK; i++) {
		assert_int_equal(io_channel_read_blk64(fs->io, blk[i], 1, b), 0);
		same &= !memcmp(b, data[i], bs);
		free(data[i]);
	}
	free(b);
	ext2fs_close_free(&fs);
	return same;
}

enum { NO_CSUM = 0, BIT64 = 0x2, CSUM_V2 = 0x8, CSUM_V3_64 = 0x10 | 0x2 };

static void test_replay_plain(void **state)
{
	(void)state;
	assert_true(replayed("-t ext4 -O ^metadata_csum,^64bit", NO_CSUM, 0));
	assert_true(replayed("-t ext3 -b 4096", NO_CSUM, 0));
}

static void test_replay_64bit(void **state)
{
	(void)state;
	assert_true(replayed("-t ext4 -O ^metadata_csum", BIT64, 0));
}

static void test_replay_csum_v2(void **state)
{
	(void)state;
	assert_true(replayed("-t ext4 -b 4096", CSUM_V2, 0));
}

static void test_replay_csum_v3(void **state)
{
	(void)state;
	assert_true(replayed("-t ext4", CSUM_V3_64, 0));
	assert_true(replayed("-t ext4 -b 4096", CSUM_V3_64, 0));
}

static void test_emptied_not_replayed(void **state)
{
	(void)state;
	assert_false(replayed("-t ext4", CSUM_V3_64, 1));
	assert_false(replayed("-t ext3", NO_CSUM, 1));
}

/* A superblock changed in its first 512 bytes (state, free counts, needs_recovery) keeps the checksum it had:
 * every mix of old and new sectors is a valid superblock. */
static void test_superblock_keeps_checksum(void **state)
{
	(void)state;
	const char *img = pf_test_mkfs("sb.img", "-t ext4");
	assert_non_null(img);
	ext2_filsys fs;
	assert_int_equal(ext2fs_open(img, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs), 0);
	unsigned char old[1024], neu[1024], mix[1024];
	memcpy(old, fs->super, 1024); /* little-endian host: the on-disk bytes */
	struct ext2_super_block *s = (struct ext2_super_block *)neu;
	memcpy(neu, old, 1024);
	s->s_state &= (__u16)~EXT2_VALID_FS;
	s->s_free_blocks_count -= 17;
	s->s_feature_incompat |= EXT3_FEATURE_INCOMPAT_RECOVER;
	uint32_t csum = le32toh(((struct ext2_super_block *)old)->s_checksum);
	assert_int_equal(pf_sb_keep_csum(neu, csum), 0);
	assert_memory_equal(neu + 512, old + 512, 512);
	memcpy(mix, neu, 512);
	memcpy(mix + 512, old + 512, 512);
	assert_true(ext2fs_superblock_csum_verify(fs, (struct ext2_super_block *)mix));
	assert_true(ext2fs_superblock_csum_verify(fs, (struct ext2_super_block *)old));
	/* s_snapshot_inum in use: refused */
	s->s_snapshot_inum = 12;
	assert_int_equal(pf_sb_keep_csum(neu, csum), -EINVAL);
	ext2fs_close_free(&fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_plain),
		cmocka_unit_test(test_replay_64bit),
		cmocka_unit_test(test_replay_csum_v2),
		cmocka_unit_test(test_replay_csum_v3),
		cmocka_unit_test(test_emptied_not_replayed),
		cmocka_unit_test(test_superblock_keeps_checksum),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
