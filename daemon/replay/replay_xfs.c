/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass on XFS (rotational media).  XFS reads inodes and directory blocks through its own buffer
 * cache, not the block device's page cache: readahead on the device, as the ext pass does, would warm nothing
 * XFS looks at.  So the pass has XFS read them itself, in disk order, before the data sweep:
 *   1. the inode clusters of the layout's files and directories: one bulkstat of one inode per cluster, in
 *      inode-number order, which is disk order (xfs_ino.h); the cluster stays in XFS's buffer cache and the
 *      opens of the data sweep find their inodes there;
 *   2. the layout's directories that have blocks (small ones live in their inode): read whole (getdents,
 *      which also reads ahead a directory's blocks), in the order of their first block (FIEMAP), so that the
 *      lookups of the data sweep find them cached. */
#include "replay_internal.h"

#include "fiemap.h"
#include "xfs_ino.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <xfs/xfs.h>

struct xino {
	uint64_t ino;
	uint64_t key;      /* inodes: the cluster; directories: the first block's byte address */
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

/* Step 1: one bulkstat per cluster, clusters in disk order. */
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
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (i && v[i].key == v[i - 1].key)
			continue;
		if (pf_rctx_should_stop(c)) {
			rc = -EINTR;
			break;
		}
		struct xfs_bstat bs;
		__u64 ino = v[i].ino;
		__s32 count = 0;
		struct xfs_fsop_bulkreq req = { .lastip = &ino, .icount = 1, .ubuffer = &bs, .ocount = &count };
		(void)ioctl(mfd, XFS_IOC_FSBULKSTAT_SINGLE, &req); /* a freed inode (file deleted since) still read its cluster */
		(void)pf_xfs_ino_decode(g, v[i].ino, &x);
		dump(c, fsi, "xfs-inodes", x.cluster_block * g->blocksize, (uint64_t)x.cluster_blocks * g->blocksize);
		*blocks += x.cluster_blocks;
	}
	free(v);
	return rc;
}

/* The byte address of a directory's first block; 0 when it has none (its entries live in its inode). */
static uint64_t first_block(int fd)
{
	struct pf_fiemap w;
	uint64_t at = 0;
	if (pf_fiemap_open(&w, fd, 0, FIEMAP_MAX_OFFSET, 4) == 0 && pf_fiemap_next(&w) > 0 && w.n &&
	    !(w.ext[0].fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_DATA_INLINE)))
		at = w.ext[0].fe_physical;
	pf_fiemap_close(&w);
	return at;
}

static int read_whole_dir(struct pf_rctx *c, int fd)
{
	char buf[32768];
	for (int calls = 0; calls < 256; calls++) { /* bounded: a huge directory costs at most this */
		if (pf_rctx_should_stop(c))
			return -EINTR;
		ssize_t r = getdents64(fd, buf, sizeof(buf));
		if (r <= 0)
			return r < 0 ? -errno : 0;
	}
	return 0;
}

/* Step 2: the directories with blocks, in the order of their first block. */
static int directories(struct pf_rctx *c, uint32_t fsi, uint32_t bsize, unsigned *blocks)
{
	const struct pf_image *l = c->l;
	struct xino *v = malloc((l->nfiles + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	int rc = 0;
	for (uint32_t i = 0; i < l->nfiles && !rc; i++) {
		const struct pf_file *f = &l->files[i];
		if (f->fs != fsi || !(f->flags & PF_FILE_DIR) || c->dir_done[i])
			continue;
		if (pf_rctx_should_stop(c)) {
			rc = -EINTR;
			break;
		}
		int fd = pf_replay_open(c, i, 1);
		if (fd < 0)
			continue;
		uint64_t at = first_block(fd);
		close(fd);
		if (at)
			v[n++] = (struct xino){ f->ino, at, i };
	}
	qsort(v, n, sizeof(*v), cmp_xino);
	for (size_t i = 0; i < n && !rc; i++) {
		int fd = pf_replay_open(c, v[i].file, 1);
		if (fd < 0)
			continue;
		rc = read_whole_dir(c, fd);
		close(fd);
		if (rc == -EINTR)
			break;
		rc = 0;
		c->dir_done[v[i].file] = 1;
		uint64_t size = l->files[v[i].file].size;
		dump(c, fsi, "xfs-dirs", v[i].key, size);
		*blocks += (unsigned)((size + bsize - 1) / bsize);
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
	if (!rc)
		rc = directories(c, fsi, g.blocksize, blocks);
	close(mfd);
	return rc == -EINTR ? 0 : rc;
}
