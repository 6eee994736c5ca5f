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


/* An extent entry as the switch rebuilds a leaf: logical [lblk, lblk+len) at [pblk, pblk+len). */
struct pf_xent {
	uint64_t lblk, pblk, len;
	int uninit;
};

/* The entries an inode's i_block holds when its whole tree is in the inode (depth 0). */
#define PF_EXTENT_ROOT_MAX 4

/* ino's entries when its whole extent tree is in the inode (depth 0): *n of them in out (room for
 * PF_EXTENT_ROOT_MAX), *max what the inode holds.  Returns 1, or 0 for any other inode (a deeper tree, not
 * extent-mapped, unreadable). */
int pf_extent_root(ext2_filsys fs, ext2_ino_t ino, struct pf_xent *out, size_t *n, size_t *max);

/* What the switch makes of entries in[0..n) (pure, to simulate a run too): each block that
 * still lies at its move's source in m named at the destination, adjacent entries merged.  Up to cap entries
 * in out; returns the count, cap + 1 when more would be needed; *changed: some block named anew. */
size_t pf_extent_apply(const struct pf_xent *in, size_t n, const struct pf_remap *m, size_t nm,
		       struct pf_xent *out, size_t cap, int *changed);

/* For an inode whose extents are all in the inode (depth 0), entries x[0..n) (pf_extent_root): an upper bound
 * of its extent count in any state reached by moving any subset of m, to decide whether it needs a spare leaf
 * (pure). */
long pf_extent_worst_of(const struct pf_xent *x, size_t n, const struct pf_remap *m, size_t nm);


#include "plan.h"

/* Depth >= 1 trees: a leaf that moving segs[] could overflow (in any order of the moves) cannot be rewritten
 * in place.  Marks drop[i] = 1 for each seg that splits an extent of such a leaf (moving it would add
 * entries); moving the others only keeps or lowers the count.  segs must all belong to ino.  Returns 0 or a
 * negative pf error (lib/error.h; then nothing is marked). */
int pf_extent_full_leaves(ext2_filsys fs, ext2_ino_t ino, const struct pf_seg *segs, size_t n, unsigned char *drop);

#endif
