/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The next boot's replay of the layouts on this filesystem, predicted on the 7200 rpm model (lib/replay_cost.h):
 * as the filesystem is now, and as a plan would leave it (the plan's moved blocks at their destinations).
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
 * The metadata passes merge with PF_META_GAP_BLOCKS and share a cache; the data passes read everything. */
#ifndef PREFETCH_REORDER_REPLAY_PREDICT_H
#define PREFETCH_REORDER_REPLAY_PREDICT_H

#include "collect.h"
#include "layout_load.h"
#include "plan.h"
#include "replay_cost.h"

#include <ext2fs/ext2fs.h>

struct pf_replay_prediction {
	struct pf_cost now, after;
	double gain_percent;       /* pf_replay_gain_percent(now, after) */
};

/* Predict both (plan NULL: after = now).  Directories the layouts' paths pass through that cannot be looked
 * up are left out (as the replay leaves them).  Returns 0 or -ENOMEM. */
int pf_replay_predict(ext2_filsys fs, const struct pf_layouts *l, const struct pf_collect *col,
		      const struct pf_plan *plan, struct pf_replay_prediction *out);

#endif
