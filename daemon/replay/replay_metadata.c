/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass (ext2/3/4 on rotational media).  Opening a file reads its inode-table block and the
 * blocks of every directory on its path; done file by file in boot order, the head goes back to the inode
 * tables between data reads about twice per file.  ext4 reads those blocks through the block device's page
 * cache, so readahead on the device node, in block order, warms them in one sweep before the data sweep.
 *
 * Steps, each one sorted sweep on the device:
 *   1. inode-table blocks of every inode the layout names (number from the layout, place from the group
 *      descriptors: no I/O needed to find them);
 *   2. extent-tree / indirect blocks of its regular files, and the blocks of its directories, found from their
 *      inodes (cached now), not from the places the layout recorded: a reorder moves directories, and a
 *      stale place would cost a read of the old blocks and then, level by level below, a seek to each new
 *      one.  First the trees' first level, as the inodes name it (one sweep, so that walking the trees
 *      finds it cached), then the rest;
 *   3. the directory tree, level by level from the mount's root: the inode blocks of the level's
 *      directories, then their blocks, then libext2fs looks the next level's names up in them (cached, but
 *      for directories on the paths that the layout does not name).
 * Before init's own files are read (replay.c), a head pass does steps 1 and 2 for them and the directories
 * above them alone (their directories' blocks, not their trees; and the root directory's blocks), so that
 * opening them reads nothing one seek at a time. */
#include "replay_internal.h"

#include "array.h"
#include "ext_inode.h"
#include "fiemap.h"

#include <errno.h>
#include <ext2fs/ext2fs.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bounds: metadata is small next to data; a layout asking for more is strange, not a reason to read a lot. */
#define META_MAX_BLOCKS (1u << 16)  /* 256 MiB of 4 KiB blocks over the whole pass */

struct rvec {
	struct pf_brange *r;
	size_t n, cap;
	uint64_t blocks; /* requested, for the budget */
};

struct meta {
	struct pf_rctx *c;
	uint32_t fsi;
	ext2_filsys fs;
	int bdev;
	uint32_t chunk;   /* bytes per readahead call */
	struct rvec all;  /* everything requested, to count distinct blocks */
};

static int push(struct rvec *v, uint64_t start, uint64_t count)
{
	if (!count)
		return 0;
	if (v->blocks + count > META_MAX_BLOCKS)
		return -E2BIG;
	if (PF_ARRAY_RESERVE(v->r, v->cap, v->n + 1, 256))
		return -ENOMEM;
	v->r[v->n++] = (struct pf_brange){ start, count };
	v->blocks += count;
	return 0;
}

/* --dump-plan: the blocks a step asks for, as asked (before the merge reads gaps through): a test can tell
 * a block named (a stale directory place, say) from one read only because it lies near others. */
static void dump_step(const struct meta *m, const char *step, const struct pf_brange *r, size_t n)
{
	FILE *f = m->c->o ? m->c->o->plan_dump : NULL;
	if (!f)
		return;
	uint64_t bs = m->fs->blocksize;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "m %u meta %s %llu 0 %llu -\n", m->fsi, step, (unsigned long long)(r[i].start * bs),
			(unsigned long long)(r[i].count * bs));
	fflush(f);
}

/* Readahead a list of blocks on the device, sorted and merged; the list is emptied.  step names it in
 * --dump-plan. */
static int sweep(struct meta *m, struct rvec *v, const char *step)
{
	int rc = 0;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = push(&m->all, v->r[i].start, v->r[i].count);
	size_t n = pf_branges_normalize(v->r, v->n, 0);
	dump_step(m, step, v->r, n);
	n = pf_branges_normalize(v->r, n, PF_META_GAP_BLOCKS);
	uint64_t bs = m->fs->blocksize, max = ext2fs_blocks_count(m->fs->super), chunk = m->chunk;
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t b = v->r[i].start, end = b + v->r[i].count;
		if (end > max)
			end = max;
		while (b < end) {
			if (pf_rctx_should_stop(m->c)) {
				rc = -EINTR;
				break;
			}
			uint64_t cnt = end - b;
			if (cnt * bs > chunk)
				cnt = chunk / bs > 0 ? chunk / bs : 1;
			(void)readahead(m->bdev, (off64_t)(b * bs), (size_t)(cnt * bs));
			b += cnt;
		}
	}
	v->n = 0;
	v->blocks = 0;
	return rc;
}

