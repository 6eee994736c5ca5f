/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The order of XFS's replay (replay_xfs_int.h): which of two sweeps, and the keys that put steps and data in it.
 *   up:   the inode pass reads every cluster going up the disk, the data sweep goes up again after it;
 *   down: the pass going up reads only what a higher group needs before its turn, the data sweep then goes
 *         down the groups (the last first), each from its start up: its inode index and remaining clusters
 *         and the directories others wait for first, then its data, each directory where it lies.
 * Down saves a crossing of the disk where a group's clusters lie together at its start (a fresh install); up
 * costs less where they lie all over it (an aged one), each group then crossed twice either way.  Which one is
 * decided by the disk model on the layout's places, before anything is read.  Going down, the data is placed by
 * the layout's record, not by FIEMAP: mapping a file needs it open, its inode read, which would read every
 * cluster before the sweep (results/FSTYPES-BENCH.md). */
#include "replay_xfs_int.h"

#include "disk_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_INODES 64 /* XFS_INODES_PER_CHUNK: inodes are allocated 64 at a time, their numbers aligned */

uint32_t pf_xfs_group(const struct pf_xfs_sweep *x, uint64_t place)
{
	uint64_t g = place / x->agbytes;
	return g < x->agcount ? (uint32_t)g : x->agcount - 1;
}

uint64_t pf_xfs_key(const struct pf_xfs_sweep *x, uint64_t place, int group_start)
{
	if (!x->down)
		return place;
	uint32_t g = pf_xfs_group(x, place);
	uint64_t in = place - (uint64_t)g * x->agbytes; /* the last group's may run past agbytes: keys stay apart */
	if (in >= x->agbytes)
		in = x->agbytes - 1;
	return ((uint64_t)(x->agcount - 1 - g) * 2 + !group_start) * x->agbytes + in;
}

/* ---- where the directories' steps go ---- */

/* The group a directory's step lies in; x->agcount (above every group: swept first) when the layout does not
 * say where its blocks are. */
static uint32_t dir_group(const struct pf_xfs_sweep *x, const struct pf_xdir *r)
{
	return r->bytes ? pf_xfs_group(x, r->first) : x->agcount;
}

void pf_xfs_plan_dirs(struct pf_xfs_sweep *x)
{
	for (size_t d = 0; d < x->ndirs; d++) {
		x->dirs[d].where = PF_XDIR_IN_PLACE;
		x->dirs[d].need_group = 0;
	}
	/* a directory with blocks waits for its ancestors': they go before it (up: in the pass; down: in the
	 * pass before a higher group, swept first, at the group's start before its own), until nothing moves */
	for (int moved = 1; moved;) {
		moved = 0;
		for (size_t d = 0; d < x->ndirs; d++) {
			const struct pf_xdir *r = &x->dirs[d];
			if (!r->has_blocks)
				continue;
			uint32_t g = dir_group(x, r);
			for (uint32_t a = r->parent; a != PF_XNONE; a = x->dirs[a].parent) {
				struct pf_xdir *p = &x->dirs[a];
				if (!p->has_blocks)
					continue;
				uint32_t ga = dir_group(x, p);
				uint8_t w = !x->down || r->where == PF_XDIR_PASS || g > ga ? PF_XDIR_PASS
					  : g == ga			? PF_XDIR_GROUP_START
									: PF_XDIR_IN_PLACE;
				if (w > p->where) {
					p->where = w;
					moved = 1;
				}
			}
		}
	}
	/* the inodes on each step's path are needed before its group's turn (in the pass: before the pass ends) */
	for (size_t d = 0; d < x->ndirs; d++) {
		const struct pf_xdir *r = &x->dirs[d];
		if (!r->has_blocks)
			continue;
		uint32_t g = r->where == PF_XDIR_PASS || !r->bytes ? UINT32_MAX : dir_group(x, r);
		for (uint32_t a = (uint32_t)d; a != PF_XNONE; a = x->dirs[a].parent)
			if (g > x->dirs[a].need_group)
				x->dirs[a].need_group = g;
	}
}

/* ---- which inodes the pass reads, going down ---- */

/* Each file's highest data group, by the layout (top[file]); *data, *ndata: its data's places on this
 * filesystem, sorted.  0 or -ENOMEM. */
