/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The next boot's replay of the layouts on this filesystem, predicted on the medium's disk model
 * (lib/replay_cost.h; pf_replay_model): as the filesystem is now, and as a plan would leave it (the plan's
 * moved blocks at their destinations, the extent leaves its runs add).
 *
 * The reads are the replay's own, built by the same code (daemon/replay/replay.c runs the same steps):
 *   - the metadata pass: lib/ext_meta_pass.h's steps, each a sorted sweep merged with PF_META_GAP_BLOCKS
 *     through the device's cache, with the tree blocks libext2fs reads one at a time while finding them (an
 *     ordered pass); file blocks (trees, directories) read where the moves leave them, inode tables where
 *     they are;
 *   - the data: the read plan (lib/read_plan.h) of each layout, mapped with libext2fs (read_map.h: now, or
 *     as the moves leave each run): on a disk and on slow flash, init's files first (the head pass of the
 *     metadata, then their data) and then the rest: on a disk one pass per bin in the sweep's physical order,
 *     on slow flash the merged reads in first-touch order, one request each; on fast flash the items in access
 *     order, unmerged.  A file the replay would skip (gone, changed) and a hole read nothing.
 * Fast flash's replay makes no metadata pass (its opens read the inodes one at a time): the pass stands in
 * for those reads, which on the SSD model's 8.7 us per request is within its noise (results/FLASH-BENCH.md). */
#ifndef PREFETCH_REORDER_REPLAY_PREDICT_H
#define PREFETCH_REORDER_REPLAY_PREDICT_H

#include "collect.h"
#include "disk_model.h"
#include "layout_load.h"
#include "plan.h"
#include "replay_cost.h"

#include <ext2fs/ext2fs.h>

struct pf_replay_prediction {
	struct pf_cost now, after;
	double gain_percent;       /* pf_replay_gain_percent(now, after) */
};

/* Predict both (plan NULL: after = now).  After: the moved blocks at their destinations, and the extent leaves
 * the run adds (relocate.h, pf_reloc_sim, over col's files) read with their trees.  Directories the layouts'
 * paths pass through that cannot be looked up are left out (as the replay leaves them).  Returns 0 or
 * -ENOMEM. */
int pf_replay_predict(ext2_filsys fs, const struct pf_layouts *l, const struct pf_collect *col,
		      const struct pf_plan *plan, int medium, struct pf_replay_prediction *out);

/* The same for any moves (src -> dst, disjoint sources): e.g. two plans run one after the other, composed
 * (evacuate.h), with sim the runs that carry them out simulated (NULL: trees unchanged).  Returns 0 or
 * -ENOMEM. */
struct pf_reloc_sim;
int pf_replay_predict_moves(ext2_filsys fs, const struct pf_layouts *l, const struct pf_cost_move *moves,
			    size_t nmoves, const struct pf_reloc_sim *sim, int medium, struct pf_replay_prediction *out);

/* The copies plan p carries out (the units of its placed and split chunks): each moved piece's source and
 * destination, in plan order, as the cost model's moves (*out malloc'd).  Returns 0 or -ENOMEM. */
int pf_replay_plan_moves(const struct pf_plan *p, struct pf_cost_move **out, size_t *n);

/* The model a prediction uses for medium (enum pf_medium, format.h): the SD card for slow flash, the SSD for
 * fast flash, the 7200 rpm disk otherwise; in blocks over the filesystem's span. */
struct pf_disk_model pf_replay_model(ext2_filsys fs, int medium);

#endif
