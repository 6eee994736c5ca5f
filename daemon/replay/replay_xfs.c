/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass on XFS (rotational media).  XFS reads inodes and directories through its own buffer cache,
 * not the block device's page cache: readahead on the device, as the ext pass does, would warm nothing XFS
 * looks at, so XFS must read them itself.
 *   1. The inode pass, now, going up the disk: each allocation group's inode index (AGI, inode btree, which
 *      every lookup of an inode by number reads), by XFS_IOC_FSINUMBERS at the group's start, and clusters of
 *      the layout's inodes (the inode number says where: xfs_ino.h), by a bulkstat of each of them: every
 *      cluster, or, when the data sweep goes down the groups, only what a higher group needs before its own
 *      turn, the others at their group's start in the sweep (replay_xfs_order.c says which way).  A cluster
 *      read where it lies in the data sweep costs a step back wherever a file's data lies before its inode
 *      (the first files of a group lie just before its first inode chunk).
 *   2. The directories, within the data sweep, each read when the sweep passes where its blocks lie
 *      (replay_xfs_dirs.c): read apart, or by the opens of a placing by path, one lookup at a time, they cost
 *      a seek each.
 * The placing and the sweep open the data files by handle, which reads no directory: only the inode, in
 * memory after the pass or its group's start (results/FSTYPES-BENCH.md). */
#include "replay_xfs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xfs/xfs.h>

static int cmp_xino(const void *pa, const void *pb)
{
	const struct pf_xino *a = pa, *b = pb;
	return a->cluster != b->cluster ? (a->cluster < b->cluster ? -1 : 1) : a->ino < b->ino ? -1 : a->ino > b->ino;
}

static int geometry(struct pf_xfs_sweep *x)
{
	struct xfs_fsop_geom fg;
	memset(&fg, 0, sizeof(fg));
	if (ioctl(x->mfd, XFS_IOC_FSGEOMETRY, &fg) < 0)
		return -errno;
	x->g = (struct pf_xfs_geom){ fg.blocksize, fg.inodesize, fg.agblocks, !!(fg.flags & XFS_FSOP_GEOM_FLAGS_V5SB) };
	x->agcount = fg.agcount ? fg.agcount : 1;
	x->agbytes = (uint64_t)fg.agblocks * fg.blocksize;
	return x->agbytes ? 0 : -EINVAL;
}

/* A bulkstat of one inode: XFS reads its cluster (an inode freed since still has it read).  0 or -errno (EPERM
 * without CAP_SYS_ADMIN). */
static int bulkstat(int mfd, uint64_t ino)
{
	struct xfs_bstat bs;
	__u64 at = ino;
	__s32 count = 0;
	struct xfs_fsop_bulkreq req;
	memset(&req, 0, sizeof(req)); /* padding included: the kernel copies all of it */
	req.lastip = &at;
	req.icount = 1;
	req.ubuffer = &bs;
	req.ocount = &count;
	return ioctl(mfd, XFS_IOC_FSBULKSTAT_SINGLE, &req) < 0 ? -errno : 0;
}

/* The inodes of the layout on this filesystem and its root, by cluster; dir_of: their directory records. */
static int collect_inodes(const struct pf_rctx *c, struct pf_xfs_sweep *x, const uint32_t *dir_of)
{
	const struct pf_image *l = c->l;
	x->ino = malloc((l->nfiles + 1) * sizeof(*x->ino));
	if (!x->ino)
		return -ENOMEM;
	struct pf_xfs_ino d;
	if (pf_xfs_ino_decode(&x->g, c->fs[x->fs].root_ino, &d) == 0)
		x->ino[x->nino++] = (struct pf_xino){ c->fs[x->fs].root_ino, d.cluster, 0, x->dirs[0].file, 0 };
	for (uint32_t i = 0; i < l->nfiles; i++)
		if (l->files[i].fs == x->fs && l->files[i].ino != c->fs[x->fs].root_ino &&
		    pf_xfs_ino_decode(&x->g, l->files[i].ino, &d) == 0)
			x->ino[x->nino++] = (struct pf_xino){ l->files[i].ino, d.cluster, dir_of[i], i, 0 };
	qsort(x->ino, x->nino, sizeof(*x->ino), cmp_xino);
	return 0;
}

