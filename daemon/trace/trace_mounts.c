/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which filesystems to trace: the --mount directories given, or every local block-device filesystem mounted
 * now.  One entry per filesystem (st_dev): bind mounts of the same filesystem are one fanotify mark.  btrfs
 * gives each subvolume an st_dev of its own (anonymous, major 0, not the one mountinfo shows): each mounted
 * subvolume is an entry with that st_dev (files are checked against it) and the filesystem's UUID, flagged
 * PF_FS_SUBVOL; their fanotify marks are one filesystem mark, on the superblock they share, whose device number
 * (mountinfo's) the page-cache events and /proc/PID/maps name their files by.  At the end
 * of tracing: where each one is mounted now, if anywhere (the residency pass opens files by handle through it). */
#include "array.h"
#include "config.h"
#include "error.h"
#include "fsid.h"
#include "medium.h"
#include "trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct mnt {
	dev_t dev;                 /* btrfs: the subvolume's st_dev (stat of the mount point), not mountinfo's */
	dev_t sb_dev;              /* mountinfo's: the superblock's (pf_trace_fs.page_dev) */
	int btrfs;
	int root_is_fs_root;       /* the mount shows the whole filesystem, not a bind of a subdirectory */
	char *dir;
};

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *d = s;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

static void free_mnts(struct mnt *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].dir);
	free(m);
}

static int read_mountinfo(struct mnt **out, size_t *n)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	struct mnt *m = NULL;
	size_t cnt = 0, cap = 0;
	char *line = NULL;
	size_t linecap = 0;
	int rc = 0;
	while (getline(&line, &linecap, f) > 0) {
		unsigned maj, min;
		char root[PATH_MAX], dir[PATH_MAX], type[32] = "";
		/* id parent major:minor root mountpoint options [optional...] - type source ... */
		if (sscanf(line, "%*u %*u %u:%u %4095s %4095s", &maj, &min, root, dir) != 4)
			continue;
		const char *sep = strstr(line, " - ");
		if (sep)
			(void)sscanf(sep + 3, "%31s", type);
		if ((rc = PF_ARRAY_RESERVE(m, cap, cnt + 1, 64)))
			break;
		unescape(dir);
		m[cnt].dev = m[cnt].sb_dev = makedev(maj, min);
		m[cnt].btrfs = strcmp(type, "btrfs") == 0;
		struct stat st;
		if (m[cnt].btrfs)
			m[cnt].dev = stat(dir, &st) == 0 ? st.st_dev : 0;
		m[cnt].root_is_fs_root = strcmp(root, "/") == 0;
		if (!(m[cnt].dir = strdup(dir))) {
			rc = -ENOMEM;
			break;
		}
		cnt++;
	}
	free(line);
	fclose(f);
	if (rc) {
		free_mnts(m, cnt);
		return rc;
	}
	*out = m;
	*n = cnt;
	return 0;
}

static int path_under(const char *path, const char *dir)
{
	size_t l = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(path, dir, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

/* The mount point to record for dev: the mount holding real (if given) with the longest match, else the
 * shortest mount of the whole filesystem, else any. */
static const char *mountpoint_of(const struct mnt *m, size_t n, dev_t dev, const char *real)
{
	const char *best = NULL;
	int best_score = -1;
	for (size_t i = 0; i < n; i++) {
		if (m[i].dev != dev)
			continue;
		int score;
		if (real && path_under(real, m[i].dir))
			score = 1000000 + (int)strlen(m[i].dir);
		else
			score = (m[i].root_is_fs_root ? 100000 : 0) + 10000 - (int)strlen(m[i].dir);
		if (score > best_score) {
			best_score = score;
			best = m[i].dir;
		}
	}
	return best;
}

/* A local block-device filesystem that is not traced (no UUID to know it by across boots): listed in the
 * trace, flagged PF_FS_SKIPPED, so that its header says why nothing of it is there. */
static int add_skipped(struct pf_trace_fs **skip, int *nskip, dev_t dev, const char *dir)
{
	for (int i = 0; i < *nskip; i++)
		if ((*skip)[i].dev == dev)
			return 0;
	if (*nskip >= PF_TRACE_MAX_SKIPPED)
		return 0;
	struct pf_trace_fs *p = realloc(*skip, (size_t)(*nskip + 1) * sizeof(**skip));
	if (!p)
		return -ENOMEM;
	*skip = p;
	memset(&p[*nskip], 0, sizeof(p[*nskip]));
	p[*nskip].wd = p[*nskip].mount_fd = -1;
	p[*nskip].dev = dev;
	p[*nskip].skipped = 1;
	if (!(p[*nskip].mountpoint = strdup(dir)))
		return -ENOMEM;
	(*nskip)++;
	return 0;
}

struct picked {
	struct pf_trace_fs *fs, *skip;
	int nfs, nskip;
};

/* The superblock's device number of the filesystem with st_dev dev (differs on btrfs), or dev when no mount shows
 * it (mounted over). */
static dev_t sb_dev_of(const struct mnt *m, size_t n, dev_t dev)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].dev == dev)
			return m[i].sb_dev;
	return dev;
}

