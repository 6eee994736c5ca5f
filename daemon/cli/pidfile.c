/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pidfile.h"
#include "clock.h"
#include "safe_file.h"
#include "state_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static pid_t read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	long v = strtol(buf, NULL, 10);
	return v > 0 && v < (1l << 30) ? (pid_t)v : 0;
}

/* The holder writes its pid once it is set up (prefetchd boot: tracing; seconds under emulation): give it a
 * moment if we came in between.  0 if it wrote none. */
static pid_t wait_pid(int fd)
{
	pid_t p = 0;
	for (int i = 0; i < 300 && !(p = read_pid(fd)); i++)
		usleep(10000);
	return p;
}

int pf_pidfile_lock(const char *path, struct pf_pidfile *pf, pid_t *holder)
{
	pf->fd = -1;
	pf->path = NULL;
	if (holder)
		*holder = 0;
	char *dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	char *slash = strrchr(dir, '/');
	int rc = 0;
	if (slash && slash != dir) {
		*slash = '\0';
		rc = pf_mkdir(dir, 0755);
	}
	free(dir);
	if (rc)
		return rc;
	int fd = pf_state_open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (holder && rc == -EBUSY)
			*holder = wait_pid(fd);
		close(fd);
		return rc;
	}
	if (ftruncate(fd, 0) < 0) { /* a dead holder's pid must not look like ours */
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!(pf->path = strdup(path))) {
		close(fd);
		return -ENOMEM;
	}
	pf->fd = fd;
	return 0;
}

int pf_pidfile_publish(struct pf_pidfile *pf)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (pwrite(pf->fd, buf, (size_t)len, 0) != len)
		return errno ? -errno : -EIO;
	return 0;
}

int pf_pidfile_outcome(struct pf_pidfile *pf, const char *why)
{
	if (pf->fd < 0)
		return -EBADF;
	char *buf;
	int len = asprintf(&buf, "%ld\n%s%s\n", (long)getpid(), why ? "failed: " : "stored", why ? why : "");
	if (len < 0)
		return -ENOMEM;
	int rc = pwrite(pf->fd, buf, (size_t)len, 0) == len ? 0 : errno ? -errno : -EIO;
	free(buf);
	return rc;
}

/* The outcome line a finished holder left: 0 "stored", 2 otherwise (err says what happened). */
static int read_outcome(int fd, char *err, size_t errlen)
{
	char buf[PF_PIDFILE_OUTCOME_MAX + 32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	char *line = strchr(buf, '\n');
	if (line) {
		line++;
		line[strcspn(line, "\n")] = '\0';
	}
	if (line && strcmp(line, "stored") == 0)
		return 0;
	if (line && strncmp(line, "failed: ", 8) == 0)
		snprintf(err, errlen, "%s", line + 8);
	else
		snprintf(err, errlen, "it ended without reporting a stored trace (killed or crashed?)");
	return 2;
}

int pf_pidfile_acquire(const char *path, struct pf_pidfile *pf, pid_t *holder)
{
	int rc = pf_pidfile_lock(path, pf, holder);
	if (rc == 0 && (rc = pf_pidfile_publish(pf)))
		pf_pidfile_release(pf);
	return rc;
}

void pf_pidfile_release(struct pf_pidfile *pf)
{
	if (pf->path && pf->fd >= 0)
		unlink(pf->path); /* while still locked: a new holder cannot have created it yet */
	if (pf->fd >= 0)
		close(pf->fd);
	free(pf->path);
	pf->fd = -1;
	pf->path = NULL;
}

int pf_pidfile_stop(const char *path, int sig, int timeout_ms, pid_t *pid, char *err, size_t errlen)
{
	*pid = 0;
	if (errlen)
		err[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		/* stale: its process is gone.  Empty (it died before writing its pid) or a pid: ours; anything else
		 * is not a pid file of prefetchd's, and saying "no tracer" would be a guess */
		char c;
		int garbage = pread(fd, &c, 1, 0) == 1 && !read_pid(fd);
		close(fd);
		return garbage ? -EBADMSG : 1;
	}
	if (errno != EWOULDBLOCK) {
		int e = errno;
		close(fd);
		return -e;
	}
	pid_t p = wait_pid(fd);
	if (!p) {
		close(fd);
		return -ESRCH;
	}
	*pid = p;
	if (kill(p, sig) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	uint64_t t0 = pf_monotonic_ns();
	int rc = -ETIMEDOUT;
	for (;;) {
		if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
			rc = read_outcome(fd, err, errlen);
			break;
		}
		if ((int64_t)((pf_monotonic_ns() - t0) / 1000000) >= timeout_ms)
			break;
		usleep(20000);
	}
	close(fd);
	return rc;
}
