/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replay work list: the layout's reading order, sorted physically, coalesced, or merged for flash.  No I/O
 * here. */
#include "replay_plan.h"

#include <errno.h>
#include <stdlib.h>

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
 * apart as in the file (holes are the file's own blocks), or both unplaced. */
static int adjacent_on_device(const struct pf_ritem *p, const struct pf_ritem *c, uint64_t hole)
{
	if (p->kind != PF_RITEM_DATA || c->kind != PF_RITEM_DATA || p->bin != c->bin || p->fs != c->fs ||
	    p->file != c->file)
		return 0;
	if (c->offset < p->offset || c->offset > p->offset + p->length + hole || p->phys_known != c->phys_known)
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
