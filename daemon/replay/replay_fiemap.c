/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The replay's block mapper (read_plan.h): where a file's ranges lie now, by FIEMAP.  The layout's own block
 * numbers date from when it was made: a prefetch-reorder since then (it runs at every shutdown) moved the
 * blocks, and a sweep sorted by the old numbers reads them in a scrambled order (slower than no prefetch at
 * all). */
#include "replay_internal.h"

#include "array.h"
#include "fiemap.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define FIEMAP_BATCH 64
/* More extents than this in the layout's ranges of one file: the rest keep the layout's places. */
#define FIEMAP_MAX_EXTENTS 65536

/* The extents of [start, end): *covered is where the map ends when it was cut short (else end). */
static int get_extents(int fd, uint64_t start, uint64_t end, struct pf_rplan_extent **out, size_t *nout,
		       uint64_t *covered)
{
	struct pf_fiemap w;
	struct pf_rplan_extent *v = NULL;
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
		for (uint32_t j = 0; j < w.n; j++) { /* an unwritten extent reads as zeros: no read to place */
			const struct fiemap_extent *fe = &w.ext[j];
			v[n++] = (struct pf_rplan_extent){ fe->fe_logical, fe->fe_length, fe->fe_physical,
							   !(fe->fe_flags & (PF_FIEMAP_NO_PLACE | FIEMAP_EXTENT_UNWRITTEN)) };
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

int pf_replay_fiemap(int fd, struct pf_ritem *const *items, size_t n, struct pf_rvec *more)
{
	if (!n)
		return 0;
	uint64_t start = items[0]->offset, end = 0;
	for (size_t i = 0; i < n; i++)
		if (items[i]->offset + items[i]->length > end)
			end = items[i]->offset + items[i]->length;
	struct pf_rplan_extent *x = NULL;
	size_t nx = 0;
	uint64_t covered;
	int rc = get_extents(fd, start, end, &x, &nx, &covered);
	if (rc)
		return rc; /* nothing touched: the layout's places stand */
	rc = pf_rplan_place_file(items, n, x, nx, covered, more);
	free(x);
	return rc;
}

/* The mapper: the file opened after its identity check (a missing or changed one is recorded and not
 * mapped), its extents from FIEMAP. */
static int map_file(void *arg, uint32_t file, uint64_t start, uint64_t end, struct pf_rplan_extent **x, size_t *nx,
		    uint64_t *covered)
{
	struct pf_rctx *c = arg;
	struct pf_xfs_sweep *xfs = c->fs[c->l->files[file].fs].xfs;
	if (pf_replay_xfs_layout_places(xfs)) /* opening it would read its inode out of the sweep's order */
		return PF_RPLAN_UNMAPPED;
	/* on XFS by handle: by path, the lookups would read the directories now, one at a time */
	int fd = xfs ? pf_replay_xfs_open(c, xfs, file) : pf_replay_open(c, file, 1);
	if (fd < 0)
		return PF_RPLAN_UNMAPPED;
	int rc = get_extents(fd, start, end, x, nx, covered);
	close(fd);
	return rc;
}

static int map_stop(void *arg)
{
	return pf_rctx_should_stop(arg);
}

struct pf_rplan_mapper pf_replay_mapper(struct pf_rctx *c)
{
	return (struct pf_rplan_mapper){ .map = map_file, .stop = map_stop, .arg = c };
}
