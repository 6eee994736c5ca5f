/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "state_dir.h"
#include "error.h"
#include "safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int trusted(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int pf_state_dir_open(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		/* O_NOFOLLOW|O_DIRECTORY on a symbolic link: ELOOP, or ENOTDIR on some kernels */
		return errno == ELOOP || errno == ENOTDIR ? PF_EUNSAFE : -errno;
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : trusted(&st) ? 0 : PF_EUNSAFE;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

void pf_state_dir_why(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	err[0] = '\0';
	if (lstat(dir, &st) < 0)
		return;
	if (S_ISLNK(st.st_mode))
		snprintf(err, errlen, "%s is a symbolic link", dir);
	else if (!S_ISDIR(st.st_mode))
		snprintf(err, errlen, "%s is not a directory", dir);
	else if (st.st_uid != geteuid())
		snprintf(err, errlen, "%s is owned by uid %u, not by uid %u running", dir, (unsigned)st.st_uid,
			 (unsigned)geteuid());
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(err, errlen, "%s has mode %04o: writable by group or others", dir, (unsigned)(st.st_mode & 07777));
}

/* The trusted directory holding path, and path's last component in *base. */
static int open_parent(const char *path, const char **base)
{
	char dir[PATH_MAX];
	int rc = pf_path_split(path, dir, sizeof(dir), base);
	return rc ? rc : pf_state_dir_open(dir);
}

int pf_state_mkdir(const char *dir, unsigned mode)
{
	const char *base;
	int pfd = open_parent(dir, &base);
	if (pfd < 0)
		return pfd;
	int rc = mkdirat(pfd, base, mode) < 0 && errno != EEXIST ? -errno : 0;
	close(pfd);
	if (rc)
		return rc;
	int fd = pf_state_dir_open(dir);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* What a file to write must be: regular, ours, one link (a hard link would carry the write elsewhere). */
static int check_file(int fd, int writing)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return PF_ENOTREG;
	if (writing && (st.st_nlink != 1 || st.st_uid != geteuid()))
		return PF_ELINKED;
	return 0;
}

int pf_state_open(const char *path, int flags, unsigned mode)
{
	const char *base;
	int dfd = open_parent(path, &base);
	if (dfd < 0)
		return dfd;
	int fd = openat(dfd, base, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode);
	int rc = fd < 0 ? (errno == ELOOP ? PF_ENOTREG : -errno) : 0;
	close(dfd);
	if (rc)
		return rc;
	int writing = (flags & O_ACCMODE) != O_RDONLY;
	rc = check_file(fd, writing);
	if (!rc && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		rc = -errno;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int pf_state_read(const char *path, size_t max, void **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int fd = pf_state_open(path, O_RDONLY, 0);
	if (fd < 0)
		return fd;
	int rc = pf_read_fd(fd, max, 0, buf, len);
	close(fd);
	return rc;
}

int pf_state_read_text(const char *path, size_t max, char **text, size_t *len)
{
	*text = NULL;
	*len = 0;
	int fd = pf_state_open(path, O_RDONLY, 0);
	if (fd < 0)
		return fd;
	int rc = pf_read_fd_text(fd, max, 0, text, len);
	close(fd);
	return rc;
}

int pf_state_write(const char *path, const void *buf, size_t len, unsigned mode)
{
	const char *base;
	int dfd = open_parent(path, &base);
	if (dfd < 0)
		return dfd;
	int rc = pf_write_atomic_at(dfd, base, buf, len, mode);
	close(dfd);
	return rc;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Whether the file's last byte is a newline (an empty file counts as ended). */
static int ends_line(int fd, off_t size)
{
	char c = '\n';
	return size == 0 || (pread(fd, &c, 1, size - 1) == 1 && c == '\n');
}

int pf_state_append(const char *path, const char *header, const char *line, size_t len)
{
	int fd = pf_state_open(path, O_RDWR | O_CREAT | O_APPEND, 0600); /* read: its last byte */
	if (fd < 0)
		return fd;
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : 0;
	/* a log an older version made 0644: it lists what boots did, for root's eyes only */
	if (rc == 0 && (st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0)
		rc = -errno;
	size_t hlen = header && rc == 0 && st.st_size == 0 ? strlen(header) : 0;
	char *out = rc ? NULL : malloc(hlen + len + 1);
	if (!rc && !out)
		rc = -ENOMEM;
	if (!rc) {
		size_t olen = 0;
		if (!ends_line(fd, st.st_size))
			out[olen++] = '\n'; /* a line an older crash cut stays a bad line of its own */
		if (hlen)
			memcpy(out + olen, header, hlen);
		memcpy(out + olen + hlen, line, len);
		olen += hlen + len;
		/* one write(): O_APPEND keeps concurrent appenders from interleaving inside a line */
		rc = write_all(fd, out, olen);
		if (rc == 0 && fsync(fd) < 0)
			rc = -errno;
		if (rc && ftruncate(fd, st.st_size) == 0) /* whole line or nothing: a full disk leaves no fragment */
			(void)fsync(fd);
	}
	free(out);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int pf_state_unlink(const char *path)
{
	const char *base;
	int dfd = open_parent(path, &base);
	if (dfd < 0)
		return dfd;
	int rc = unlinkat(dfd, base, 0) < 0 ? -errno : 0;
	close(dfd);
	return rc;
}

int pf_state_exists(const char *path)
{
	const char *base;
	int dfd = open_parent(path, &base);
	if (dfd < 0)
		return 0;
	struct stat st;
	int rc = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
	close(dfd);
	return rc;
}

DIR *pf_state_opendir(const char *dir, int *err)
{
	int fd = pf_state_dir_open(dir);
	*err = fd < 0 ? fd : 0;
	if (fd < 0) {
		errno = fd == PF_EUNSAFE ? EPERM : -fd;
		return NULL;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		*err = -errno;
		close(fd);
	}
	return d;
}
