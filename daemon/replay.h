/* Replaying a layout: pull its ranges into the page cache before the boot asks for them.
 * Rotational media: a metadata pass, then one sweep sorted by physical block, in time bins.
 * Solid-state media: several threads in first-touch order. */
#ifndef PREFETCH_REPLAY_H
#define PREFETCH_REPLAY_H

#include "format.h"

#include <signal.h>
#include <stdint.h>

struct pf_replay_opts {
	int medium_override;       /* enum pf_medium_override */
	int threads;               /* readers on solid-state media */
	int timeout_s;             /* give up after this long */
	uint64_t max_bytes;        /* never read more than this (0 = no bound beyond the layout) */
	volatile sig_atomic_t *stop; /* optional: stop early when set */
};

struct pf_replay_stats {
	unsigned files, files_skipped; /* skipped: missing, changed or unreadable */
	unsigned long long bytes;
	unsigned metadata_blocks;  /* inode-table / directory blocks pulled in the metadata pass */
	int medium;                /* enum pf_medium used */
	int timed_out;
	double seconds;
};

/* Returns 0 (also when some files were skipped) or a negative error. */
int pf_replay(const struct pf_image *layout, const struct pf_replay_opts *o, struct pf_replay_stats *st);

#endif
