/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The replay's cost on the disk model (see replay_cost.h). */
#include "replay_cost.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int move_cmp(const void *a, const void *b)
{
	const struct pf_cost_move *x = a, *y = b;
	return (x->src > y->src) - (x->src < y->src);
}

/* First move (sorted by src) whose source ends after block b. */
static size_t first_move_after(const struct pf_cost_move *m, size_t n, uint64_t b)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m[mid].src + m[mid].len <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void pf_cost_moves_sort(struct pf_cost_move *m, size_t n)
{
	qsort(m, n, sizeof(*m), move_cmp);
}

int pf_cost_relocate_run(const struct pf_cost_move *m, size_t nm, uint64_t s, uint64_t c, struct pf_bvec *out)
{
	uint64_t end = s + c;
	int rc = 0;
	for (size_t k = first_move_after(m, nm, s); s < end && !rc;) {
		if (k < nm && m[k].src <= s) {
			uint64_t e = m[k].src + m[k].len < end ? m[k].src + m[k].len : end;
			rc = pf_bvec_push(out, m[k].dst + (s - m[k].src), e - s);
			s = e;
			k++;
		} else {
			uint64_t e = k < nm && m[k].src < end ? m[k].src : end;
			rc = pf_bvec_push(out, s, e - s);
			s = e;
		}
	}
	return rc;
}

/* First cached run (normalized) ending after block b. */
static size_t first_cached_after(const struct pf_bvec *c, uint64_t b)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->r[mid].start + c->r[mid].count <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct head {
	const struct pf_disk_model *d;
	uint64_t at;
	struct pf_cost *out;
	int data;
};

static void request(struct head *h, uint64_t start, uint64_t count)
{
	int seek;
	/* flash: no move, a fixed cost per request the read takes (rotational: 0 and one request) */
	uint64_t nreq = pf_disk_requests(h->d, count);
	double t = pf_disk_move_s(h->d, h->at, start, &seek) + pf_disk_transfer_s(h->d, count) +
		   (double)nreq * pf_disk_per_request_s(h->d);
	h->out->seconds += t;
	*(h->data ? &h->out->data_s : &h->out->meta_s) += t;
	*(h->data ? &h->out->data_blocks : &h->out->meta_blocks) += count;
	h->out->requests += nreq;
	h->out->seeks += seek;
	h->at = start + count;
}

/* Cache run [s, s+c): the cache stays normalized.  Returns 0 or -ENOMEM. */
static int cache_add(struct pf_bvec *cache, uint64_t s, uint64_t c)
{
	if (pf_bvec_push(cache, s, c))
		return -ENOMEM;
	cache->n = pf_branges_normalize(cache->r, cache->n, 0);
	return 0;
}

/* One pass: its runs (already relocated) merged and sorted, or as given when ordered, each read except what the
 * cache holds; then cached (an ordered pass's runs one by one: a block it names twice is read once). */
static int pass(struct head *h, struct pf_bvec *runs, uint64_t gap, int ordered, struct pf_bvec *cache)
{
	size_t n = ordered ? runs->n : pf_branges_normalize(runs->r, runs->n, gap);
	for (size_t i = 0; i < n; i++) {
		uint64_t s = runs->r[i].start, end = s + runs->r[i].count;
		if (!cache) {
			request(h, s, end - s);
			continue;
		}
		for (size_t k = first_cached_after(cache, s); s < end; k++) {
			uint64_t cs = k < cache->n ? cache->r[k].start : end;
			if (cs > s)
				request(h, s, (cs < end ? cs : end) - s);
			if (k >= cache->n)
				break;
			s = cache->r[k].start + cache->r[k].count;
		}
		if (ordered && cache_add(cache, runs->r[i].start, runs->r[i].count))
			return -ENOMEM;
	}
	if (!cache || ordered)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (pf_bvec_push(cache, runs->r[i].start, runs->r[i].count))
			return -ENOMEM;
	cache->n = pf_branges_normalize(cache->r, cache->n, 0);
	return 0;
}

int pf_replay_cost(const struct pf_disk_model *d, const struct pf_cost_pass *p, size_t np,
		   const struct pf_cost_move *moves, size_t nmoves, struct pf_cost *out)
{
	memset(out, 0, sizeof(*out));
	struct pf_cost_move *m = NULL;
	if (moves && nmoves) {
		m = malloc(nmoves * sizeof(*m));
		if (!m)
			return -ENOMEM;
		memcpy(m, moves, nmoves * sizeof(*m));
		pf_cost_moves_sort(m, nmoves);
	} else {
		nmoves = 0;
	}
	struct pf_bvec runs = { 0 }, cache = { 0 }, files = { 0 }; /* the device's page cache; the files' */
	struct head h = { .d = d, .at = 0, .out = out };
	int rc = 0;
	for (size_t i = 0; i < np && !rc; i++) {
		runs.n = 0;
		for (size_t k = 0; k < p[i].n && !rc; k++)
			rc = p[i].relocate && nmoves ? pf_cost_relocate_run(m, nmoves, p[i].r[k].start, p[i].r[k].count, &runs)
						     : pf_bvec_push(&runs, p[i].r[k].start, p[i].r[k].count);
		h.data = p[i].data;
		if (!rc)
			rc = pass(&h, &runs, p[i].gap, p[i].ordered, p[i].cache == PF_COST_DEVICE ? &cache : &files);
	}
	free(runs.r);
	free(cache.r);
	free(files.r);
	free(m);
	return rc;
}

double pf_replay_gain_percent(double now_s, double after_s)
{
	return now_s > 0 ? (now_s - after_s) / now_s * 100.0 : 0;
}