static int data_places(const struct pf_rctx *c, const struct pf_xfs_sweep *x, uint32_t *top,
		       struct pf_xstep **data, size_t *ndata)
{
	const struct pf_image *l = c->l;
	uint64_t bs = l->fs[x->fs].block_size ? l->fs[x->fs].block_size : x->g.blocksize;
	*data = malloc((l->nextents ? l->nextents : 1) * sizeof(**data));
	if (!*data)
		return -ENOMEM;
	*ndata = 0;
	for (uint32_t i = 0; i < l->nfiles; i++)
		top[i] = 0;
	for (uint32_t i = 0; i < l->nextents; i++) {
		const struct pf_extent *e = &l->extents[i];
		if (e->file >= l->nfiles || l->files[e->file].fs != x->fs || !(e->flags & PF_EXT_PHYS_KNOWN) ||
		    (l->files[e->file].flags & PF_FILE_DIR))
			continue;
		uint32_t g = pf_xfs_group(x, e->physical * bs);
		top[e->file] = g > top[e->file] ? g : top[e->file];
		(*data)[(*ndata)++] = (struct pf_xstep){ .addr = e->physical * bs, .len = e->length, .idx = g };
	}
	return 0;
}

static int cmp_addr(const void *pa, const void *pb)
{
	const struct pf_xstep *a = pa, *b = pb;
	return a->addr != b->addr ? (a->addr < b->addr ? -1 : 1) : 0;
}

/* An inode goes in the pass when a step of a higher group needs it (swept before its own) or a file of its
 * has data there; a cluster where its chunk's inodes go (its clusters lie side by side: read apart, each costs
 * a step back). */
static void pass_inodes(struct pf_xfs_sweep *x, const uint32_t *top)
{
	for (size_t i = 0; i < x->nino; i++) {
		struct pf_xino *n = &x->ino[i];
		struct pf_xfs_ino d;
		(void)pf_xfs_ino_decode(&x->g, n->ino, &d);
		n->pass = (n->dir != PF_XNONE && x->dirs[n->dir].need_group > d.agno) ||
			  (n->file != PF_XNONE && top[n->file] > d.agno);
	}
	for (size_t i = 0, j; i < x->nino; i = j) {
		uint8_t pass = 0;
		for (j = i; j < x->nino && x->ino[j].ino / CHUNK_INODES == x->ino[i].ino / CHUNK_INODES; j++)
			pass |= x->ino[j].pass;
		for (size_t k = i; k < j; k++)
			x->ino[k].pass = pass;
	}
}

/* ---- the cost of each way, by the disk model ---- */

struct walk {
	struct pf_disk_model m;
	uint64_t head;
	double s;
};

static void go(struct walk *w, uint64_t at, uint64_t len)
{
	int seek;
	uint64_t bs = w->m.unit;
	w->s += pf_disk_move_s(&w->m, w->head / bs, at / bs, &seek) + pf_disk_transfer_s(&w->m, (len + bs - 1) / bs);
	w->head = at + len;
}

/* The clusters (one per cluster, by place; idx: their group) into *v.  0 or -ENOMEM. */
static int clusters(const struct pf_xfs_sweep *x, struct pf_xstep **v, size_t *n)
{
	*v = malloc((x->nino ? x->nino : 1) * sizeof(**v));
	if (!*v)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; i < x->nino; i++) {
		if (i && x->ino[i].cluster == x->ino[i - 1].cluster)
			continue;
		struct pf_xfs_ino d;
		(void)pf_xfs_ino_decode(&x->g, x->ino[i].ino, &d);
		(*v)[(*n)++] = (struct pf_xstep){ .addr = d.cluster_block * x->g.blocksize,
						  .len = (uint64_t)d.cluster_blocks * x->g.blocksize,
						  .kind = x->ino[i].pass, .idx = d.agno };
	}
	return 0;
}

/* Group g's clusters (pass 1: those of the pass, 0: the others, -1: all), its inode index first when
 * has_index. */
