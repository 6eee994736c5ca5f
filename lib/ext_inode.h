/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where an ext2/3/4 inode's metadata lies, from the libext2fs view (read-only): what the replay's metadata pass
 * reads and what prefetch-reorder predicts it reads, so that the two agree by construction. */
#ifndef PREFETCH_EXT_INODE_H
#define PREFETCH_EXT_INODE_H

#include "format.h"

#include <ext2fs/ext2fs.h>
#include <stdint.h>

/* Receives runs of device blocks; a non-zero return stops the walk and is returned. */
typedef int (*pf_ext_block_fn)(void *ctx, uint64_t start, uint64_t count);

/* The inode-table block holding ino.  Returns 0, -EINVAL for an inode number out of range, or PF_ECORRUPT for a
 * group without an inode table. */
int pf_ext_inode_table_block(ext2_filsys fs, uint64_t ino, uint64_t *blk);

/* The blocks reading ino needs beyond its inode: its tree (extent blocks below the inode, indirect blocks) and,
 * with data, its data blocks — of directories only (0 for other inodes); nothing for inline data.  Returns 0,
 * the callback's error, or -EIO when the inode or its tree cannot be read. */
int pf_ext_inode_blocks(ext2_filsys fs, ext2_ino_t ino, int data, pf_ext_block_fn fn, void *ctx);

/* The first level of ino's tree, as its inode names it (no read beyond the inode): the blocks its extent index
 * entries point at (depth >= 1), or its indirect, double and triple indirect blocks.  A walk of the tree
 * (pf_ext_inode_blocks) reads these first, one at a time; read ahead together, sorted, they cost one sweep.
 * Nothing for an inode whose whole tree is in the inode, or inline data.  Returns 0, the callback's error, or
 * -EIO when the inode cannot be read. */
int pf_ext_inode_tree_roots(ext2_filsys fs, ext2_ino_t ino, pf_ext_block_fn fn, void *ctx);

/* The blocks of the layout's directory f where they are now, when its inode is still the directory the layout
 * saw (same generation, still linked; a replaced one is not wanted: 0, nothing given).  Returns as above, but
 * an unreadable directory is skipped (0). */
int pf_ext_layout_dir_blocks(ext2_filsys fs, const struct pf_file *f, pf_ext_block_fn fn, void *ctx);

#endif
