/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Matching files across traces: identity groups, superseded identities, presence and mean rank per lineage.
 * Sorting instead of hashing: every step is one qsort and a linear pass over the records. */
#include "aggregate_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* identity, then newest trace first, then earliest touch first */
static int cmp_identity(const void *pa, const void *pb)
{
	const struct agg_ref *a = pa, *b = pb;
	int c;
	if ((c = cmp_u64(a->fs, b->fs)) || (c = cmp_u64(a->f->ino, b->f->ino)) ||
	    (c = cmp_u64(a->f->generation, b->f->generation)))
		return c;
	if ((c = cmp_u64(b->t, a->t)))
		return c;
	return cmp_u64(a->f->first_order, b->f->first_order);
}

static int cmp_path_key(const struct agg_ref *a, uint32_t fs, const char *path)
{
	int c = cmp_u64(a->fs, fs);
	return c ? c : strcmp(a->f->path, path);
}

/* path, then newest trace first */
static int cmp_path(const void *pa, const void *pb)
{
	const struct agg_ref *a = *(const struct agg_ref *const *)pa, *b = *(const struct agg_ref *const *)pb;
	int c = cmp_path_key(a, b->fs, b->f->path);
	return c ? c : cmp_u64(b->t, a->t);
}

/* lineage root, then trace, then earliest touch */
static int cmp_lineage(const void *pa, const void *pb, void *ctx)
{
	const struct agg_ref *a = *(const struct agg_ref *const *)pa, *b = *(const struct agg_ref *const *)pb;
	const struct agg_group *groups = ctx;
	int c;
	if ((c = cmp_u64(groups[a->group].root, groups[b->group].root)) || (c = cmp_u64(a->t, b->t)))
		return c;
	return cmp_u64(a->f->first_order, b->f->first_order);
}

/* newest appearance first */
static int cmp_group_newest(const void *pa, const void *pb, void *ctx)
{
	const struct agg *a = ctx;
	const struct agg_group *ga = &a->groups[*(const uint32_t *)pa];
	const struct agg_group *gb = &a->groups[*(const uint32_t *)pb];
	int c = cmp_u64(agg_newest(a, gb)->t, agg_newest(a, ga)->t);
	return c ? c : cmp_u64(*(const uint32_t *)pa, *(const uint32_t *)pb);
}

static int build_groups(struct agg *a)
{
	size_t total = 0;
	for (size_t t = 0; t < a->n; t++)
		total += a->tr[t]->nfiles;
	a->nrefs = total;
	if (!total)
		return 0;
	if (!(a->refs = calloc(total, sizeof(*a->refs))) || !(a->groups = calloc(total, sizeof(*a->groups))))
		return -ENOMEM;
	size_t k = 0;
	for (size_t t = 0; t < a->n; t++)
		for (uint32_t i = 0; i < a->tr[t]->nfiles; i++) {
			const struct pf_file *f = &a->tr[t]->files[i];
			a->refs[k++] = (struct agg_ref){ .t = (uint32_t)t, .file = i, .fs = a->fsmap[t][f->fs], .f = f };
		}
	qsort(a->refs, total, sizeof(*a->refs), cmp_identity);
	for (size_t r = 0; r < total; r++) {
		struct agg_ref *ref = &a->refs[r];
		if (r == 0 || ref->fs != ref[-1].fs || ref->f->ino != ref[-1].f->ino ||
		    ref->f->generation != ref[-1].f->generation) {
			uint32_t gi = (uint32_t)a->ngroups++;
			a->groups[gi] = (struct agg_group){ .first = (uint32_t)r, .root = gi };
		}
		struct agg_group *g = &a->groups[a->ngroups - 1];
		g->count++;
		g->own |= 1ull << ref->t;
		ref->group = (uint32_t)(a->ngroups - 1);
	}
	return 0;
}

/* An identity whose newest path shows up in a newer trace with another identity was replaced there: it joins
 * that identity's lineage.  Groups are visited newest first, so the successor's own root is already final. */
static int link_superseded(struct agg *a)
{
	const struct agg_ref **bypath = malloc(a->nrefs * sizeof(*bypath));
	uint32_t *order = malloc(a->ngroups * sizeof(*order));
	if (!bypath || !order) {
		free(bypath);
		free(order);
		return -ENOMEM;
	}
	for (size_t r = 0; r < a->nrefs; r++)
		bypath[r] = &a->refs[r];
	qsort(bypath, a->nrefs, sizeof(*bypath), cmp_path);
	for (size_t g = 0; g < a->ngroups; g++)
		order[g] = (uint32_t)g;
	qsort_r(order, a->ngroups, sizeof(*order), cmp_group_newest, a);

	for (size_t k = 0; k < a->ngroups; k++) {
		struct agg_group *g = &a->groups[order[k]];
		const struct agg_ref *mine = agg_newest(a, g);
		size_t lo = 0, hi = a->nrefs; /* first record with this path: the newest trace showing it */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (cmp_path_key(bypath[mid], mine->fs, mine->f->path) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		const struct agg_ref *newest = bypath[lo]; /* exists: mine itself has this path */
		if (newest->t > mine->t) {
			g->root = a->groups[newest->group].root;
			g->fate = AGG_SUPERSEDED;
		}
	}
	free(bypath);
	free(order);
	return 0;
}

/* Normalised rank of a record in its trace: (0, 1], so that a boot with more files does not weigh more.
 * A rank that is unknown (0) or out of range counts as after every known one. */
static double norm_rank(const struct agg *a, const struct agg_ref *r)
{
	uint32_t nf = a->tr[r->t]->nfiles;
	if (!r->f->first_order || r->f->first_order > nf)
		return 2.0;
	return (double)r->f->first_order / nf;
}

static int lineage_stats(struct agg *a)
{
	const struct agg_ref **by = malloc(a->nrefs * sizeof(*by));
	if (!by)
		return -ENOMEM;
	for (size_t r = 0; r < a->nrefs; r++)
		by[r] = &a->refs[r];
	qsort_r(by, a->nrefs, sizeof(*by), cmp_lineage, a->groups);
	size_t r = 0;
	while (r < a->nrefs) {
		struct agg_group *root = &a->groups[a->groups[by[r]->group].root];
		double rank = 0, ns = 0;
		unsigned k = 0;
		for (; r < a->nrefs && &a->groups[a->groups[by[r]->group].root] == root; r++) {
			root->exec |= by[r]->f->flags & PF_FILE_EXEC;
			if (root->seen & (1ull << by[r]->t))
				continue; /* a second record in the same trace: its earliest one counts */
			root->seen |= 1ull << by[r]->t;
			rank += norm_rank(a, by[r]);
			ns += (double)by[r]->f->first_ns;
			k++;
		}
		root->rank = root->sort_rank = rank / k;
		root->ns = root->sort_ns = ns / k;
	}
	free(by);
	return 0;
}

int agg_merge(struct agg *a)
{
	int rc;
	if ((rc = build_groups(a)) || !a->nrefs)
		return rc;
	if ((rc = link_superseded(a)))
		return rc;
	return lineage_stats(a);
}
