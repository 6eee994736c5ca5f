/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finding the layout's filesystems and files as they are now, and refusing anything that changed: a replay
 * must never pull in data that is not what the boot will read. */
#include "replay_internal.h"

#include "clock.h"
#include "config.h"
#include "file_identity.h"
#include "fsid.h"
#include "medium.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const uint8_t zero_uuid[16];

/* Started from the initramfs (relative paths): its /dev and /sys are moved into the root while we run, so the
 * device node of dev is under / or under the root (the working directory).  0 with its path in out, or
 * -ENODEV. */
static int node_under_either(dev_t dev, char *out, size_t len)
{
	char name[128] = "";
	for (int rel = 0; rel < 2 && !name[0]; rel++) {
		char uevent[96], line[256];
		snprintf(uevent, sizeof(uevent), "%s/dev/block/%u:%u/uevent", rel ? "sys" : "/sys", major(dev), minor(dev));
		FILE *f = fopen(uevent, "re");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "DEVNAME=", 8))
				snprintf(name, sizeof(name), "%.*s", (int)strcspn(line + 8, "\n"), line + 8);
		if (f)
			fclose(f);
	}
	for (int rel = 0; rel < 2 && name[0]; rel++) {
		struct stat st;
		snprintf(out, len, "%sdev/%s", rel ? "" : "/", name);
		if (stat(out, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
			return 0;
	}
	return -ENODEV;
}

/* The filesystem mounted at dir (st_dev dev): lib/fsid.c answers ext from its superblock alone (a full blkid
 * probe would seek to the far end of the disk), btrfs from the filesystem itself.  *devno: the device under it
 * (a btrfs subvolume's st_dev names none). */
static int probe_fs(const struct pf_rctx *c, const char *dir, dev_t dev, struct pf_rfs *r, uint8_t uuid[16],
		    dev_t *devno)
{
	struct pf_fsid id;
	int rc = pf_fsid_of_dir(dir, &id);
	char node[300];
	if (rc == -ENODEV && c->o && c->o->relative_paths && node_under_either(dev, node, sizeof(node)) == 0)
		rc = pf_fsid_from_name(node, &id);
	snprintf(r->devname, sizeof(r->devname), "%s", id.devname);
	*devno = rc == 0 && id.devno ? id.devno : dev;
	if (rc == 0) {
		snprintf(r->type, sizeof(r->type), "%s", id.type);
		memcpy(uuid, id.uuid, 16);
	}
	return rc;
}

static long queue_kb(dev_t dev, const char *attr)
{
	char path[128];
	long v = -1;
	/* a whole disk has queue/ itself; a partition finds it one level up */
	for (int up = 0; up < 2 && v < 0; up++) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%squeue/%s", major(dev), minor(dev), up ? "../" : "",
			 attr);
		FILE *f = fopen(path, "re");
		if (f) {
			if (fscanf(f, "%ld", &v) != 1)
				v = -1;
			fclose(f);
		}
	}
	return v;
}

/* What one readahead(2) call on this device really reads at most (see PF_REPLAY_CHUNK). */
static uint32_t chunk_of(dev_t dev)
{
	long ra = queue_kb(dev, "read_ahead_kb"), io = queue_kb(dev, "max_sectors_kb");
	long kb = ra > io ? ra : io;
	if (kb <= 0)
		return PF_REPLAY_CHUNK_MIN;
	if (kb < 16)
		kb = 16;
	return (uint64_t)kb << 10 < PF_REPLAY_CHUNK ? (uint32_t)(kb << 10) : PF_REPLAY_CHUNK;
}

/* Whether path a lies below directory b ("/home" below "/", "/srv/a" below "/srv"; not "/srvx"). */
static int lies_below(const char *a, const char *b)
{
	size_t n = strlen(b);
	while (n > 0 && b[n - 1] == '/')
		n--;
	return strncmp(a, b, n) == 0 && a[n] == '/' && a[n + 1] != '\0';
}

