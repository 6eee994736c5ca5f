/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The directories of XFS's metadata pass (replay_xfs_int.h).  A directory's blocks lie near its inode, in the
 * allocation group XFS gave it (each new directory goes to the next group), among its files' data; the sweep
 * reads each where it lies.  Reading them needs the directory open, and a directory can only be opened by
 * path: by handle, the kernel reconnects it to the tree, reading its parents one at a time.  So its step is
 * placed once its inode is in and its parent complete (the walk then finds everything in memory): at its block
 * 0, which opening it reads at once, where the layout says it lies (the tracer maps XFS directories with
 * XFS_IOC_GETBMAPX: daemon/trace/trace_xfs_dir.c).  The step opens it; then getdents (its other data blocks)
 * and a lookup of a name it does not hold (its hash index, at 32 GiB in the directory) each at its own step
 * where those blocks lie, mapped on the open directory (in its inode: no read); at once when they lie behind,
 * or where the directory is read at its group's start or in the pass.  A step whose place the sweep has passed
 * by then waits for its next round. */
#include "replay_xfs_int.h"

#include "xfs_bmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROBE_NAME ".prefetch-xfs-probe" /* a name no directory should hold: its lookup reads the index */

void pf_xfs_dump(const struct pf_rctx *c, const struct pf_xfs_sweep *x, const char *step, const struct pf_xstep *s,
		 const char *path)
{
	FILE *f = c->o ? c->o->plan_dump : NULL;
	if (f)
		fprintf(f, "m %u meta %s %llu 0 %llu %s\n", x->fs, step, (unsigned long long)s->place,
			(unsigned long long)s->len, path ? path : "-");
}

/* ---- the records ---- */

struct by_path {
	const char *path;
	uint32_t dir;
};

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct by_path *)a)->path, ((const struct by_path *)b)->path);
}

/* The record of the directory at path[0, len), or PF_XNONE. */
static uint32_t find_dir(const struct by_path *v, size_t n, const char *path, size_t len)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strncmp(v[mid].path, path, len);
		if (!r)
			r = v[mid].path[len] ? 1 : 0;
		if (!r)
			return v[mid].dir;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return PF_XNONE;
}

/* Each directory's parent: its path less the last name; the mount point's is the root (record 0). */
static void link_parents(const struct pf_rctx *c, struct pf_xfs_sweep *x, const struct by_path *v, size_t n)
{
	const char *mp = c->l->fs[x->fs].mountpoint;
	size_t mlen = strlen(mp);
	while (mlen > 1 && mp[mlen - 1] == '/')
		mlen--;
	for (size_t d = 1; d < x->ndirs; d++) {
		const char *p = c->l->files[x->dirs[d].file].path;
		size_t len = strlen(p);
		while (len > 1 && p[len - 1] == '/')
			len--;
		while (len && p[len - 1] != '/')
			len--;
		if (len > 1)
			len--; /* the parent's path, without its trailing slash */
		uint32_t parent = len <= mlen && !strncmp(p, mp, len) ? 0 : find_dir(v, n, p, len);
		x->dirs[d].parent = parent;
		if (parent != PF_XNONE) {
			x->dirs[d].sibling = x->dirs[parent].child;
			x->dirs[parent].child = (uint32_t)d;
		}
	}
}

/* Where each directory's blocks lie, by the layout's extents; which directories have blocks at all (the
 * others live in their inodes). */
static void places(const struct pf_rctx *c, struct pf_xfs_sweep *x, const uint32_t *dir_of)
{
	const struct pf_image *l = c->l;
	uint64_t bs = l->fs[x->fs].block_size ? l->fs[x->fs].block_size : x->g.blocksize;
	for (size_t d = 0; d < x->ndirs; d++) {
		struct pf_xdir *r = &x->dirs[d];
		struct stat st;
		uint64_t size = r->file != PF_XNONE ? l->files[r->file].size
			      : stat(pf_rpath(c, l->fs[x->fs].mountpoint), &st) == 0 ? (uint64_t)st.st_size : 0;
		r->has_blocks = size >= x->g.blocksize;
		r->first = UINT64_MAX;
	}
	/* the step lies at its block 0, which opening it reads (at the lowest of its blocks when the layout does
	 * not place block 0) */
	uint8_t *zero = calloc(x->ndirs, 1);
	for (uint32_t i = 0; i < l->nextents; i++) {
		const struct pf_extent *e = &l->extents[i];
		if (e->file >= l->nfiles || dir_of[e->file] == PF_XNONE || !(e->flags & PF_EXT_PHYS_KNOWN))
			continue;
		uint32_t d = dir_of[e->file];
		struct pf_xdir *r = &x->dirs[d];
		uint64_t at = e->physical * bs;
		if (e->offset == 0 && zero)
			zero[d] = 1, r->first = at;
		else if (!(zero && zero[d]) && at < r->first)
			r->first = at;
		r->bytes += e->length;
	}
	free(zero);
	for (size_t d = 0; d < x->ndirs; d++)
		if (x->dirs[d].first == UINT64_MAX)
			x->dirs[d].first = 0; /* not known: read at the start of the sweep */
}

