/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What an aggregation is asked to do and what it reports (aggregate.h: pf_aggregate), in a header of their
 * own: the aggregation's parts (aggregate_int.h) share them. */
#ifndef PREFETCH_AGGREGATE_OPTS_H
#define PREFETCH_AGGREGATE_OPTS_H

#include <stdint.h>

/* Most traces one call merges (TRACE_AGGREGATION_COUNT allows 32). */
#define PF_AGGREGATE_MAX_TRACES 64u

struct pf_aggregate_opts {
	uint64_t max_bytes;        /* layout size bound (MAX_PREFETCH_MB); 0 = none */
	uint32_t max_files;        /* MAX_PREFETCH_FILES; 0 = none */
	int check_files;           /* stat every file; drop the vanished and the changed (inode, size, mtime) */
};

struct pf_aggregate_report {
	uint32_t traces;           /* traces merged */
	uint32_t files_seen;       /* distinct files in all traces */
	uint32_t files_kept;
	uint32_t files_unstable;   /* not in enough of the traces */
	uint32_t files_vanished;   /* no longer exist */
	uint32_t files_changed;    /* inode, size or mtime differ from the newest trace */
	uint32_t files_cut;        /* dropped by the size/count bounds (latest-touched first) */
	uint64_t bytes_kept, bytes_cut;
};

#endif
