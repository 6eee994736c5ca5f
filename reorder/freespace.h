/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Free extents of the filesystem, from the block bitmap. */
#ifndef PREFETCH_REORDER_FREESPACE_H
#define PREFETCH_REORDER_FREESPACE_H

#include "plan.h"

#include <ext2fs/ext2fs.h>

/* Sorted, non-overlapping free runs (fs->block_map must be loaded).  Returns 0 or -ENOMEM. */
int pf_freespace(ext2_filsys fs, struct pf_brange **runs, size_t *n);

#endif
