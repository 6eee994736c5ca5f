/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The next boot's replay of the layouts on this filesystem, predicted on the medium's disk model
 * (lib/replay_cost.h; pf_replay_model): as the filesystem is now, and as a plan would leave it (the plan's
 * moved blocks at their destinations).
 *
 * The passes follow prefetchd's rotational replay of an ext filesystem (daemon/replay/replay_metadata.c,
 * replay_rotational.c):
 *   0. the superblock and group descriptors (the replay opens the filesystem with libext2fs);
 *   1. the inode-table blocks of the root and of every file of the layouts on this filesystem;
 *   2. the layouts' directories, whole, found from their inodes (relocated: the replay reads them where they
 *      are, never where a layout recorded them), and the extent-tree / indirect blocks of the regular files;
 *      Finding those reads the tree blocks (extent index / indirect blocks) first, synchronously, one by one
 *      in layout order while libext2fs walks each tree: an ordered pass before the sorted one, which then
 *      finds them cached;
 *   3. the directory tree of the layouts' paths, from the root, level by level: the inode blocks of the
 *      level's directories, then their blocks (relocated: the replay finds them where they are);
 *   4. the data: the layout's blocks of regular files, bin by bin (layout_order.h), relocated.
 * The metadata passes merge with PF_META_GAP_BLOCKS and share a cache; the data passes read everything.
 * On flash (daemon/replay/replay_flash.c) the data is read file by file instead: each file's ranges merged
 * where less than the SD model's request cost in bytes (28 KiB) apart, one request each (and one more per
 * max_request bytes): fewer, larger requests are what a reorder can gain there.  Fast flash's replay reads
 * the layout's ranges unmerged with several readers; on the SSD model's 8.7 us per request the same per-file
 * costing is within its noise (results/FLASH-BENCH.md: 0.088 s predicted and measured). */
#ifndef PREFETCH_REORDER_REPLAY_PREDICT_H
#define PREFETCH_REORDER_REPLAY_PREDICT_H

#include "collect.h"
#include "layout_load.h"
#include "plan.h"
#include "disk_model.h"
#include "replay_cost.h"

#include <ext2fs/ext2fs.h>

struct pf_replay_prediction {
	struct pf_cost now, after;
	double gain_percent;       /* pf_replay_gain_percent(now, after) */
};

/* Predict both (plan NULL: after = now).  After: the moved blocks at their destinations, and the extent leaves
 * the run adds (relocate.h, pf_reloc_sim) read with their trees.  Directories the layouts' paths pass through
 * that cannot be looked up are left out (as the replay leaves them).  Returns 0 or -ENOMEM. */
int pf_replay_predict(ext2_filsys fs, const struct pf_layouts *l, const struct pf_collect *col,
		      const struct pf_plan *plan, int medium, struct pf_replay_prediction *out);

/* The same for any moves (src -> dst, disjoint sources): e.g. two plans run one after the other, composed
 * (evacuate.h), with sim the runs that carry them out simulated (NULL: trees unchanged).  Returns 0 or
 * -ENOMEM. */
struct pf_reloc_sim;
int pf_replay_predict_moves(ext2_filsys fs, const struct pf_layouts *l, const struct pf_collect *col,
			    const struct pf_cost_move *moves, size_t nmoves, const struct pf_reloc_sim *sim, int medium,
			    struct pf_replay_prediction *out);

/* The copies plan p carries out (the units of its placed and split chunks): each moved piece's source and
 * destination, in plan order, as the cost model's moves (*out malloc'd).  Returns 0 or -ENOMEM. */
int pf_replay_plan_moves(const struct pf_plan *p, struct pf_cost_move **out, size_t *n);

/* The model a prediction uses for medium (enum pf_medium, format.h): the SD card for slow flash, the SSD for
 * fast flash, the 7200 rpm disk otherwise; in blocks over the filesystem's span. */
struct pf_disk_model pf_replay_model(ext2_filsys fs, int medium);

#endif
