/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where an XFS directory's blocks lie.  FIEMAP is EOPNOTSUPP on XFS directories; XFS_IOC_GETBMAPX maps them.
 * Its map of a directory stops at the directory's size when asked with a length of -1 (as xfs_io's bmap asks),
 * while a directory's hash index lies beyond, at 32 GiB (XFS_DIR2_LEAF_OFFSET), and its free index at 64 GiB;
 * asked for an explicit length it maps those too.  The ranges of a directory are [0, size): its data blocks,
 * the ones below 32 GiB, are mapped here.  The replay places its directory steps by them
 * (daemon/replay/replay_xfs_dirs.c). */
#include "trace_internal.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <xfs/xfs.h>

#define DATA_END_BB ((32ull << 30) >> 9) /* XFS_DIR2_LEAF_OFFSET in 512-byte units: the data blocks end there */
#define BATCH 32

int pf_xfs_dir_extents(int fd, size_t max, struct pf_file_extent **out)
{
	struct getbmapx m[BATCH + 1];
	memset(m, 0, sizeof(m));
	m[0].bmv_length = (int64_t)DATA_END_BB;
	m[0].bmv_count = BATCH + 1;
	m[0].bmv_iflags = BMV_IF_NO_HOLES;
	struct pf_file_extent *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	*out = NULL;
	do {
		if (ioctl(fd, XFS_IOC_GETBMAPX, m) < 0) {
			rc = errno == ENOTTY || errno == EINVAL ? -EOPNOTSUPP : -errno; /* not XFS: no map */
			break;
		}
		if (max && n + (size_t)m[0].bmv_entries > max) {
			rc = -E2BIG;
			break;
		}
		if ((rc = PF_ARRAY_RESERVE(v, cap, n + (size_t)m[0].bmv_entries + 1, 8)))
			break;
		for (int i = 1; i <= m[0].bmv_entries; i++)
			v[n++] = (struct pf_file_extent){ .logical = (uint64_t)m[i].bmv_offset << 9,
							  .length = (uint64_t)m[i].bmv_length << 9,
							  .physical = m[i].bmv_block >= 0 ? (uint64_t)m[i].bmv_block << 9 : 0,
							  .phys_known = m[i].bmv_block >= 0 };
		/* the header moved past the last extent returned; a full batch may have more after it */
	} while (m[0].bmv_entries == BATCH && m[0].bmv_length > 0);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	return (int)n;
}
