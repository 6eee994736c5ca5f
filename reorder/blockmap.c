/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logical -> physical runs of one inode.  Extent-mapped files: walk the leaves of the extent tree;
 * block-mapped (ext2/3) files: ext2fs_block_iterate3 over the data blocks only. */
#include "blockmap.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>

struct runs {
	struct pf_bmap_run *r;
	size_t n, cap;
	int nomem;
};

static void add(struct runs *rs, uint64_t lblk, uint64_t pblk, uint64_t len, int uninit)
{
	if (rs->n) {
		struct pf_bmap_run *l = &rs->r[rs->n - 1];
		if (l->lblk + l->len == lblk && l->pblk + l->len == pblk && l->uninit == uninit) {
			l->len += len;
			return;
		}
	}
	if (PF_ARRAY_RESERVE(rs->r, rs->cap, rs->n + 1, 16)) {
		rs->nomem = 1;
		return;
	}
	rs->r[rs->n++] = (struct pf_bmap_run){ .lblk = lblk, .pblk = pblk, .len = len, .uninit = uninit };
}

static int block_cb(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt, blk64_t ref_blk, int ref_offset,
		    void *priv)
{
	(void)fs;
	(void)ref_blk;
	(void)ref_offset;
	struct runs *rs = priv;
	if (blockcnt >= 0 && *blocknr)
		add(rs, (uint64_t)blockcnt, *blocknr, 1, 0);
	return rs->nomem ? BLOCK_ABORT : 0;
}

static errcode_t extent_runs(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode *inode, struct runs *rs)
{
	ext2_extent_handle_t h;
	errcode_t rc = ext2fs_extent_open2(fs, ino, inode, &h);
	if (rc)
		return rc;
	struct ext2fs_extent e;
	int op = EXT2_EXTENT_ROOT;
	for (;;) {
		rc = ext2fs_extent_get(h, op, &e);
		op = EXT2_EXTENT_NEXT; /* every node in order; only leaves map data */
		if (rc == EXT2_ET_EXTENT_NO_NEXT) {
			rc = 0;
			break;
		}
		if (rc)
			break;
		if (!(e.e_flags & EXT2_EXTENT_FLAGS_LEAF) || e.e_len == 0)
			continue;
		add(rs, e.e_lblk, e.e_pblk, e.e_len, !!(e.e_flags & EXT2_EXTENT_FLAGS_UNINIT));
		if (rs->nomem)
			break;
	}
	ext2fs_extent_free(h);
	return rc;
}

int pf_blockmap(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode *inode, struct pf_bmap_run **runs, size_t *n)
{
	struct runs rs = { 0 };
	errcode_t ec;
	*runs = NULL;
	*n = 0;
	if (!ext2fs_inode_has_valid_blocks2(fs, inode))
		return 0;
	if (inode->i_flags & EXT4_EXTENTS_FL)
		ec = extent_runs(fs, ino, inode, &rs);
	else
		ec = ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY | BLOCK_FLAG_DATA_ONLY, NULL, block_cb, &rs);
	int rc = pf_err_from_ext2(ec);
	if (!rc && rs.nomem)
		rc = -ENOMEM;
	if (rc) {
		free(rs.r);
		return rc;
	}
	*runs = rs.r;
	*n = rs.n;
	return 0;
}
