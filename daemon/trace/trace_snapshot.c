/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a file's first open showed: its identity (size, modification and change times) and its extent map, taken
 * from the event's fd, which the tracer has open anyway.  At the end of tracing a file whose recorded path still
 * leads to it, unchanged since (the same size and times), takes its ranges from that map: it is not opened
 * again, which was most of the end's cost per file.  Anything else (changed, renamed, a map with a place not
 * known yet such as delayed allocation, more extents than kept here, or ranges that need a look at the page
 * cache) is opened again as before (trace_build.c). */
#include "trace_internal.h"

#include "array.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SNAP_MAX_EXTENTS 32 /* more fragmented: mapped again at the end */

static int64_t ts_ns(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void pf_trace_snapshot(struct pf_tracer *t, struct pf_trace_entry *e, int fd, const struct stat *st)
{
	e->snap = 0;
	if (!S_ISDIR(st->st_mode) && t->pages.state == PF_PAGES_OFF)
		return; /* without page events a file's ranges come from mincore: it is opened again anyway */
	struct pf_file_extent *x = NULL;
	int nx = pf_file_extents(fd, SNAP_MAX_EXTENTS, &x);
	for (int i = 0; i < nx; i++)
		if (!x[i].phys_known)
			nx = -1; /* a place to come (delayed allocation) or none: ask again at the end */
	if (nx >= 0 && PF_ARRAY_RESERVE(t->xmap, t->cap_xmap, t->nxmap + (size_t)nx, 1024) == 0) {
		for (int i = 0; i < nx; i++)
			t->xmap[t->nxmap + (size_t)i] = x[i];
		e->xfirst = t->nxmap;
		e->nx = (uint32_t)nx;
		t->nxmap += (size_t)nx;
		e->size = (uint64_t)st->st_size;
		e->mtime_ns = ts_ns(st->st_mtim);
		e->ctime_ns = ts_ns(st->st_ctim);
		e->mode = st->st_mode;
		e->snap = 1;
	}
	free(x);
}

int pf_trace_snapshot_same(const struct pf_trace_entry *e, const struct stat *st)
{
	return e->snap && st->st_dev == e->dev && st->st_ino == e->ino && (uint64_t)st->st_size == e->size &&
	       ts_ns(st->st_mtim) == e->mtime_ns && ts_ns(st->st_ctim) == e->ctime_ns;
}

int pf_trace_snapshot_current(const struct pf_trace_entry *e, struct stat *st)
{
	return e->snap && e->path && stat(e->path, st) == 0 && pf_trace_snapshot_same(e, st);
}

void pf_trace_snapshot_stat(const struct pf_trace_entry *e, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = e->dev;
	st->st_ino = e->ino;
	st->st_mode = e->mode;
	st->st_size = (off_t)e->size;
	st->st_mtim = (struct timespec){ e->mtime_ns / 1000000000ll, e->mtime_ns % 1000000000ll };
	st->st_ctim = (struct timespec){ e->ctime_ns / 1000000000ll, e->ctime_ns % 1000000000ll };
}
