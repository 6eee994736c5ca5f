/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The replay's reads from the libext2fs view, costed now and after a plan (see replay_predict.h). */
#include "replay_predict.h"

#include "array.h"
#include "disk_model.h"
#include "format.h"
#include "ext_inode.h"
#include "read_plan.h"
#include "relocate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Where a pass's runs go: its block list, each run where the moves m (sorted by source; none: as named)
 * leave it. */
struct sink {
	struct pf_bvec *v;
	const struct pf_cost_move *m;
	size_t nm;
};

static int sink_push(struct sink *s, uint64_t start, uint64_t count)
{
	return s->nm ? pf_cost_relocate_run(s->m, s->nm, start, count, s->v) : pf_bvec_push(s->v, start, count);
}

struct passes {
	struct pf_bvec *v;
	struct pf_cost_pass *p;
	size_t n, cap;
	uint32_t block_size;
	/* the reads after the runs: the relocating passes' runs pushed where the moves leave them, and the extent
	 * leaves the runs add (sim) with the trees they join; NULL/0 for the reads now */
	const struct pf_cost_move *m;
	size_t nm;
	const struct pf_reloc_sim *sim;
	struct sink cur; /* the last pass */
};

/* A new empty pass; returns where its runs go, or NULL. */
static struct sink *new_pass(struct passes *ps, uint64_t gap, int cache, int relocate, int data)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 16;
		struct pf_bvec *v = realloc(ps->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		ps->v = v;
		struct pf_cost_pass *p = realloc(ps->p, cap * sizeof(*p));
		if (!p)
			return NULL;
		ps->p = p;
		ps->cap = cap;
	}
	ps->v[ps->n] = (struct pf_bvec){ 0 };
	ps->p[ps->n] = (struct pf_cost_pass){ .gap = gap, .cache = cache, .relocate = relocate, .data = data };
	ps->cur = (struct sink){ &ps->v[ps->n++], relocate ? ps->m : NULL, relocate ? ps->nm : 0 };
	return &ps->cur;
}

/* The prediction's passes take the runs ext_inode.h finds, as the replay's metadata pass does. */
static int push_cb(void *v, uint64_t start, uint64_t count)
{
	return sink_push(v, start, count);
}

/* After the runs: the leaf they add to ino's tree (a block they leave where it is), read with the tree. */
static int added_leaf(const struct passes *ps, ext2_ino_t ino, struct sink *v)
{
	uint64_t leaf = pf_reloc_sim_leaf(ps->sim, ino);
	return leaf ? pf_bvec_push(v->v, leaf, 1) : 0;
}

static int inode_blocks(const struct passes *ps, ext2_filsys fs, ext2_ino_t ino, int data, struct sink *v)
{
	int rc = pf_ext_inode_blocks(fs, ino, data, push_cb, v);
	if (rc == -EIO)
		return 0; /* an unreadable inode: the replay reads nothing for it either */
	return rc ? rc : added_leaf(ps, ino, v);
}

/* ---- the images' files on this filesystem ---- */

struct fsfile {
	const struct pf_image *img;
	uint32_t fsi;
};

