/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The read plan (read_plan.h): the layout's reading order, placed by a mapper, sorted physically and
 * coalesced, or merged for flash.  No I/O here. */
#include "read_plan.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pf_rplan_build(const struct pf_image *l, const struct pf_lorder_opts *o, struct pf_ritem **items, size_t *n)
{
	*items = NULL;
	*n = 0;
	struct pf_litem *it;
	size_t m;
	int rc = pf_layout_order(l, o, &it, &m);
	if (rc || !m)
		return rc;
	struct pf_ritem *out = malloc(m * sizeof(*out));
	if (!out) {
		free(it);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m; i++)
		out[i] = (struct pf_ritem){ .file = it[i].file, .fs = l->files[it[i].file].fs, .kind = it[i].kind,
					    .phys_known = it[i].phys_known,
					    .phys_src = it[i].phys_known ? PF_RPHYS_LAYOUT : PF_RPHYS_NONE,
					    .bin = it[i].bin, .seq = (uint32_t)i, .offset = it[i].offset,
					    .length = it[i].length, .physical = it[i].physical };
	free(it);
	*items = out;
	*n = m;
	return 0;
}

static int physical_cmp(const void *a, const void *b)
{
	const struct pf_ritem *x = a, *y = b;
#define CMP(f)                             \
	if (x->f != y->f)                  \
		return x->f < y->f ? -1 : 1;
	CMP(bin)
	CMP(fs)
	/* non-data (kind 1, 2) before data (kind 0) */
	int xd = x->kind == PF_RITEM_DATA, yd = y->kind == PF_RITEM_DATA;
	if (xd != yd)
		return xd - yd;
	CMP(phys_known) /* unknown (0) first */
	if (x->phys_known) {
		CMP(physical)
	}
	CMP(seq)
#undef CMP
	return 0;
}

void pf_rplan_sort_physical(struct pf_ritem *items, size_t n)
{
	if (n > 1)
		qsort(items, n, sizeof(*items), physical_cmp);
}

/* Data items grouped by bin, filesystem and file, in offset order; the rest after them, in seq order. */
static int file_offset_cmp(const void *a, const void *b)
{
	const struct pf_ritem *x = a, *y = b;
	int xd = x->kind == PF_RITEM_DATA, yd = y->kind == PF_RITEM_DATA;
	if (xd != yd)
		return yd - xd;
#define CMP(f)                             \
	if (x->f != y->f)                  \
		return x->f < y->f ? -1 : 1;
	if (xd) {
		CMP(bin)
		CMP(fs)
		CMP(file)
		CMP(offset)
	}
	CMP(seq)
#undef CMP
	return 0;
}

