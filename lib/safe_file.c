/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "safe_file.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static int fsync_parent(const char *path)
{
	char copy[PATH_MAX];
	if (strlen(path) >= sizeof(copy))
		return -ENAMETOOLONG;
	strcpy(copy, path);
	int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int rc = fsync(dfd) < 0 ? -errno : 0;
	close(dfd);
	/* Some filesystems (e.g. tmpfs on old kernels) refuse fsync on directories; that is not a failure of ours. */
	return rc == -EINVAL ? 0 : rc;
}

int pf_write_atomic(const char *path, const void *buf, size_t len, unsigned mode)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode & 07777);
	if (fd < 0)
		return -errno;
	int rc = write_all(fd, buf, len);
	/* fchmod: the umask must not decide who may read the state */
	if (rc == 0 && fchmod(fd, mode & 07777) < 0)
		rc = -errno;
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc != 0) {
		unlink(tmp);
		return rc;
	}
	return fsync_parent(path);
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

int pf_read_file(const char *path, size_t max, int require_root, void **bufp, size_t *lenp)
{
	*bufp = NULL;
	*lenp = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = 0;
	char *buf = NULL;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = PF_ENOTREG;
		goto out;
	}
	if (require_root && (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
		rc = PF_EOWNER;
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		rc = PF_ETOOBIG;
		goto out;
	}
	/* procfs and sysfs files say size 0: read those until the end, one byte past max to see whether it fits */
	int sized = st.st_size > 0;
	size_t want = sized ? (size_t)st.st_size : max + 1, have = 0;
	buf = malloc(sized ? want : 4096);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
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
	close(fd);
	return rc;
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

int pf_read_text(const char *path, size_t max, int require_root, char **text, size_t *len)
{
	void *buf;
	*text = NULL;
	int rc = pf_read_file(path, max, require_root, &buf, len);
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
