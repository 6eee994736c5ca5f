/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pf_aggregate: the steps in order — filesystems by UUID, records by identity (aggregate_merge.c), the vote,
 * the on-disk check (aggregate_filter.c), the order (aggregate_order.c), then per file in that order its page
 * ranges (aggregate_ranges.c) under the bounds (aggregate_bound.c). */
#include "aggregate.h"
#include "aggregate_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const uint8_t zero_uuid[16];

/* A filesystem is the same across boots when its UUID is; one without a UUID is recognised by its mount point,
 * and so is a btrfs subvolume among the others of its filesystem (PF_FS_SUBVOL: same UUID).  1 with its index
 * in layout l in *k, or 0 when l has none. */
static int find_fs(const struct pf_image *l, const struct pf_fs *fs, uint32_t *k)
{
	if (memcmp(fs->uuid, zero_uuid, 16) && !(fs->flags & PF_FS_SUBVOL))
		return pf_image_find_fs(l, fs->uuid, k);
	for (uint32_t i = 0; i < l->nfs; i++) /* same UUID (a subvolume's) or none, and the same mount point */
		if (!memcmp(l->fs[i].uuid, fs->uuid, 16) && !strcmp(l->fs[i].mountpoint, fs->mountpoint)) {
			*k = i;
			return 1;
		}
	return 0;
}

/* Newest trace first, so that block size, medium and mount point are the newest known. */
static int union_fs(struct agg *a)
{
	for (size_t t = a->n; t-- > 0;) {
		const struct pf_image *tr = a->tr[t];
		if (tr->nfs && !(a->fsmap[t] = malloc(tr->nfs * sizeof(uint32_t))))
			return -ENOMEM;
		for (uint32_t j = 0; j < tr->nfs; j++) {
			uint32_t k;
			if (!find_fs(a->layout, &tr->fs[j], &k)) {
				struct pf_fs fs = tr->fs[j];
				fs.flags &= PF_FS_SUBVOL | PF_FS_SKIPPED; /* gone is what one trace saw, not a property of the layout */
				int rc = pf_image_add_fs(a->layout, &fs);
				if (rc < 0)
					return rc;
				k = (uint32_t)rc;
			}
			a->fsmap[t][j] = k;
			if (tr->fs[j].flags & PF_FS_GONE)
				a->gone[k] |= 1ull << t;
		}
	}
	return 0;
}

