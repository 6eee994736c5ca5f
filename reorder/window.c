/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The window to make room in: a sliding window over the free-or-layout runs, prefix sums, binary search. */
#include "window.h"

#include "runs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Good blocks below x: pre[i] = blocks of runs [0, i). */
static uint64_t good_below(const struct pf_brange *g, size_t n, const uint64_t *pre, uint64_t x)
{
	size_t lo = 0, hi = n; /* the first run starting at or after x */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g[mid].start < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	const struct pf_brange *r = &g[lo - 1];
	uint64_t part = x - r->start < r->count ? x - r->start : r->count;
	return pre[lo - 1] + part;
}

int pf_window_pick(const struct pf_brange *free_runs, size_t nfree, const struct pf_seg *segs, size_t nsegs,
		   uint64_t len, uint64_t lo, uint64_t hi, struct pf_window *out)
{
	memset(out, 0, sizeof(*out));
	if (hi < lo || hi - lo < len || len == 0)
		return -ERANGE;
	struct pf_brange *g = NULL;
	size_t n = 0;
	if (pf_runs_with_segs(free_runs, nfree, segs, nsegs, &g, &n))
		return -ENOMEM;
	uint64_t *pre = malloc((n + 1) * sizeof(*pre));
	if (!pre) {
		free(g);
		return -ENOMEM;
	}
	pre[0] = 0;
	for (size_t i = 0; i < n; i++)
		pre[i + 1] = pre[i] + g[i].count;
	/* The best window starts where a good run starts or ends where one ends (moving it towards the nearer
	 * such edge never loses good blocks); and at lo. */
	out->start = lo;
	out->len = len;
	out->good = good_below(g, n, pre, lo + len) - good_below(g, n, pre, lo);
	for (size_t i = 0; i < 2 * n; i++) {
		const struct pf_brange *r = &g[i / 2];
		uint64_t s = i % 2 ? (r->start + r->count >= len ? r->start + r->count - len : 0) : r->start;
		if (s < lo)
			s = lo;
		if (s > hi - len)
			s = hi - len;
		uint64_t good = good_below(g, n, pre, s + len) - good_below(g, n, pre, s);
		if (good > out->good || (good == out->good && s < out->start)) {
			out->start = s;
			out->good = good;
		}
	}
	free(g);
	free(pre);
	return 0;
}
