/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fsid.h"

#include <blkid.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xfs/xfs.h>

/* The value of hex digit c, or -EINVAL for another character. */
static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -EINVAL;
}

/* Hex digits in pairs, dashes ignored, into out (zeros past the last pair): the number of bytes, or -EINVAL
 * (an odd digit, a non-hex character, more than 16 bytes). */
static int hex_id(const char *s, uint8_t out[16])
{
	uint8_t u[16] = { 0 };
	int n = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '-')
			continue;
		int hi = hexval(p[0]), lo = p[1] ? hexval(p[1]) : -EINVAL;
		if (hi < 0 || lo < 0 || n >= 16)
			return -EINVAL;
		u[n++] = (uint8_t)(hi << 4 | lo);
		p++;
	}
	memcpy(out, u, 16);
	return n;
}

int pf_uuid_parse(const char *s, uint8_t out[16])
{
	uint8_t u[16];
	if (hex_id(s, u) != 16)
		return -EINVAL;
	memcpy(out, u, 16);
	return 0;
}

void pf_uuid_format(const uint8_t u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
		 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* ext2/3/4 from its superblock alone: one read at offset 1024, which the kernel's mount already cached.
 * Returns 0, -ENODATA (not ext) or -errno. */
static int probe_ext(int fd, struct pf_fsid *out)
{
	unsigned char sb[1024];
	ssize_t n = pread(fd, sb, sizeof(sb), 1024);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(sb) || sb[0x38] != 0x53 || sb[0x39] != 0xEF)
		return -ENODATA;
	uint32_t compat = sb[0x5c] | sb[0x5d] << 8 | sb[0x5e] << 16 | (uint32_t)sb[0x5f] << 24;
	uint32_t incompat = sb[0x60] | sb[0x61] << 8 | sb[0x62] << 16 | (uint32_t)sb[0x63] << 24;
	if (incompat & 0x8) /* INCOMPAT_JOURNAL_DEV: an external journal, no filesystem */
		return -ENODATA;
	/* extents, 64bit or flex_bg: ext4; a journal: ext3 (blkid's names; the callers only ask "ext or not") */
	snprintf(out->type, sizeof(out->type), "%s", incompat & 0x2c0 ? "ext4" : compat & 0x4 ? "ext3" : "ext2");
	memcpy(out->uuid, sb + 0x68, 16);
	return 0;
}

/* A shorter volume id (vfat's "ABCD-1234" serial, ntfs's 16 hex digits), left-aligned and padded with zeros: what
 * such a filesystem has to be recognised by across boots.  0, or -EINVAL (no 4 to 15 bytes of hex). */
static int short_id(const char *s, uint8_t out[16])
{
	uint8_t u[16];
	int n = hex_id(s, u);
	if (n < 4 || n >= 16)
		return -EINVAL;
	memcpy(out, u, 16);
	return 0;
}

int pf_fsid_from_name(const char *name, struct pf_fsid *out)
{
	memset(out, 0, sizeof(*out));
	out->ndevices = 1;
	snprintf(out->devname, sizeof(out->devname), "%s", name);
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	if (S_ISBLK(st.st_mode))
		out->devno = st.st_rdev;

	/* On a disk every probe is a seek: a full blkid probe reads tens of places, the RAID signatures at the far
	 * end of the device among them (~15 full strokes, 0.2-0.4 s cold, measured in the boot lab while the replay
	 * swept).  ext answers from its superblock; anything else gets a direct blkid probe (not the cache: it can
	 * be stale for a device made a moment ago) without the RAID types, which a mounted filesystem is not. */
	int rc = probe_ext(fd, out);
	if (rc != -ENODATA) {
		close(fd);
		return rc;
	}
	blkid_probe pr = blkid_new_probe();
	if (!pr || blkid_probe_set_device(pr, fd, 0, 0) != 0) {
		rc = errno ? -errno : -EIO;
		if (pr)
			blkid_free_probe(pr);
		close(fd);
		return rc;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_UUID | BLKID_SUBLKS_TYPE);
	blkid_probe_filter_superblocks_usage(pr, BLKID_FLTR_NOTIN, BLKID_USAGE_RAID);
	rc = -ENODATA;
	const char *val;
	if (blkid_do_safeprobe(pr) == 0) {
		if (blkid_probe_lookup_value(pr, "TYPE", &val, NULL) == 0)
			snprintf(out->type, sizeof(out->type), "%s", val);
		if (blkid_probe_lookup_value(pr, "UUID", &val, NULL) == 0 &&
		    (pf_uuid_parse(val, out->uuid) == 0 || short_id(val, out->uuid) == 0))
			rc = 0;
	}
	blkid_free_probe(pr);
	close(fd);
	return rc;
}

