/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pointing moved blocks of an extent-mapped inode at their new place without changing the tree's shape:
 * each leaf (the inode's i_block, or a leaf block) that maps moved blocks is rewritten in place, in one write.
 * Never allocates or frees a tree block, never touches an index, so every state a power cut can leave is a
 * valid tree in which each block maps to either its old or its new copy. */
#ifndef PREFETCH_REORDER_EXTENT_REMAP_H
#define PREFETCH_REORDER_EXTENT_REMAP_H

#include <ext2fs/ext2fs.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct pf_remap {
	uint64_t lblk, src, dst, len;  /* logical [lblk, lblk+len) now at src, to point at dst */
};

/* Blocks whose mapping is not src (changed meanwhile) and leaves that would overflow (a move splitting an
 * extent in a full leaf) are left as they are; the caller checks the result block by block.
 * One exception to "same shape": an inode whose four in-inode extents would overflow, given spare_leaf (a
 * block already allocated and durable in the bitmap), grows to depth 1 copy-on-write: the new leaf is
 * written to spare_leaf and flushed, then the inode is switched to it in one write (*used_spare = 1).
 * Returns 0 or a negative pf error (lib/error.h). */
int pf_extent_remap(ext2_filsys fs, ext2_ino_t ino, const struct pf_remap *m, size_t n, blk64_t spare_leaf,
		    int *used_spare);

/* For an inode whose extents are all in the inode (depth 0): an upper bound of its extent count in any state
 * reached by moving any subset of m, to decide whether it needs a spare leaf.  -1: not a depth-0 extent
 * inode. */
long pf_extent_worst_count(ext2_filsys fs, ext2_ino_t ino, const struct pf_remap *m, size_t n);


#include "plan.h"

/* Depth >= 1 trees: a leaf that moving segs[] could overflow (in any order of the moves) cannot be rewritten
 * in place.  Marks drop[i] = 1 for each seg that splits an extent of such a leaf (moving it would add
 * entries); moving the others only keeps or lowers the count.  segs must all belong to ino.  Returns 0 or a
 * negative pf error (lib/error.h; then nothing is marked). */
int pf_extent_full_leaves(ext2_filsys fs, ext2_ino_t ino, const struct pf_seg *segs, size_t n, unsigned char *drop);

#endif