/* A btrfs subvolume traced on its own mount but not mounted now (a replay from the initramfs starts before
 * /home is): its mount point shows the subvolume it lies in, whose UUID is the same, so it passed for itself.
 * Two records of one filesystem were two subvolumes (two st_devs) when traced: sharing one st_dev now, the
 * one lying below the other is not there.  Its files are missing, and no metadata pass searches another
 * subvolume's tree for its inode numbers. */
static void drop_unmounted_subvolumes(struct pf_rctx *c)
{
	const struct pf_image *l = c->l;
	for (uint32_t i = 0; i < l->nfs; i++) {
		if (!c->fs[i].ok || !(l->fs[i].flags & PF_FS_SUBVOL))
			continue;
		for (uint32_t j = 0; j < l->nfs; j++)
			if (j != i && c->fs[j].ok && (l->fs[j].flags & PF_FS_SUBVOL) && c->fs[j].dev == c->fs[i].dev &&
			    !memcmp(l->fs[j].uuid, l->fs[i].uuid, 16) && lies_below(l->fs[i].mountpoint, l->fs[j].mountpoint)) {
				c->fs[i].ok = 0;
				break;
			}
	}
}

void pf_replay_resolve_fs(struct pf_rctx *c)
{
	for (uint32_t i = 0; i < c->l->nfs; i++) {
		const struct pf_fs *lf = &c->l->fs[i];
		struct pf_rfs *r = &c->fs[i];
		memset(r, 0, sizeof(*r));
		r->bdev = -1;
		struct stat st;
		if (!lf->mountpoint || stat(pf_rpath(c, lf->mountpoint), &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		r->dev = st.st_dev;
		r->root_ino = st.st_ino;
		uint8_t uuid[16];
		dev_t devno;
		if (probe_fs(c, pf_rpath(c, lf->mountpoint), st.st_dev, r, uuid, &devno) == 0) {
			/* Another filesystem mounted there (or not mounted yet, so the parent's shows through). */
			if (memcmp(lf->uuid, zero_uuid, 16) && memcmp(lf->uuid, uuid, 16))
				continue;
		} else {
			r->type[0] = r->devname[0] = 0; /* no metadata pass without knowing what is there */
		}
		r->block_size = lf->block_size;
		if (!r->block_size) {
			struct statvfs sv;
			r->block_size = statvfs(pf_rpath(c, lf->mountpoint), &sv) == 0 && sv.f_bsize ? (uint32_t)sv.f_bsize : 4096;
		}
		r->chunk = chunk_of(devno);
		r->medium = pf_medium_of_devno(devno, c->o ? c->o->medium_override : PF_MEDIUM_AUTO);
		/* Unknown (no sysfs queue: device-mapper oddities): a sorted sweep costs little
		 * on solid-state media, parallel random reads cost a lot on a disk. */
		if (r->medium == PF_MEDIUM_UNKNOWN)
			r->medium = PF_MEDIUM_ROTATIONAL;
		r->ok = 1;
	}
	drop_unmounted_subvolumes(c);
}

int pf_replay_verify(const struct pf_file *f, const struct stat *st, int fd, dev_t dev)
{
	if (st->st_dev != dev)
		return -EXDEV;
	struct pf_file_now now;
	pf_file_now_stat(&now, st);
	unsigned int gen;
	/* inode number reused by a newer file (ext*, btrfs, xfs answer; others don't) */
	if (fd >= 0 && f->generation && ioctl(fd, FS_IOC_GETVERSION, &gen) == 0) {
		now.generation = gen;
		now.generation_known = 1;
	}
	/* What is there must be what the replay reads the record as.  A directory by inode and type: its size and
	 * mtime move whenever an entry comes or goes, reading it is still right; a file the boot writes by inode:
	 * what of its ranges is there now is read. */
	return pf_file_identity(f, &now, PF_ID_AS_READ) == PF_ID_SAME ? 0 : -ESTALE;
}

void pf_replay_record(struct pf_rctx *c, uint32_t file, unsigned char state)
{
	unsigned char unseen = PF_RFILE_UNSEEN;
	atomic_compare_exchange_strong(&c->fstate[file], &unseen, state);
}

static int fail(struct pf_rctx *c, uint32_t file, int err)
{
	pf_replay_record(c, file, err == -ESTALE || err == -EXDEV ? PF_RFILE_CHANGED
			: err == -ENOENT || err == -ENOTDIR ? PF_RFILE_MISSING
							    : PF_RFILE_UNREADABLE);
	return err;
}

int pf_replay_open(struct pf_rctx *c, uint32_t file, int want_fd)
{
	unsigned char s = atomic_load(&c->fstate[file]);
	if (s != PF_RFILE_UNSEEN && s != PF_RFILE_OK)
		return -ESTALE;
	const struct pf_file *f = &c->l->files[file];
	if (f->fs >= c->l->nfs || !c->fs[f->fs].ok)
		return fail(c, file, -ENOENT);
	dev_t dev = c->fs[f->fs].dev;
	/* lstat first: a path that is now a device node or a FIFO must not even be opened. */
	struct stat st;
	const char *path = pf_rpath(c, f->path);
	if (lstat(path, &st) < 0)
		return fail(c, file, -errno);
	int rc = pf_replay_verify(f, &st, -1, dev);
	if (rc)
		return fail(c, file, rc);
	if (!want_fd) {
		pf_replay_record(c, file, PF_RFILE_OK);
		return 0;
	}
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_NOATIME;
	if (f->flags & PF_FILE_DIR)
		flags |= O_DIRECTORY;
	int fd = open(path, flags);
	if (fd < 0 && errno == EPERM) /* O_NOATIME needs ownership or CAP_FOWNER */
		fd = open(path, flags & ~O_NOATIME);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? -errno : fail(c, file, -errno);
	/* Replaced between lstat and open? */
	if (fstat(fd, &st) < 0 || (rc = pf_replay_verify(f, &st, fd, dev)) != 0) {
		close(fd);
		return fail(c, file, rc ? rc : -EIO);
	}
	pf_replay_record(c, file, PF_RFILE_OK);
	return fd;
}

int pf_replay_read_dir(struct pf_rctx *c, int fd)
{
	char buf[32768];
	/* Bounded: a huge directory costs at most this many calls. */
	for (int calls = 0; calls < 256; calls++) {
		if (pf_rctx_should_stop(c))
			return -EINTR;
		ssize_t r = getdents64(fd, buf, sizeof(buf));
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
	}
	return 0;
}

int pf_replay_do_item(struct pf_rctx *c, int fd, const struct pf_ritem *it)
{
	if (it->kind == PF_RITEM_DIR)
		return c->dir_done[it->file] ? 0 : pf_replay_read_dir(c, fd);
	if (it->kind != PF_RITEM_DATA)
		return 0;
	uint64_t size = c->l->files[it->file].size, off = it->offset, chunk = c->fs[it->fs].chunk;
	if (!chunk)
		chunk = PF_REPLAY_CHUNK_MIN;
	uint64_t end = off + it->length;
	if (end > size) /* the identity check made size the file's size now */
		end = size;
	while (off < end) {
		if (pf_rctx_should_stop(c))
			return -EINTR;
		uint64_t n = end - off > chunk ? chunk : end - off;
		if (readahead(fd, (off64_t)off, (size_t)n) < 0) {
			/* some filesystems refuse readahead(2) (EINVAL); the advice is the same request */
			int err = posix_fadvise(fd, (off_t)off, (off_t)n, POSIX_FADV_WILLNEED);
			if (err)
				return -err;
		}
		atomic_fetch_add(&c->bytes, n);
		_Atomic uint64_t *at = c->o->read_at_ns ? &c->o->read_at_ns[it->file] : NULL;
		if (at && off == it->offset && !atomic_load_explicit(at, memory_order_relaxed)) {
			uint64_t none = 0; /* the file's first read: a later one, or another thread's, leaves it */
			atomic_compare_exchange_strong(at, &none, pf_monotonic_ns());
		}
		off += n;
	}
	return 0;
}
