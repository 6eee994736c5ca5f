/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass's steps, found with libext2fs and handed to a sink (see ext_meta_pass.h). */
#include "ext_meta_pass.h"

#include "ext_inode.h"
#include "layout_order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct walk {
	ext2_filsys fs;
	const struct pf_meta_opts *o;
	const struct pf_meta_sink *s;
	struct pf_bvec v;      /* the step being found */
	uint64_t blocks;       /* in v */
	uint64_t total;        /* handed to the sink before v */
	unsigned char **heads; /* head pass: per layout, its files the pass covers (NULL: all) */
	unsigned char *groups; /* step inodes: the block groups its inodes lie in */
};

static int add(struct walk *w, uint64_t start, uint64_t count)
{
	if (!count)
		return 0;
	if (w->total + w->blocks + count > PF_META_MAX_BLOCKS)
		return -E2BIG;
	w->blocks += count;
	return pf_bvec_push(&w->v, start, count);
}

/* The runs the sink appended to v from n0 on, counted; rc passed on, or -E2BIG over the budget. */
static int counted(struct walk *w, size_t n0, int rc)
{
	for (size_t i = n0; i < w->v.n; i++)
		w->blocks += w->v.r[i].count;
	return rc ? rc : w->total + w->blocks > PF_META_MAX_BLOCKS ? -E2BIG : 0;
}

static int add_more(struct walk *w, ext2_ino_t ino)
{
	size_t n0 = w->v.n;
	return w->s->more ? counted(w, n0, w->s->more(w->s->arg, ino, &w->v)) : 0;
}

/* File blocks (trees, directories): where the sink's place puts them. */
static int add_file_blocks(void *arg, uint64_t start, uint64_t count)
{
	struct walk *w = arg;
	size_t n0 = w->v.n;
	return w->s->place ? counted(w, n0, w->s->place(w->s->arg, start, count, &w->v)) : add(w, start, count);
}

/* The step found so far to the sink; the list emptied. */
static int flush(struct walk *w, const char *name, int cost_only, int ordered)
{
	struct pf_meta_step st = { .name = name, .r = w->v.r, .n = w->v.n, .cost_only = cost_only, .ordered = ordered };
	int rc = w->v.n ? w->s->read(w->s->arg, &st) : 0;
	if (!cost_only) /* libext2fs's own reads: not the pass's budget (the walk's are the next step's trees) */
		w->total += w->blocks;
	w->blocks = 0;
	w->v.n = 0;
	return rc;
}

static int stopped(const struct walk *w)
{
	return w->s->stop && w->s->stop(w->s->arg);
}

/* ino's blocks beyond its inode (its tree; with data, a directory's blocks), and what the sink adds to its tree.
 * An unreadable inode gives nothing (the replay reads nothing for it either). */
static int inode_blocks(struct walk *w, ext2_ino_t ino, int data)
{
	int rc = pf_ext_inode_blocks(w->fs, ino, data, add_file_blocks, w);
	if (rc == -EIO)
		return 0;
	return rc ? rc : add_more(w, ino);
}

static int inode_table_block(struct walk *w, uint64_t ino)
{
	uint64_t blk;
	return pf_ext_inode_table_block(w->fs, ino, &blk) == 0 ? add(w, blk, 1) : 0;
}

/* Calls fn(w, layout, file) for each file of the layouts on the filesystem that the pass covers (head: init's
 * files and the directories above them), whose inode number is in range; stops on a nonzero return or when the
 * sink says stop (-EINTR). */
static int each_file(struct walk *w, int (*fn)(struct walk *, const struct pf_file *))
{
	int rc = 0;
	for (size_t k = 0; k < w->o->nls && !rc; k++) {
		const struct pf_image *img = w->o->ls[k].img;
		for (uint32_t i = 0; i < img->nfiles && !rc; i++) {
			const struct pf_file *f = &img->files[i];
			if (f->fs != w->o->ls[k].fsi || (w->heads && !w->heads[k][i]) || f->ino < 1 ||
			    f->ino > w->fs->super->s_inodes_count)
				continue;
			rc = stopped(w) ? -EINTR : fn(w, f);
		}
	}
	return rc;
}

static int file_inode(struct walk *w, const struct pf_file *f)
{
	if (w->groups)
		w->groups[(f->ino - 1) / w->fs->super->s_inodes_per_group] = 1;
	return inode_table_block(w, f->ino);
}