static int images_here(ext2_filsys fs, const struct pf_layouts *l, struct fsfile **out, size_t *n)
{
	*out = calloc(l->nimgs ? (size_t)l->nimgs : 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*n = 0;
	for (int i = 0; i < l->nimgs; i++) {
		int fsi = pf_image_find_fs(l->imgs[i], fs->super->s_uuid);
		if (fsi >= 0)
			(*out)[(*n)++] = (struct fsfile){ l->imgs[i], (uint32_t)fsi };
	}
	return 0;
}

/* Path of a layout file relative to its mount point, or NULL if it is not below it. */
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

struct dirent_ {
	char *path;      /* relative, no trailing slash */
	uint32_t depth;
	ext2_ino_t ino;
};

static int dir_cmp(const void *a, const void *b)
{
	const struct dirent_ *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The directories on the layouts' paths (and the directories they name), by depth, unique, with their
 * inodes looked up from the root. */
static int dir_tree(ext2_filsys fs, const struct fsfile *ims, size_t nims, struct dirent_ **out, size_t *nout)
{
	struct dirent_ *d = NULL;
	size_t n = 0, cap = 0;
	for (size_t k = 0; k < nims; k++) {
		const struct pf_image *img = ims[k].img;
		for (uint32_t i = 0; i < img->nfiles; i++) {
			const struct pf_file *f = &img->files[i];
			const char *r = f->fs == ims[k].fsi ? relative(f->path, img->fs[ims[k].fsi].mountpoint) : NULL;
			if (!r || !*r)
				continue;
			uint32_t depth = 0;
			for (const char *p = r;; p++) {
				if (*p && *p != '/')
					continue;
				int last = !*p;
				if (p > r && p[-1] != '/')
					depth++;
				if ((!last || (f->flags & PF_FILE_DIR)) && p > r && p[-1] != '/') {
					if (PF_ARRAY_RESERVE(d, cap, n + 1, 256))
						goto nomem;
					d[n] = (struct dirent_){ .path = strndup(r, (size_t)(p - r)), .depth = depth };
					if (!d[n++].path)
						goto nomem;
				}
				if (last)
					break;
			}
		}
	}
	if (n > 1)
		qsort(d, n, sizeof(*d), dir_cmp);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (w && !dir_cmp(&d[w - 1], &d[i])) {
			free(d[i].path);
			continue;
		}
		d[w++] = d[i];
	}
	n = w;
	for (size_t i = 0; i < n; i++) {
		ext2_ino_t ino = 0;
		if (ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, d[i].path, &ino))
			ino = 0;
		d[i].ino = ino;
	}
	*out = d;
	*nout = n;
	return 0;
nomem:
	for (size_t i = 0; i < n; i++)
		free(d[i].path);
	free(d);
	return -ENOMEM;
}

/* ---- data bins ---- */

/* Each owner's bin: that of its first data item in the read plan's work list (read_plan.h; UINT32_MAX: none). */
static int owner_bins(const struct pf_collect *c, const struct fsfile *ims, size_t nims, uint32_t **bins,
		      uint32_t *nbins)
{
	*bins = malloc((c->nfiles ? c->nfiles : 1) * sizeof(**bins));
	if (!*bins)
		return -ENOMEM;
	for (size_t i = 0; i < c->nfiles; i++)
		(*bins)[i] = UINT32_MAX;
	*nbins = 1;
	for (size_t k = 0; k < nims; k++) {
		struct pf_ritem *it;
		size_t n;
		struct pf_lorder_opts o = { .flags = PF_LORDER_ONE_FS, .fs = ims[k].fsi };
		if (pf_rplan_build(ims[k].img, &o, &it, &n))
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			if (it[i].kind != PF_RITEM_DATA)
				continue;
			long ow = pf_collect_find(c, (ext2_ino_t)ims[k].img->files[it[i].file].ino);
			if (ow >= 0 && it[i].bin < (*bins)[ow])
				(*bins)[ow] = it[i].bin;
			if (it[i].bin + 1 > *nbins)
				*nbins = it[i].bin + 1;
		}
		free(it);
	}
	return 0;
}

/* ---- the passes ---- */

static int by_owner(const void *a, const void *b, void *arg)
{
	const struct pf_collect *c = arg;
	uint32_t x = c->segs[*(const size_t *)a].owner, y = c->segs[*(const size_t *)b].owner;
	return (x > y) - (x < y);
}

/* The slow-flash replay's data (read_plan.h, pf_rplan_flash): each file's ranges merged where they lie
 * within PF_RPLAN_FLASH_HOLE of each other on the device, one request per merged range, in first-touch
 * order (which costs nothing on flash: no head).  One pass per file, relocated, merged with that gap. */