static int seq_cmp(const void *a, const void *b)
{
	const struct pf_ritem *x = a, *y = b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Can c be read in p's request, holes up to `hole` bytes between them read through?  Both DATA items of the
 * same file and bin, c starting within p or at most `hole` after its end, and on the device the same distance
 * apart as in the file (holes are the file's own blocks), or both unplaced.  Not when p ends in a hole of the
 * file (a sparse file's) before c: that reads nothing, so the device would read them apart anyway. */
static int adjacent_on_device(const struct pf_ritem *p, const struct pf_ritem *c, uint64_t hole)
{
	if (p->kind != PF_RITEM_DATA || c->kind != PF_RITEM_DATA || p->bin != c->bin || p->fs != c->fs ||
	    p->file != c->file)
		return 0;
	if (c->offset < p->offset || c->offset > p->offset + p->length + hole || p->phys_known != c->phys_known)
		return 0;
	if (p->phys_src == PF_RPHYS_NOW && p->mapped < p->length && c->physical > p->physical + p->mapped)
		return 0;
	return !p->phys_known || (c->physical >= p->physical && c->physical - p->physical == c->offset - p->offset);
}

/* One pass over items in their order: each item adjacent to the last kept one is read in its request (the
 * merged item keeps the earliest seq: its first touch).  Returns the new count. */
static size_t merge_adjacent(struct pf_ritem *items, size_t n, uint64_t hole)
{
	if (!n)
		return 0;
	size_t w = 0;
	for (size_t i = 1; i < n; i++) {
		struct pf_ritem *p = &items[w], *c = &items[i];
		if (!adjacent_on_device(p, c, hole)) {
			items[++w] = *c;
			continue;
		}
		uint64_t end = c->offset + c->length;
		if (end > p->offset + p->length)
			p->length = end - p->offset;
		if (p->phys_known && c->physical + c->mapped > p->physical + p->mapped) /* what lies between read */
			p->mapped = c->physical + c->mapped - p->physical;
		if (c->seq < p->seq)
			p->seq = c->seq;
	}
	return w + 1;
}

size_t pf_rplan_coalesce(struct pf_ritem *items, size_t n)
{
	return merge_adjacent(items, n, 0);
}

size_t pf_rplan_merge_flash(struct pf_ritem *items, size_t n, uint64_t hole)
{
	if (!n)
		return 0;
	qsort(items, n, sizeof(*items), file_offset_cmp);
	n = merge_adjacent(items, n, hole);
	qsort(items, n, sizeof(*items), seq_cmp);
	return n;
}

size_t pf_rplan_head_first(const struct pf_image *l, struct pf_ritem *items, size_t n)
{
	size_t nhead = 0;
	for (size_t i = 0; i < n; i++)
		nhead += pf_lorder_is_head(&l->files[items[i].file]);
	if (!nhead || nhead == n)
		return 0;
	struct pf_ritem *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return 0;
	size_t h = 0, r = nhead; /* stable: heads to the front */
	for (size_t i = 0; i < n; i++)
		tmp[pf_lorder_is_head(&l->files[items[i].file]) ? h++ : r++] = items[i];
	memcpy(items, tmp, n * sizeof(*items));
	free(tmp);
	return nhead;
}

/* ---- places ---- */

static int push(struct pf_rvec *m, const struct pf_ritem *it)
{
	if (PF_ARRAY_RESERVE(m->v, m->cap, m->n + 1, 64))
		return -ENOMEM;
	m->v[m->n++] = *it;
	return 0;
}

/* Place one item by the extents (sorted, from *e on); pieces after the first go to more. */
static int place(struct pf_ritem *it, const struct pf_rplan_extent *x, size_t nx, size_t *e, struct pf_rvec *more)
{
	uint64_t was = it->phys_src == PF_RPHYS_LAYOUT ? it->physical : UINT64_MAX;
	uint64_t off = it->offset, end = it->offset + it->length;
	while (*e < nx && x[*e].logical + x[*e].length <= off)
		(*e)++;
	/* Pieces: [start, next piece's start), placed at phys; a hole goes with the piece it follows (or, at the
	 * start, the first one): reading it costs nothing. */
	struct pf_ritem cur = *it;
	int have = 0, rc = 0;
	uint64_t cur_phys_end = 0; /* device byte where cur's mapped part ends */
	for (size_t k = *e; k < nx && x[k].logical < end && !rc; k++) {
		uint64_t s = x[k].logical > off ? x[k].logical : off;
		uint64_t phys = x[k].physical + (s - x[k].logical);
		int contiguous = have && (cur.phys_known ? x[k].placed && phys == cur_phys_end : !x[k].placed);
		if (have && !contiguous) {
			cur.length = s - cur.offset;
			cur.mapped = cur.phys_known ? cur_phys_end - cur.physical : 0;
			if (cur.offset == it->offset)
				*it = cur;
			else
				rc = push(more, &cur);
			cur.offset = s;
		}
		if (!contiguous) {
			cur.phys_known = (uint8_t)x[k].placed;
			cur.phys_src = x[k].placed ? PF_RPHYS_NOW : PF_RPHYS_NONE;
			cur.physical = x[k].placed ? phys : 0;
			have = 1;
		}
		uint64_t xe = x[k].logical + x[k].length < end ? x[k].logical + x[k].length : end;
		cur_phys_end = phys + (xe - s);
	}
	if (!have) { /* all hole */
		cur.phys_known = 0;
		cur.phys_src = PF_RPHYS_NONE;
		cur.physical = 0;
	}
	cur.length = end - cur.offset;
	cur.mapped = cur.phys_known ? cur_phys_end - cur.physical : 0;
	if (cur.offset == it->offset)
		*it = cur;
	else if (!rc)
		rc = push(more, &cur);
	it->moved = was != UINT64_MAX && (!it->phys_known || it->physical != was);
	return rc;
}

int pf_rplan_place_file(struct pf_ritem *const *items, size_t n, const struct pf_rplan_extent *x, size_t nx,
			uint64_t covered, struct pf_rvec *more)
{
	size_t e = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc && items[i]->offset < covered; i++)
		rc = place(items[i], x, nx, &e, more);
	return rc;
}

/* By inode number, then file, then offset: opening files in inode order reads the inode tables (ext4: the
 * metadata pass did already; xfs: the number encodes the place) about in disk order. */
static int by_inode_offset(const void *a, const void *b, void *arg)
{
	const struct pf_image *l = arg;
	const struct pf_ritem *x = *(struct pf_ritem *const *)a, *y = *(struct pf_ritem *const *)b;
	uint64_t xi = l->files[x->file].ino, yi = l->files[y->file].ino;
	if (xi != yi)
		return xi < yi ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The n items of one file (sorted by offset) placed by the mapper; counted in *st.  0 or -ENOMEM. */
static int place_one_file(const struct pf_rplan_mapper *m, struct pf_ritem *const *p, size_t n, struct pf_rvec *more,
			  struct pf_rplan_placed *st)
{
	uint64_t start = p[0]->offset, end = 0;
	for (size_t i = 0; i < n; i++)
		if (p[i]->offset + p[i]->length > end)
			end = p[i]->offset + p[i]->length;
	struct pf_rplan_extent *x = NULL;
	size_t nx = 0;
	uint64_t covered = end;
	int rc = m->map(m->arg, p[0]->file, start, end, &x, &nx, &covered);
	if (rc == PF_RPLAN_UNMAPPED)
		return 0; /* recorded by the mapper; the sweep skips it */
	st->files++;
	if (!rc)
		rc = pf_rplan_place_file(p, n, x, nx, covered, more);
	free(x);
	if (rc == -ENOMEM)
		return rc;
	st->failed += rc < 0; /* the map refused: the layout's places stand */
	for (size_t k = 0; k < n; k++) {
		st->now += p[k]->phys_src == PF_RPHYS_NOW;
		st->layout += p[k]->phys_src == PF_RPHYS_LAYOUT;
		st->moved += p[k]->moved;
	}
	return 0;
}

/* Every data item placed by the mapper, file by file in inode order. */
static int place_all(const struct pf_image *l, const struct pf_rplan_mapper *m, struct pf_ritem *items, size_t n,
		     struct pf_rvec *more, struct pf_rplan_placed *st)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += items[i].kind == PF_RITEM_DATA;
	if (!k)
		return 0;
	struct pf_ritem **p = malloc(k * sizeof(*p));
	if (!p)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (items[i].kind == PF_RITEM_DATA)
			p[k++] = &items[i];
	qsort_r(p, k, sizeof(*p), by_inode_offset, (void *)l);
	int rc = 0;
	for (size_t i = 0, j; i < k && !rc && !(m->stop && m->stop(m->arg)); i = j) {
		for (j = i + 1; j < k && p[j]->file == p[i]->file;)
			j++;
		rc = place_one_file(m, p + i, j - i, more, st);
	}
	free(p);
	if (rc)
		return rc;
	for (size_t i = 0; i < more->n; i++) /* the further pieces of cut ranges */
		st->now += more->v[i].phys_src == PF_RPHYS_NOW;
	st->pieces += (unsigned)more->n;
	return 0;
}

int pf_rplan_place(const struct pf_image *l, const struct pf_rplan_mapper *m, struct pf_ritem **items, size_t *n,
		   struct pf_ritem **own, struct pf_rplan_placed *placed)
{
	*own = NULL;
	struct pf_rvec more = { 0 };
	int rc = place_all(l, m, *items, *n, &more, placed);
	if (!rc && more.n) {
		struct pf_ritem *all = malloc((*n + more.n) * sizeof(*all));
		if (all) {
			memcpy(all, *items, *n * sizeof(*all));
			memcpy(all + *n, more.v, more.n * sizeof(*all));
			*items = *own = all;
			*n += more.n;
		} else {
			rc = -ENOMEM;
		}
	}
	free(more.v);
	return rc;
}

/* ---- passes ---- */

int pf_rplan_sweep(const struct pf_image *l, const struct pf_rplan_mapper *m, struct pf_ritem **items, size_t *n,
		   struct pf_ritem **own, struct pf_rplan_placed *placed)
{
	int rc = pf_rplan_place(l, m, items, n, own, placed);
	if (rc)
		return rc;
	pf_rplan_sort_physical(*items, *n);
	*n = pf_rplan_coalesce(*items, *n);
	return 0;
}

int pf_rplan_flash(const struct pf_image *l, const struct pf_rplan_mapper *m, struct pf_ritem **items, size_t *n,
		   struct pf_ritem **own, struct pf_rplan_placed *placed)
{
	int rc = pf_rplan_place(l, m, items, n, own, placed);
	if (!rc)
		*n = pf_rplan_merge_flash(*items, *n, PF_RPLAN_FLASH_HOLE);
	return rc;
}