int pf_xfs_dirs_build(const struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t *dir_of)
{
	const struct pf_image *l = c->l;
	ino_t root = c->fs[x->fs].root_ino;
	size_t n = 1;
	for (uint32_t i = 0; i < l->nfiles; i++) {
		dir_of[i] = PF_XNONE;
		n += l->files[i].fs == x->fs && (l->files[i].flags & PF_FILE_DIR) && l->files[i].ino != root;
	}
	x->dirs = malloc(n * sizeof(*x->dirs));
	struct by_path *v = malloc(n * sizeof(*v));
	if (!x->dirs || !v) {
		free(v);
		return -ENOMEM;
	}
	const struct pf_xdir none = { .file = PF_XNONE, .parent = PF_XNONE, .child = PF_XNONE, .sibling = PF_XNONE,
				      .fd = -1 };
	x->dirs[0] = none;
	x->dirs[0].inode_in = 1; /* the root's inode is in memory while mounted */
	x->ndirs = 1;
	for (uint32_t i = 0; i < l->nfiles; i++) {
		const struct pf_file *f = &l->files[i];
		if (f->fs != x->fs || !(f->flags & PF_FILE_DIR))
			continue;
		if (f->ino == root) {
			x->dirs[0].file = i;
			dir_of[i] = 0;
			continue;
		}
		x->dirs[x->ndirs] = none;
		x->dirs[x->ndirs].file = i;
		v[x->ndirs - 1] = (struct by_path){ f->path, (uint32_t)x->ndirs };
		dir_of[i] = (uint32_t)x->ndirs++;
	}
	qsort(v, x->ndirs - 1, sizeof(*v), cmp_path);
	link_parents(c, x, v, x->ndirs - 1);
	free(v);
	places(c, x, dir_of);
	return 0;
}

/* ---- discovery and reading ---- */

