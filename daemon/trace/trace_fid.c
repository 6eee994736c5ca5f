/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FID mode (Linux 5.9+: FAN_REPORT_FID | FAN_REPORT_DFID_NAME): fanotify names each event's file by its handle,
 * and its parent directory's handle and the name it was opened by, instead of opening the file for us.  An event
 * then costs the tracer no fd to close, no fstat, no readlink and no name_to_handle_at: the file is looked up by
 * its handle among those recorded; a new one's path is its parent's recorded path and the name; its directories
 * are recorded as in fd mode (pf_trace_add_parents; a parent not recorded yet is found by its handle, opened
 * O_PATH).  What needs the file open (its inode number and generation, the snapshot of its size, times and
 * extents) waits for the end of tracing, when each such file is opened once by its handle
 * (pf_trace_fid_resolve): during the boot the tracer does next to nothing per file.
 *
 * Ignore marks need the inode open: a file gets its mark at its second event, so that files opened once (most
 * of a boot's) cost no open at all, and those opened again and again (libraries) stop coming after the second.
 * Opening for the mark or the parent goes through a directory of the filesystem (open_by_handle_at's anchor),
 * held only while one read of the queue is taken in: between reads nothing of a traced filesystem is held.
 *
 * Where the kernel refuses FID mode (older kernels; a filesystem without file handles or fsid, or two traced
 * filesystems sharing one fsid, as btrfs subvolumes before 6.8), the tracer uses fd mode (trace_fanotify.c);
 * PREFETCH_TRACE_FID=0 asks for it (tests, comparisons). */
#include "trace_internal.h"

#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

int pf_trace_fid_setup(struct pf_tracer *t)
{
	for (int i = 0; i < t->nfs; i++) {
		struct statfs sf;
		if (statfs(t->fs[i].mountpoint, &sf) < 0)
			return -errno;
		memcpy(t->fs[i].fsid, &sf.f_fsid, sizeof(t->fs[i].fsid));
		if (!t->fs[i].fsid[0] && !t->fs[i].fsid[1])
			return -ENODEV;
		for (int j = 0; j < i; j++)
			if (!memcmp(t->fs[i].fsid, t->fs[j].fsid, sizeof(t->fs[i].fsid)))
				return -EEXIST; /* btrfs subvolumes of one filesystem: the events could not tell them apart */
	}
	return 0;
}

enum { NOT_TRACED = -1 };

/* The traced filesystem an event's fsid names, or NOT_TRACED. */
static int fs_of_fsid(const struct pf_tracer *t, const __kernel_fsid_t *fsid)
{
	for (int i = 0; i < t->nfs; i++)
		if (!memcmp(t->fs[i].fsid, fsid, sizeof(t->fs[i].fsid)))
			return i;
	return NOT_TRACED;
}

/* ---- opening by handle while tracing ---- */

/* A directory of filesystem fsi for open_by_handle_at, until pf_trace_fid_read_done; -1 if it is not mounted
 * where it was.  (O_PATH will not do as the anchor; the open is the tracer's own event, and the mount root is
 * recorded and ignore-marked soon.) */
static int anchor(struct pf_tracer *t, int fsi)
{
	struct pf_trace_fs *fs = &t->fs[fsi];
	if (fs->mount_fd >= 0 || fs->gone)
		return fs->mount_fd;
	int fd = open(fs->mountpoint, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != fs->dev)) {
		close(fd);
		fd = -1;
	}
	return fs->mount_fd = fd;
}

void pf_trace_fid_read_done(struct pf_tracer *t)
{
	pf_trace_close_mounts(t);
}

#define READ_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_LARGEFILE)

static int open_handle(int mount_fd, const struct file_handle *fh, int flags)
{
	int fd = open_by_handle_at(mount_fd, (struct file_handle *)fh, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open_by_handle_at(mount_fd, (struct file_handle *)fh, flags);
	return fd;
}

/* The path of the file or directory fh names (malloc'd), through an O_PATH open (no open event, no device
 * opened), or NULL. */
static char *path_of(struct pf_tracer *t, int fsi, const struct file_handle *fh)
{
	int mfd = anchor(t, fsi);
	int fd = mfd >= 0 ? open_by_handle_at(mfd, (struct file_handle *)fh, O_PATH | O_CLOEXEC) : -1;
	if (fd < 0)
		return NULL;
	char *p = pf_trace_fd_path(t, fd);
	close(fd);
	return p;
}

/* The entry's ignore mark, at its second event (see above): on the inode an O_PATH open by handle gives (the
 * link /proc/self/fd/N leads fanotify_mark to it), which opens nothing and is no event of ours. */
static void mark(struct pf_tracer *t, struct pf_trace_entry *e)
{
	e->marked = 1;
	int mfd = t->ignore_mode && t->proc_fd >= 0 ? anchor(t, (int)e->fs) : -1;
	int fd = mfd >= 0 ? open_by_handle_at(mfd, e->fh, O_PATH | O_CLOEXEC) : -1;
	if (fd < 0)
		return;
	char name[16];
	snprintf(name, sizeof(name), "%d", fd);
	pf_trace_ignore_at(t, t->proc_fd, name, e->flags);
	close(fd);
}

/* ---- one event ---- */

struct fid_info {
	const __kernel_fsid_t *fsid;
	const struct file_handle *dir, *obj; /* the parent (or a directory itself: name "."), the file */
	const char *name;
};

/* The info records of ev.  Returns 0, or -EBADMSG when they do not parse. */
static int parse(const struct fanotify_event_metadata *ev, const void *raw, struct fid_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	const char *p = (const char *)raw + ev->metadata_len, *end = (const char *)raw + ev->event_len;
	while (p + sizeof(struct fanotify_event_info_header) <= end) {
		const struct fanotify_event_info_header *h = (const void *)p;
		if (h->len < sizeof(*h) || h->len > (size_t)(end - p))
			return -EBADMSG;
		const struct fanotify_event_info_fid *f = (const void *)p;
		const struct file_handle *fh = (const void *)f->handle;
		size_t fixed = sizeof(*f) + sizeof(*fh);
		if ((h->info_type == FAN_EVENT_INFO_TYPE_FID || h->info_type == FAN_EVENT_INFO_TYPE_DFID ||
		     h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) &&
		    (h->len < fixed || fh->handle_bytes > h->len - fixed || fh->handle_bytes > MAX_HANDLE_SZ))
			return -EBADMSG;
		if (h->info_type == FAN_EVENT_INFO_TYPE_FID) {
			fi->obj = fh;
			fi->fsid = &f->fsid;
		} else if (h->info_type == FAN_EVENT_INFO_TYPE_DFID || h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
			fi->dir = fh;
			fi->fsid = &f->fsid;
			const char *name = (const char *)fh->f_handle + fh->handle_bytes;
			size_t room = h->len - fixed - fh->handle_bytes;
			if (h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
				if (!room || !memchr(name, '\0', room))
					return -EBADMSG;
				fi->name = name;
			}
		}
		p += h->len;
	}
	return fi->fsid ? 0 : -EBADMSG;
}

static struct file_handle *copy_fh(const struct file_handle *fh)
{
	struct file_handle *c = malloc(sizeof(*c) + fh->handle_bytes);
	if (c)
		memcpy(c, fh, sizeof(*c) + fh->handle_bytes);
	return c;
}

/* dir + "/" + name (malloc'd), NULL if too long. */
static char *join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	int slash = dl == 0 || dir[dl - 1] != '/';
	if (dl + (size_t)slash + nl >= PF_MAX_PATH)
		return NULL;
	char *p = malloc(dl + (size_t)slash + nl + 1);
	if (p) {
		memcpy(p, dir, dl);
		p[dl] = '/';
		memcpy(p + dl + slash, name, nl + 1);
	}
	return p;
}

/* The path of a new file (malloc'd), its directories recorded (*parent: its directory's position + 1, or 0);
 * NULL when it has none we can use. */
static char *new_path(struct pf_tracer *t, int fsi, const struct fid_info *fi, uint64_t now, uint32_t *parent)
{
	int named = fi->dir && fi->name && strcmp(fi->name, ".") && !strchr(fi->name, '/');
	const struct pf_trace_entry *dir_e =
		named ? pf_fh_index_get(&t->handles, t->ents, (uint32_t)fsi, fi->dir) : NULL;
	*parent = 0;
	if (dir_e && dir_e->path && !dir_e->pending) {
		*parent = (uint32_t)(dir_e - t->ents) + 1;
		return join(dir_e->path, fi->name); /* the usual case: its directories are recorded already */
	}
	char *dir = named ? path_of(t, fsi, fi->dir) : NULL;
	char *path = dir ? join(dir, fi->name) : path_of(t, fsi, fi->obj); /* no name given: the file's own */
	free(dir);
	if (path)
		pf_trace_add_parents(t, path, t->fs[fsi].dev, fsi, now);
	if (path && named && (dir_e = pf_fh_index_get(&t->handles, t->ents, (uint32_t)fsi, fi->dir)))
		*parent = (uint32_t)(dir_e - t->ents) + 1;
	return path;
}

/* A directory opened (FAN_ONDIR: fi->dir is the directory itself): it and those above it recorded by path. */
static void new_dir(struct pf_tracer *t, int fsi, const struct file_handle *fh, uint64_t now)
{
	char *path = path_of(t, fsi, fh);
	char *below = path ? join(path, "x") : NULL; /* add_parents records what is above its argument */
	if (below)
		pf_trace_add_parents(t, below, t->fs[fsi].dev, fsi, now);
	else
		t->st.dropped++;
	free(below);
	free(path);
}

static void known(struct pf_tracer *t, struct pf_trace_entry *e, uint64_t mask)
{
	if ((mask & FAN_OPEN_EXEC) && !(e->flags & PF_FILE_EXEC)) {
		e->flags |= PF_FILE_EXEC;
		if (e->marked)
			e->marked = 0; /* marked without exec: now nothing new can come from it */
	}
	if (!e->marked)
		mark(t, e);
}

void pf_trace_fid_event(struct pf_tracer *t, const struct fanotify_event_metadata *ev, const void *raw)
{
	struct fid_info fi;
	int fsi;
	if (parse(ev, raw, &fi) < 0 || (fsi = fs_of_fsid(t, fi.fsid)) == NOT_TRACED)
		return; /* not of a traced filesystem (or a record this reader does not know) */
	int ondir = (ev->mask & FAN_ONDIR) != 0;
	const struct file_handle *obj = ondir ? fi.dir : fi.obj;
	if (!obj)
		return;
	struct pf_trace_entry *e = pf_fh_index_get(&t->handles, t->ents, (uint32_t)fsi, obj);
	if (e) {
		known(t, e, ev->mask);
		return;
	}
	if (t->nents >= t->max_files) {
		pf_trace_cap_reached(t);
		t->st.dropped++;
		return;
	}
	uint64_t now = pf_monotonic_ns() - t->start_ns;
	if (ondir) {
		new_dir(t, fsi, obj, now);
		return;
	}
	uint32_t parent;
	char *path = new_path(t, fsi, &fi, now, &parent);
	struct pf_trace_entry n = { .dev = t->fs[fsi].dev, .fh = path ? copy_fh(obj) : NULL, .fs = (uint32_t)fsi,
				    .flags = (ev->mask & FAN_OPEN_EXEC) ? PF_FILE_EXEC : 0, .first_ns = now,
				    .path = path, .pending = 1, .parent = parent };
	if (!n.fh || t->nents >= t->max_files || !pf_trace_append(t, &n)) {
		free(n.fh);
		free(path);
		t->st.dropped++; /* no path (deleted already, too long), the cap reached by its parents, or ENOMEM */
	}
}

/* ---- the end: each pending file opened once ---- */

/* Open e by handle for reading: directly when its path shows a regular file (nearly always), else through an
 * O_PATH open checked to be a regular file first, so that no device is opened.  Returns the fd, -ESTALE (cannot
 * be opened: deleted since), or -ENOTSUP (not a regular file). */
static int open_pending(struct pf_tracer *t, const struct pf_trace_entry *e, int path_regular)
{
	int mfd = t->fs[e->fs].mount_fd;
	if (path_regular) {
		int fd = open_handle(mfd, e->fh, READ_FLAGS);
		return fd >= 0 ? fd : -ESTALE;
	}
	int pfd = open_by_handle_at(mfd, e->fh, O_PATH | O_CLOEXEC);
	struct stat st;
	if (pfd < 0)
		return -ESTALE;
	int fd = -ESTALE;
	int got = fstat(pfd, &st) == 0;
	if (got && !S_ISREG(st.st_mode)) {
		fd = -ENOTSUP;
	} else if (got) {
		/* the O_PATH fd opened again for reading through /proc/self/fd (a reopen, not a path lookup) */
		char name[32];
		snprintf(name, sizeof(name), t->proc_fd >= 0 ? "%d" : "/proc/self/fd/%d", pfd);
		int at = t->proc_fd >= 0 ? t->proc_fd : AT_FDCWD;
		fd = openat(at, name, READ_FLAGS | O_NOATIME);
		if (fd < 0 && errno == EPERM)
			fd = openat(at, name, READ_FLAGS);
		if (fd < 0)
			fd = -ESTALE;
	}
	close(pfd);
	return fd;
}

/* The recorded directories opened O_PATH by handle while the pending files are resolved (fd + 2; 0: not tried,
 * 1: not usable), at most MAX_DIR_FDS at a time. */
#define MAX_DIR_FDS 256
struct dir_fds {
	int *fd;                   /* [nents] */
	size_t open[MAX_DIR_FDS];  /* positions with an fd */
	size_t nopen;
};

static void close_dirs(struct dir_fds *d)
{
	for (size_t i = 0; i < d->nopen; i++) {
		close(d->fd[d->open[i]] - 2);
		d->fd[d->open[i]] = 0;
	}
	d->nopen = 0;
}

/* ents[pos] (a directory) as a dirfd, checked to be still at its recorded path; -1 if not. */
static int dir_fd(struct pf_tracer *t, struct dir_fds *d, size_t pos)
{
	if (!d->fd || d->fd[pos])
		return d->fd ? d->fd[pos] - 2 : -1;
	const struct pf_trace_entry *dir = &t->ents[pos];
	int mfd = t->fs[dir->fs].mount_fd;
	int fd = dir->fh && dir->path && mfd >= 0 ? open_by_handle_at(mfd, dir->fh, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	struct stat a, b;
	if (fd >= 0 && (stat(dir->path, &a) < 0 || fstat(fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
		close(fd); /* moved since: its files' recorded paths are checked whole */
		fd = -1;
	}
	if (fd >= 0 && d->nopen == MAX_DIR_FDS)
		close_dirs(d);
	if (fd >= 0)
		d->open[d->nopen++] = pos;
	d->fd[pos] = fd + 2;
	return fd;
}

/* e->path's stat (not through a link at its end): by its name in its directory's fd where there is one (one
 * name looked up, not every component of the path), else by the whole path. */
static int stat_path(struct pf_tracer *t, struct dir_fds *d, const struct pf_trace_entry *e, struct stat *st)
{
	int dfd = e->parent ? dir_fd(t, d, e->parent - 1) : -1;
	if (dfd >= 0)
		return fstatat(dfd, strrchr(e->path, '/') + 1, st, AT_SYMLINK_NOFOLLOW);
	return lstat(e->path, st);
}

static void resolve(struct pf_tracer *t, size_t pos, struct dir_fds *d)
{
	struct pf_trace_entry *e = &t->ents[pos];
	struct stat ps, st;
	int by_path = stat_path(t, d, e, &ps) == 0 && ps.st_dev == e->dev && !S_ISLNK(ps.st_mode);
	if (by_path && !S_ISREG(ps.st_mode) && !S_ISDIR(ps.st_mode)) {
		e->dead = 1; /* a device node, fifo or socket: not opened, not recorded */
		return;
	}
	by_path = by_path && S_ISREG(ps.st_mode);
	if (by_path && !pf_trace_pages_cover(t, (int)e->fs)) {
		/* its ranges come from mincore: the end opens it by handle anyway, checked to be ps's inode */
		if (pf_trace_lookup(t, ps.st_dev, ps.st_ino)) {
			e->dead = 1; /* a second name of a recorded inode */
		} else if (pf_devino_put(&t->index, e->dev, ps.st_ino, pos) == 0) {
			e->ino = ps.st_ino;
			e->pending = 0;
			e->path_ok = 1;
		}
		return;
	}
	int fd = open_pending(t, e, by_path);
	if (fd == -ENOTSUP)
		e->dead = 1;
	if (fd < 0)
		return; /* deleted since: stays pending, left out */
	if (fstat(fd, &st) < 0 || st.st_nlink == 0) {
		close(fd);
		return;
	}
	if (st.st_dev != e->dev || !S_ISREG(st.st_mode) || pf_trace_lookup(t, st.st_dev, st.st_ino)) {
		e->dead = 1; /* another st_dev (a btrfs subvolume below), or a second name of a recorded inode */
		close(fd);
		return;
	}
	e->ino = st.st_ino;
	if (pf_devino_put(&t->index, e->dev, e->ino, pos)) {
		close(fd);
		return;
	}
	e->pending = 0;
	e->generation = pf_trace_generation(fd);
	pf_trace_snapshot(t, e, fd, &st);
	e->verified = by_path && ps.st_ino == st.st_ino && pf_trace_snapshot_same(e, &ps);
	close(fd);
}

void pf_trace_fid_resolve(struct pf_tracer *t)
{
	struct dir_fds d = { .fd = calloc(t->nents ? t->nents : 1, sizeof(int)) }; /* none: whole paths */
	for (size_t i = 0; i < t->nents; i++)
		if (t->ents[i].pending && t->ents[i].path && t->fs[t->ents[i].fs].mount_fd >= 0)
			resolve(t, i, &d);
	if (d.fd)
		close_dirs(&d);
	free(d.fd);
}