static int flash_data(const struct pf_collect *c, const uint32_t *bins, struct passes *ps)
{
	(void)bins; /* a file's ranges are all in its first bin's turn on flash too */
	size_t *ord = malloc((c->nsegs ? c->nsegs : 1) * sizeof(*ord));
	if (!ord)
		return -ENOMEM;
	for (size_t i = 0; i < c->nsegs; i++)
		ord[i] = i;
	qsort_r(ord, c->nsegs, sizeof(*ord), by_owner, (void *)c);
	uint64_t gap = PF_RPLAN_FLASH_HOLE / ps->block_size;
	int rc = 0;
	struct sink *v = NULL;
	for (size_t k = 0; k < c->nsegs && !rc; k++) {
		const struct pf_seg *s = &c->segs[ord[k]];
		const struct pf_file *rec = c->files[s->owner].rec;
		if (!rec || (rec->flags & PF_FILE_DIR))
			continue;
		if (!v || k == 0 || c->segs[ord[k - 1]].owner != s->owner)
			if (!(v = new_pass(ps, gap, PF_COST_FILES, 1, 1)))
				rc = -ENOMEM;
		if (!rc)
			rc = sink_push(v, s->pblk, s->len);
	}
	free(ord);
	return rc;
}

/* A new pass, or -ENOMEM. */
#define NEW_PASS(v, ps, gap, cache, relocate, data)                     \
	do {                                                            \
		if (!((v) = new_pass(ps, gap, cache, relocate, data)))  \
			return -ENOMEM;                                 \
	} while (0)

/* Pass 0: what opening the filesystem reads (superblock, group descriptors). */
static int pass_open(ext2_filsys fs, struct passes *ps)
{
	struct sink *v;
	NEW_PASS(v, ps, 0, PF_COST_DEVICE, 0, 0);
	return sink_push(v, 0, fs->super->s_first_data_block + 1 + fs->desc_blocks);
}

/* Pass 1: the inode-table blocks of the root and of the layouts' files. */
static int pass_inode_tables(ext2_filsys fs, const struct fsfile *ims, size_t nims, struct passes *ps)
{
	struct sink *v;
	uint64_t blk;
	int rc = 0;
	NEW_PASS(v, ps, PF_META_GAP_BLOCKS, PF_COST_DEVICE, 0, 0);
	if (pf_ext_inode_table_block(fs, EXT2_ROOT_INO, &blk) == 0)
		rc = sink_push(v, blk, 1);
	for (size_t k = 0; k < nims && !rc; k++) {
		const struct pf_image *img = ims[k].img;
		for (uint32_t i = 0; i < img->nfiles && !rc; i++)
			if (img->files[i].fs == ims[k].fsi && pf_ext_inode_table_block(fs, img->files[i].ino, &blk) == 0)
				rc = sink_push(v, blk, 1);
	}
	return rc;
}

enum tree_step { ROOTS, WALK, SWEEP };

/* One file's reads in a step of pass 2. */
static int tree_step_file(const struct passes *ps, ext2_filsys fs, const struct pf_file *f, enum tree_step step,
			  struct sink *v)
{
	int rc;
	if (step == ROOTS) {
		if ((rc = pf_ext_inode_tree_roots(fs, (ext2_ino_t)f->ino, push_cb, v)) == -EIO)
			return 0; /* an unreadable inode: the replay reads nothing for it either */
		return rc ? rc : added_leaf(ps, (ext2_ino_t)f->ino, v); /* a grown tree's first level: its leaf */
	}
	if (step == SWEEP && (f->flags & PF_FILE_DIR)) {
		rc = pf_ext_layout_dir_blocks(fs, f, push_cb, v);
		return rc ? rc : added_leaf(ps, (ext2_ino_t)f->ino, v);
	}
	return inode_blocks(ps, fs, (ext2_ino_t)f->ino, 0, v);
}

/* Pass 2: the layouts' directories, whole, found from their inodes (relocated), and the tree blocks of the
 * regular files, in three steps: the trees' first level as the inodes name it, in one sorted sweep; finding
 * the rest reads the tree blocks one at a time in layout order (libext2fs walks each tree: an ordered pass,
 * which finds the first level cached); the sorted sweep then finds those cached. */
static int pass_trees(ext2_filsys fs, const struct fsfile *ims, size_t nims, struct passes *ps)
{
	int rc = 0;
	for (enum tree_step step = ROOTS; step <= SWEEP && !rc; step++) {
		struct sink *v;
		NEW_PASS(v, ps, PF_META_GAP_BLOCKS, PF_COST_DEVICE, 1, 0);
		ps->p[ps->n - 1].ordered = step == WALK;
		for (size_t k = 0; k < nims && !rc; k++) {
			const struct pf_image *img = ims[k].img;
			for (uint32_t i = 0; i < img->nfiles && !rc; i++) {
				const struct pf_file *f = &img->files[i];
				if (f->fs == ims[k].fsi && f->ino >= 1 && f->ino <= fs->super->s_inodes_count)
					rc = tree_step_file(ps, fs, f, step, v);
			}
		}
	}
	return rc;
}

