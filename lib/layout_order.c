/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The layout's reading order: the items in access order, merged, cut, binned, the head in bin 0. */
#include "layout_order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096ull

/* How a file enters the order. */
enum { NOT_IN = 0, BY_RANK = 1, BY_EXTENTS = 2 };

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

/* The order being built. */
struct build {
	const struct pf_image *img;
	unsigned flags;
	struct pf_litem *out;
	size_t n;
	const struct touch *touch;
	size_t ntouch, t; /* the touch items, and how many are out */
};

static void put_touches(struct build *b, uint32_t up_to_rank)
{
	for (; b->t < b->ntouch && b->touch[b->t].rank <= up_to_rank; b->t++) {
		uint32_t i = b->touch[b->t].file;
		b->out[b->n++] = (struct pf_litem){ .file = i, .kind = (b->img->files[i].flags & PF_FILE_DIR) ?
									       PF_LITEM_DIR : PF_LITEM_META };
	}
}

/* A piece of data: its own item, or (unless PF_LORDER_PIECES) the continuation of the previous one when that
 * is of the same file and the two are contiguous in the file and on the disk (or both of unknown place). */
static void put_data(struct build *b, const struct pf_extent *e, uint64_t len)
{
	const struct pf_image *img = b->img;
	const struct pf_file *f = &img->files[e->file];
	struct pf_litem it = { .file = e->file, .kind = PF_LITEM_DATA, .phys_known = !!(e->flags & PF_EXT_PHYS_KNOWN),
			       .offset = e->offset, .length = len };
	if (it.phys_known) {
		uint32_t bs = f->fs < img->nfs && img->fs[f->fs].block_size ? img->fs[f->fs].block_size : 4096;
		it.physical = e->physical * bs;
	}
	struct pf_litem *p = b->n ? &b->out[b->n - 1] : NULL;
	if (!(b->flags & PF_LORDER_PIECES) && p && p->kind == PF_LITEM_DATA && p->file == it.file &&
	    p->offset + p->length == it.offset && p->phys_known == it.phys_known &&
	    (!p->phys_known || p->physical + p->length == it.physical))
		p->length += it.length;
	else
		b->out[b->n++] = it;
}

/* Bins by data bytes; then the head, when there is one, in bin 0 alone. */
static void put_bins(struct pf_litem *it, size_t n, const struct pf_image *img, const struct pf_lorder_opts *o)
{
	struct pf_lorder_bins bins;
	pf_lorder_bins_init(&bins, o && o->first_bin_bytes ? o->first_bin_bytes : PF_LORDER_FIRST_BIN,
			    o && o->max_bin_bytes ? o->max_bin_bytes : PF_LORDER_MAX_BIN);
	int head = 0;
	for (size_t i = 0; i < n; i++) {
		it[i].bin = pf_lorder_bins_next(&bins, it[i].kind == PF_LITEM_DATA ? it[i].length : 0);
		head |= pf_lorder_is_head(&img->files[it[i].file]);
	}
	for (size_t i = 0; head && i < n; i++)
		it[i].bin = pf_lorder_is_head(&img->files[it[i].file]) ? 0 : it[i].bin + 1;
}

/* How each file enters the order (enum above). */
static void classify(const struct pf_image *img, unsigned flags, uint32_t fs, unsigned char *how)
{
	for (uint32_t i = 0; i < img->nextents; i++) {
		const struct pf_extent *e = &img->extents[i];
		if (e->file >= img->nfiles)
			continue;
		if (!(img->files[e->file].flags & PF_FILE_DIR) && e->length) /* a directory is read whole */
			how[e->file] = BY_EXTENTS;
	}
	for (uint32_t i = 0; i < img->nfiles; i++) {
		const struct pf_file *f = &img->files[i];
		if (((flags & PF_LORDER_ONE_FS) && f->fs != fs) ||
		    (how[i] == NOT_IN && (flags & PF_LORDER_NO_META) && !(f->flags & PF_FILE_DIR)))
			how[i] = NOT_IN;
		else if (how[i] == NOT_IN)
			how[i] = BY_RANK;
	}
}

