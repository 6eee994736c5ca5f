/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An XFS file's block map by XFS_IOC_GETBMAPX, which also maps what FIEMAP does not: directories (FIEMAP is
 * EOPNOTSUPP on them) and, asked for an explicit range, a directory's blocks beyond its size (its hash index
 * at 32 GiB, XFS_DIR2_LEAF_OFFSET; its free index at 64 GiB), which a length of -1 (as xfs_io's bmap asks)
 * leaves out.  Used by the tracer (a directory's data blocks) and the replay (where a directory's hash index
 * lies). */
#ifndef PREFETCH_XFS_BMAP_H
#define PREFETCH_XFS_BMAP_H

#include <stddef.h>
#include <stdint.h>

#define PF_XFS_DIR_LEAF_OFFSET (32ull << 30) /* a directory's data blocks end here, its hash index starts */
#define PF_XFS_DIR_FREE_OFFSET (64ull << 30) /* its free index starts here */

struct pf_xfs_bmap_ext {
	uint64_t logical, length, physical; /* bytes */
	int phys_known;                     /* physical is a place on the device (not delayed allocation) */
};

/* The extents of fd's data fork overlapping [from, from + len) bytes, holes left out, in logical order (*out
 * malloc'd, NULL when none): their count, or -errno (-EOPNOTSUPP: not XFS; -E2BIG: more than max, 0: no
 * bound). */
int pf_xfs_bmap(int fd, uint64_t from, uint64_t len, size_t max, struct pf_xfs_bmap_ext **out);

#endif
