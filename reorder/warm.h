/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading the metadata a run needs (inode table blocks, extent tree blocks) in one sorted sweep of large
 * reads, ahead of the block-at-a-time reads of libext2fs, which then find it in the page cache: a seek per
 * inode becomes one pass over the inode tables. */
#ifndef PREFETCH_REORDER_WARM_H
#define PREFETCH_REORDER_WARM_H

#include <ext2fs/ext2fs.h>
#include <stddef.h>
#include <stdint.h>

/* Read blocks[0..n) (any order, duplicates allowed; the array is sorted in place) through fs->io, blocks
 * less than a seek apart in one request (the gap read through).  Only a hint: errors are ignored (the reads
 * that follow report them).  Returns 0 or -ENOMEM. */
int pf_warm_blocks(ext2_filsys fs, uint64_t *blocks, size_t n);

/* The inode table blocks holding inodes inos[0..n), then the extent tree blocks their inodes point to
 * (one level: what a depth-1 tree needs whole). */
int pf_warm_inodes(ext2_filsys fs, const ext2_ino_t *inos, size_t n);


#endif
