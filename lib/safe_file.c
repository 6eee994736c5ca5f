/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "safe_file.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int pf_path_split(const char *path, char *dir, size_t dirlen, const char **base)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		snprintf(dir, dirlen, ".");
		*base = path;
	} else {
		size_t n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= dirlen)
			return -ENAMETOOLONG;
		memcpy(dir, path, n);
		dir[n] = '\0';
		*base = slash + 1;
	}
	return **base ? 0 : -EISDIR;
}

int pf_open_parent(const char *path, const char **base)
{
	char dir[PATH_MAX];
	int rc = pf_path_split(path, dir, sizeof(dir), base);
	if (rc)
		return rc;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 ? -errno : dfd;
}

/* A fresh name beside name: ".<name>.<12 random hex digits>" (O_EXCL makes it ours; a guess cannot). */
static int temp_name(char *buf, size_t len, const char *name)
{
	unsigned char r[6];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -errno;
	if (snprintf(buf, len, ".%s.%02x%02x%02x%02x%02x%02x", name, r[0], r[1], r[2], r[3], r[4], r[5]) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* A new file of our own beside name, open for writing: never one someone else made or linked. */
static int create_temp(int dfd, const char *name, unsigned mode, char *tmp, size_t tmplen)
{
	for (int tries = 0; tries < 100; tries++) {
		int rc = temp_name(tmp, tmplen, name);
		if (rc)
			return rc;
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode & 07777);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

int pf_write_atomic_at(int dfd, const char *name, const void *buf, size_t len, unsigned mode)
{
	/* A device node, FIFO, socket or directory there is never replaced: renaming over /dev/null (an output
	 * asked for as "--svg /dev/null") would leave the machine a regular file in its place. */
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return PF_ENOTREG;
	char tmp[NAME_MAX + 1];
	int fd = create_temp(dfd, name, mode, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	int rc = write_all(fd, buf, len);
	/* fchmod: the umask must not decide who may read the state */
	if (rc == 0 && fchmod(fd, mode & 07777) < 0)
		rc = -errno;
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	/* renameat replaces name itself: a symbolic link there is replaced, never followed */
	if (rc == 0 && renameat(dfd, tmp, dfd, name) < 0)
		rc = -errno;
	if (rc != 0) {
		unlinkat(dfd, tmp, 0);
		return rc;
	}
	rc = fsync(dfd) < 0 ? -errno : 0;
	/* Some filesystems (e.g. tmpfs on old kernels) refuse fsync on directories; that is not a failure of ours. */
	return rc == -EINVAL ? 0 : rc;
}

int pf_write_atomic(const char *path, const void *buf, size_t len, unsigned mode)
{
	const char *base;
	int dfd = pf_open_parent(path, &base);
	if (dfd < 0)
		return dfd;
	int rc = pf_write_atomic_at(dfd, base, buf, len, mode);
	close(dfd);
	return rc;
}

int pf_file_holds(const char *path, const void *buf, size_t len, unsigned mode)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	struct stat st;
	int same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		   (st.st_mode & 07777) == (mode & 07777) && (uint64_t)st.st_size == (uint64_t)len;
	/* compared a chunk at a time: no second copy of a layout in memory */
	const char *want = buf;
	char chunk[16384];
	size_t at = 0;
	while (same && at < len) {
		size_t n = len - at < sizeof(chunk) ? len - at : sizeof(chunk);
		ssize_t got = pread(fd, chunk, n, (off_t)at);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || memcmp(chunk, want + at, (size_t)got) != 0)
			same = 0;
		else
			at += (size_t)got;
	}
	close(fd);
	return same;
}

int pf_open_input(const char *path)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below, before any read */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : PF_ENOTREG;
	if (rc == 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		rc = -errno;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int pf_read_fd(int fd, size_t max, int require_root, void **bufp, size_t *lenp)
{
	*bufp = NULL;
	*lenp = 0;
	struct stat st;
	int rc = 0;
	char *buf = NULL;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return PF_ENOTREG;
	if (require_root && ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))))
		return PF_EOWNER;
	if ((uint64_t)st.st_size > max)
		return PF_ETOOBIG;
	/* procfs and sysfs files say size 0: read those until the end, one byte past max to see whether it fits */
	int sized = st.st_size > 0;
	size_t want = sized ? (size_t)st.st_size : max + 1, have = 0;
	buf = malloc(sized ? want : 4096);
	if (!buf)
		return -ENOMEM;
	size_t cap = sized ? want : 4096;
	while (have < want) {
		if (have == cap) {
			cap = cap * 2 < want ? cap * 2 : want;
			char *more = realloc(buf, cap);
			if (!more) {
				rc = -ENOMEM;
				goto out;
			}
			buf = more;
		}
		ssize_t n = read(fd, buf + have, (cap < want ? cap : want) - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break; /* shrank under us: the decoder will call it truncated */
		have += (size_t)n;
	}
	if (have > max) {
		rc = PF_ETOOBIG;
		goto out;
	}
	*bufp = buf;
	*lenp = have;
	buf = NULL;
out:
	free(buf);
	return rc;
}

int pf_read_file(const char *path, size_t max, int require_root, void **bufp, size_t *lenp)
{
	*bufp = NULL;
	*lenp = 0;
	int fd = pf_open_input(path);
	if (fd < 0)
		return fd;
	int rc = pf_read_fd(fd, max, require_root, bufp, lenp);
	close(fd);
	return rc;
}

int pf_mkdir(const char *path, unsigned mode)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int pf_mkdir_p(const char *path, unsigned mode)
{
	char buf[PATH_MAX];
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(buf, mode) < 0 && errno != EEXIST)
				return -errno;
			*p = c;
			if (c == '\0')
				break;
		}
	}
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int pf_read_fd_text(int fd, size_t max, int require_root, char **text, size_t *len)
{
	void *buf;
	*text = NULL;
	int rc = pf_read_fd(fd, max, require_root, &buf, len);
	if (rc)
		return rc;
	char *t = realloc(buf, *len + 1);
	if (!t) {
		free(buf);
		*len = 0;
		return -ENOMEM;
	}
	t[*len] = '\0';
	*text = t;
	return 0;
}

int pf_read_text(const char *path, size_t max, int require_root, char **text, size_t *len)
{
	*text = NULL;
	*len = 0;
	int fd = pf_open_input(path);
	if (fd < 0)
		return fd;
	int rc = pf_read_fd_text(fd, max, require_root, text, len);
	close(fd);
	return rc;
}
