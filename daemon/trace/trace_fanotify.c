/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The collector: fanotify marks on the traced filesystems and the event loop that records, per file, the
 * first time another process opened it.  Directories the boot walked through are recorded just before the
 * file (path lookups produce no fanotify event), and directories opened for reading (FAN_ONDIR) too.
 *
 * FAN_ACCESS is not asked for: every read follows an open we see; page faults on mmapped files (shared
 * libraries, executables) produce no access event at all; and each access event costs the kernel an fd
 * open and us a read.  The ranges come from the page-cache events instead (trace_tracefs.c), or the residency
 * pass where those are missing (trace_residency.c).
 *
 * Once a file is recorded, an ignore mark on its inode stops the kernel from queueing (and opening an fd for)
 * its later opens: during a boot libc and friends are opened by every process, and those repeats were most
 * of the events and of the tracer's CPU time.  A recorded file that is not yet known to be executed keeps
 * FAN_OPEN_EXEC un-ignored so that its first exec still arrives and flags it.  The marks are bounded by
 * max_files (one per entry) and do not keep a filesystem mounted.
 *
 * No fd outlives its event: a file is recorded by its handle (trace_handle.c) and the event's fd closed.  When
 * max_files is reached the fanotify group is closed (its marks go with it): nothing more can be recorded, so nothing more should
 * cost an event (every open of every file past the cap would otherwise be one), and the trace says it was capped.
 * Each read() makes the kernel open one fd per event it returns: the read size is bounded by the fd limit. */
#include "error.h"
#include "trace_internal.h"

#include "array.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MAX_FILES 100000u
#define WANT_NOFILE 4096u   /* fd limit asked for: one read() can return a few hundred event fds */
#define POLL_MS 100         /* *stop is checked at least this often */
#define EVENT_BUF 16384
#define MAX_NEW_PARENTS 128 /* directories recorded above one file at most (deeper ones: outermost left out) */
#define FINAL_READS 64      /* after the stop: bounded catch-up on what is queued */
#define PAGE_READS 256      /* trace pipe reads (<= 4 KiB each) per poll turn: fanotify's queue is read in between */
#define GATHER_NS 2000000   /* after a wake-up, let the events of the next 2 ms come too (see pf_tracer_run) */

/* ---- the (dev, ino) -> entry table ---- */

struct pf_trace_entry *pf_trace_lookup(struct pf_tracer *t, dev_t dev, ino_t ino)
{
	size_t pos;
	return pf_devino_get(&t->index, dev, ino, &pos) ? &t->ents[pos] : NULL;
}

struct pf_trace_entry *pf_trace_append(struct pf_tracer *t, const struct pf_trace_entry *src)
{
	if (PF_ARRAY_RESERVE(t->ents, t->cap_ents, t->nents + 1, 256) ||
	    pf_devino_put(&t->index, src->dev, src->ino, t->nents))
		return NULL;
	t->ents[t->nents] = *src;
	if (src->flags & PF_FILE_DIR)
		(void)pf_dir_index_put(&t->dirs, t->ents, t->nents); /* without it: a stat in add_parents */
	return &t->ents[t->nents++];
}

#ifndef FAN_MARK_IGNORE
#define FAN_MARK_IGNORE 0x00000400
#endif

void pf_trace_cap_reached(struct pf_tracer *t)
{
	if (t->capped)
		return;
	t->capped = 1;
	/* Closing the group removes all its marks at once (removing filesystem marks one by one would need the
	 * CAP_SYS_ADMIN we dropped); what is still queued goes with it: it could add no file, only exec flags. */
	if (t->fan_fd >= 0)
		close(t->fan_fd);
	t->fan_fd = -1;
}

/* Stop the kernel from reporting further opens of fd's inode (those that would tell us nothing new). */
static void ignore_inode(struct pf_tracer *t, int fd, uint32_t flags)
{
	if (!t->ignore_mode || t->fan_fd < 0)
		return;
	uint64_t mask = FAN_OPEN;
	if (flags & PF_FILE_EXEC)
		mask |= FAN_OPEN_EXEC;
	if (flags & PF_FILE_DIR)
		mask |= FAN_ONDIR;
	while (fanotify_mark(t->fan_fd, FAN_MARK_ADD | t->ignore_mode, mask, fd, NULL) < 0) {
		/* FAN_MARK_IGNORE is 6.0+: before, the legacy ignored mask (same effect on an inode mark) */
		if (errno == EINVAL && (t->ignore_mode & FAN_MARK_IGNORE)) {
			t->ignore_mode = FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY;
			continue;
		}
		if (errno == ENOSPC || errno == EINVAL || errno == EPERM || errno == ENOSYS)
			t->ignore_mode = 0; /* over the user's mark limit or unsupported: plain events from now on */
		return;            /* other errors (e.g. an fd the kernel refuses): only this file keeps its events */
	}
}

