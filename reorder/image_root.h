/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where the root filesystem of a reorder's target lies: a block device or a bare filesystem image is the
 * filesystem itself; a disk image (a regular file with a GPT or MBR partition table, probed with libblkid) holds it
 * in one of its partitions, which libext2fs then opens at its byte offset (unix_io's "offset=" option). */
#ifndef PREFETCH_IMAGE_ROOT_H
#define PREFETCH_IMAGE_ROOT_H

#include <stddef.h>
#include <stdint.h>

struct pf_image_root {
	uint64_t offset;      /* bytes from the start of the target */
	uint64_t size;        /* bytes (0: to the target's end: a block device or a bare filesystem image) */
	int partno;           /* the partition's number, 0 for the whole target */
	char table[8];        /* "gpt", "dos", or "" without a partition table */
	char type[16];        /* ext2, ext3 or ext4 ("" on a block device: not probed here) */
	char why[128];        /* how it was chosen, in words */
};

/* Find it.  A block device: the whole device, not probed (the open refuses what is not ext2/3/4, as before).  A
 * regular file: with a partition table, partition want when want > 0; else the one of the discoverable-partitions
 * root type (GPT, x86-64 or arm64), else the only ext2/3/4 partition, else the largest; without one, the whole file
 * (a bare filesystem image: the open refuses it when it is not ext2/3/4, as for a device).  Reads only (nothing is written).  Returns 0, or PF_EOPEN with a one-line
 * reason in err ("IMAGE: no ext2/3/4 root filesystem ...", "cannot read ...", "no partition N"). */
int pf_image_root_find(const char *target, int want, struct pf_image_root *out, char *err, size_t errlen);

/* libext2fs's io options for it: "offset=N" or "" (a whole target). */
void pf_image_root_io_options(const struct pf_image_root *root, char *buf, size_t len);

#endif
