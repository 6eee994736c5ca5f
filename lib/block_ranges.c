/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runs of device blocks (see block_ranges.h). */
#include "block_ranges.h"
#include "array.h"

#include <errno.h>
#include <stdlib.h>

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

int pf_bvec_push(struct pf_bvec *v, uint64_t start, uint64_t count)
{
	if (!count)
		return 0;
	if (PF_ARRAY_RESERVE(v->r, v->cap, v->n + 1, 256))
		return -ENOMEM;
	v->r[v->n++] = (struct pf_brange){ start, count };
	return 0;
}
