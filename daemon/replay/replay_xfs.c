/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass on XFS (rotational media).  XFS reads inodes through its own buffer cache, not the block
 * device's page cache: readahead on the device, as the ext pass does, would warm nothing XFS looks at.  So the
 * pass has XFS read them itself, in disk order, before the data sweep: the inode clusters of the layout's files
 * and directories, a bulkstat of each inode, in inode-number order, which is disk order
 * (xfs_ino.h); the cluster stays in XFS's buffer cache and the opens of the placing and the sweep find their
 * inodes there.
 *
 * Directories get no step of their own: FIEMAP is EOPNOTSUPP on XFS directories, XFS_IOC_GETBMAPX maps them
 * only up to their size (their hash index lies beyond it, at 32 GiB); reading them in the order of their first
 * block measured no gain when reached by path level by level (getdents, then the next level's lookups), and a
 * loss when opened by handle (the kernel reconnects a directory opened by handle to the tree, reading its
 * parents): results/FSTYPES-BENCH.md. */
#include "replay_internal.h"

#include "xfs_ino.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <xfs/xfs.h>

struct xino {
	uint64_t ino;
	uint64_t key;      /* the cluster (xfs_ino.h) */
	uint32_t file;
};

static int cmp_xino(const void *pa, const void *pb)
{
	const struct xino *a = pa, *b = pb;
	return a->key != b->key ? (a->key < b->key ? -1 : 1) : a->ino < b->ino ? -1 : a->ino > b->ino;
}

static void dump(const struct pf_rctx *c, uint32_t fsi, const char *step, uint64_t off, uint64_t len)
{
	FILE *f = c->o ? c->o->plan_dump : NULL;
	if (f)
		fprintf(f, "m %u meta %s %llu 0 %llu -\n", fsi, step, (unsigned long long)off, (unsigned long long)len);
}

static int geometry(int mfd, struct pf_xfs_geom *g)
{
	struct xfs_fsop_geom fg;
	memset(&fg, 0, sizeof(fg));
	if (ioctl(mfd, XFS_IOC_FSGEOMETRY, &fg) < 0)
		return -errno;
	*g = (struct pf_xfs_geom){ fg.blocksize, fg.inodesize, fg.agblocks, !!(fg.flags & XFS_FSOP_GEOM_FLAGS_V5SB) };
	return 0;
}

/* Step 1: the inode clusters, in disk order. */
static int inode_clusters(struct pf_rctx *c, uint32_t fsi, int mfd, const struct pf_xfs_geom *g, unsigned *blocks)
{
	const struct pf_image *l = c->l;
	struct xino *v = malloc((l->nfiles + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	struct pf_xfs_ino x;
	if (pf_xfs_ino_decode(g, c->fs[fsi].root_ino, &x) == 0)
		v[n++] = (struct xino){ c->fs[fsi].root_ino, x.cluster, UINT32_MAX };
	for (uint32_t i = 0; i < l->nfiles; i++)
		if (l->files[i].fs == fsi && pf_xfs_ino_decode(g, l->files[i].ino, &x) == 0)
			v[n++] = (struct xino){ l->files[i].ino, x.cluster, i };
	qsort(v, n, sizeof(*v), cmp_xino);
	/* Every inode, not one per cluster: an inode already in memory (the root's, say) reads nothing, and its
	 * cluster's other inodes would then be read one open at a time.  Those after the first read of a cluster
	 * find it cached. */
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (pf_rctx_should_stop(c)) {
			rc = -EINTR;
			break;
		}
		struct xfs_bstat bs;
		__u64 ino = v[i].ino;
		__s32 count = 0;
		struct xfs_fsop_bulkreq req = { .lastip = &ino, .icount = 1, .ubuffer = &bs, .ocount = &count };
		/* a freed inode (file deleted since) still read its cluster; without CAP_SYS_ADMIN nothing is read */
		if (ioctl(mfd, XFS_IOC_FSBULKSTAT_SINGLE, &req) < 0 && (errno == EPERM || errno == EACCES))
			break;
		if (i && v[i].key == v[i - 1].key)
			continue;
		(void)pf_xfs_ino_decode(g, v[i].ino, &x);
		dump(c, fsi, "xfs-inodes", x.cluster_block * g->blocksize, (uint64_t)x.cluster_blocks * g->blocksize);
		*blocks += x.cluster_blocks;
	}
	free(v);
	return rc;
}

int pf_replay_xfs_metadata(struct pf_rctx *c, uint32_t fsi, unsigned *blocks)
{
	int mfd = open(pf_rpath(c, c->l->fs[fsi].mountpoint), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	struct pf_xfs_geom g;
	int rc = geometry(mfd, &g);
	if (!rc)
		rc = inode_clusters(c, fsi, mfd, &g, blocks);
	close(mfd);
	return rc == -EINTR ? 0 : rc;
}