/* The block and inode bitmaps of the groups the layouts' inodes lie in: where the boot creates files beside
 * them and extends the ones it writes, ext4 reads those bitmaps one at a time, late in the boot, a seek each.
 * They lie beside the inode tables (at a group's start, or a flex group's run of them just before its tables),
 * so in the step's sweep they cost a little transfer.  Groups whose bitmap is not on the disk yet (uninit) are
 * left out: the kernel does not read those either. */
static int group_bitmaps(struct walk *w)
{
	int rc = 0;
	for (dgrp_t g = 0; g < w->fs->group_desc_count && !rc; g++) {
		if (!w->groups[g])
			continue;
		if (!ext2fs_bg_flags_test(w->fs, g, EXT2_BG_BLOCK_UNINIT))
			rc = add(w, ext2fs_block_bitmap_loc(w->fs, g), 1);
		if (!rc && !ext2fs_bg_flags_test(w->fs, g, EXT2_BG_INODE_UNINIT))
			rc = add(w, ext2fs_inode_bitmap_loc(w->fs, g), 1);
	}
	return rc;
}

static int file_tree_roots(struct walk *w, const struct pf_file *f)
{
	int rc = pf_ext_inode_tree_roots(w->fs, (ext2_ino_t)f->ino, add_file_blocks, w);
	if (rc == -EIO)
		return 0;
	return rc ? rc : add_more(w, (ext2_ino_t)f->ino); /* a grown tree's first level: its new leaf */
}

static int file_tree(struct walk *w, const struct pf_file *f)
{
	return inode_blocks(w, (ext2_ino_t)f->ino, 0);
}

/* A directory whole (still the layout's), or (full pass) a regular file's tree. */
static int file_dir_or_tree(struct walk *w, const struct pf_file *f)
{
	if (f->flags & PF_FILE_DIR) {
		int rc = pf_ext_layout_dir_blocks(w->fs, f, add_file_blocks, w);
		return rc ? rc : add_more(w, (ext2_ino_t)f->ino);
	}
	return w->heads ? 0 : file_tree(w, f);
}

/* Step inodes: the root's and the files' inode-table blocks (head: with the root directory's blocks; full pass:
 * with their groups' bitmaps). */
static int step_inodes(struct walk *w)
{
	int rc = inode_table_block(w, w->o->root);
	size_t n0 = w->v.n;
	if (!rc && w->heads)
		rc = w->s->root_dir ? counted(w, n0, w->s->root_dir(w->s->arg, &w->v)) : inode_blocks(w, w->o->root, 1);
	if (!rc && !w->heads && !(w->groups = calloc(w->fs->group_desc_count, 1)))
		rc = -ENOMEM;
	if (!rc)
		rc = each_file(w, file_inode);
	if (!rc && w->groups)
		rc = group_bitmaps(w);
	free(w->groups);
	w->groups = NULL;
	return rc ? rc : flush(w, "inodes", 0, 0);
}

/* Steps tree-roots, walk-trees (when asked) and dirs+trees. */
static int step_trees(struct walk *w)
{
	int rc = 0;
	if (!w->heads) {
		rc = each_file(w, file_tree_roots);
		if (!rc)
			rc = flush(w, "tree-roots", 0, 0);
	}
	if (!rc && !w->heads && w->o->walk) {
		rc = each_file(w, file_tree);
		if (!rc)
			rc = flush(w, "walk-trees", 1, 1);
	}
	if (!rc)
		rc = each_file(w, file_dir_or_tree);
	return rc ? rc : flush(w, "dirs+trees", 0, 0);
}

/* ---- the directory tree of the layouts' paths ---- */

struct dnode {
	const char *path;       /* prefix of a layout path, relative to the mount point */
	uint32_t len;           /* its length */
	uint32_t name;          /* offset of its last component */
	uint32_t depth;         /* 1 = in the mount's root directory */
	uint32_t first, nchild; /* children: nodes [first, first + nchild) at depth + 1 */
	ext2_ino_t ino;         /* from the lookup in the parent, 0 if not found */
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
	if (!path || strncmp(path, mnt, ml) || (path[ml] != '/' && path[ml]))
		return NULL;
	path += ml;
	while (*path == '/')
		path++;
	return path;
}