int pf_fsid_from_devno(dev_t devno, struct pf_fsid *out)
{
	char *name = blkid_devno_to_devname(devno);
	if (!name) {
		memset(out, 0, sizeof(*out));
		out->devno = devno;
		return -ENODEV; /* not a block device: tmpfs, overlay, nfs, ... */
	}
	int rc = pf_fsid_from_name(name, out);
	out->devno = devno;
	free(name);
	return rc;
}

/* The first device of btrfs filesystem uuid, from sysfs (no device node needed: an initramfs may have none
 * under its name).  0 when sysfs does not say. */
static dev_t btrfs_first_device(const uint8_t uuid[16])
{
	char u[37], path[128], line[32];
	pf_uuid_format(uuid, u);
	snprintf(path, sizeof(path), "/sys/fs/btrfs/%s/devices", u);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	dev_t devno = 0;
	struct dirent *e;
	while (!devno && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char dev[128 + 300];
		snprintf(dev, sizeof(dev), "%s/%s/dev", path, e->d_name);
		FILE *f = fopen(dev, "re");
		unsigned maj, min;
		if (f && fgets(line, sizeof(line), f) && sscanf(line, "%u:%u", &maj, &min) == 2)
			devno = makedev(maj, min);
		if (f)
			fclose(f);
	}
	closedir(d);
	return devno;
}

/* XFS from the mounted filesystem (XFS_IOC_FSGEOMETRY: no I/O).  A blkid probe of a non-ext device reads tens of
 * places, the far end of the device among them: 16 requests, 75 ms on the simulated disk, measured at the start
 * of an XFS replay.  0, or -errno (then blkid answers). */
static int xfs_id(int fd, dev_t dev, struct pf_fsid *out)
{
	struct xfs_fsop_geom g;
	memset(&g, 0, sizeof(g));
	if (ioctl(fd, XFS_IOC_FSGEOMETRY, &g) < 0)
		return -errno;
	memset(out, 0, sizeof(*out));
	memcpy(out->uuid, g.uuid, 16);
	snprintf(out->type, sizeof(out->type), "xfs");
	out->devno = dev;
	out->ndevices = 1;
	char *name = blkid_devno_to_devname(dev);
	if (name)
		snprintf(out->devname, sizeof(out->devname), "%s", name);
	free(name);
	return 0;
}

int pf_fsid_of_fd(int fd, struct pf_fsid *out)
{
	struct statfs sfs;
	struct stat st;
	if (fstatfs(fd, &sfs) < 0 || fstat(fd, &st) < 0)
		return -errno;
	if ((unsigned long)sfs.f_type == XFS_SUPER_MAGIC && xfs_id(fd, st.st_dev, out) == 0)
		return 0;
	if ((unsigned long)sfs.f_type != BTRFS_SUPER_MAGIC)
		return pf_fsid_from_devno(st.st_dev, out);
	memset(out, 0, sizeof(*out));
	struct btrfs_ioctl_fs_info_args fi;
	memset(&fi, 0, sizeof(fi));
	if (ioctl(fd, BTRFS_IOC_FS_INFO, &fi) < 0)
		return -errno;
	memcpy(out->uuid, fi.fsid, 16);
	snprintf(out->type, sizeof(out->type), "btrfs");
	out->ndevices = fi.num_devices ? (unsigned)fi.num_devices : 1;
	out->devno = btrfs_first_device(out->uuid);
	if (out->devno) {
		char *name = blkid_devno_to_devname(out->devno);
		if (name)
			snprintf(out->devname, sizeof(out->devname), "%s", name);
		free(name);
	}
	return 0;
}

int pf_fsid_block_device(const char *path, dev_t *devno, unsigned *ndevices)
{
	struct stat st;
	struct statfs sfs;
	*devno = 0;
	*ndevices = 0;
	if (stat(path, &st) < 0)
		return -errno;
	*devno = st.st_dev;
	*ndevices = 1;
	if (major(st.st_dev) != 0 || statfs(path, &sfs) < 0 || (unsigned long)sfs.f_type != BTRFS_SUPER_MAGIC)
		return 0;
	*ndevices = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct pf_fsid id;
	int rc = pf_fsid_of_fd(fd, &id);
	close(fd);
	if (rc)
		return rc;
	if (!id.devno)
		return -ENODEV; /* sysfs does not list its devices */
	*devno = id.devno;
	*ndevices = id.ndevices;
	return 0;
}

int pf_fsid_of_dir(const char *dir, struct pf_fsid *out)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		memset(out, 0, sizeof(*out));
		return -errno;
	}
	int rc = pf_fsid_of_fd(fd, out);
	close(fd);
	return rc;
}
