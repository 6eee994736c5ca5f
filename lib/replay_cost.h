/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the next boot's replay costs on a disk model (disk_model.h: the 7200 rpm disk, or on flash the SD
 * card or SSD model), predicted from the blocks it will read.  prefetch-reorder weighs a plan by it: the replay as the filesystem is now against the
 * replay as the plan would leave it.
 *
 * The replay's reads are a sequence of passes, each one sorted sweep (daemon/replay: the metadata pass's
 * steps, lib/ext_meta_pass.h, then the read plan's sweep bin by bin, lib/read_plan.h).  For each pass in order:
 *   - its runs are relocated when it asks for it (each block found in a move's source is read at its
 *     destination: where a plan's copy would lie), else read where they are named (blocks no move touches:
 *     inode tables);
 *   - sorted and merged with the pass's gap (the replay's rule: PF_META_GAP_BLOCKS for the metadata pass,
 *     one readahead per merged run; 0 for the data sweep, whose reads go out item by item in block order);
 *     an ordered pass is neither: its runs are read one after the other as given, each cached at once (the
 *     extent-tree and indirect blocks libext2fs reads one at a time, waiting for each, while the replay walks
 *     the layout's files in layout order);
 *   - in a PF_COST_DEVICE pass, the blocks an earlier such pass read (gaps read through included) are cached:
 *     each merged run costs one request per stretch of it not cached yet; a PF_COST_FILES pass (file data:
 *     the files' own page caches) likewise finds cached what an earlier PF_COST_FILES pass read (a page two
 *     bins' items share), never what the device's passes did;
 *   - each request costs pf_disk_move_s(head, start) + pf_disk_transfer_s(length), plus on flash the
 *     per-request cost once for every max_request bytes (pf_disk_requests); the head starts at block 0
 *     and carries over from pass to pass.
 * So: seconds = sum over requests r of move(end of r-1, start of r) + transfer(r), in blocks over the
 * filesystem's span.  What it leaves out: what the boot itself reads during the replay, readahead beyond the
 * recorded ranges.  Pure functions. */
#ifndef PREFETCH_REPLAY_COST_H
#define PREFETCH_REPLAY_COST_H

#include "block_ranges.h"
#include "disk_model.h"

#include <stddef.h>
#include <stdint.h>

enum pf_cost_cache {
	PF_COST_DEVICE = 0, /* read through the block device's page cache (the metadata pass; ext4's metadata) */
	PF_COST_FILES = 1,  /* read into the files' page caches (the data sweep): cached for later such passes */
};

struct pf_cost_pass {
	const struct pf_brange *r; /* blocks it reads, in any order, may overlap */
	size_t n;
	uint64_t gap;              /* merge runs this close (blocks) */
	int cache;                 /* enum pf_cost_cache */
	int relocate;              /* read moved blocks at their destinations */
	int data;                  /* counted as data (else metadata) in pf_cost */
	int ordered;               /* read in the order given, no sort, no merge (gap ignored) */
};

struct pf_cost_move {              /* blocks [src, src+len) would lie at [dst, dst+len) */
	uint64_t src, dst, len;
};

struct pf_cost {
	double seconds;            /* all passes */
	double meta_s, data_s;     /* of which metadata / data passes */
	uint64_t requests, seeks;
	uint64_t meta_blocks, data_blocks; /* read from the disk (gaps read through by the merge included) */
};

/* The cost of the passes, in order, on disk model d (unit = the filesystem's block size, span its blocks).
 * moves (any order; sources must not overlap) may be NULL.  Returns 0 or -ENOMEM. */
int pf_replay_cost(const struct pf_disk_model *d, const struct pf_cost_pass *p, size_t np,
		   const struct pf_cost_move *moves, size_t nmoves, struct pf_cost *out);

/* Sort moves by source (their sources must not overlap). */
void pf_cost_moves_sort(struct pf_cost_move *m, size_t n);

/* Append run [s, s+c) to out as it lies after the moves m (sorted by source): piece by piece in the run's
 * order, a piece inside a source at its destination, the rest where it is.  Returns 0 or -ENOMEM. */
int pf_cost_relocate_run(const struct pf_cost_move *m, size_t nm, uint64_t s, uint64_t c, struct pf_bvec *out);

/* Predicted gain of after over now, in percent of now (negative: after is slower; 0 when now costs nothing). */
double pf_replay_gain_percent(double now_s, double after_s);

#endif