static void go_clusters(struct walk *w, const struct pf_xsteps *cl, uint32_t g, int pass, int has_index,
			const struct pf_xfs_sweep *x)
{
	int first = 1;
	for (size_t i = 0; i < cl->n; i++) {
		const struct pf_xstep *s = &cl->heap[i];
		if (s->idx != g || (pass >= 0 && (s->kind != 0) != pass))
			continue;
		if (first && has_index)
			go(w, (uint64_t)g * x->agbytes, x->g.blocksize);
		first = 0;
		go(w, s->addr, s->len);
	}
}

static void go_data(struct walk *w, const struct pf_xstep *data, size_t n, uint32_t g)
{
	for (size_t i = 0; i < n; i++)
		if (data[i].idx == g)
			go(w, data[i].addr, data[i].len);
}

/* Seconds of each way on the layout's places (directories left out: about the same in both). */
static void costs(const struct pf_xfs_sweep *x, struct pf_xsteps *cl, const struct pf_xstep *data, size_t nd,
		  double *up, double *down)
{
	uint64_t span = (uint64_t)x->agcount * x->agbytes / x->g.blocksize;
	struct walk a = { pf_disk_7200rpm(span, x->g.blocksize), 0, 0 }, b = a;
	uint8_t *in_pass = calloc(x->agcount, 1);
	for (size_t i = 0; in_pass && i < cl->n; i++)
		in_pass[cl->heap[i].idx] |= cl->heap[i].kind != 0;
	for (uint32_t g = 0; g < x->agcount; g++) {
		go_clusters(&a, cl, g, -1, 1, x);
		go_clusters(&b, cl, g, 1, 1, x);
	}
	for (uint32_t g = 0; g < x->agcount; g++)
		go_data(&a, data, nd, g);
	for (uint32_t g = x->agcount; g-- > 0;) {
		go_clusters(&b, cl, g, 0, !(in_pass && in_pass[g]), x);
		go_data(&b, data, nd, g);
	}
	free(in_pass);
	*up = a.s;
	*down = b.s;
}

int pf_xfs_plan(const struct pf_rctx *c, struct pf_xfs_sweep *x)
{
	const struct pf_image *l = c->l;
	uint32_t *top = malloc((l->nfiles ? l->nfiles : 1) * sizeof(*top));
	struct pf_xstep *data = NULL;
	size_t nd = 0;
	struct pf_xsteps cl = { 0 };
	int rc = top ? data_places(c, x, top, &data, &nd) : -ENOMEM;
	if (!rc) {
		qsort(data, nd, sizeof(*data), cmp_addr);
		x->down = 1;
		pf_xfs_plan_dirs(x);
		pass_inodes(x, top);
		rc = clusters(x, &cl.heap, &cl.n);
	}
	if (!rc) {
		double up, down;
		costs(x, &cl, data, nd, &up, &down);
		x->down = down < up;
	}
	if (!rc && !x->down) { /* every cluster in the pass, the directories others wait for too */
		for (size_t i = 0; i < x->nino; i++)
			x->ino[i].pass = 1;
		pf_xfs_plan_dirs(x);
	}
	free(cl.heap);
	free(data);
	free(top);
	return rc;
}

/* ---- the data in that order ---- */

struct keyed {
	uint64_t key;
	size_t at;
};

static int cmp_keyed(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;
	return a->key != b->key ? (a->key < b->key ? -1 : 1) : a->at < b->at ? -1 : a->at > b->at;
}

int pf_replay_xfs_order(const struct pf_xfs_sweep *x, struct pf_ritem *items, size_t n)
{
	if (!x->down)
		return 0;
	size_t first = 0; /* the placed data items come last, sorted by place (pf_rplan_sort_physical) */
	while (first < n && (items[first].kind != PF_RITEM_DATA || !items[first].phys_known))
		first++;
	size_t m = n - first;
	struct keyed *k = malloc((m ? m : 1) * sizeof(*k));
	struct pf_ritem *v = malloc((m ? m : 1) * sizeof(*v));
	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m; i++)
		k[i] = (struct keyed){ pf_xfs_key(x, items[first + i].physical, 0), first + i };
	qsort(k, m, sizeof(*k), cmp_keyed);
	for (size_t i = 0; i < m; i++)
		v[i] = items[k[i].at];
	memcpy(items + first, v, m * sizeof(*v));
	free(k);
	free(v);
	return 0;
}

int pf_replay_xfs_layout_places(const struct pf_xfs_sweep *x)
{
	return x && x->down;
}
