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

size_t pf_rplan_coalesce(struct pf_ritem *items, size_t n)
{
	if (!n)
		return 0;
	size_t w = 0;
	for (size_t i = 1; i < n; i++) {
		struct pf_ritem *p = &items[w], *c = &items[i];
		int same = p->kind == PF_RITEM_DATA && c->kind == PF_RITEM_DATA && p->file == c->file &&
			   p->bin == c->bin && p->offset + p->length == c->offset && p->phys_known == c->phys_known &&
			   (!p->phys_known || p->physical + p->length == c->physical);
		if (same)
			p->length += c->length;
		else
			items[++w] = *c;
	}
	return w + 1;
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

/* Can c (at or after p's offset, same file and bin) be read in p's request, holes up to `hole` included? */
static int adjacent_on_device(const struct pf_ritem *p, const struct pf_ritem *c, uint64_t hole)
{
	uint64_t end = p->offset + p->length;
	if (c->offset > end + hole)
		return 0;
	if (p->phys_known != c->phys_known)
		return 0;
	/* placed: the same distance apart on the device as in the file (holes are the file's own blocks) */
	return !p->phys_known || (c->physical >= p->physical && c->physical - p->physical == c->offset - p->offset);
}

size_t pf_rplan_merge_flash(struct pf_ritem *items, size_t n, uint64_t hole)
{
	if (!n)
		return 0;
	qsort(items, n, sizeof(*items), file_offset_cmp);
	size_t w = 0;
	for (size_t i = 1; i < n; i++) {
		struct pf_ritem *p = &items[w], *c = &items[i];
		if (p->kind == PF_RITEM_DATA && c->kind == PF_RITEM_DATA && p->bin == c->bin && p->fs == c->fs &&
		    p->file == c->file && adjacent_on_device(p, c, hole)) {
			uint64_t end = c->offset + c->length;
			if (end > p->offset + p->length)
				p->length = end - p->offset;
			if (c->seq < p->seq)
				p->seq = c->seq;
			continue;
		}
		items[++w] = *c;
	}
	n = w + 1;
	qsort(items, n, sizeof(*items), seq_cmp);
	return n;
}