/* The inode steps: each cluster (after its group's inode index), in the pass when one of its inodes is needed
 * there, else at its group's start in the sweep.  0 or -ENOMEM. */
static int inode_steps(struct pf_xfs_sweep *x)
{
	uint8_t *in_pass = calloc(x->agcount, 2); /* per group: a cluster of it in the pass; its index placed */
	if (!in_pass)
		return -ENOMEM;
	for (size_t i = 0; i < x->nino; i++)
		if (x->ino[i].pass)
			in_pass[pf_xfs_group(x, (uint64_t)(x->ino[i].cluster >> 32) * x->agbytes)] = 1;
	int rc = 0;
	for (size_t i = 0; i < x->nino && !rc; i++) {
		if (i && x->ino[i].cluster == x->ino[i - 1].cluster)
			continue;
		struct pf_xfs_ino d;
		(void)pf_xfs_ino_decode(&x->g, x->ino[i].ino, &d);
		uint64_t bs = x->g.blocksize, at = d.cluster_block * bs, ag_at = (uint64_t)d.agno * x->agbytes;
		int pass = x->ino[i].pass;
		struct pf_xsteps *q = pass ? &x->q : &x->dq;
		struct pf_xstep s = { .addr = pass ? at : pf_xfs_key(x, at, 1), .place = at,
				      .len = (uint64_t)d.cluster_blocks * bs, .kind = PF_XSTEP_INODES, .idx = (uint32_t)i };
		struct pf_xstep ag = { .addr = pass ? ag_at : pf_xfs_key(x, ag_at, 1), .place = ag_at, .len = bs,
				       .kind = PF_XSTEP_AG, .idx = d.agno };
		uint8_t *placed = &in_pass[x->agcount + pf_xfs_group(x, ag_at)];
		/* the group's index once, where its first cluster is read (in the pass, if one is there) */
		if (!*placed && (pass || !in_pass[pf_xfs_group(x, ag_at)])) {
			*placed = 1;
			rc = pf_xsteps_add(q, ag);
		}
		if (!rc)
			rc = pf_xsteps_add(q, s);
	}
	free(in_pass);
	return rc;
}

static void run(struct pf_rctx *c, struct pf_xfs_sweep *x, const struct pf_xstep *s);

static void free_sweep(struct pf_xfs_sweep *x)
{
	if (!x)
		return;
	pf_xfs_dirs_close(x);
	if (x->mfd >= 0)
		close(x->mfd);
	pf_xsteps_free(&x->q);
	pf_xsteps_free(&x->dq);
	free(x->ino);
	free(x->dirs);
	free(x);
}

