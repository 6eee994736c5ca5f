/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Physical places of a file's ranges from FIEMAP, as the file lies now.  The layout's own block numbers date
 * from when it was made: a prefetch-reorder since then (it runs at every shutdown) moved the blocks, and a
 * sweep sorted by the old numbers reads them in a scrambled order (slower than no prefetch at all).  A range
 * that now spans several extents apart from each other is cut into one piece per place, so that each piece is
 * read where the head passes it. */
#include "replay_internal.h"

#include "array.h"
#include "fiemap.h"

#include <errno.h>
#include <stdlib.h>

#define FIEMAP_BATCH 64
/* More extents than this in the layout's ranges of one file: the rest keep the layout's places. */
#define FIEMAP_MAX_EXTENTS 65536

struct ext {
	uint64_t logical, length, physical;
	int placed;
};

/* The extents of [start, end): *covered is where the map ends when it was cut short (else end). */
static int get_extents(int fd, uint64_t start, uint64_t end, struct ext **out, size_t *nout, uint64_t *covered)
{
	struct pf_fiemap w;
	struct ext *v = NULL;
	size_t n = 0, cap = 0;
	*covered = end;
	int rc = pf_fiemap_open(&w, fd, start, end - start, FIEMAP_BATCH);
	while (!rc && (rc = pf_fiemap_next(&w)) > 0) {
		if (n + w.n > FIEMAP_MAX_EXTENTS) {
			*covered = w.from;
			rc = 0;
			break;
		}
		if ((rc = PF_ARRAY_RESERVE(v, cap, n + w.n, FIEMAP_BATCH)))
			break;
		for (uint32_t j = 0; j < w.n; j++) {
			const struct fiemap_extent *fe = &w.ext[j];
			v[n++] = (struct ext){ fe->fe_logical, fe->fe_length, fe->fe_physical,
					       !(fe->fe_flags & PF_FIEMAP_NO_PLACE) };
		}
	}
	pf_fiemap_close(&w);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*nout = n;
	return 0;
}

static int push(struct pf_rvec *m, const struct pf_ritem *it)
{
	if (PF_ARRAY_RESERVE(m->v, m->cap, m->n + 1, 64))
		return -ENOMEM;
	m->v[m->n++] = *it;
	return 0;
}

/* Place one item by the extents (sorted, from *e on); pieces after the first go to more. */
static int place(struct pf_ritem *it, const struct ext *x, size_t nx, size_t *e, struct pf_rvec *more)
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
	if (cur.offset == it->offset)
		*it = cur;
	else if (!rc)
		rc = push(more, &cur);
	it->moved = was != UINT64_MAX && (!it->phys_known || it->physical != was);
	return rc;
}

int pf_replay_fiemap(int fd, struct pf_ritem *const *items, size_t n, struct pf_rvec *more)
{
	if (!n)
		return 0;
	uint64_t start = items[0]->offset, end = 0;
	for (size_t i = 0; i < n; i++)
		if (items[i]->offset + items[i]->length > end)
			end = items[i]->offset + items[i]->length;
	struct ext *x = NULL;
	size_t nx = 0, e = 0;
	uint64_t covered;
	int rc = get_extents(fd, start, end, &x, &nx, &covered);
	if (rc)
		return rc; /* nothing touched: the layout's places stand */
	for (size_t i = 0; i < n && !rc && items[i]->offset < covered; i++)
		rc = place(items[i], x, nx, &e, more);
	free(x);
	return rc;
}
