/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ext_inode.h"

#include "error.h"

#include <errno.h>
#include <ext2fs/ext3_extents.h>

int pf_ext_inode_table_block(ext2_filsys fs, uint64_t ino, uint64_t *blk)
{
	struct ext2_super_block *sb = fs->super;
	if (ino < 1 || ino > sb->s_inodes_count || !sb->s_inodes_per_group)
		return -EINVAL;
	dgrp_t g = (dgrp_t)((ino - 1) / sb->s_inodes_per_group);
	uint64_t idx = (ino - 1) % sb->s_inodes_per_group;
	blk64_t tab = ext2fs_inode_table_loc(fs, g);
	if (!tab)
		return PF_ECORRUPT;
	*blk = tab + idx * EXT2_INODE_SIZE(sb) / fs->blocksize;
	return 0;
}

struct iter {
	pf_ext_block_fn fn;
	void *ctx;
	int data;
	int err;
};

static int block_cb(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt, blk64_t ref_blk, int ref_offset,
		    void *priv)
{
	(void)fs, (void)ref_blk, (void)ref_offset;
	struct iter *it = priv;
	if (blockcnt < 0 || it->data) /* negative: an indirect block */
		it->err = it->fn(it->ctx, *blocknr, 1);
	return it->err ? BLOCK_ABORT : 0;
}

/* An extent-mapped inode: the blocks its index entries point at (the tree below the inode) and, with data, the
 * initialised extents' blocks. */
static int extent_blocks(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode *inode, int data, pf_ext_block_fn fn,
			 void *ctx)
{
	const struct ext3_extent_header *h = (const void *)inode->i_block;
	if (!data && !ext2fs_le16_to_cpu(h->eh_depth))
		return 0; /* the whole tree is in the inode */
	ext2_extent_handle_t eh;
	if (ext2fs_extent_open2(fs, ino, inode, &eh))
		return -EIO;
	struct ext2fs_extent e;
	int rc = 0;
	for (errcode_t err = ext2fs_extent_get(eh, EXT2_EXTENT_ROOT, &e); !err && !rc;
	     err = ext2fs_extent_get(eh, EXT2_EXTENT_NEXT, &e)) {
		if (e.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT)
			continue;
		if (!(e.e_flags & EXT2_EXTENT_FLAGS_LEAF))
			rc = fn(ctx, e.e_pblk, 1); /* an index entry points at the next level's block */
		else if (data && !(e.e_flags & EXT2_EXTENT_FLAGS_UNINIT))
			rc = fn(ctx, e.e_pblk, e.e_len);
	}
	ext2fs_extent_free(eh);
	return rc;
}

int pf_ext_inode_blocks(ext2_filsys fs, ext2_ino_t ino, int data, pf_ext_block_fn fn, void *ctx)
{
	struct ext2_inode inode;
	if (ext2fs_read_inode(fs, ino, &inode))
		return -EIO;
	if (data && !LINUX_S_ISDIR(inode.i_mode)) /* data blocks are wanted of directories only */
		return 0;
	if (inode.i_flags & EXT4_INLINE_DATA_FL)
		return 0;
	if (inode.i_flags & EXT4_EXTENTS_FL)
		return extent_blocks(fs, ino, &inode, data, fn, ctx);
	if (!data && !inode.i_block[EXT2_IND_BLOCK] && !inode.i_block[EXT2_DIND_BLOCK] &&
	    !inode.i_block[EXT2_TIND_BLOCK])
		return 0;
	struct iter it = { fn, ctx, data, 0 };
	if (ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY, NULL, block_cb, &it))
		return it.err ? it.err : -EIO;
	return it.err;
}

int pf_ext_inode_tree_roots(ext2_filsys fs, ext2_ino_t ino, pf_ext_block_fn fn, void *ctx)
{
	struct ext2_inode inode;
	if (ext2fs_read_inode(fs, ino, &inode))
		return -EIO;
	if (inode.i_flags & EXT4_INLINE_DATA_FL)
		return 0;
	if (ext2fs_is_fast_symlink(&inode))
		return 0;
	int rc = 0;
	if (inode.i_flags & EXT4_EXTENTS_FL) {
		const struct ext3_extent_header *h = (const void *)inode.i_block;
		uint16_t n = ext2fs_le16_to_cpu(h->eh_entries);
		if (ext2fs_le16_to_cpu(h->eh_magic) != EXT3_EXT_MAGIC || !ext2fs_le16_to_cpu(h->eh_depth))
			return 0; /* no tree below the inode (or not a header: libext2fs's walk would refuse it too) */
		/* the root holds at most (sizeof i_block - header) / entry entries: a larger count is corrupt */
		if (n > (sizeof(inode.i_block) - sizeof(*h)) / sizeof(struct ext3_extent_idx))
			return -EIO;
		const struct ext3_extent_idx *ix = (const void *)(h + 1);
		for (uint16_t i = 0; i < n && !rc; i++) {
			uint64_t b = ext2fs_le32_to_cpu(ix[i].ei_leaf) | (uint64_t)ext2fs_le16_to_cpu(ix[i].ei_leaf_hi) << 32;
			if (b && b < ext2fs_blocks_count(fs->super))
				rc = fn(ctx, b, 1);
		}
		return rc;
	}
	static const int level[] = { EXT2_IND_BLOCK, EXT2_DIND_BLOCK, EXT2_TIND_BLOCK };
	for (size_t i = 0; i < sizeof(level) / sizeof(level[0]) && !rc; i++) {
		uint64_t b = inode.i_block[level[i]];
		if (b && b < ext2fs_blocks_count(fs->super))
			rc = fn(ctx, b, 1);
	}
	return rc;
}

int pf_ext_layout_dir_blocks(ext2_filsys fs, const struct pf_file *f, pf_ext_block_fn fn, void *ctx)
{
	struct ext2_inode inode;
	if (f->ino < 1 || f->ino > fs->super->s_inodes_count || ext2fs_read_inode(fs, (ext2_ino_t)f->ino, &inode) ||
	    !LINUX_S_ISDIR(inode.i_mode) || !inode.i_links_count || (f->generation && f->generation != inode.i_generation))
		return 0;
	int rc = pf_ext_inode_blocks(fs, (ext2_ino_t)f->ino, 1, fn, ctx);
	return rc == -EIO ? 0 : rc;
}
