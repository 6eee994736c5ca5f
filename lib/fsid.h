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
	dev_t devno;           /* 0 for an image file; btrfs: its (first) device, not the subvolume's st_dev */
	unsigned ndevices;     /* devices the filesystem spans (btrfs may span several; else 1) */
};

/* Probe the filesystem on block device devno (e.g. st_dev of a file).  Returns 0 or -errno / -ENODATA
 * when the device carries no filesystem UUID blkid recognises. */
int pf_fsid_from_devno(dev_t devno, struct pf_fsid *out);

/* The filesystem holding the open file or directory fd.  btrfs gives every subvolume an anonymous st_dev
 * (major 0) that names no device: it is identified by its filesystem UUID (BTRFS_IOC_FS_INFO), and devno is its
 * first device as /sys/fs/btrfs/UUID/devices lists them (for the medium).  XFS answers from the mounted
 * filesystem too (no probe of the device).  Others as pf_fsid_from_devno of the file's st_dev.  Returns 0 or -errno / -ENODATA / -ENODEV (no block device: tmpfs, overlay, nfs...). */
int pf_fsid_of_fd(int fd, struct pf_fsid *out);
/* The same for a directory by name (opened without following a last symlink). */
int pf_fsid_of_dir(const char *dir, struct pf_fsid *out);

/* The device whose counters (/proc/diskstats) and medium stand for the filesystem holding path: its st_dev (ext,
 * XFS, ...: no probe, nothing read), except on btrfs, whose subvolumes' st_dev is anonymous (major 0, names no
 * device): there the filesystem's first device as pf_fsid_of_fd finds it, and in *ndevices how many devices the
 * filesystem spans (more than 1: no one device's counters are the filesystem's).  Elsewhere *ndevices is 1.
 * Returns 0, or -errno with *devno st_dev (0 when path cannot be stat'ed) and *ndevices 0 when btrfs does not
 * say. */
int pf_fsid_block_device(const char *path, dev_t *devno, unsigned *ndevices);

/* Probe a device node or an image file by name. */
int pf_fsid_from_name(const char *name, struct pf_fsid *out);

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" <-> 16 bytes.  parse returns 0 or -EINVAL. */
int pf_uuid_parse(const char *s, uint8_t out[16]);
void pf_uuid_format(const uint8_t uuid[16], char out[37]);

#endif