/* Record the directories above path (same filesystem, outermost first) that are not known yet. */
static void add_parents(struct pf_tracer *t, const char *path, dev_t dev, int fsi, uint64_t now)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	/* walk up until a known directory or the filesystem boundary; remember the new ones */
	struct pf_trace_entry fresh[MAX_NEW_PARENTS];
	int nf = 0;
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		if (slash == dir) {
			if (dir[1] == '\0')
				break; /* was "/" already */
			dir[1] = '\0';
		} else {
			*slash = '\0';
		}
		size_t known;
		if (pf_dir_index_get(&t->dirs, t->ents, dir, &known) && t->ents[known].dev == dev)
			break;
		struct stat st;
		if (stat(dir, &st) < 0 || st.st_dev != dev || !S_ISDIR(st.st_mode) ||
		    pf_trace_lookup(t, st.st_dev, st.st_ino))
			break;
		if (t->nents + (size_t)nf >= t->max_files) {
			pf_trace_cap_reached(t);
			t->st.dropped++;
			break;
		}
		/* opened briefly: generation, handle and ignore mark need an fd; closed right after */
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOATIME | O_NONBLOCK);
		if (fd < 0)
			fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
		char *p = fd >= 0 ? strdup(dir) : NULL;
		if (!p) {
			if (fd >= 0)
				close(fd);
			t->st.dropped++;
			break;
		}
		fresh[nf] = (struct pf_trace_entry){ .dev = dev, .ino = st.st_ino, .fh = pf_trace_handle_of(fd),
						     .fs = (uint32_t)fsi, .flags = PF_FILE_DIR,
						     .generation = pf_trace_generation(fd), .first_ns = now, .path = p };
		pf_trace_snapshot(t, &fresh[nf], fd, &st);
		ignore_inode(t, fd, PF_FILE_DIR);
		close(fd);
		nf++;
		if (strcmp(dir, "/") == 0 || nf == (int)(sizeof(fresh) / sizeof(fresh[0])))
			break;
	}
	for (int i = nf - 1; i >= 0; i--) {
		if (!pf_trace_append(t, &fresh[i])) {
			free(fresh[i].fh);
			free(fresh[i].path);
			t->st.dropped++;
		}
	}
}

static void handle_event(struct pf_tracer *t, const struct fanotify_event_metadata *ev)
{
	int fd = ev->fd;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	struct pf_trace_entry *known = pf_trace_lookup(t, st.st_dev, st.st_ino);
	if (known) {
		if ((ev->mask & FAN_OPEN_EXEC) && !(known->flags & PF_FILE_EXEC)) {
			known->flags |= PF_FILE_EXEC;
			ignore_inode(t, fd, known->flags); /* now nothing new can come from it */
		}
		close(fd);
		return;
	}
	int fsi;
	if (!pf_trace_fs_index(t, st.st_dev, &fsi) || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
		close(fd); /* another st_dev (e.g. a btrfs subvolume) or a device node, fifo, socket */
		return;
	}
	if (t->nents >= t->max_files) {
		pf_trace_cap_reached(t);
		t->st.dropped++;
		close(fd);
		return;
	}
	uint64_t now = pf_monotonic_ns() - t->start_ns;
	char *path = pf_trace_fd_path(t, fd);
	if (!path) {
		t->st.dropped++;
		close(fd);
		return;
	}
	add_parents(t, path, st.st_dev, fsi, now);
	if (t->nents >= t->max_files) { /* the parents took the last places */
		t->st.dropped++;
		free(path);
		close(fd);
		return;
	}
	uint32_t flags = S_ISDIR(st.st_mode) ? PF_FILE_DIR : 0;
	if (ev->mask & FAN_OPEN_EXEC)
		flags |= PF_FILE_EXEC;
	struct pf_trace_entry e = { .dev = st.st_dev, .ino = st.st_ino, .fh = pf_trace_handle_of(fd),
				    .fs = (uint32_t)fsi, .flags = flags, .generation = pf_trace_generation(fd),
				    .first_ns = now, .path = path };
	pf_trace_snapshot(t, &e, fd, &st);
	if (!pf_trace_append(t, &e)) {
		free(e.fh);
		free(path);
		t->st.dropped++;
	} else {
		ignore_inode(t, fd, flags);
	}
	close(fd);
}

