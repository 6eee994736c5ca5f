/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where an inode's data lies: logical -> physical runs, via libext2fs (extent tree or block map). */
#ifndef PREFETCH_REORDER_BLOCKMAP_H
#define PREFETCH_REORDER_BLOCKMAP_H

#include <ext2fs/ext2fs.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct pf_bmap_run {
	uint64_t lblk, pblk, len;
	int uninit;                /* unwritten extent: reads as zeros, never moved */
};

/* Data blocks of ino in logical order (holes absent; adjacent runs merged).  *runs is malloc'd.
 * Returns 0 or a negative pf error (lib/error.h). */
int pf_blockmap(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode *inode, struct pf_bmap_run **runs, size_t *n);

#endif
