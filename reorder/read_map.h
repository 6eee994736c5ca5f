/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The read plan's block mapper (lib/read_plan.h) from libext2fs: where a layout's files lie on an unmounted
 * ext2/3/4 filesystem, as it is now or as moves would leave it.  With it prefetch-reorder builds the plan
 * prefetchd's replay builds with FIEMAP, item for item. */
#ifndef PREFETCH_REORDER_READ_MAP_H
#define PREFETCH_REORDER_READ_MAP_H

#include "read_plan.h"
#include "replay_cost.h"

#include <ext2fs/ext2fs.h>

struct pf_read_map {
	ext2_filsys fs;
	const struct pf_image *img;      /* the layout */
	uint32_t fsi;                    /* its filesystem that fs is (pf_image_find_fs) */
	const struct pf_cost_move *moves; /* sorted by source (pf_cost_moves_sort); NULL: as the blocks lie now */
	size_t nmoves;
};

/* The mapper over m (which must outlive it).  A file of another filesystem, gone, replaced or changed since
 * the layout (inode in use, type, generation, size, mtime: what the replay checks) is not mapped
 * (PF_RPLAN_UNMAPPED); its data blocks come from pf_blockmap, each run where the moves leave it (an unwritten
 * one without a place: it reads as zeros, as the replay's FIEMAP mapper says too). */
struct pf_rplan_mapper pf_read_map_mapper(struct pf_read_map *m);

#endif
