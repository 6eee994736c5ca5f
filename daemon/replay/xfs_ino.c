/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "xfs_ino.h"

#include <errno.h>

/* log2 of v, or -EINVAL when v is not a power of two. */
static int log2_exact(uint32_t v)
{
	if (!v || (v & (v - 1)))
		return -EINVAL;
	int l = 0;
	while (v >>= 1)
		l++;
	return l;
}

static int log2_up(uint32_t v)
{
	int l = 0;
	while (l < 32 && (1ull << l) < v)
		l++;
	return l;
}

#define NOT_XFS_GEOMETRY (-1)

/* log2 of the inodes per block plus log2 of the group's blocks (rounded up): where the group number starts in
 * an inode number; NOT_XFS_GEOMETRY when g is not one XFS makes. */
static int ag_shift(const struct pf_xfs_geom *g, int *inopblog)
{
	int bl = log2_exact(g->blocksize), il = log2_exact(g->inodesize);
	if (bl < 9 || il < 8 || il > bl || !g->agblocks)
		return NOT_XFS_GEOMETRY;
	*inopblog = bl - il;
	int shift = *inopblog + log2_up(g->agblocks);
	return shift < 64 ? shift : NOT_XFS_GEOMETRY;
}

uint64_t pf_xfs_ag_first_ino(const struct pf_xfs_geom *g, uint32_t agno)
{
	int inopblog, shift = ag_shift(g, &inopblog);
	return shift < 0 || (shift && (uint64_t)agno >> (64 - shift)) ? 0 : (uint64_t)agno << shift;
}

int pf_xfs_ino_decode(const struct pf_xfs_geom *g, uint64_t ino, struct pf_xfs_ino *out)
{
	int inopblog, shift = ag_shift(g, &inopblog);
	if (shift < 0)
		return -EINVAL;
	int agblklog = shift - inopblog;
	out->slot = (uint32_t)(ino & ((1ull << inopblog) - 1));
	out->agbno = (uint32_t)((ino >> inopblog) & ((1ull << agblklog) - 1));
	uint64_t agno = ino >> (inopblog + agblklog);
	if (agno > UINT32_MAX || out->agbno >= g->agblocks)
		return -EINVAL;
	out->agno = (uint32_t)agno;
	out->fsblock = agno * g->agblocks + out->agbno;
	/* the kernel's inode cluster: 8 KiB, times inodesize / 256 on v5, at least a block */
	uint64_t cbytes = 8192;
	if (g->v5)
		cbytes = cbytes * g->inodesize / 256;
	uint32_t cb = cbytes > g->blocksize ? (uint32_t)(cbytes / g->blocksize) : 1;
	out->cluster_blocks = cb;
	/* clusters start at multiples of their size within a group (inode chunks are aligned) */
	uint32_t first = out->agbno - out->agbno % cb;
	out->cluster_block = agno * g->agblocks + first;
	out->cluster = (agno << 32) | (first / cb);
	return 0;
}