/* Read what is queued.  Returns 0 when the queue is empty (EAGAIN), or -errno on a fatal error. */
static int drain(struct pf_tracer *t, volatile sig_atomic_t *stop, int max_reads)
{
	struct fanotify_event_metadata buf[EVENT_BUF / sizeof(struct fanotify_event_metadata)]; /* aligned */
	for (int reads = 0; t->fan_fd >= 0 && !(stop && *stop) && (max_reads <= 0 || reads < max_reads); reads++) {
		ssize_t len = read(t->fan_fd, buf, t->read_len);
		if (len < 0) {
			if (errno == EAGAIN)
				return 0;
			if (errno == EINTR)
				continue;
			if (errno == EBADF || errno == EFAULT || errno == EINVAL)
				return -errno;
			/* The kernel could not open the file of one event (out of fds, a file that refuses to be
			 * opened): that event is consumed and lost, the rest stay queued. */
			t->st.lost++;
			continue;
		}
		if (len == 0)
			return 0;
		const struct fanotify_event_metadata *ev = buf;
		for (; FAN_EVENT_OK(ev, len); ev = FAN_EVENT_NEXT(ev, len)) {
			if (ev->vers != FANOTIFY_METADATA_VERSION)
				return -EPROTO;
			t->st.events++;
			if (ev->mask & FAN_Q_OVERFLOW) {
				t->st.overflows++;
				continue;
			}
			if (ev->fd < 0)
				continue;
			if (ev->pid == t->self) {
				/* prefetchd's own I/O (replay threads, this tracer's directory opens) */
				t->st.own_events++;
				close(ev->fd);
				continue;
			}
			handle_event(t, ev);
		}
	}
	return 0;
}

int pf_tracer_run(struct pf_tracer *t, volatile sig_atomic_t *stop)
{
	uint64_t deadline = t->timeout_s > 0 ? t->start_ns + (uint64_t)t->timeout_s * 1000000000ull : 0;
	while (!(stop && *stop)) {
		int wait = POLL_MS;
		if (deadline) {
			uint64_t now = pf_monotonic_ns();
			if (now >= deadline)
				break;
			uint64_t left_ms = (deadline - now + 999999) / 1000000;
			if (left_ms < (uint64_t)wait)
				wait = (int)left_ms;
		}
		struct pollfd p[2] = { { .fd = t->fan_fd, .events = POLLIN }, { .fd = t->ino_fd, .events = POLLIN } };
		int n = poll(p, t->ino_fd >= 0 ? 2 : 1, wait);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0 && (p[0].revents & POLLIN)) {
			/* One wake-up per burst of opens, not one per open: woken per event, the tracer spent more
			 * on being scheduled, polling and reading one event at a time than on the events.  Queued
			 * events hold their mount only these 2 ms longer; a signal (stop) ends the pause. */
			struct timespec gather = { 0, GATHER_NS };
			nanosleep(&gather, NULL);
			int rc = drain(t, stop, 0);
			if (rc)
				return rc;
		}
		if (n > 0 && t->ino_fd >= 0 && (p[1].revents & POLLIN))
			pf_trace_read_unmounts(t);
		/* not polled: its wake-ups would come per event; each turn (<= POLL_MS) reads what is buffered */
		pf_trace_pages_read(t, PAGE_READS);
	}
	if (deadline && !(stop && *stop) && !t->timeout_planned)
		t->timed_out = 1;
	/* what is queued already happened before the stop: take it in too */
	int rc = drain(t, NULL, FINAL_READS);
	pf_trace_read_unmounts(t);
	return rc;
}

/* Bytes per read: every event read comes with an fd the kernel opens for it, and one that cannot be opened
 * (out of fds) is lost.  The limit is raised where allowed (CAP_SYS_RESOURCE for the hard one); a read then takes
 * at most half of what is left, so the other fds of the process (replay threads) still fit. */
static size_t read_len_for_nofile(void)
{
	struct rlimit rl;
	size_t max = EVENT_BUF / sizeof(struct fanotify_event_metadata);
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 64 * sizeof(struct fanotify_event_metadata);
	if (rl.rlim_cur < WANT_NOFILE) {
		struct rlimit nrl = { .rlim_cur = WANT_NOFILE, .rlim_max = rl.rlim_max > WANT_NOFILE ? rl.rlim_max : WANT_NOFILE };
		if (setrlimit(RLIMIT_NOFILE, &nrl) < 0) {
			nrl.rlim_cur = nrl.rlim_max = rl.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &nrl) < 0)
				nrl.rlim_cur = rl.rlim_cur;
		}
		rl.rlim_cur = nrl.rlim_cur;
	}
	size_t n = rl.rlim_cur / 4;
	if (n < 8)
		n = 8;
	return (n < max ? n : max) * sizeof(struct fanotify_event_metadata);
}