/* The metadata pass's lists take the runs ext_inode.h finds (within the pass's budget). */
static int push_cb(void *v, uint64_t start, uint64_t count)
{
	return push(v, start, count);
}

static int inode_blocks(ext2_filsys fs, ext2_ino_t ino, int data, struct rvec *v)
{
	return pf_ext_inode_blocks(fs, ino, data, push_cb, v);
}

static int layout_dir_blocks(ext2_filsys fs, const struct pf_file *f, struct rvec *v)
{
	return pf_ext_layout_dir_blocks(fs, f, push_cb, v);
}

/* ---- the directory tree of the layout's paths ---- */

struct dnode {
	const char *path; /* prefix of a layout path, relative to the mount point */
	uint32_t len;     /* its length */
	uint32_t name;    /* offset of its last component */
	uint32_t depth;   /* 1 = in the mount's root directory */
	uint32_t first, nchild; /* children: nodes [first, first + nchild) at depth + 1 */
	ext2_ino_t ino;   /* from the lookup in the parent, 0 if not found */
};

static int prefix_cmp(const char *a, size_t al, const char *b, size_t bl)
{
	int r = memcmp(a, b, al < bl ? al : bl);
	return r ? r : al < bl ? -1 : al > bl;
}

static int dnode_cmp(const void *pa, const void *pb)
{
	const struct dnode *a = pa, *b = pb;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return prefix_cmp(a->path, a->len, b->path, b->len);
}

/* Path of a file relative to the mount point, or NULL if it is not below it. */
static const char *relative(const char *path, const char *mnt)
{
	size_t ml = strlen(mnt);
	while (ml && mnt[ml - 1] == '/')
		ml--;
	if (strncmp(path, mnt, ml) || (path[ml] != '/' && path[ml]))
		return NULL;
	path += ml;
	while (*path == '/')
		path++;
	return path;
}

/* All directory prefixes (and directories) of the fs's layout paths, sorted by depth and name, unique. */
static int build_tree(struct meta *m, uint32_t fsi, struct dnode **out, size_t *nout)
{
	const struct pf_image *l = m->c->l;
	const char *mnt = l->fs[fsi].mountpoint;
	size_t cap = 0, n = 0;
	for (uint32_t i = 0; i < l->nfiles; i++) {
		const char *r = l->files[i].fs == fsi ? relative(l->files[i].path, mnt) : NULL;
		for (; r && *r; r++)
			cap += *r == '/';
		cap += r != NULL; /* a directory entry itself */
	}
	struct dnode *d = malloc((cap ? cap : 1) * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->nfiles; i++) {
		const struct pf_file *f = &l->files[i];
		const char *r = f->fs == fsi ? relative(f->path, mnt) : NULL;
		if (!r || !*r)
			continue;
		uint32_t depth = 0, name = 0;
		for (const char *p = r;; p++) {
			if (*p != '/' && *p)
				continue;
			int last = !*p;
			if (p > r + name) { /* skip empty components ("a//b") */
				depth++;
				if (!last || (f->flags & PF_FILE_DIR))
					d[n++] = (struct dnode){ .path = r, .len = (uint32_t)(p - r), .name = name,
								 .depth = depth };
			}
			if (last)
				break;
			name = (uint32_t)(p - r + 1);
		}
	}
	if (n > 1)
		qsort(d, n, sizeof(*d), dnode_cmp);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!w || dnode_cmp(&d[w - 1], &d[i]))
			d[w++] = d[i];
	n = w;
	/* Children of one parent are contiguous in this order (they share the prefix "parent/" and nothing else
	 * at their depth does). */
	size_t lo = 0; /* start of the previous depth's range */
	for (size_t i = 0, start = 0; i < n; i++) {
		if (i && d[i].depth != d[i - 1].depth) {
			lo = start;
			start = i;
		}
		if (d[i].depth == 1)
			continue;
		size_t a = lo, b = start; /* parent at depth - 1: bsearch its path */
		const char *pp = d[i].path;
		size_t pl = d[i].name ? d[i].name - 1 : 0;
		while (pl && pp[pl - 1] == '/')
			pl--;
		while (a < b) {
			size_t mid = a + (b - a) / 2;
			int c = prefix_cmp(d[mid].path, d[mid].len, pp, pl);
			if (c < 0)
				a = mid + 1;
			else
				b = mid;
		}
		if (a < start && !prefix_cmp(d[a].path, d[a].len, pp, pl)) {
			if (!d[a].nchild)
				d[a].first = (uint32_t)i;
			d[a].nchild++;
		}
	}
	*out = d;
	*nout = n;
	return 0;
}

