/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The inodes a reorder never moves a block of: every inode below the superblock's first_ino (bad blocks,
 * resize, journal, root directory, the old quota and undelete inodes...), and every inode the
 * superblock names wherever it lies (journal, orphan file, user/group/project quota, snapshot, lost+found's,
 * the head of the orphan list): the kernel and e2fsck find those by number and check them by their own rules
 * (the orphan file's blocks carry checksums of their own block number), so their blocks stay where they are. */
#ifndef PREFETCH_REORDER_RESERVED_INODE_H
#define PREFETCH_REORDER_RESERVED_INODE_H

#include <ext2fs/ext2fs.h>

/* 1 if ino is one of those, else 0. */
int pf_inode_reserved(ext2_filsys fs, ext2_ino_t ino);

#endif