int pf_layout_order(const struct pf_image *img, const struct pf_lorder_opts *o, struct pf_litem **items, size_t *n)
{
	*items = NULL;
	*n = 0;
	if (!img->nfiles)
		return 0;
	unsigned flags = o ? o->flags : 0;
	uint64_t max_bytes = o ? o->max_bytes : 0;
	unsigned char *how = calloc(img->nfiles, 1);
	if (!how)
		return -ENOMEM;
	classify(img, flags, o ? o->fs : 0, how);
	size_t ntouch = 0;
	for (uint32_t i = 0; i < img->nfiles; i++)
		ntouch += how[i] == BY_RANK;
	struct touch *touch = ntouch ? malloc(ntouch * sizeof(*touch)) : NULL;
	struct pf_litem *out = malloc(((size_t)img->nextents + ntouch) * sizeof(*out));
	if ((ntouch && !touch) || !out) {
		free(how);
		free(touch);
		free(out);
		return -ENOMEM;
	}
	size_t k = 0;
	for (uint32_t i = 0; i < img->nfiles; i++)
		if (how[i] == BY_RANK)
			touch[k++] = (struct touch){ i, img->files[i].first_order };
	if (ntouch > 1)
		qsort(touch, ntouch, sizeof(*touch), touch_cmp);

	struct build b = { .img = img, .flags = flags, .out = out, .touch = touch, .ntouch = ntouch };
	if (flags & PF_LORDER_DIRS_FIRST)
		put_touches(&b, UINT32_MAX);
	uint64_t total = 0;
	uint32_t rank_seen = 0;
	for (uint32_t i = 0; i < img->nextents; i++) {
		const struct pf_extent *e = &img->extents[i];
		if (e->file >= img->nfiles || how[e->file] != BY_EXTENTS || !e->length)
			continue;
		uint64_t len = e->length;
		if (max_bytes) {
			if (total >= max_bytes)
				break;
			if (len > max_bytes - total) /* cut, keeping whole pages */
				len = (max_bytes - total + PAGE - 1) / PAGE * PAGE;
		}
		if (img->files[e->file].first_order > rank_seen)
			rank_seen = img->files[e->file].first_order;
		put_touches(&b, rank_seen);
		put_data(&b, e, len);
		total += len;
	}
	put_touches(&b, UINT32_MAX);
	free(how);
	free(touch);
	put_bins(out, b.n, img, o);
	if (!b.n) {
		free(out);
		out = NULL;
	}
	*items = out;
	*n = b.n;
	return 0;
}

int pf_lorder_is_head(const struct pf_file *f)
{
	return !!(f->flags & PF_FILE_INIT);
}

int pf_lorder_above_head(const struct pf_image *img, const struct pf_file *d)
{
	size_t dl = strlen(d->path);
	while (dl && d->path[dl - 1] == '/')
		dl--;
	for (uint32_t i = 0; i < img->nfiles; i++) {
		const struct pf_file *f = &img->files[i];
		if (pf_lorder_is_head(f) && f->fs == d->fs && !strncmp(f->path, d->path, dl) && f->path[dl] == '/')
			return 1;
	}
	return 0;
}

void pf_lorder_bins_init(struct pf_lorder_bins *b, uint64_t first_bytes, uint64_t max_bytes)
{
	if (!first_bytes)
		first_bytes = 1;
	*b = (struct pf_lorder_bins){ .size = first_bytes, .max = max_bytes < first_bytes ? first_bytes : max_bytes };
}

uint32_t pf_lorder_bins_next(struct pf_lorder_bins *b, uint64_t data)
{
	if (b->fill >= b->size) {
		b->bin++;
		b->fill = 0;
		b->size = b->size > b->max / 2 ? b->max : b->size * 2;
	}
	b->fill += data;
	return b->bin;
}