struct lookup {
	struct dnode *d;
	size_t first, n, found;
};

static int lookup_cb(ext2_ino_t dir, int entry, struct ext2_dir_entry *de, int offset, int blocksize, char *buf,
		     void *priv)
{
	(void)dir, (void)entry, (void)offset, (void)blocksize, (void)buf;
	struct lookup *lk = priv;
	size_t nl = (size_t)ext2fs_dirent_name_len(de);
	if (!de->inode || !nl)
		return 0;
	size_t a = lk->first, b = lk->first + lk->n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		struct dnode *x = &lk->d[mid];
		int c = prefix_cmp(x->path + x->name, x->len - x->name, de->name, nl);
		if (!c) {
			if (!x->ino)
				lk->found++;
			x->ino = de->inode;
			break;
		}
		if (c < 0)
			a = mid + 1;
		else
			b = mid;
	}
	return lk->found == lk->n ? DIRENT_ABORT : 0;
}

static void lookup_children(ext2_filsys fs, ext2_ino_t dir, struct dnode *d, size_t first, size_t n)
{
	if (!n || !dir)
		return;
	struct lookup lk = { d, first, n, 0 };
	(void)ext2fs_dir_iterate2(fs, dir, 0, NULL, lookup_cb, &lk);
}

static int tree_pass(struct meta *m, uint32_t fsi, struct rvec *v)
{
	struct dnode *d;
	size_t n;
	int rc = build_tree(m, fsi, &d, &n);
	if (rc)
		return rc;
	ext2_filsys fs = m->fs;
	ext2_ino_t root = (ext2_ino_t)m->c->fs[fsi].root_ino;
	/* the root: its inode was in step 1, its blocks now, then the names of the first level */
	size_t n1 = 0;
	while (n1 < n && d[n1].depth == 1)
		n1++;
	rc = inode_blocks(fs, root, 1, v);
	if (!rc || rc == -EIO)
		rc = sweep(m, v, "walk");
	if (!rc)
		lookup_children(fs, root, d, 0, n1);
	for (size_t lo = 0; lo < n && !rc;) {
		size_t hi = lo;
		while (hi < n && d[hi].depth == d[lo].depth)
			hi++;
		uint64_t blk;
		for (size_t i = lo; i < hi && !rc; i++)
			if (d[i].ino && pf_ext_inode_table_block(fs, d[i].ino, &blk) == 0)
				rc = push(v, blk, 1);
		if (!rc)
			rc = sweep(m, v, "walk-inodes");
		for (size_t i = lo; i < hi && !rc; i++)
			if (d[i].ino) {
				rc = inode_blocks(fs, d[i].ino, 1, v);
				if (rc == -EIO) /* not a directory we can read: no blocks from it */
					rc = 0;
			}
		if (!rc)
			rc = sweep(m, v, "walk");
		for (size_t i = lo; i < hi && !rc; i++) {
			if (pf_rctx_should_stop(m->c))
				rc = -EINTR;
			else
				lookup_children(fs, d[i].ino, d, d[i].first, d[i].nchild);
		}
		lo = hi;
	}
	/* Directories of the layout whose blocks were read here need no getdents in the data sweep. */
	if (!rc) {
		const struct pf_image *l = m->c->l;
		for (uint32_t i = 0; i < l->nfiles; i++) {
			const struct pf_file *f = &l->files[i];
			const char *r = (f->flags & PF_FILE_DIR) && f->fs == fsi ? relative(f->path, l->fs[fsi].mountpoint)
										   : NULL;
			if (!r)
				continue;
			size_t rl = strlen(r);
			while (rl && r[rl - 1] == '/')
				rl--;
			if (!rl) {
				m->c->dir_done[i] = f->ino == root;
				continue;
			}
			struct dnode key = { .path = r, .len = (uint32_t)rl };
			for (size_t k = 0; k < rl; k++) /* depth = non-empty components */
				key.depth += r[k] != '/' && (k == 0 || r[k - 1] == '/');
			struct dnode *hit = bsearch(&key, d, n, sizeof(*d), dnode_cmp);
			m->c->dir_done[i] = hit && hit->ino && hit->ino == f->ino;
		}
	}
	free(d);
	return rc;
}