/* Pass 3: the directory tree, level by level from the root: the inode blocks of the level's directories, then
 * their blocks (relocated: the replay finds them where they are). */
static int pass_dir_tree(ext2_filsys fs, const struct dirent_ *d, size_t nd, struct passes *ps)
{
	struct sink *v;
	uint64_t blk;
	NEW_PASS(v, ps, PF_META_GAP_BLOCKS, PF_COST_DEVICE, 1, 0);
	int rc = inode_blocks(ps, fs, EXT2_ROOT_INO, 1, v);
	for (size_t lo = 0, hi; lo < nd && !rc; lo = hi) {
		for (hi = lo; hi < nd && d[hi].depth == d[lo].depth;)
			hi++;
		NEW_PASS(v, ps, PF_META_GAP_BLOCKS, PF_COST_DEVICE, 0, 0);
		for (size_t i = lo; i < hi && !rc; i++)
			if (d[i].ino && pf_ext_inode_table_block(fs, d[i].ino, &blk) == 0)
				rc = sink_push(v, blk, 1);
		if (rc)
			break;
		NEW_PASS(v, ps, PF_META_GAP_BLOCKS, PF_COST_DEVICE, 1, 0);
		for (size_t i = lo; i < hi && !rc; i++)
			if (d[i].ino)
				rc = inode_blocks(ps, fs, d[i].ino, 1, v);
	}
	return rc;
}

/* Pass 4 on a disk: the data, bin by bin (each owner in its first bin). */
static int pass_data_bins(const struct pf_collect *c, const uint32_t *bins, uint32_t nbins, struct passes *ps)
{
	int rc = 0;
	for (uint32_t b = 0; b < nbins && !rc; b++) {
		struct sink *v;
		NEW_PASS(v, ps, 0, PF_COST_FILES, 1, 1);
		for (size_t i = 0; i < c->nsegs && !rc; i++) {
			const struct pf_seg *s = &c->segs[i];
			const struct pf_file *rec = c->files[s->owner].rec;
			uint32_t ob = bins[s->owner] == UINT32_MAX ? 0 : bins[s->owner];
			if (ob == b && rec && !(rec->flags & PF_FILE_DIR))
				rc = sink_push(v, s->pblk, s->len);
		}
	}
	return rc;
}

/* The replay's passes in order, as replay_predict.h lists them. */
static int build(ext2_filsys fs, const struct pf_layouts *l, const struct pf_collect *c, struct passes *ps,
		 int flash)
{
	struct fsfile *ims = NULL;
	size_t nims = 0;
	struct dirent_ *d = NULL;
	size_t nd = 0;
	uint32_t *bins = NULL, nbins = 0;
	int rc = images_here(fs, l, &ims, &nims);
	if (!rc)
		rc = pass_open(fs, ps);
	if (!rc)
		rc = pass_inode_tables(fs, ims, nims, ps);
	if (!rc)
		rc = pass_trees(fs, ims, nims, ps);
	if (!rc)
		rc = dir_tree(fs, ims, nims, &d, &nd);
	if (!rc)
		rc = pass_dir_tree(fs, d, nd, ps);
	if (!rc)
		rc = owner_bins(c, ims, nims, &bins, &nbins);
	if (!rc)
		rc = flash ? flash_data(c, bins, ps) : pass_data_bins(c, bins, nbins, ps);
	for (size_t i = 0; i < nd; i++)
		free(d[i].path);
	free(d);
	free(bins);
	free(ims);
	return rc;
}

