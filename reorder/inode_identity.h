/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An inode of an unmounted ext2/3/4 filesystem as lib/file_identity.h compares it with a layout's record: in use
 * or not, and its facts.  The reorder asks twice: may it move the file (collect.c), and will the replay read it
 * (read_map.c). */
#ifndef PREFETCH_REORDER_INODE_IDENTITY_H
#define PREFETCH_REORDER_INODE_IDENTITY_H

#include "file_identity.h"

#include <ext2fs/ext2fs.h>
#include <stdint.h>

/* mtime of the inode in ns as a layout records it, and whether the nanoseconds are known. */
int64_t pf_inode_mtime_ns(ext2_filsys fs, const struct ext2_inode_large *in, int *has_ns);

/* Inode ino as it is now: 1 with the inode in *in and its facts in *now (its generation known; its mtime known
 * to the second only where the inode holds no nanoseconds); 0 when no file has it (out of range, free in the
 * inode bitmap where that is loaded, no links, deleted); or a pf error (error.h) when it cannot be read. */
int pf_inode_now(ext2_filsys fs, uint64_t ino, struct ext2_inode_large *in, struct pf_file_now *now);

#endif
