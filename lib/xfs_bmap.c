/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "xfs_bmap.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <xfs/xfs.h>

#define BATCH 32

int pf_xfs_bmap(int fd, uint64_t from, uint64_t len, size_t max, struct pf_xfs_bmap_ext **out)
{
	struct getbmapx m[BATCH + 1];
	memset(m, 0, sizeof(m));
	m[0].bmv_offset = (int64_t)(from >> 9);
	m[0].bmv_length = (int64_t)((len + 511) >> 9);
	m[0].bmv_count = BATCH + 1;
	m[0].bmv_iflags = BMV_IF_NO_HOLES;
	struct pf_xfs_bmap_ext *v = NULL;
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
			v[n++] = (struct pf_xfs_bmap_ext){ .logical = (uint64_t)m[i].bmv_offset << 9,
							   .length = (uint64_t)m[i].bmv_length << 9,
							   .physical = m[i].bmv_block >= 0 ? (uint64_t)m[i].bmv_block << 9 : 0,
							   .phys_known = m[i].bmv_block >= 0 };
		/* the header moved past the last extent returned; a full batch may have more after it */
	} while (m[0].bmv_entries == BATCH && m[0].bmv_length > 0);
	if (rc || !n) { /* none: *out stays NULL, as promised */
		free(v);
		return rc;
	}
	*out = v;
	return (int)n;
}
