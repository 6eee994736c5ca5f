/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where an XFS inode lives, from its number alone.  An XFS inode number is (allocation group, block in the
 * group, slot in the block): agno << (agblklog + inopblog) | agbno << inopblog | slot, where agblklog is
 * log2 of the group's size in blocks rounded up and inopblog log2 of the inodes per block.  Inodes are read
 * a cluster at a time (8 KiB, scaled with the inode size on v5 filesystems), so sorting the numbers sorts
 * the reads by disk address and one read per cluster covers its inodes. */
#ifndef PREFETCH_XFS_INO_H
#define PREFETCH_XFS_INO_H

#include <stdint.h>

struct pf_xfs_geom {
	uint32_t blocksize, inodesize, agblocks;
	int v5;            /* version 5 superblock: clusters scale with the inode size */
};

struct pf_xfs_ino {
	uint32_t agno, agbno, slot;
	uint64_t fsblock;  /* block of the inode in the filesystem (agno * agblocks + agbno), blocksize units */
	uint64_t cluster;  /* the cluster holding it: equal for inodes read together */
	uint32_t cluster_blocks;
	uint64_t cluster_block; /* first block of that cluster */
};

/* Decode ino under geometry g.  Returns 0, or -EINVAL when the geometry is not one XFS makes (sizes not
 * powers of two, an inode larger than a block, no blocks per group) or ino lies beyond 64 bits of it. */
int pf_xfs_ino_decode(const struct pf_xfs_geom *g, uint64_t ino, struct pf_xfs_ino *out);

/* The first inode number allocation group agno can hold (its inode 0), or 0 when g is not one XFS makes. */
uint64_t pf_xfs_ag_first_ino(const struct pf_xfs_geom *g, uint32_t agno);

#endif