static int open_dir(struct pf_rctx *c, const struct pf_xfs_sweep *x, uint32_t d)
{
	uint32_t file = x->dirs[d].file;
	if (file != PF_XNONE)
		return pf_replay_open(c, file, 1);
	int fd = open(pf_rpath(c, c->l->fs[x->fs].mountpoint), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

static void try_queue(struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t d);

static void complete(struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t d)
{
	x->dirs[d].complete = 1;
	for (uint32_t ch = x->dirs[d].child; ch != PF_XNONE; ch = x->dirs[ch].sibling)
		try_queue(c, x, ch);
}

/* Place d's step once its inode is in and its parent complete. */
static void try_queue(struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t d)
{
	struct pf_xdir *r = &x->dirs[d];
	if (r->queued || !r->inode_in || (r->parent != PF_XNONE && !x->dirs[r->parent].complete))
		return;
	r->queued = 1;
	int pass = x->in_pass && r->where == PF_XDIR_PASS;
	uint64_t key = pass ? r->first : !r->bytes ? 0 /* not known where: the sweep's start */
		     : pf_xfs_key(x, r->first, r->where != PF_XDIR_IN_PLACE);
	struct pf_xstep s = { .addr = key, .place = r->first, .len = r->bytes, .kind = PF_XSTEP_DIR, .idx = d };
	/* nothing to read (in its inode), or no memory: its subdirectories go on without */
	if (!r->has_blocks || pf_xsteps_add(pass ? &x->q : &x->dq, s))
		complete(c, x, d);
}

void pf_xfs_dir_inode_in(struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t d)
{
	x->dirs[d].inode_in = 1;
	try_queue(c, x, d);
}

/* Where d's blocks other than its first lie, by its map now (no read: the map is in its inode): *index the
 * lowest of its hash index, *list the lowest of its other data blocks; UINT64_MAX: none, or not known. */
static void other_blocks(int fd, uint64_t bs, uint64_t *index, uint64_t *list)
{
	struct pf_xfs_bmap_ext *m;
	int n = pf_xfs_bmap(fd, 0, PF_XFS_DIR_FREE_OFFSET, 64, &m);
	*index = *list = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		uint64_t at = m[i].physical, lo = m[i].logical;
		if (!m[i].phys_known)
			continue;
		if (lo == 0 && m[i].length > bs) /* the blocks after the first, right behind it */
			at += bs, lo = bs;
		else if (lo == 0)
			continue;
		uint64_t *v = lo >= PF_XFS_DIR_LEAF_OFFSET ? index : list;
		*v = at < *v ? at : *v;
	}
	free(m);
}

#define MAX_OPEN_DIRS 64 /* directories held open for their parts at once; past it, read at once */

/* Within the data sweep: d's hash index and other data blocks as steps of their own where they lie ahead of
 * the head (head: the end of d's first block).  Returns how many were placed; the others are read now. */
static unsigned place_parts(struct pf_xfs_sweep *x, uint32_t d, int fd, uint64_t head)
{
	if (x->in_pass || x->dirs[d].where != PF_XDIR_IN_PLACE || x->open_dirs >= MAX_OPEN_DIRS)
		return 0;
	uint64_t bs = x->g.blocksize, at[2];
	other_blocks(fd, bs, &at[0], &at[1]);
	unsigned placed = 0;
	for (int k = 0; k < 2; k++) {
		if (at[k] == UINT64_MAX)
			continue;
		struct pf_xstep p = { .addr = pf_xfs_key(x, at[k], 0), .place = at[k], .len = bs,
				      .kind = k ? PF_XSTEP_DIR_LIST : PF_XSTEP_DIR_INDEX, .idx = d };
		if (p.addr >= head && !pf_xsteps_add(&x->dq, p))
			placed |= 1u << k;
	}
	return placed;
}

static void dir_list(struct pf_rctx *c, int fd)
{
	(void)pf_replay_read_dir(c, fd);
}

static void dir_index(int fd)
{
	struct stat st;
	(void)fstatat(fd, PROBE_NAME, &st, AT_SYMLINK_NOFOLLOW);
}

/* d's last part read: closed, complete. */
static void dir_done(struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t d, int fd)
{
	uint32_t file = x->dirs[d].file;
	if (fd >= 0) {
		close(fd);
		if (file != PF_XNONE)
			c->dir_done[file] = 1;
	}
	complete(c, x, d);
}

static const char *dir_path(const struct pf_rctx *c, const struct pf_xfs_sweep *x, uint32_t d)
{
	uint32_t file = x->dirs[d].file;
	return file != PF_XNONE ? c->l->files[file].path : c->l->fs[x->fs].mountpoint;
}

void pf_xfs_dir_read(struct pf_rctx *c, struct pf_xfs_sweep *x, const struct pf_xstep *s)
{
	uint32_t d = s->idx;
	struct pf_xdir *r = &x->dirs[d];
	if (s->kind != PF_XSTEP_DIR) { /* a part of a directory opened before */
		c->meta_blocks += s->kind == PF_XSTEP_DIR_INDEX; /* its data blocks: counted at its DIR step */
		pf_xfs_dump(c, x, s->kind == PF_XSTEP_DIR_INDEX ? "xfs-dir-index" : "xfs-dir-list", s, dir_path(c, x, d));
		if (s->kind == PF_XSTEP_DIR_INDEX)
			dir_index(r->fd);
		else
			dir_list(c, r->fd);
		if (--r->parts)
			return;
		x->open_dirs--;
		int fd = r->fd;
		r->fd = -1;
		dir_done(c, x, d, fd);
		return;
	}
	pf_xfs_dump(c, x, "xfs-dir", s, dir_path(c, x, d));
	int fd = open_dir(c, x, d); /* XFS reads its first block */
	if (fd < 0) {
		dir_done(c, x, d, -1);
		return;
	}
	c->meta_blocks += (unsigned)(s->len / x->g.blocksize);
	uint64_t head = s->addr + x->g.blocksize; /* read so far: its first block */
	if (!x->in_pass)
		pf_xsteps_at(&x->dq, head);
	unsigned placed = place_parts(x, d, fd, head);
	if (!(placed & 2))
		dir_list(c, fd);
	if (!(placed & 1))
		dir_index(fd);
	if (placed) {
		r->parts = (uint8_t)((placed & 1) + (placed >> 1));
		r->fd = fd;
		x->open_dirs++;
		return;
	}
	dir_done(c, x, d, fd);
}

void pf_xfs_dirs_close(struct pf_xfs_sweep *x)
{
	for (size_t d = 0; x->dirs && d < x->ndirs; d++)
		if (x->dirs[d].fd >= 0) {
			close(x->dirs[d].fd);
			x->dirs[d].fd = -1;
		}
	x->open_dirs = 0;
}
