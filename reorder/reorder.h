/* prefetch-reorder: relocate a layout's blocks on an unmounted ext2/3/4 filesystem (or image) so that the
 * next boot reads them nearly sequentially.  Passes: plan -> relocate -> verify. */
#ifndef PREFETCH_REORDER_H
#define PREFETCH_REORDER_H

#include <ext2fs/ext2fs.h>
#include <stdint.h>

struct pf_reorder_opts {
	const char *const *layouts;  /* layout files, in priority order */
	int nlayouts;
	long chunk_blocks;           /* CHUNK_SIZE_BLOCKS */
	int time_budget_s;           /* REORDER_TIME_BUDGET: stop between units of work after this */
	int reserve_percent;         /* REORDER_FREE_RESERVE_PERCENT */
	int dry_run;                 /* plan and report, write nothing */
	int check_only;              /* --check: read-only report of the layout on disk */
	int progress;                /* progress on a terminal */
	int allow_any_owner;         /* tests only: skip the root-ownership check of layouts */
	io_manager io;               /* NULL = unix_io_manager; tests stack a crash-injecting one */
};

struct pf_reorder_result {
	uint64_t moved_blocks;
	uint64_t chunks, chunks_split, chunks_failed;
	uint64_t already_in_place_blocks;
	uint32_t files_skipped;      /* with reasons logged */
	int complete;                /* 0 when the time budget stopped it (the next run continues) */
	double seconds;
};

/* Returns 0 or a negative error; message in err (may be NULL). */
int pf_reorder(const char *device, const struct pf_reorder_opts *o, struct pf_reorder_result *res, char *err,
	       size_t errlen);

#endif
