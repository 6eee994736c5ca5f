/* Merging the last N traces into one layout: stable files and ranges, ordered by first touch across boots,
 * vanished/changed files dropped, size bounded. */
#ifndef PREFETCH_AGGREGATE_H
#define PREFETCH_AGGREGATE_H

#include "format.h"

#include <stddef.h>
#include <stdint.h>

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

/* traces[0] is the oldest, traces[n-1] the newest.  Returns 0 or a negative error. */
int pf_aggregate(struct pf_image *const *traces, size_t n, const struct pf_aggregate_opts *o, struct pf_image **layout,
		 struct pf_aggregate_report *rep);

#endif
