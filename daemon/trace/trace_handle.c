/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Files by handle: the tracer records a file handle (name_to_handle_at) at the first open and closes the file at
 * once; the residency pass opens it again by that handle (open_by_handle_at, CAP_DAC_READ_SEARCH).  Holding an
 * fd per file instead would keep every traced filesystem busy (umount: EBUSY) for the whole of tracing.  (An
 * event still queued holds its file's mount until the tracer reads it, which it does as soon as poll reports it.)
 *
 * A handle names the inode and its generation: a file deleted since (and its inode reused) gives ESTALE, not
 * another file.  Where a filesystem has no handles (no export operations), the recorded path is opened and
 * checked to still be the same inode and generation. */
#include "trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct file_handle *pf_trace_handle_of(int fd)
{
	struct file_handle *fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ);
	if (!fh)
		return NULL;
	fh->handle_bytes = MAX_HANDLE_SZ;
	int mount_id;
	if (name_to_handle_at(fd, "", fh, &mount_id, AT_EMPTY_PATH) < 0) {
		free(fh);
		return NULL;
	}
	struct file_handle *small = realloc(fh, sizeof(*fh) + fh->handle_bytes); /* typically 8 bytes, not 128 */
	return small ? small : fh;
}

/* O_NOATIME needs the owner or CAP_FOWNER (kept while tracing); without it, a plain open. */
#define REOPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_LARGEFILE)

static int open_handle(int mount_fd, struct file_handle *fh)
{
	int fd = open_by_handle_at(mount_fd, fh, REOPEN_FLAGS | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open_by_handle_at(mount_fd, fh, REOPEN_FLAGS);
	return fd < 0 ? -errno : fd;
}

static int open_path(const char *path)
{
	int fd = open(path, REOPEN_FLAGS | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(path, REOPEN_FLAGS);
	return fd < 0 ? -errno : fd;
}

int pf_trace_reopen(const struct pf_tracer *t, const struct pf_trace_entry *e, struct stat *st)
{
	const struct pf_trace_fs *fs = &t->fs[e->fs];
	if (fs->mount_fd < 0)
		return -ENODEV;
	int fd = e->fh ? open_handle(fs->mount_fd, e->fh) : open_path(e->path);
	if (fd < 0)
		return fd == -ENOENT ? -ESTALE : fd;
	if (fstat(fd, st) < 0 || st->st_dev != e->dev || st->st_ino != e->ino || st->st_nlink == 0 ||
	    (!e->fh && e->generation && pf_trace_generation(fd) != e->generation)) {
		close(fd);
		return -ESTALE; /* deleted, or the path names another file now */
	}
	return fd;
}
