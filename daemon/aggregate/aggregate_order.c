/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Layout order: first touch across boots.  Normalised ranks are averaged (a slow boot and a fast boot weigh the
 * same), ties go to the mean first-touch time.  A directory must come before what lies below it — replay and
 * reorder need the lookup path first — so it sorts at the earliest (rank, time) of itself and its descendants,
 * and on a tie the shallower path goes first. */
#include "aggregate_int.h"
#include "format.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *path_of(const struct agg *a, uint32_t g)
{
	return agg_newest(a, &a->groups[g])->f->path;
}

static int is_dir(const struct agg *a, uint32_t g)
{
	const struct pf_file *f = agg_newest(a, &a->groups[g])->f;
	return (f->flags & PF_FILE_DIR) || S_ISDIR(f->mode);
}

static int cmp_by_path(const void *pa, const void *pb, void *ctx)
{
	return strcmp(path_of(ctx, *(const uint32_t *)pa), path_of(ctx, *(const uint32_t *)pb));
}

static unsigned depth(const char *p)
{
	unsigned d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

static int cmp_layout(const void *pa, const void *pb, void *ctx)
{
	const struct agg *a = ctx;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct agg_group *ga = &a->groups[ia], *gb = &a->groups[ib];
	if (ga->sort_rank != gb->sort_rank)
		return ga->sort_rank < gb->sort_rank ? -1 : 1;
	if (ga->sort_ns != gb->sort_ns)
		return ga->sort_ns < gb->sort_ns ? -1 : 1;
	unsigned da = depth(path_of(a, ia)), db = depth(path_of(a, ib));
	if (da != db)
		return da < db ? -1 : 1;
	int c = strcmp(path_of(a, ia), path_of(a, ib));
	return c ? c : (ia > ib) - (ia < ib);
}

static void lower(struct agg_group *d, const struct agg_group *child)
{
	if (child->rank < d->sort_rank || (child->rank == d->sort_rank && child->ns < d->sort_ns)) {
		d->sort_rank = child->rank;
		d->sort_ns = child->ns;
	}
}

/* Every directory takes the earliest (rank, time) found below it. */
static int pull_dirs_forward(struct agg *a, const uint32_t *roots, size_t nroots)
{
	size_t ndirs = 0;
	for (size_t i = 0; i < nroots; i++)
		ndirs += is_dir(a, roots[i]);
	if (!ndirs)
		return 0;
	uint32_t *dirs = malloc(ndirs * sizeof(*dirs));
	char *buf = malloc(PF_MAX_PATH);
	if (!dirs || !buf) {
		free(dirs);
		free(buf);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < nroots; i++)
		if (is_dir(a, roots[i]))
			dirs[k++] = roots[i];
	qsort_r(dirs, ndirs, sizeof(*dirs), cmp_by_path, a);
	for (size_t i = 0; i < nroots; i++) {
		snprintf(buf, PF_MAX_PATH, "%s", path_of(a, roots[i]));
		char *slash;
		while ((slash = strrchr(buf, '/')) && buf[1]) {
			slash[slash == buf] = '\0'; /* "/a/b" -> "/a" -> "/" */
			size_t lo = 0, hi = ndirs;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				int c = strcmp(path_of(a, dirs[mid]), buf);
				if (c == 0) {
					lower(&a->groups[dirs[mid]], &a->groups[roots[i]]);
					break;
				}
				if (c < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
		}
	}
	free(dirs);
	free(buf);
	return 0;
}

int agg_order(struct agg *a, uint32_t *roots, size_t nroots)
{
	int rc = pull_dirs_forward(a, roots, nroots);
	if (!rc && nroots > 1)
		qsort_r(roots, nroots, sizeof(*roots), cmp_layout, a);
	return rc;
}
