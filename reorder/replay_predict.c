/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The replay's reads from the libext2fs view, costed now and after a plan (see replay_predict.h). */
#include "replay_predict.h"

#include "array.h"
#include "disk_model.h"
#include "ext_meta_pass.h"
#include "format.h"
#include "read_map.h"
#include "read_plan.h"
#include "relocate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The replay's reads as passes for the cost model (replay_cost.h), each run where it lies when read: the
 * moves m (sorted by source; none: now) applied to file blocks, and the extent leaves the runs add (sim). */
struct passes {
	struct pf_bvec *v;
	struct pf_cost_pass *p;
	size_t n, cap;
	ext2_filsys fs;
	const struct pf_cost_move *m;
	size_t nm;
	const struct pf_reloc_sim *sim;
};

/* A new empty pass; returns its run list, or NULL. */
static struct pf_bvec *new_pass(struct passes *ps, uint64_t gap, int cache, int data, int ordered)
{
	if (PF_ARRAY_RESERVE(ps->v, ps->cap, ps->n + 1, 16))
		return NULL;
	struct pf_cost_pass *p = realloc(ps->p, ps->cap * sizeof(*p));
	if (!p)
		return NULL;
	ps->p = p;
	ps->v[ps->n] = (struct pf_bvec){ 0 };
	ps->p[ps->n] = (struct pf_cost_pass){ .gap = gap, .cache = cache, .data = data, .ordered = ordered };
	return &ps->v[ps->n++];
}

/* ---- the metadata pass (lib/ext_meta_pass.h): its steps as passes ---- */

static int meta_step(void *arg, const struct pf_meta_step *s)
{
	struct pf_bvec *v = new_pass(arg, PF_META_GAP_BLOCKS, PF_COST_DEVICE, 0, s->ordered);
	int rc = v ? 0 : -ENOMEM;
	for (size_t i = 0; i < s->n && !rc; i++)
		rc = pf_bvec_push(v, s->r[i].start, s->r[i].count);
	return rc;
}

static int meta_place(void *arg, uint64_t start, uint64_t count, struct pf_bvec *out)
{
	const struct passes *ps = arg;
	return ps->nm ? pf_cost_relocate_run(ps->m, ps->nm, start, count, out) : pf_bvec_push(out, start, count);
}

/* After the runs: the leaf they add to ino's tree (a block they leave where it is), read with the tree. */
static int meta_more(void *arg, ext2_ino_t ino, struct pf_bvec *out)
{
	const struct passes *ps = arg;
	uint64_t leaf = pf_reloc_sim_leaf(ps->sim, ino);
	return leaf ? pf_bvec_push(out, leaf, 1) : 0;
}

static int meta_pass(struct passes *ps, const struct pf_meta_layout *ls, size_t nls, int head)
{
	struct pf_meta_opts o = { .ls = ls, .nls = nls, .root = EXT2_ROOT_INO, .head = head, .walk = 1 };
	struct pf_meta_sink s = { .read = meta_step, .place = meta_place, .more = meta_more, .arg = ps };
	return pf_meta_pass(ps->fs, &o, &s);
}

/* ---- the data: the read plan's items (lib/read_plan.h), mapped by libext2fs (read_map.h) ---- */

