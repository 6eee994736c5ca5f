/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internals of pf_aggregate, shared by its parts (aggregate*.c); nobody else includes this. */
#ifndef PREFETCH_AGGREGATE_INT_H
#define PREFETCH_AGGREGATE_INT_H

#include "aggregate_opts.h"
#include "format.h"

#include <stdint.h>
#include <stddef.h>

/* What became of an identity; the first rule that drops it wins. */
enum agg_fate { AGG_KEPT = 0, AGG_SUPERSEDED, AGG_UNSTABLE, AGG_VANISHED, AGG_CHANGED, AGG_CUT };

/* One file record of one trace. */
struct agg_ref {
	uint32_t t;                /* trace index, 0 = oldest */
	uint32_t file;             /* index into that trace's files[] */
	uint32_t fs;               /* layout fs index */
	uint32_t group;            /* identity group */
	const struct pf_file *f;
};

/* One identity (fs, inode, generation) over all traces. */
struct agg_group {
	uint32_t first, count;     /* its refs in agg.refs, newest trace first */
	uint32_t root;             /* the newest identity of its path (itself unless superseded) */
	uint64_t own;              /* bit t: trace t holds this identity */
	uint64_t seen;             /* root only: bit t: trace t holds this identity or one it superseded */
	uint32_t exec;             /* root only: PF_FILE_EXEC if any record of the lineage had it */
	double rank;               /* root only: mean normalised first-touch rank */
	double ns;                 /* root only: mean first_ns */
	double sort_rank, sort_ns; /* root only: rank/ns for ordering (a directory takes its earliest child's) */
	enum agg_fate fate;
};

/* Per trace: its extents grouped by file and sorted by offset. */
struct agg_extidx {
	uint32_t *start;           /* nfiles + 1 entries: extents of file i are ext[start[i] .. start[i+1]) */
	const struct pf_extent **ext;
};

struct agg {
	struct pf_image *const *tr;
	size_t n;
	uint32_t *fsmap[PF_AGGREGATE_MAX_TRACES]; /* trace fs index -> layout fs index */
	struct agg_extidx idx[PF_AGGREGATE_MAX_TRACES];
	struct agg_ref *refs;
	size_t nrefs;
	struct agg_group *groups;
	size_t ngroups;
	struct pf_image *layout;
	uint64_t incomplete;       /* bit t: trace t is flagged PF_IMG_INCOMPLETE */
	uint64_t gone[PF_MAX_FS];  /* per layout fs: bit t: that filesystem went away during trace t (PF_FS_GONE) */
};

/* The record of a group's newest appearance. */
static inline const struct agg_ref *agg_newest(const struct agg *a, const struct agg_group *g)
{
	return &a->refs[g->first];
}

/* The traces that vote on root g (the weighing of incomplete traces, aggregate.h): all of them, except those
 * where g's filesystem went away, and the incomplete ones that do not have g (their silence is no vote). */
static inline uint64_t agg_voters(const struct agg *a, const struct agg_group *g)
{
	uint64_t all = a->n >= 64 ? ~0ull : (1ull << a->n) - 1;
	return all & ~a->gone[agg_newest(a, g)->fs] & ~(a->incomplete & ~g->seen);
}

/* The stability vote: count of n traces, with or without the newest.  Also used for pages. */
static inline int agg_vote(unsigned count, unsigned n, int in_newest)
{
	return 2 * count > n || (2 * count == n && in_newest);
}

/* aggregate_merge.c: group records by identity, link superseded identities to their successor, and compute
 * presence and mean rank per lineage.  Returns 0 or -ENOMEM. */
int agg_merge(struct agg *a);

/* aggregate_filter.c: compare a recorded file with what is on disk now.  Returns AGG_KEPT, AGG_VANISHED or
 * AGG_CHANGED. */
enum agg_fate agg_check_file(const struct pf_file *f);

/* aggregate_order.c: sort roots[] (group indices) into layout order. */
int agg_order(struct agg *a, uint32_t *roots, size_t nroots);

/* aggregate_ranges.c: one trace's extents of a file, sorted by offset. */
struct agg_src {
	const struct pf_extent *const *ext;
	size_t n;
};

struct agg_span {
	uint64_t offset, length, physical;
	uint32_t flags;            /* PF_EXT_PHYS_KNOWN */
};

/* Page ranges of a file held by the vote among m sources (oldest first), clipped to limit bytes; physical blocks
 * from the newest source knowing them.  *out is malloc'd (NULL when empty).  Returns 0 or -ENOMEM. */
int agg_ranges(const struct agg_src *src, size_t m, uint64_t limit, uint32_t block_size, uint64_t page,
	       struct agg_span **out, size_t *nout);

/* aggregate_bound.c: the size/count bounds, applied file by file in layout order. */
struct agg_bound {
	uint64_t max_bytes;        /* 0 = none */
	uint32_t max_files;        /* 0 = none */
	uint64_t bytes;            /* admitted so far */
	uint32_t files;
};

/* Is a file of `bytes` bytes admitted?  1 with how many of them fit in *allowed, or 0 when it is cut
 * altogether. */
int agg_bound_admit(struct agg_bound *b, uint64_t bytes, uint64_t *allowed);
/* Keep the first `allowed` bytes of spans (by offset); returns the new count. */
size_t agg_spans_truncate(struct agg_span *spans, size_t n, uint64_t allowed);

#endif
