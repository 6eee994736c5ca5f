/* Replay work list: built in access order, binned, sorted physically, coalesced.  No I/O here. */
#include "replay_plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096ull

struct touch {
	uint32_t file;
	uint32_t rank;
};

static int touch_cmp(const void *a, const void *b)
{
	const struct touch *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

static void add_touch(const struct pf_image *l, const struct touch *t, struct pf_ritem *out, size_t *n)
{
	const struct pf_file *f = &l->files[t->file];
	out[*n] = (struct pf_ritem){ .file = t->file, .fs = f->fs,
				     .kind = (f->flags & PF_FILE_DIR) ? PF_RITEM_DIR : PF_RITEM_META };
	out[*n].seq = (uint32_t)*n;
	(*n)++;
}

int pf_rplan_build(const struct pf_image *l, const struct pf_rplan_opts *o, struct pf_ritem **items, size_t *n)
{
	*items = NULL;
	*n = 0;
	if (!l->nfiles)
		return 0;
	/* Files with data in the layout; the others (directories, inode-only) become touch items. */
	unsigned char *has_data = calloc(l->nfiles, 1);
	if (!has_data)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->nextents; i++)
		if (l->extents[i].file < l->nfiles && l->extents[i].length &&
		    !(l->files[l->extents[i].file].flags & PF_FILE_DIR))
			has_data[l->extents[i].file] = 1;
	size_t ntouch = 0;
	for (uint32_t i = 0; i < l->nfiles; i++)
		ntouch += !has_data[i];
	struct touch *touch = ntouch ? malloc(ntouch * sizeof(*touch)) : NULL;
	struct pf_ritem *out = malloc(((size_t)l->nextents + ntouch) * sizeof(*out));
	if ((ntouch && !touch) || !out) {
		free(has_data);
		free(touch);
		free(out);
		return -ENOMEM;
	}
	size_t k = 0;
	for (uint32_t i = 0; i < l->nfiles; i++)
		if (!has_data[i])
			touch[k++] = (struct touch){ i, l->files[i].first_order };
	free(has_data);
	if (ntouch > 1)
		qsort(touch, ntouch, sizeof(*touch), touch_cmp);

	/* Walk the extents (access order); a touch item goes before the first extent of a file touched later. */
	size_t m = 0, t = 0;
	uint64_t total = 0;
	uint32_t rank_seen = 0;
	for (uint32_t i = 0; i < l->nextents; i++) {
		const struct pf_extent *e = &l->extents[i];
		if (e->file >= l->nfiles || !e->length || (l->files[e->file].flags & PF_FILE_DIR))
			continue;
		uint64_t len = e->length;
		if (o && o->max_bytes) {
			if (total >= o->max_bytes)
				break;
			if (len > o->max_bytes - total) /* cut, keeping whole pages */
				len = (o->max_bytes - total + PAGE - 1) / PAGE * PAGE;
		}
		const struct pf_file *f = &l->files[e->file];
		if (f->first_order > rank_seen)
			rank_seen = f->first_order;
		while (t < ntouch && touch[t].rank <= rank_seen)
			add_touch(l, &touch[t++], out, &m);
		out[m] = (struct pf_ritem){ .file = e->file, .fs = f->fs, .kind = PF_RITEM_DATA,
					    .phys_known = !!(e->flags & PF_EXT_PHYS_KNOWN), .offset = e->offset,
					    .length = len };
		if (out[m].phys_known) {
			out[m].phys_src = PF_RPHYS_LAYOUT;
			uint32_t bs = f->fs < l->nfs && l->fs[f->fs].block_size ? l->fs[f->fs].block_size : 4096;
			out[m].physical = e->physical * bs;
		}
		out[m].seq = (uint32_t)m;
		m++;
		total += len;
	}
	/* Directories and inode-only files are cheap: keep them even past the byte bound. */
	while (t < ntouch)
		add_touch(l, &touch[t++], out, &m);
	free(touch);
	m = pf_rplan_coalesce(out, m);
	for (size_t i = 0; i < m; i++)
		out[i].seq = (uint32_t)i;
	pf_rplan_assign_bins(out, m, o && o->first_bin_bytes ? o->first_bin_bytes : PF_RPLAN_FIRST_BIN,
			     o && o->max_bin_bytes ? o->max_bin_bytes : PF_RPLAN_MAX_BIN);
	/* init's files (PF_FILE_INIT) get a bin of their own before all others: until they are in, init cannot
	 * start, and in the first bin's sweep they would come whenever their blocks do. */
	int head = 0;
	for (size_t i = 0; i < m && !head; i++)
		head = !!(l->files[out[i].file].flags & PF_FILE_INIT);
	for (size_t i = 0; head && i < m; i++)
		out[i].bin = l->files[out[i].file].flags & PF_FILE_INIT ? 0 : out[i].bin + 1;
	if (!m) {
		free(out);
		out = NULL;
	}
	*items = out;
	*n = m;
	return 0;
}

void pf_rplan_assign_bins(struct pf_ritem *items, size_t n, uint64_t first_bytes, uint64_t max_bytes)
{
	if (!first_bytes)
		first_bytes = 1;
	if (max_bytes < first_bytes)
		max_bytes = first_bytes;
	uint32_t bin = 0;
	uint64_t size = first_bytes, fill = 0;
	for (size_t i = 0; i < n; i++) {
		if (fill >= size) {
			bin++;
			fill = 0;
			size = size > max_bytes / 2 ? max_bytes : size * 2;
		}
		items[i].bin = bin;
		if (items[i].kind == PF_RITEM_DATA)
			fill += items[i].length;
	}
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

static int brange_cmp(const void *a, const void *b)
{
	const struct pf_brange *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->count < y->count ? -1 : x->count > y->count;
}

size_t pf_branges_normalize(struct pf_brange *r, size_t n, uint64_t max_gap)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++) /* drop empty runs */
		if (r[i].count)
			r[w++] = r[i];
	n = w;
	if (!n)
		return 0;
	qsort(r, n, sizeof(*r), brange_cmp);
	w = 0;
	for (size_t i = 1; i < n; i++) {
		uint64_t end = r[w].start + r[w].count;
		if (r[i].start <= end || r[i].start - end <= max_gap) {
			uint64_t e2 = r[i].start + r[i].count;
			if (e2 > end)
				r[w].count = e2 - r[w].start;
		} else {
			r[++w] = r[i];
		}
	}
	return w + 1;
}

uint64_t pf_branges_count(struct pf_brange *r, size_t n)
{
	n = pf_branges_normalize(r, n, 0);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += r[i].count;
	return total;
}