/* Layout file i's path relative to its mount point when it lies on the pass's filesystem, else NULL. */
static const char *rel_path(const struct pf_meta_layout *l, uint32_t i)
{
	const struct pf_file *f = &l->img->files[i];
	return f->fs == l->fsi ? relative(f->path, l->img->fs[l->fsi].mountpoint) : NULL;
}

/* The nodes of one path r (its directory prefixes, and itself when a directory) appended to d. */
static size_t path_nodes(const char *r, int is_dir, struct dnode *d, size_t n)
{
	uint32_t depth = 0, name = 0;
	for (const char *p = r;; p++) {
		if (*p != '/' && *p)
			continue;
		int last = !*p;
		if (p > r + name) { /* skip empty components ("a//b") */
			depth++;
			if (!last || is_dir)
				d[n++] = (struct dnode){ .path = r, .len = (uint32_t)(p - r), .name = name, .depth = depth };
		}
		if (last)
			return n;
		name = (uint32_t)(p - r + 1);
	}
}

/* Each node's children: contiguous in the sorted order (they share the prefix "parent/" and nothing else at
 * their depth does); the parent found by bsearch in the previous depth's range. */
static void link_children(struct dnode *d, size_t n)
{
	size_t lo = 0; /* start of the previous depth's range */
	for (size_t i = 0, start = 0; i < n; i++) {
		if (i && d[i].depth != d[i - 1].depth) {
			lo = start;
			start = i;
		}
		if (d[i].depth == 1)
			continue;
		size_t a = lo, b = start;
		const char *pp = d[i].path;
		size_t pl = d[i].name ? d[i].name - 1 : 0;
		while (pl && pp[pl - 1] == '/')
			pl--;
		while (a < b) {
			size_t mid = a + (b - a) / 2;
			if (prefix_cmp(d[mid].path, d[mid].len, pp, pl) < 0)
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
}

/* All directory prefixes (and directories) of the layouts' paths on the filesystem, sorted by depth and name,
 * unique, linked to their children. */
static int build_tree(const struct pf_meta_opts *o, struct dnode **out, size_t *nout)
{
	size_t cap = 0, n = 0;
	for (size_t k = 0; k < o->nls; k++)
		for (uint32_t i = 0; i < o->ls[k].img->nfiles; i++) {
			const char *r = rel_path(&o->ls[k], i);
			for (; r && *r; r++)
				cap += *r == '/';
			cap += r != NULL; /* a directory entry itself */
		}
	struct dnode *d = malloc((cap ? cap : 1) * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t k = 0; k < o->nls; k++)
		for (uint32_t i = 0; i < o->ls[k].img->nfiles; i++) {
			const char *r = rel_path(&o->ls[k], i);
			if (r && *r)
				n = path_nodes(r, !!(o->ls[k].img->files[i].flags & PF_FILE_DIR), d, n);
		}
	if (n > 1)
		qsort(d, n, sizeof(*d), dnode_cmp);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!w || dnode_cmp(&d[w - 1], &d[i]))
			d[w++] = d[i];
	link_children(d, w);
	*out = d;
	*nout = w;
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

/* The names of d[first .. first + n) looked up in directory dir (its blocks read by the step before). */
static void lookup_children(ext2_filsys fs, ext2_ino_t dir, struct dnode *d, size_t first, size_t n)
{
	if (!n || !dir)
		return;
	struct lookup lk = { d, first, n, 0 };
	(void)ext2fs_dir_iterate2(fs, dir, 0, NULL, lookup_cb, &lk);
}

/* One level d[lo .. hi): its directories' inode blocks, then their blocks, then their children looked up. */
static int walk_level(struct walk *w, struct dnode *d, size_t lo, size_t hi)
{
	int rc = 0;
	for (size_t i = lo; i < hi && !rc; i++)
		if (d[i].ino)
			rc = inode_table_block(w, d[i].ino);
	if (!rc)
		rc = flush(w, "walk-inodes", 0, 0);
	for (size_t i = lo; i < hi && !rc; i++)
		if (d[i].ino)
			rc = inode_blocks(w, d[i].ino, 1);
	if (!rc)
		rc = flush(w, "walk", 0, 0);
	for (size_t i = lo; i < hi && !rc; i++) {
		if (stopped(w))
			rc = -EINTR;
		else
			lookup_children(w->fs, d[i].ino, d, d[i].first, d[i].nchild);
	}
	return rc;
}

/* Tell the sink which layout directories the walk read (found where the layout's inode is). */
static void report_dirs_read(struct walk *w, const struct dnode *d, size_t n)
{
	for (size_t k = 0; k < w->o->nls && w->s->dir_read; k++) {
		const struct pf_image *l = w->o->ls[k].img;
		for (uint32_t i = 0; i < l->nfiles; i++) {
			const char *r = (l->files[i].flags & PF_FILE_DIR) ? rel_path(&w->o->ls[k], i) : NULL;
			if (!r)
				continue;
			size_t rl = strlen(r);
			while (rl && r[rl - 1] == '/')
				rl--;
			struct dnode key = { .path = r, .len = (uint32_t)rl };
			for (size_t c = 0; c < rl; c++) /* depth = non-empty components */
				key.depth += r[c] != '/' && (c == 0 || r[c - 1] == '/');
			const struct dnode *hit = rl ? bsearch(&key, d, n, sizeof(*d), dnode_cmp) : NULL;
			ext2_ino_t ino = rl ? (hit ? hit->ino : 0) : w->o->root;
			if (ino && ino == l->files[i].ino)
				w->s->dir_read(w->s->arg, k, i);
		}
	}
}

/* The directory tree, level by level from the mount's root: the root's blocks (its inode was in step inodes),
 * the names of the first level looked up in them, then each level (walk_level). */
static int dir_walk(struct walk *w)
{
	struct dnode *d;
	size_t n;
	int rc = build_tree(w->o, &d, &n);
	if (rc)
		return rc;
	size_t n1 = 0;
	while (n1 < n && d[n1].depth == 1)
		n1++;
	rc = inode_blocks(w, w->o->root, 1);
	if (!rc)
		rc = flush(w, "walk", 0, 0);
	if (!rc)
		lookup_children(w->fs, w->o->root, d, 0, n1);
	for (size_t lo = 0, hi; lo < n && !rc; lo = hi) {
		for (hi = lo; hi < n && d[hi].depth == d[lo].depth;)
			hi++;
		rc = walk_level(w, d, lo, hi);
	}
	if (!rc)
		report_dirs_read(w, d, n);
	free(d);
	return rc;
}

/* Which files the head pass covers: init's and the directories above them, per layout. */
static int head_files(struct walk *w)
{
	w->heads = calloc(w->o->nls ? w->o->nls : 1, sizeof(*w->heads));
	if (!w->heads)
		return -ENOMEM;
	for (size_t k = 0; k < w->o->nls; k++) {
		const struct pf_image *l = w->o->ls[k].img;
		if (!(w->heads[k] = calloc(l->nfiles ? l->nfiles : 1, 1)))
			return -ENOMEM;
		for (uint32_t i = 0; i < l->nfiles; i++) {
			const struct pf_file *f = &l->files[i];
			w->heads[k][i] = pf_lorder_is_head(f) ||
					 (f->fs == w->o->ls[k].fsi && (f->flags & PF_FILE_DIR) && pf_lorder_above_head(l, f));
		}
	}
	return 0;
}

int pf_meta_step_dump(FILE *f, uint32_t fsi, uint32_t bs, const struct pf_meta_step *s, struct pf_bvec *tmp)
{
	tmp->n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (pf_bvec_push(tmp, s->r[i].start, s->r[i].count))
			return -ENOMEM;
	size_t n = pf_branges_normalize(tmp->r, tmp->n, 0);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "m %u meta %s %llu 0 %llu -\n", fsi, s->name, (unsigned long long)(tmp->r[i].start * bs),
			(unsigned long long)(tmp->r[i].count * bs));
	fflush(f);
	return 0;
}

int pf_meta_pass(ext2_filsys fs, const struct pf_meta_opts *o, const struct pf_meta_sink *s)
{
	struct walk w = { .fs = fs, .o = o, .s = s };
	int rc = o->head ? head_files(&w) : 0;
	if (!rc) /* open: what opening the filesystem read */
		rc = add(&w, 0, fs->super->s_first_data_block + 1 + fs->desc_blocks);
	if (!rc)
		rc = flush(&w, "open", 1, 0);
	if (!rc)
		rc = step_inodes(&w);
	if (!rc)
		rc = step_trees(&w);
	if (!rc && !o->head)
		rc = dir_walk(&w);
	for (size_t k = 0; w.heads && k < o->nls; k++)
		free(w.heads[k]);
	free(w.heads);
	free(w.v.r);
	return rc == -E2BIG || rc == -EINTR ? 0 : rc;
}
