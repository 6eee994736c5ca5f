/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What prefetch does on each kind of filesystem, in one place: status, dump and prefetch-reorder's refusal say
 * the same.  Every local filesystem with a UUID (btrfs: each mounted subvolume) is traced and replayed; the
 * metadata pass and the reorder depend on the type. */
#ifndef PREFETCH_FS_SUPPORT_H
#define PREFETCH_FS_SUPPORT_H

#include <stddef.h>

struct pf_fs_support {
	const char *metadata; /* what the replay's metadata pass reads first, NULL: no metadata pass */
	const char *note;     /* a limit worth saying, NULL if none */
	int reorder;          /* prefetch-reorder can lay it out (ext2/3/4) */
};

/* type: blkid's name ("ext4", "xfs", "btrfs", "vfat", ...); ndevices: the devices it spans (btrfs), 0 or 1
 * otherwise. */
void pf_fs_support(const char *type, unsigned ndevices, struct pf_fs_support *out);

/* One line: "traced, replayed, metadata pass (WHAT), reorder possible" or "..., no metadata pass, no reorder
 * (ext2/3/4 only)" (the reorder part only if with_reorder), and the note in parentheses. */
void pf_fs_support_text(const char *type, unsigned ndevices, int with_reorder, char *buf, size_t len);

#endif
