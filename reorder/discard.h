/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Discarding what a reorder freed (flash): the old copies of the moved blocks and the new copies that were not
 * switched to, of the completed units — each block only if the final block bitmap has it free, so a block in
 * use is never discarded.  Through the filesystem's io channel (io_channel_discard: BLKDISCARD on a block
 * device, a punched hole in an image file). */
#ifndef PREFETCH_REORDER_DISCARD_H
#define PREFETCH_REORDER_DISCARD_H

#include "plan.h"

#include <ext2fs/ext2fs.h>
#include <stddef.h>
#include <stdint.h>

/* Discard the blocks units [0, done) of plan p freed, as fs->block_map has them now (after pf_reloc_end).
 * Counts what was discarded in *blocks and *requests.  Returns 0, 1 when the device (or io manager) does not
 * support discard (nothing more tried), or a negative pf error (lib/error.h). */
int pf_discard_freed(ext2_filsys fs, const struct pf_plan *p, size_t done, uint64_t *blocks, uint64_t *requests);

#endif