/* The blocks of the directory at mnt, from the kernel's in-core inode (FIEMAP): the mount's root is always
 * cached there, while reading its inode with libext2fs could wait for the disk. */
static int root_dir_blocks(struct meta *m, const char *mnt, struct rvec *v)
{
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* only a hint */
	struct pf_fiemap w;
	int rc = pf_fiemap_open(&w, fd, 0, FIEMAP_MAX_OFFSET, 16); /* the first batch only: a directory has few */
	if (!rc && pf_fiemap_next(&w) > 0) {
		uint64_t bs = m->fs->blocksize;
		for (uint32_t i = 0; i < w.n && !rc; i++) {
			const struct fiemap_extent *e = &w.ext[i];
			if (!(e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)))
				rc = push(v, e->fe_physical / bs, (e->fe_length + bs - 1) / bs);
		}
	}
	pf_fiemap_close(&w);
	close(fd);
	return rc;
}

/* Which files the pass covers: all, or (head) init's files and the directories above them. */
static int wanted(const struct pf_image *l, uint32_t i, const unsigned char *head_dirs)
{
	return !head_dirs || pf_lorder_is_head(&l->files[i]) || head_dirs[i];
}

void pf_replay_metadata_open(struct pf_rctx *c, uint32_t fsi)
{
	struct pf_rfs *rf = &c->fs[fsi];
	if (rf->e2fs)
		return;
	ext2_filsys fs;
	if (ext2fs_open2(rf->devname, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_IGNORE_CSUM_ERRORS, 0, 0, unix_io_manager, &fs))
		return;
	int bdev = open(rf->devname, O_RDONLY | O_CLOEXEC);
	if (bdev < 0) {
		ext2fs_close_free(&fs);
		return;
	}
	rf->e2fs = fs;
	rf->bdev = bdev;
}

void pf_replay_metadata_close(struct pf_rctx *c)
{
	for (uint32_t i = 0; c->fs && i < c->l->nfs; i++) {
		struct pf_rfs *rf = &c->fs[i];
		if (!rf->e2fs) /* bdev is opened with it, and only then (a zeroed entry has bdev 0) */
			continue;
		close(rf->bdev);
		rf->bdev = -1;
		ext2_filsys fs = rf->e2fs;
		ext2fs_close_free(&fs);
		rf->e2fs = NULL;
	}
}

