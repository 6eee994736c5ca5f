/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Page ranges of one file across traces: a sweep over sorted interval boundaries (never a bitmap, files can be
 * huge and sparse), then physical blocks laid over from the newest trace that knows them. */
#include "aggregate_int.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct event {
	uint64_t pos;
	int delta;                 /* +1 start, -1 end */
	int newest;                /* from the newest source */
};

struct piece {
	uint64_t start, end, physical;
};

struct vec {
	void *p;
	size_t n, cap, elem;
};

static void *vec_push(struct vec *v)
{
	if (pf_array_reserve(&v->p, &v->cap, v->n + 1, v->elem, 16))
		return NULL;
	return (char *)v->p + v->elem * v->n++;
}

static int cmp_event(const void *pa, const void *pb)
{
	const struct event *a = pa, *b = pb;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int cmp_piece(const void *pa, const void *pb)
{
	const struct piece *a = pa, *b = pb;
	return a->start < b->start ? -1 : a->start > b->start;
}

static uint64_t round_up(uint64_t x, uint64_t page)
{
	return x > UINT64_MAX - (page - 1) ? UINT64_MAX / page * page : (x + page - 1) / page * page;
}

/* The voted page intervals, sorted and disjoint. */
static int vote(const struct agg_src *src, size_t m, uint64_t limit, uint64_t page, struct vec *iv)
{
	struct vec ev = { .elem = sizeof(struct event) };
	int rc = -ENOMEM;
	for (size_t k = 0; k < m; k++) {
		uint64_t a = 0, b = 0; /* current merged interval of source k */
		for (size_t i = 0; i <= src[k].n; i++) {
			uint64_t s = 0, e = 0;
			if (i < src[k].n) {
				const struct pf_extent *x = src[k].ext[i];
				s = x->offset / page * page;
				e = round_up(x->offset + x->length, page);
				if (e > limit)
					e = limit;
				if (s >= e)
					continue;
				if (b > a && s <= b) { /* overlaps or touches the current one: sources are sorted */
					if (e > b)
						b = e;
					continue;
				}
			}
			if (b > a) {
				struct event *p = vec_push(&ev), *q = p ? vec_push(&ev) : NULL;
				if (!q)
					goto out;
				*p = (struct event){ a, +1, k == m - 1 };
				*q = (struct event){ b, -1, k == m - 1 };
			}
			a = s;
			b = e;
		}
	}
	struct event *e = ev.p;
	if (ev.n > 1)
		qsort(e, ev.n, sizeof(*e), cmp_event);
	unsigned count = 0, newest = 0;
	int open = 0;
	uint64_t from = 0;
	for (size_t i = 0; i < ev.n;) {
		uint64_t pos = e[i].pos;
		for (; i < ev.n && e[i].pos == pos; i++) {
			count += (unsigned)e[i].delta;
			newest += e[i].newest ? (unsigned)e[i].delta : 0;
		}
		int keep = agg_vote(count, (unsigned)m, newest > 0);
		if (keep && !open) {
			from = pos;
			open = 1;
		} else if (!keep && open) {
			struct piece *p = vec_push(iv);
			if (!p)
				goto out;
			*p = (struct piece){ from, pos, 0 };
			open = 0;
		}
	}
	rc = 0;
out:
	free(ev.p);
	return rc;
}

/* Physical pieces, newest source first; an older source only fills what newer ones left unknown. */
static int phys_map(const struct agg_src *src, size_t m, uint32_t bs, struct vec *map)
{
	for (size_t k = m; k-- > 0;) {
		size_t before = map->n;
		const struct piece *old = map->p;
		size_t j = 0;
		uint64_t prev_end = 0; /* extents are sorted by offset, so s only grows and j never goes back */
		for (size_t i = 0; i < src[k].n; i++) {
			const struct pf_extent *x = src[k].ext[i];
			if (!(x->flags & PF_EXT_PHYS_KNOWN))
				continue;
			uint64_t s = x->offset > prev_end ? x->offset : prev_end, e = x->offset + x->length;
			if (s >= e)
				continue;
			prev_end = e;
			/* subtract the pieces already known (old[0..before) is sorted and disjoint) */
			while (s < e) {
				while (j < before && old[j].end <= s)
					j++;
				uint64_t stop = e;
				if (j < before && old[j].start <= s) {
					s = old[j].end < e ? old[j].end : e;
					continue;
				}
				if (j < before && old[j].start < stop)
					stop = old[j].start;
				if ((s - x->offset) % bs == 0) { /* a block boundary: the physical block is known */
					struct piece *p = vec_push(map);
					if (!p)
						return -ENOMEM;
					old = map->p;
					*p = (struct piece){ s, stop, x->physical + (s - x->offset) / bs };
				}
				s = stop;
			}
		}
		if (map->n > before)
			qsort(map->p, map->n, sizeof(struct piece), cmp_piece);
	}
	return 0;
}

static int emit(struct vec *out, uint64_t off, uint64_t len, int known, uint64_t phys, uint32_t bs)
{
	struct agg_span *prev = out->n ? (struct agg_span *)out->p + out->n - 1 : NULL;
	if (prev && prev->offset + prev->length == off) {
		int pknown = !!(prev->flags & PF_EXT_PHYS_KNOWN);
		if (!pknown && !known) {
			prev->length += len;
			return 0;
		}
		if (pknown && known && prev->length % bs == 0 && prev->physical + prev->length / bs == phys) {
			prev->length += len;
			return 0;
		}
	}
	struct agg_span *s = vec_push(out);
	if (!s)
		return -ENOMEM;
	*s = (struct agg_span){ off, len, known ? phys : 0, known ? PF_EXT_PHYS_KNOWN : 0 };
	return 0;
}

int agg_ranges(const struct agg_src *src, size_t m, uint64_t limit, uint32_t block_size, uint64_t page,
	       struct agg_span **outp, size_t *nout)
{
	struct vec iv = { .elem = sizeof(struct piece) }, map = { .elem = sizeof(struct piece) };
	struct vec out = { .elem = sizeof(struct agg_span) };
	*outp = NULL;
	*nout = 0;
	if (!m || !page)
		return 0;
	int rc = vote(src, m, limit, page, &iv);
	if (!rc && block_size)
		rc = phys_map(src, m, block_size, &map);
	const struct piece *v = iv.p, *p = map.p;
	size_t j = 0;
	for (size_t i = 0; !rc && i < iv.n; i++) {
		uint64_t pos = v[i].start;
		while (!rc && pos < v[i].end) {
			while (j < map.n && p[j].end <= pos)
				j++;
			uint64_t stop = v[i].end;
			if (j < map.n && p[j].start <= pos) {
				if (p[j].end < stop)
					stop = p[j].end;
				int known = (pos - p[j].start) % block_size == 0;
				rc = emit(&out, pos, stop - pos, known, p[j].physical + (pos - p[j].start) / block_size,
					  block_size);
			} else {
				if (j < map.n && p[j].start < stop)
					stop = p[j].start;
				rc = emit(&out, pos, stop - pos, 0, 0, block_size);
			}
			pos = stop;
		}
	}
	free(iv.p);
	free(map.p);
	if (rc) {
		free(out.p);
		return rc;
	}
	*outp = out.p;
	*nout = out.n;
	return 0;
}