int pf_replay_xfs_metadata(struct pf_rctx *c, uint32_t fsi)
{
	struct pf_xfs_sweep *x = calloc(1, sizeof(*x));
	uint32_t *dir_of = malloc((c->l->nfiles ? c->l->nfiles : 1) * sizeof(*dir_of));
	int rc = x && dir_of ? 0 : -ENOMEM;
	if (x) {
		x->fs = fsi;
		x->mfd = open(pf_rpath(c, c->l->fs[fsi].mountpoint), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (!rc && x->mfd < 0)
			rc = -errno;
	}
	if (!rc)
		rc = geometry(x);
	if (!rc) /* bulkstat and open by handle need CAP_SYS_ADMIN: without, the sweep opens files by path */
		rc = bulkstat(x->mfd, c->fs[fsi].root_ino);
	if (!rc)
		rc = pf_xfs_dirs_build(c, x, dir_of);
	if (!rc)
		rc = collect_inodes(c, x, dir_of);
	free(dir_of);
	if (!rc)
		rc = pf_xfs_plan(c, x);
	if (!rc)
		rc = inode_steps(x);
	if (rc) {
		free_sweep(x);
		return rc;
	}
	c->fs[fsi].xfs = x;
	x->in_pass = 1;
	pf_xfs_dir_inode_in(c, x, 0); /* the root's */
	struct pf_xstep s;
	while (!pf_rctx_should_stop(c) && pf_xsteps_next(&x->q, &s))
		run(c, x, &s);
	x->in_pass = 0;
	return 0;
}

/* Each layout inode of the cluster bulkstat-ed: the first reads it, the others find it (one per cluster would
 * miss a cluster whose first inode is in memory already, the root's); then its directories can be opened. */
static void run_inodes(struct pf_rctx *c, struct pf_xfs_sweep *x, const struct pf_xstep *s)
{
	for (size_t i = s->idx; i < x->nino && x->ino[i].cluster == x->ino[s->idx].cluster; i++) {
		(void)bulkstat(x->mfd, x->ino[i].ino);
		if (x->ino[i].dir != PF_XNONE)
			pf_xfs_dir_inode_in(c, x, x->ino[i].dir);
	}
	c->meta_blocks += (unsigned)(s->len / x->g.blocksize);
	pf_xfs_dump(c, x, "xfs-inodes", s, NULL);
}

/* The group's inode index, by an inode-number walk from its first inode. */
static void run_ag(struct pf_rctx *c, struct pf_xfs_sweep *x, const struct pf_xstep *s)
{
	struct xfs_inogrp g;
	__u64 last = pf_xfs_ag_first_ino(&x->g, s->idx);
	last = last ? last - 1 : 0; /* the walk starts after it; 0 is the first inode */
	__s32 count = 0;
	struct xfs_fsop_bulkreq req;
	memset(&req, 0, sizeof(req));
	req.lastip = &last;
	req.icount = 1;
	req.ubuffer = &g;
	req.ocount = &count;
	(void)ioctl(x->mfd, XFS_IOC_FSINUMBERS, &req);
	pf_xfs_dump(c, x, "xfs-agi", s, NULL);
}

static void run(struct pf_rctx *c, struct pf_xfs_sweep *x, const struct pf_xstep *s)
{
	if (s->kind == PF_XSTEP_AG)
		run_ag(c, x, s);
	else if (s->kind == PF_XSTEP_INODES)
		run_inodes(c, x, s);
	else
		pf_xfs_dir_read(c, x, s);
}

void pf_replay_xfs_upto(struct pf_rctx *c, struct pf_xfs_sweep *x, uint64_t physical, uint64_t end)
{
	struct pf_xstep s;
	uint64_t key = pf_xfs_key(x, physical, 0);
	while (!pf_rctx_should_stop(c) && pf_xsteps_next_before(&x->dq, key, &s))
		run(c, x, &s);
	pf_xsteps_at(&x->dq, key + (end - physical));
}

void pf_replay_xfs_flush(struct pf_rctx *c, struct pf_xfs_sweep *x)
{
	struct pf_xstep s;
	while (!pf_rctx_should_stop(c) && pf_xsteps_next(&x->dq, &s))
		run(c, x, &s);
}

int pf_replay_xfs_open(struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t file)
{
	const struct pf_file *f = &c->l->files[file];
	unsigned char state = atomic_load(&c->fstate[file]);
	if (state != PF_RFILE_UNSEEN && state != PF_RFILE_OK)
		return -ESTALE;
	if (f->flags & PF_FILE_DIR)
		return pf_replay_open(c, file, 1);
	/* XFS's handle: the filesystem is the one of the fd asked; the file, its inode number and generation
	 * (checked by the kernel: a number reused since is refused) */
	xfs_handle_t h;
	memset(&h, 0, sizeof(h));
	h.ha_fid.fid_len = sizeof(h.ha_fid) - sizeof(h.ha_fid.fid_len);
	h.ha_fid.fid_gen = f->generation;
	h.ha_fid.fid_ino = f->ino;
	struct xfs_fsop_handlereq req;
	memset(&req, 0, sizeof(req));
	req.oflags = O_RDONLY | O_NONBLOCK | O_NOCTTY; /* XFS adds O_NOATIME to a regular file's */
	req.ihandle = &h;
	req.ihandlen = sizeof(h);
	int fd = ioctl(x->mfd, XFS_IOC_OPEN_BY_HANDLE, &req);
	struct stat st;
	if (fd >= 0 && (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fstat(fd, &st) < 0 ||
			pf_replay_verify(f, &st, -1, c->fs[f->fs].dev) != 0)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) /* stale, changed, refused: by its path, which also says which */
		return pf_replay_open(c, file, 1);
	pf_replay_record(c, file, PF_RFILE_OK);
	return fd;
}

void pf_replay_xfs_close(struct pf_rctx *c)
{
	for (uint32_t f = 0; c->fs && f < c->l->nfs; f++) {
		free_sweep(c->fs[f].xfs);
		c->fs[f].xfs = NULL;
	}
}