static int add_fs(struct picked *pk, dev_t dev, dev_t page_dev, const char *dir, int medium_override, char *err,
		  size_t errlen, int explicit)
{
	struct pf_trace_fs **fs = &pk->fs;
	int *nfs = &pk->nfs;
	for (int i = 0; i < *nfs; i++)
		if ((*fs)[i].dev == dev)
			return 0; /* same filesystem: one mark covers it */
	/* By the mount point when it shows this filesystem (btrfs has no other way; XFS answers without a probe of
	 * the device), else (mounted over since) by the device. */
	struct pf_fsid id;
	struct stat st;
	int rc = stat(dir, &st) == 0 && st.st_dev == dev ? pf_fsid_of_dir(dir, &id)
		 : major(dev) == 0 ? -ENODEV : pf_fsid_from_devno(dev, &id);
	if (rc == 0 && !id.devno && major(dev) != 0)
		id.devno = dev;
	if (rc) {
		if (!explicit)
			return rc == -ENODATA ? add_skipped(&pk->skip, &pk->nskip, dev, dir) : 0;
		snprintf(err, errlen, "%s: not on a block-device filesystem with a UUID (%s)", dir,
			 major(dev) == 0 ? "virtual filesystem" : pf_strerror(rc));
		return rc == -ENODATA ? -ENODEV : rc;
	}
	struct statvfs sv;
	if (statvfs(dir, &sv) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", dir, pf_strerror(-errno));
		return explicit ? rc : 0;
	}
	struct pf_trace_fs *p = realloc(*fs, (size_t)(*nfs + 1) * sizeof(**fs));
	if (!p)
		return -ENOMEM;
	*fs = p;
	struct pf_trace_fs *e = &p[*nfs];
	memset(e, 0, sizeof(*e));
	e->wd = e->mount_fd = -1;
	e->dev = dev;
	e->page_dev = page_dev;
	memcpy(e->uuid, id.uuid, 16);
	e->block_size = (uint32_t)sv.f_bsize;
	e->medium = pf_medium_of_devno(id.devno ? id.devno : dev, medium_override);
	e->subvol = strcmp(id.type, "btrfs") == 0;
	if (!(e->mountpoint = strdup(dir)))
		return -ENOMEM;
	(*nfs)++;
	return 0;
}

void pf_trace_free_mounts(struct pf_trace_fs *fs, int n)
{
	for (int i = 0; i < n; i++)
		free(fs[i].mountpoint);
	free(fs);
}