static int fan_init(int bounded)
{
	unsigned flags = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK;
	/* O_NONBLOCK: the kernel opens every event's file for us; a FIFO would otherwise block that open */
	unsigned fflags = O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NOATIME | O_NONBLOCK;
	int fd = -1;
	if (!bounded)
		fd = fanotify_init(flags | FAN_UNLIMITED_QUEUE, fflags);
	if (fd < 0)
		fd = fanotify_init(flags, fflags);
	return fd < 0 ? -errno : fd;
}

static int fan_mark(int fd, const char *dir)
{
	uint64_t mask = FAN_OPEN | FAN_OPEN_EXEC | FAN_ONDIR;
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, AT_FDCWD, dir) == 0)
		return 0;
	if (errno != EINVAL)
		return -errno;
	/* kernels before 5.0 (no FAN_OPEN_EXEC) or 4.20 (no filesystem marks): the mount at least */
	mask = FAN_OPEN | FAN_ONDIR;
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, AT_FDCWD, dir) == 0 ||
	    fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, mask, AT_FDCWD, dir) == 0)
		return 0;
	return -errno;
}

int pf_tracer_open(const struct pf_trace_opts *o, struct pf_tracer **out)
{
	char dummy[8];
	char *err = o->err ? o->err : dummy;
	size_t errlen = o->err ? o->errlen : sizeof(dummy);
	if (errlen)
		err[0] = '\0';
	*out = NULL;
	struct pf_tracer *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->fan_fd = t->ino_fd = -1;
	t->proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	t->pages.inst_fd = t->pages.dir_fd = t->pages.pipe_fd = -1;
	t->self = getpid();
	t->timeout_s = o->timeout_s;
	t->timeout_planned = o->timeout_planned;
	/* fanotify first: without the privilege nothing else matters, and that is the clearest message */
	int rc = fan_init(o->bounded_queue);
	if (rc < 0) {
		snprintf(err, errlen, "fanotify_init: %s%s", pf_strerror(rc),
			 rc == -EPERM ? " (tracing needs root: CAP_SYS_ADMIN)" : "");
		goto fail;
	}
	t->fan_fd = rc;
	if ((rc = pf_trace_pick_mounts(o, &t->fs, &t->nfs, &t->nskipped, err, errlen)))
		goto fail;
	for (int i = 0; i < t->nfs; i++) {
		if ((rc = fan_mark(t->fan_fd, t->fs[i].mountpoint)) < 0) {
			snprintf(err, errlen, "cannot watch %s: %s", t->fs[i].mountpoint, pf_strerror(rc));
			goto fail;
		}
	}
	pf_trace_watch_unmounts(t);
	const char *src = getenv("PREFETCH_TRACE_PAGES");
	pf_trace_pages_start(t, o->pages_mincore || (src && strcmp(src, "mincore") == 0));
	t->max_files = o->max_files ? o->max_files : DEFAULT_MAX_FILES;
	t->read_len = read_len_for_nofile();
	t->ignore_mode = FAN_MARK_IGNORE | FAN_MARK_IGNORED_SURV_MODIFY;
	t->start_ns = pf_monotonic_ns();
	*out = t;
	return 0;
fail:
	pf_tracer_close(t);
	return rc;
}

void pf_tracer_close(struct pf_tracer *t)
{
	if (!t)
		return;
	if (t->fan_fd >= 0)
		close(t->fan_fd);
	if (t->ino_fd >= 0)
		close(t->ino_fd);
	if (t->proc_fd >= 0)
		close(t->proc_fd);
	pf_trace_pages_close(t);
	pf_page_table_free(&t->pages.table);
	free(t->pages.fs_events);
	pf_trace_close_mounts(t);
	for (size_t i = 0; i < t->nents; i++) {
		free(t->ents[i].fh);
		free(t->ents[i].path);
	}
	free(t->ents);
	free(t->xmap);
	pf_devino_free(&t->index);
	pf_dir_index_free(&t->dirs);
	pf_trace_free_mounts(t->fs, t->nfs + t->nskipped);
	free(t);
}