int pf_replay_metadata(struct pf_rctx *c, uint32_t fsi, int head, unsigned *blocks)
{
	const struct pf_rfs *rf = &c->fs[fsi];
	if (!rf->e2fs || rf->bdev < 0)
		return -EIO;
	struct meta m = { .c = c, .fsi = fsi, .fs = rf->e2fs, .bdev = rf->bdev, .chunk = rf->chunk ? rf->chunk : PF_REPLAY_CHUNK_MIN };
	int rc = 0;
	const struct pf_image *l = c->l;
	struct rvec v = { 0 };
	uint64_t blk;
	/* head: step 1 only, for init's files (their bin is read before this pass proper), so that opening them
	 * finds their inodes and the directories above them cached instead of reading them one seek at a time */
	unsigned char *head_dirs = NULL;
	if (head) {
		head_dirs = calloc(l->nfiles ? l->nfiles : 1, 1);
		if (!head_dirs)
			return -ENOMEM;
		for (uint32_t i = 0; i < l->nfiles; i++)
			head_dirs[i] = l->files[i].fs == fsi && (l->files[i].flags & PF_FILE_DIR) &&
				       pf_lorder_above_head(l, &l->files[i]);
	}
	/* 1: inode tables */
	if (pf_ext_inode_table_block(m.fs, rf->root_ino, &blk) == 0)
		rc = push(&v, blk, 1);
	/* head: the root directory's blocks too (every lookup starts there; the full pass reads them in step 3) */
	if (head && !rc)
		rc = root_dir_blocks(&m, pf_rpath(c, l->fs[fsi].mountpoint), &v);
	for (uint32_t i = 0; i < l->nfiles && !rc; i++)
		if (l->files[i].fs == fsi && wanted(l, i, head_dirs) && pf_ext_inode_table_block(m.fs, l->files[i].ino, &blk) == 0)
			rc = push(&v, blk, 1);
	if (!rc)
		rc = sweep(&m, &v, "inodes");
	/* 2a: the first level of the trees below the inodes (cached now), as the inodes name them: the walk below
	 * reads each tree block synchronously, file by file in layout order (a seek each); read ahead sorted
	 * first, they cost one sweep and the walk finds them cached (deeper levels, rare, stay one at a time) */
	for (uint32_t i = 0; i < l->nfiles && !rc && !head; i++) {
		const struct pf_file *f = &l->files[i];
		if (f->fs != fsi || f->ino < 1 || f->ino > m.fs->super->s_inodes_count)
			continue;
		if (pf_rctx_should_stop(c))
			rc = -EINTR;
		else if ((rc = pf_ext_inode_tree_roots(m.fs, (ext2_ino_t)f->ino, push_cb, &v)) == -EIO)
			rc = 0;
	}
	if (!rc && !head)
		rc = sweep(&m, &v, "tree-roots");
	/* 2: the layout's directories, whole, where their inodes say (cached now: the reads below wait for the
	 * sweep), so that the level-by-level walk below finds them cached instead of sweeping the disk once per
	 * level; and the extent trees of its regular files (not in the head: opening a file needs no tree) */
	for (uint32_t i = 0; i < l->nfiles && !rc; i++) {
		const struct pf_file *f = &l->files[i];
		if (f->fs != fsi || !wanted(l, i, head_dirs))
			continue;
		if (pf_rctx_should_stop(c)) /* each inode read below may wait for the disk */
			rc = -EINTR;
		else if (f->flags & PF_FILE_DIR)
			rc = layout_dir_blocks(m.fs, f, &v);
		else if (!head && f->ino <= m.fs->super->s_inodes_count) {
			rc = inode_blocks(m.fs, (ext2_ino_t)f->ino, 0, &v);
			if (rc == -EIO)
				rc = 0;
		}
	}
	if (!rc)
		rc = sweep(&m, &v, "dirs+trees");
	if (head)
		goto done;
	/* 3: directories */
	if (!rc)
		rc = tree_pass(&m, fsi, &v);
done:
	free(head_dirs);
	free(v.r);
	*blocks += (unsigned)pf_branges_count(m.all.r, m.all.n);
	free(m.all.r);
	return rc == -E2BIG || rc == -EINTR ? 0 : rc;
}
