/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sets of physical runs: sort and merge, clip, complement, count. */
#include "runs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pf_runs_clip(const struct pf_brange *r, size_t n, uint64_t start, uint64_t len, int inside, struct pf_brange **out,
		 size_t *nout)
{
	struct pf_brange *o = malloc((n + 1) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	uint64_t end = start + len;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t s = r[i].start, e = s + r[i].count;
		if (inside) {
			uint64_t a = s > start ? s : start, b = e < end ? e : end;
			if (a < b)
				o[k++] = (struct pf_brange){ a, b - a };
			continue;
		}
		if (s < start) /* the part below, then (a run can straddle the whole window) the part above */
			o[k++] = (struct pf_brange){ s, (e < start ? e : start) - s };
		if (e > end) {
			uint64_t a = s > end ? s : end;
			o[k++] = (struct pf_brange){ a, e - a };
		}
	}
	*out = o;
	*nout = k;
	return 0;
}

int pf_runs_complement(const struct pf_brange *taken, size_t n, uint64_t start, uint64_t len, struct pf_brange **out,
		       size_t *nout)
{
	struct pf_brange *o = malloc((n + 1) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	uint64_t pos = start, end = start + len;
	size_t k = 0;
	for (size_t i = 0; i < n && pos < end; i++) {
		uint64_t s = taken[i].start, e = s + taken[i].count;
		if (e <= pos)
			continue;
		if (s >= end)
			break;
		if (s > pos)
			o[k++] = (struct pf_brange){ pos, s - pos };
		pos = e;
	}
	if (pos < end)
		o[k++] = (struct pf_brange){ pos, end - pos };
	*out = o;
	*nout = k;
	return 0;
}

uint64_t pf_runs_count_in(const struct pf_brange *r, size_t n, uint64_t start, uint64_t len)
{
	uint64_t c = 0, end = start + len;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = r[i].start > start ? r[i].start : start;
		uint64_t e = r[i].start + r[i].count, b = e < end ? e : end;
		if (a < b)
			c += b - a;
	}
	return c;
}

int pf_runs_with_segs(const struct pf_brange *free_runs, size_t nfree, const struct pf_seg *segs, size_t nsegs,
		      struct pf_brange **out, size_t *nout)
{
	size_t n = nfree + nsegs;
	struct pf_brange *r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (nfree)
		memcpy(r, free_runs, nfree * sizeof(*r));
	for (size_t i = 0; i < nsegs; i++)
		r[nfree + i] = (struct pf_brange){ segs[i].pblk, segs[i].len };
	*out = r;
	*nout = pf_branges_normalize(r, n, 0);
	return 0;
}

uint64_t pf_runs_total(const struct pf_brange *r, size_t n)
{
	uint64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += r[i].count;
	return t;
}