static int cmp_ext_offset(const void *pa, const void *pb)
{
	const struct pf_extent *a = *(const struct pf_extent *const *)pa, *b = *(const struct pf_extent *const *)pb;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* A trace lists extents in access order; the vote needs them per file by offset. */
static int index_extents(const struct pf_image *tr, struct agg_extidx *x)
{
	if (!(x->start = calloc((size_t)tr->nfiles + 1, sizeof(*x->start))))
		return -ENOMEM;
	if (tr->nextents && !(x->ext = malloc(tr->nextents * sizeof(*x->ext))))
		return -ENOMEM;
	for (uint32_t i = 0; i < tr->nextents; i++)
		x->start[tr->extents[i].file + 1]++;
	for (uint32_t f = 0; f < tr->nfiles; f++)
		x->start[f + 1] += x->start[f];
	uint32_t *fill = malloc(((size_t)tr->nfiles + 1) * sizeof(*fill));
	if (!fill)
		return -ENOMEM;
	memcpy(fill, x->start, ((size_t)tr->nfiles + 1) * sizeof(*fill));
	for (uint32_t i = 0; i < tr->nextents; i++)
		x->ext[fill[tr->extents[i].file]++] = &tr->extents[i];
	free(fill);
	for (uint32_t f = 0; f < tr->nfiles; f++)
		if (x->start[f + 1] - x->start[f] > 1)
			qsort(x->ext + x->start[f], x->start[f + 1] - x->start[f], sizeof(*x->ext), cmp_ext_offset);
	return 0;
}

/* The vote and the on-disk check; returns the surviving lineage roots. */
static int select_files(struct agg *a, const struct pf_aggregate_opts *o, struct pf_aggregate_report *r,
			uint32_t **rootsp, size_t *nrootsp)
{
	uint32_t *roots = a->ngroups ? malloc(a->ngroups * sizeof(*roots)) : NULL;
	size_t nroots = 0;
	if (a->ngroups && !roots)
		return -ENOMEM;
	for (size_t i = 0; i < a->ngroups; i++) {
		struct agg_group *g = &a->groups[i];
		if (g->fate == AGG_SUPERSEDED) {
			r->files_changed++;
			continue;
		}
		uint64_t voters = agg_voters(a, g);
		uint64_t newest_bit = voters ? 1ull << (63 - __builtin_clzll(voters)) : 0;
		unsigned count = (unsigned)__builtin_popcountll(g->seen & voters);
		if (!agg_vote(count, (unsigned)__builtin_popcountll(voters), !!(g->seen & newest_bit))) {
			g->fate = AGG_UNSTABLE;
			r->files_unstable++;
			continue;
		}
		if (o->check_files && (g->fate = agg_check_file(agg_newest(a, g)->f)) != AGG_KEPT) {
			if (g->fate == AGG_VANISHED)
				r->files_vanished++;
			else
				r->files_changed++;
			continue;
		}
		roots[nroots++] = (uint32_t)i;
	}
	*rootsp = roots;
	*nrootsp = nroots;
	return 0;
}

/* The group's own records (not its predecessors': other inode, other blocks), one per trace, oldest first;
 * none from a trace where its filesystem went away (its pages there say nothing). */
static size_t sources(const struct agg *a, const struct agg_group *g, struct agg_src *src)
{
	size_t m = 0;
	uint64_t gone = a->gone[agg_newest(a, g)->fs];
	for (uint32_t k = g->count; k-- > 0;) {
		const struct agg_ref *r = &a->refs[g->first + k];
		if (gone & (1ull << r->t))
			continue;
		/* records are newest trace first, earliest touch first: walking backwards, a second record of one
		 * trace (the tracer should not write one) replaces the later-touched one */
		if (m && k + 1 < g->count && a->refs[g->first + k + 1].t == r->t)
			m--;
		const struct agg_extidx *x = &a->idx[r->t];
		src[m++] = (struct agg_src){ x->ext ? x->ext + x->start[r->file] : NULL,
					     x->start[r->file + 1] - x->start[r->file] };
	}
	return m;
}

static uint64_t span_bytes(const struct agg_span *s, size_t n)
{
	uint64_t b = 0;
	for (size_t i = 0; i < n; i++)
		b += s[i].length;
	return b;
}

/* Layout order: ranges, bounds, then the file and its extents go into the layout. */
static int emit_files(struct agg *a, const struct pf_aggregate_opts *o, const uint32_t *roots, size_t nroots,
		      struct pf_aggregate_report *r)
{
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t page = ps > 0 ? (uint64_t)ps : 4096;
	struct agg_bound bound = { .max_bytes = o->max_bytes, .max_files = o->max_files };
	struct agg_src src[PF_AGGREGATE_MAX_TRACES];
	for (size_t i = 0; i < nroots; i++) {
		struct agg_group *g = &a->groups[roots[i]];
		const struct agg_ref *nr = agg_newest(a, g);
		const struct pf_file *f = nr->f;
		size_t m = sources(a, g, src);
		uint64_t limit = f->size > UINT64_MAX - page ? UINT64_MAX / page * page : (f->size + page - 1) / page * page;
		struct agg_span *spans;
		size_t nspans;
		int rc = agg_ranges(src, m, limit, a->layout->fs[nr->fs].block_size, page, &spans, &nspans);
		if (rc)
			return rc;
		uint64_t bytes = span_bytes(spans, nspans);
		uint64_t allowed;
		if (!agg_bound_admit(&bound, bytes, &allowed)) {
			g->fate = AGG_CUT;
			r->files_cut++;
			r->bytes_cut += bytes;
			free(spans);
			continue;
		}
		if (allowed < bytes) {
			nspans = agg_spans_truncate(spans, nspans, allowed);
			r->bytes_cut += bytes - allowed;
		}
		struct pf_file lf = *f;
		lf.fs = nr->fs;
		lf.flags = f->flags | g->exec;
		lf.first_ns = (uint64_t)llround(g->ns);
		lf.first_order = a->layout->nfiles + 1;
		lf.boots = (uint32_t)__builtin_popcountll(g->seen);
		int fi = pf_image_add_file(a->layout, &lf);
		for (size_t s = 0; fi >= 0 && s < nspans; s++) {
			struct pf_extent e = { .file = (uint32_t)fi, .flags = spans[s].flags, .offset = spans[s].offset,
					       .length = spans[s].length, .physical = spans[s].physical };
			rc = pf_image_add_extent(a->layout, &e);
			if (rc < 0)
				fi = rc;
		}
		free(spans);
		if (fi < 0)
			return fi;
		r->files_kept++;
		r->bytes_kept += (uint64_t)allowed;
	}
	return 0;
}

static void release(struct agg *a)
{
	for (size_t t = 0; t < a->n; t++) {
		free(a->fsmap[t]);
		free(a->idx[t].start);
		free(a->idx[t].ext);
	}
	free(a->refs);
	free(a->groups);
}

int pf_aggregate(struct pf_image *const *traces, size_t n, const struct pf_aggregate_opts *o, struct pf_image **layout,
		 struct pf_aggregate_report *rep)
{
	static const struct pf_aggregate_opts no_opts;
	struct pf_aggregate_report r = { .traces = (uint32_t)n };
	*layout = NULL;
	if (rep)
		*rep = (struct pf_aggregate_report){ 0 };
	if (!o)
		o = &no_opts;
	if (n > PF_AGGREGATE_MAX_TRACES)
		return -E2BIG;
	for (size_t t = 0; t < n; t++)
		if (!traces[t] || traces[t]->kind != PF_KIND_TRACE)
			return PF_EKIND;

	struct agg a = { .tr = traces, .n = n };
	for (size_t t = 0; t < n; t++)
		if (traces[t]->flags & (PF_IMG_INCOMPLETE | PF_IMG_REASONS))
			a.incomplete |= 1ull << t;
	uint32_t *roots = NULL;
	size_t nroots = 0;
	int rc = -ENOMEM;
	if (!(a.layout = pf_image_new(PF_KIND_LAYOUT)))
		goto out;
	if ((rc = union_fs(&a)))
		goto out;
	for (size_t t = 0; t < n; t++)
		if ((rc = index_extents(traces[t], &a.idx[t])))
			goto out;
	if ((rc = agg_merge(&a)) || (rc = select_files(&a, o, &r, &roots, &nroots)) ||
	    (rc = agg_order(&a, roots, nroots)) || (rc = emit_files(&a, o, roots, nroots, &r)))
		goto out;

	r.files_seen = (uint32_t)a.ngroups;
	a.layout->boots = (uint32_t)n;
	a.layout->created = (uint64_t)time(NULL);
	for (size_t t = 0; t < n; t++) {
		/* an incomplete trace votes for what it has (agg_voters); the layout says it was built from one, and why */
		a.layout->flags |= traces[t]->flags & (PF_IMG_INCOMPLETE | PF_IMG_REASONS);
		uint32_t lost = traces[t]->lost_events;
		a.layout->lost_events = a.layout->lost_events > UINT32_MAX - lost ? UINT32_MAX : a.layout->lost_events + lost;
	}
	*layout = a.layout;
	a.layout = NULL;
	if (rep)
		*rep = r;
out:
	free(roots);
	pf_image_free(a.layout);
	release(&a);
	return rc;
}