/* The layouts naming this filesystem. */
static int layouts_here(ext2_filsys fs, const struct pf_layouts *l, struct pf_meta_layout **out, size_t *n)
{
	*out = calloc(l->nimgs ? (size_t)l->nimgs : 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*n = 0;
	for (int i = 0; i < l->nimgs; i++) {
		uint32_t fsi;
		if (pf_image_find_fs(l->imgs[i], fs->super->s_uuid, &fsi))
			(*out)[(*n)++] = (struct pf_meta_layout){ l->imgs[i], fsi };
	}
	return 0;
}

/* One layout's work list on this filesystem: the replay's (pf_rplan_build over all the layout's filesystems:
 * the bins count them all), its items on this one kept; init's files first (rotational and slow flash: *nhead
 * of them, read on their own; else 0). */
struct work {
	struct pf_ritem *items;
	size_t n, nhead;
};

/* The replay reads an unknown medium as a disk. */
static int is_rotational(int medium)
{
	return medium != PF_MEDIUM_SLOW_FLASH && medium != PF_MEDIUM_FAST_FLASH;
}

static int work_list(const struct pf_meta_layout *ml, int medium, struct work *w)
{
	int rc = pf_rplan_build(ml->img, NULL, &w->items, &w->n);
	size_t k = 0;
	for (size_t i = 0; i < w->n; i++)
		if (w->items[i].fs == ml->fsi)
			w->items[k++] = w->items[i];
	w->n = k;
	w->nhead = !rc && (is_rotational(medium) || medium == PF_MEDIUM_SLOW_FLASH)
			   ? pf_rplan_head_first(ml->img, w->items, w->n) : 0;
	return rc;
}

/* What the replay reads of a placed DATA item: its mapped blocks where the mapper found them now; nothing for
 * a hole or an unwritten extent, a file it could not map (gone, changed: the replay skips it) or a directory or
 * inode (the metadata pass has them cached). */
static int item_run(const struct passes *ps, const struct pf_ritem *it, struct pf_bvec *v)
{
	if (it->kind != PF_RITEM_DATA || it->phys_src != PF_RPHYS_NOW || !it->mapped)
		return 0;
	uint64_t bs = ps->fs->blocksize, s = it->physical / bs;
	return pf_bvec_push(v, s, (it->physical + it->mapped + bs - 1) / bs - s);
}

/* items[0 .. n) as the replay reads them on the medium: the rotational sweep, one pass per bin in its
 * physical order (pf_rplan_sweep); the slow-flash reads in first-touch order, one request each
 * (pf_rplan_flash); fast flash's readers in access order, unmerged (placed only to know their size). */
static int data_passes(struct passes *ps, const struct pf_meta_layout *ml, int medium, struct pf_ritem *items,
		       size_t n)
{
	if (!n)
		return 0;
	struct pf_read_map rm = { .fs = ps->fs, .img = ml->img, .fsi = ml->fsi, .moves = ps->m, .nmoves = ps->nm };
	struct pf_rplan_mapper m = pf_read_map_mapper(&rm);
	struct pf_rplan_placed placed = { 0 };
	struct pf_ritem *own = NULL;
	int rot = is_rotational(medium);
	int rc = rot ? pf_rplan_sweep(ml->img, &m, &items, &n, &own, &placed)
		 : medium == PF_MEDIUM_SLOW_FLASH ? pf_rplan_flash(ml->img, &m, &items, &n, &own, &placed)
						  : pf_rplan_place(ml->img, &m, &items, &n, &own, &placed);
	struct pf_bvec *v = NULL;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!v || (rot && items[i].bin != items[i - 1].bin))
			if (!(v = new_pass(ps, 0, PF_COST_FILES, 1, !rot)))
				rc = -ENOMEM;
		if (!rc)
			rc = item_run(ps, &items[i], v);
	}
	free(own);
	return rc;
}

/* The replay's passes in order, as replay_predict.h lists them. */
static int build(struct passes *ps, const struct pf_layouts *l, int medium)
{
	struct pf_meta_layout *ls = NULL;
	size_t nls = 0, nhead = 0;
	int rc = layouts_here(ps->fs, l, &ls, &nls);
	struct work *w = rc ? NULL : calloc(nls ? nls : 1, sizeof(*w));
	if (!rc && !w)
		rc = -ENOMEM;
	for (size_t k = 0; k < nls && !rc; k++) {
		rc = work_list(&ls[k], medium, &w[k]);
		nhead += w[k].nhead;
	}
	if (!rc && nhead) /* init's files: their metadata, then their data, before the pass proper */
		rc = meta_pass(ps, ls, nls, 1);
	for (size_t k = 0; k < nls && !rc && nhead; k++)
		rc = data_passes(ps, &ls[k], medium, w[k].items, w[k].nhead);
	if (!rc)
		rc = meta_pass(ps, ls, nls, 0);
	for (size_t k = 0; k < nls && !rc; k++)
		rc = data_passes(ps, &ls[k], medium, w[k].items + w[k].nhead, w[k].n - w[k].nhead);
	for (size_t k = 0; w && k < nls; k++)
		free(w[k].items);
	free(w);
	free(ls);
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
		rc = pf_replay_predict_moves(fs, l, moves, nmoves, sim, medium, out);
	pf_reloc_sim_free(sim);
	free(inos);
	free(moves);
	return rc;
}

/* The replay's cost: now (m, sim NULL), or after the moves m (sorted by source) and the runs simulated. */
static int cost(ext2_filsys fs, const struct pf_layouts *l, int medium, const struct pf_disk_model *d,
		const struct pf_cost_move *m, size_t nm, const struct pf_reloc_sim *sim, struct pf_cost *out)
{
	struct passes ps = { .fs = fs, .m = m, .nm = nm, .sim = sim };
	int rc = build(&ps, l, medium);
	for (size_t i = 0; i < ps.n; i++) {
		ps.p[i].r = ps.v[i].r;
		ps.p[i].n = ps.v[i].n;
	}
	if (!rc) /* placed already */
		rc = pf_replay_cost(d, ps.p, ps.n, NULL, 0, out);
	for (size_t i = 0; i < ps.n; i++)
		free(ps.v[i].r);
	free(ps.v);
	free(ps.p);
	return rc;
}

int pf_replay_predict_moves(ext2_filsys fs, const struct pf_layouts *l, const struct pf_cost_move *moves,
			    size_t nmoves, const struct pf_reloc_sim *sim, int medium, struct pf_replay_prediction *out)
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
	int rc = cost(fs, l, medium, &d, NULL, 0, NULL, &out->now);
	if (!rc && nmoves)
		rc = cost(fs, l, medium, &d, m, nmoves, sim, &out->after);
	else if (!rc)
		out->after = out->now;
	out->gain_percent = pf_replay_gain_percent(out->now.seconds, out->after.seconds);
	free(m);
	return rc;
}