int pf_replay_plan_moves(const struct pf_plan *p, struct pf_cost_move **out, size_t *n)
{
	*out = malloc((p->nmoves ? p->nmoves : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*n = 0;
	for (size_t c = 0; c < p->nchunks; c++) {
		const struct pf_chunk *ch = &p->chunks[c];
		if (ch->state != PF_CHUNK_PLACED && ch->state != PF_CHUNK_SPLIT)
			continue;
		for (size_t u = ch->first_unit; u < ch->first_unit + ch->nunits; u++)
			for (size_t m = p->units[u].first; m < p->units[u].first + p->units[u].count; m++)
				(*out)[(*n)++] = (struct pf_cost_move){ p->moves[m].src, p->moves[m].dst, p->moves[m].len };
	}
	return 0;
}

struct pf_disk_model pf_replay_model(ext2_filsys fs, int medium)
{
	uint64_t span = ext2fs_blocks_count(fs->super);
	return medium == PF_MEDIUM_SLOW_FLASH	? pf_disk_sd(span, fs->blocksize)
	       : medium == PF_MEDIUM_FAST_FLASH ? pf_disk_ssd(span, fs->blocksize)
						: pf_disk_7200rpm(span, fs->blocksize);
}

int pf_replay_predict(ext2_filsys fs, const struct pf_layouts *l, const struct pf_collect *col,
		      const struct pf_plan *plan, int medium, struct pf_replay_prediction *out)
{
	struct pf_cost_move *moves = NULL;
	size_t nmoves = 0;
	struct pf_reloc_sim *sim = NULL;
	ext2_ino_t *inos = NULL;
	int rc = plan ? pf_replay_plan_moves(plan, &moves, &nmoves) : 0;
	if (!rc && nmoves) { /* the trees as the run leaves them */
		inos = malloc((col->nfiles ? col->nfiles : 1) * sizeof(*inos));
		rc = inos ? pf_reloc_sim_new(fs, &sim) : -ENOMEM;
		for (size_t i = 0; i < col->nfiles && !rc; i++)
			inos[i] = col->files[i].ino;
		if (!rc)
			rc = pf_reloc_sim_run(sim, plan, inos, col->nfiles, NULL);
	}
	if (!rc)
		rc = pf_replay_predict_moves(fs, l, col, moves, nmoves, sim, medium, out);
	pf_reloc_sim_free(sim);
	free(inos);
	free(moves);
	return rc;
}

/* The replay's cost: now (m, sim NULL), or after the moves m (sorted by source) and the runs simulated. */
static int cost(ext2_filsys fs, const struct pf_layouts *l, const struct pf_collect *col, const struct pf_disk_model *d,
		const struct pf_cost_move *m, size_t nm, const struct pf_reloc_sim *sim, struct pf_cost *out)
{
	struct passes ps = { .block_size = fs->blocksize, .m = m, .nm = nm, .sim = sim };
	int rc = build(fs, l, col, &ps, d->kind == PF_DISK_FLASH);
	for (size_t i = 0; i < ps.n; i++) {
		ps.p[i].r = ps.v[i].r;
		ps.p[i].n = ps.v[i].n;
	}
	if (!rc) /* relocated already */
		rc = pf_replay_cost(d, ps.p, ps.n, NULL, 0, out);
	for (size_t i = 0; i < ps.n; i++)
		free(ps.v[i].r);
	free(ps.v);
	free(ps.p);
	return rc;
}

int pf_replay_predict_moves(ext2_filsys fs, const struct pf_layouts *l, const struct pf_collect *col,
			    const struct pf_cost_move *moves, size_t nmoves, const struct pf_reloc_sim *sim, int medium,
			    struct pf_replay_prediction *out)
{
	memset(out, 0, sizeof(*out));
	struct pf_disk_model d = pf_replay_model(fs, medium);
	struct pf_cost_move *m = NULL;
	if (nmoves && !(m = malloc(nmoves * sizeof(*m))))
		return -ENOMEM;
	if (nmoves) {
		memcpy(m, moves, nmoves * sizeof(*m));
		pf_cost_moves_sort(m, nmoves);
	}
	int rc = cost(fs, l, col, &d, NULL, 0, NULL, &out->now);
	if (!rc && nmoves)
		rc = cost(fs, l, col, &d, m, nmoves, sim, &out->after);
	else if (!rc)
		out->after = out->now;
	out->gain_percent = pf_replay_gain_percent(out->now.seconds, out->after.seconds);
	free(m);
	return rc;
}
