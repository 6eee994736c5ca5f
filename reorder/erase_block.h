/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The erase block a reorder on slow flash writes whole: the size, and where the filesystem's blocks fall on
 * the device's erase-block grid.  Found, first that knows:
 *   1. REORDER_ERASE_BLOCK_KB (configured, > 0);
 *   2. sysfs of the target block device (not a loop device: the disk under its file is not where the
 *      filesystem will end up): queue/discard_granularity, else queue/optimal_io_size, when at least
 *      PF_ERASE_MIN_SYSFS (smaller values are sector or page sizes, not erase blocks); a partition's offset
 *      from its "start";
 *   3. the filesystem's RAID geometry (mke2fs -E stripe_width=, stride=): s_raid_stripe_width, else
 *      s_raid_stride, when more than one block;
 *   4. when asked (slow flash), the SD model's allocation unit (PF_SD_ERASE_BLOCK, 4 MiB).
 * The size is rounded up to a whole number of filesystem blocks (the least common multiple of both). */
#ifndef PREFETCH_REORDER_ERASE_BLOCK_H
#define PREFETCH_REORDER_ERASE_BLOCK_H

#include "note.h"

#include <ext2fs/ext2fs.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PF_ERASE_MIN_SYSFS (64u << 10)

struct pf_erase_block {
	uint64_t bytes;   /* 0: none known (blocks is then 1: no alignment) */
	uint64_t blocks;  /* in filesystem blocks, >= 1 */
	uint64_t phase;   /* block b starts an erase block when (b + phase) % blocks == 0 */
	char why[128];    /* where the size came from, e.g. "REORDER_ERASE_BLOCK_KB", "mmcblk0 discard_granularity" */
};

/* Find it for the filesystem fs on device (config_bytes: REORDER_ERASE_BLOCK_KB in bytes, 0 = auto;
 * fallback: use PF_SD_ERASE_BLOCK when nothing else knows).  Never fails: out->bytes 0 when unknown. */
void pf_erase_block_find(ext2_filsys fs, const char *device, uint64_t config_bytes, int fallback,
			 struct pf_erase_block *out);

/* The size (0 when sysfs names none) from the sysfs tree mounted at sysfs ("/sys"; tests pass a fixture) for
 * block device devno, and *part_start the partition's offset in bytes (0 for a whole disk); when it finds one,
 * one line noted to why (lib/note.h; may be NULL) says where, e.g. "mmcblk0 discard_granularity".  Loop
 * devices: 0. */
uint64_t pf_erase_block_sysfs(const char *sysfs, dev_t devno, uint64_t *part_start, struct pf_note *why);

/* out's size (bytes rounded up to a whole number of bs-byte blocks: their least common multiple), blocks and
 * phase for a filesystem starting part_start bytes into the device; out->why is kept (a note appended when the
 * partition does not start on a block). */
void pf_erase_block_set(struct pf_erase_block *out, uint64_t bytes, uint64_t bs, uint64_t part_start);

/* How many erase blocks [start, start+len) touches, and how many of them it covers whole (*whole may be
 * NULL).  With eb->blocks <= 1: len and len. */
uint64_t pf_erase_blocks_touched(const struct pf_erase_block *eb, uint64_t start, uint64_t len, uint64_t *whole);

#endif
