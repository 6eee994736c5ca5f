/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Filesystem identity: which filesystem a trace entry belongs to, stable across boots (st_dev is not). */
#ifndef PREFETCH_FSID_H
#define PREFETCH_FSID_H

#include <stdint.h>
#include <sys/types.h>

struct pf_fsid {
	uint8_t uuid[16];      /* superblock UUID (as blkid reports it) */
	char type[32];         /* "ext4", "xfs", ... */
	char devname[256];     /* device node, or the image file probed */
	dev_t devno;           /* 0 for an image file */
};

/* Probe the filesystem on block device devno (e.g. st_dev of a file).  Returns 0 or -errno / -ENODATA
 * when the device carries no filesystem UUID blkid recognises. */
int pf_fsid_from_devno(dev_t devno, struct pf_fsid *out);

/* Probe a device node or an image file by name. */
int pf_fsid_from_name(const char *name, struct pf_fsid *out);

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" <-> 16 bytes.  parse returns 0 or -EINVAL. */
int pf_uuid_parse(const char *s, uint8_t out[16]);
void pf_uuid_format(const uint8_t uuid[16], char out[37]);

#endif