int pf_trace_pick_mounts(const struct pf_trace_opts *o, struct pf_trace_fs **out, int *n, int *nskipped, char *err,
			 size_t errlen)
{
	struct mnt *m = NULL;
	size_t nm = 0;
	struct picked pk = { 0 };
	*out = NULL;
	*n = *nskipped = 0;
	int rc = read_mountinfo(&m, &nm);
	if (rc) {
		snprintf(err, errlen, "cannot read /proc/self/mountinfo: %s", pf_strerror(rc));
		return rc;
	}
	if (o->nmounts > 0) {
		for (int i = 0; i < o->nmounts && rc == 0; i++) {
			const char *dir = o->mounts[i];
			char real[PATH_MAX];
			struct stat st;
			if (!realpath(dir, real) || stat(real, &st) < 0) {
				rc = -errno;
				snprintf(err, errlen, "--mount %s: %s", dir, pf_strerror(-errno));
				break;
			}
			if (!S_ISDIR(st.st_mode)) {
				rc = -ENOTDIR;
				snprintf(err, errlen, "--mount %s: not a directory", dir);
				break;
			}
			const char *mp = mountpoint_of(m, nm, st.st_dev, real);
			rc = add_fs(&pk, st.st_dev, sb_dev_of(m, nm, st.st_dev), mp ? mp : real, o->medium_override, err,
				    errlen, 1);
		}
	} else {
		for (size_t i = 0; i < nm && rc == 0; i++) {
			if (major(m[i].dev) == 0 && !m[i].btrfs)
				continue;
			const char *mp = mountpoint_of(m, nm, m[i].dev, NULL);
			rc = add_fs(&pk, m[i].dev, m[i].sb_dev, mp, o->medium_override, err, errlen, 0);
		}
		if (rc == 0 && pk.nfs == 0) {
			rc = -ENODEV;
			snprintf(err, errlen, "no local block-device filesystem is mounted");
		}
	}
	free_mnts(m, nm);
	/* the skipped ones after the traced ones, in one array */
	struct pf_trace_fs *all = rc || !pk.nskip ? NULL : realloc(pk.fs, (size_t)(pk.nfs + pk.nskip) * sizeof(*all));
	if (all) {
		memcpy(all + pk.nfs, pk.skip, (size_t)pk.nskip * sizeof(*all));
		free(pk.skip);
		pk.fs = all;
		pk.skip = NULL;
	} else if (!rc && pk.nskip) {
		rc = -ENOMEM;
	}
	if (rc) {
		pf_trace_free_mounts(pk.fs, pk.nfs);
		pf_trace_free_mounts(pk.skip, pk.nskip);
		return rc;
	}
	*out = pk.fs;
	*n = pk.nfs;
	*nskipped = pk.nskip;
	return 0;
}

/* A directory of filesystem fs: its recorded mount point if that still shows it, else any mount of its st_dev;
 * the same filesystem (UUID), not another one given the same device number since.  An fd, or -ENOENT. */
static int open_mount(const struct pf_trace_fs *fs, const struct mnt *m, size_t nm)
{
	for (size_t i = 0; i <= nm; i++) {
		const char *dir = i == 0 ? fs->mountpoint : m[i - 1].dir;
		if (i > 0 && m[i - 1].dev != fs->dev)
			continue;
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == fs->dev)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -ENOENT;
}

void pf_trace_open_mounts(struct pf_tracer *t)
{
	struct mnt *m = NULL;
	size_t nm = 0;
	if (read_mountinfo(&m, &nm))
		nm = 0; /* the recorded mount points are still tried */
	for (int i = 0; i < t->nfs; i++) {
		struct pf_trace_fs *fs = &t->fs[i];
		fs->mount_fd = open_mount(fs, m, nm);
		struct pf_fsid id;
		if (fs->mount_fd >= 0 && fs->gone &&
		    (pf_fsid_of_fd(fs->mount_fd, &id) || memcmp(id.uuid, fs->uuid, 16))) {
			close(fs->mount_fd); /* unmounted, and another filesystem has its device number now */
			fs->mount_fd = -1;
		}
		if (fs->mount_fd < 0 && !fs->gone) {
			fs->gone = 1; /* unmounted without our watch noticing (no inotify) */
			t->st.gone++;
		}
	}
	free_mnts(m, nm);
}

void pf_trace_close_mounts(struct pf_tracer *t)
{
	for (int i = 0; i < t->nfs; i++) {
		if (t->fs[i].mount_fd >= 0)
			close(t->fs[i].mount_fd);
		t->fs[i].mount_fd = -1;
	}
}
