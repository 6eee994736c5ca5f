/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where an XFS directory's blocks lie.  FIEMAP is EOPNOTSUPP on XFS directories; XFS_IOC_GETBMAPX maps them.
 * Its map of a directory stops at the directory's size when asked with a length of -1 (as xfs_io's bmap asks),
 * while a directory's hash index lies beyond, at 32 GiB (XFS_DIR2_LEAF_OFFSET), and its free index at 64 GiB;
 * asked for an explicit length it maps those too.  The ranges of a directory are [0, size): its data blocks,
 * the ones below 32 GiB, are mapped here (lib/xfs_bmap.h).  The replay places its directory steps by them
 * (daemon/replay/replay_xfs_dirs.c). */
#include "trace_internal.h"

#include "xfs_bmap.h"

#include <errno.h>
#include <stdlib.h>

int pf_xfs_dir_extents(int fd, size_t max, struct pf_file_extent **out)
{
	struct pf_xfs_bmap_ext *m;
	int n = pf_xfs_bmap(fd, 0, PF_XFS_DIR_LEAF_OFFSET, max, &m);
	*out = NULL;
	if (n <= 0)
		return n;
	struct pf_file_extent *v = malloc((size_t)n * sizeof(*v));
	for (int i = 0; v && i < n; i++)
		v[i] = (struct pf_file_extent){ .logical = m[i].logical, .length = m[i].length,
						.physical = m[i].physical, .phys_known = m[i].phys_known };
	free(m);
	if (!v)
		return -ENOMEM;
	*out = v;
	return n;
}
