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
 * Two ways to read events.  FID mode (trace_fid.c, Linux 5.9+, where every traced filesystem allows it): each
 * event names its file by handle, with its directory's handle and its name; nothing is opened for it.  fd mode
 * (here, handle_event; the fallback): each read() makes the kernel open one fd per event it returns (the read
 * size is bounded by the fd limit); the file is recorded by its handle (trace_handle.c) and the event's fd closed.
 * Either way no fd outlives its event.  When max_files is reached the fanotify group is closed (its marks go with
 * it): nothing more can be recorded, so nothing more should cost an event (every open of every file past the cap
 * would otherwise be one), and the trace says it was capped.  The recorded entries themselves: trace_record.c. */
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
#define EVENT_BUF 16384     /* fd mode: bytes per read at most (682 events, as many fds) */
#define FID_EVENT_BUF 65536 /* FID mode: an event takes ~90 bytes, no fd: ~700 events per read */
#define FINAL_READS 64      /* after the stop: bounded catch-up on what is queued */
#define PAGE_READS 256      /* trace pipe reads (<= 4 KiB each) per poll turn: fanotify's queue is read in between */
#define GATHER_NS 2000000   /* after a wake-up, let the events of the next 2 ms come too (see pf_tracer_run) */
#define FID_GATHER_NS 20000000 /* FID mode: 20 ms (its queued events hold no mount) */

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
			pf_trace_ignore_at(t, fd, NULL, known->flags); /* now nothing new can come from it */
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
	pf_trace_add_parents(t, path, st.st_dev, fsi, now);
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
		pf_trace_ignore_at(t, fd, NULL, flags);
	}
	close(fd);
}

/* Read what is queued.  Returns 0 when the queue is empty (EAGAIN), or -errno on a fatal error. */
static int drain_reads(struct pf_tracer *t, volatile sig_atomic_t *stop, int max_reads)
{
	struct fanotify_event_metadata buf[FID_EVENT_BUF / sizeof(struct fanotify_event_metadata)]; /* aligned */
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
		/* FID mode's events are only 4-byte aligned: each one's metadata copied out */
		struct fanotify_event_metadata m;
		const struct fanotify_event_metadata *ev = &m;
		for (size_t off = 0; off + sizeof(m) <= (size_t)len; off += m.event_len) {
			memcpy(&m, (const char *)buf + off, sizeof(m));
			if (m.event_len < sizeof(m) || m.event_len > (size_t)len - off)
				break;
			if (ev->vers != FANOTIFY_METADATA_VERSION)
				return -EPROTO;
			t->st.events++;
			if (ev->mask & FAN_Q_OVERFLOW) {
				t->st.overflows++;
				continue;
			}
			if (ev->fd < 0 && !t->fid)
				continue;
			if (ev->pid == t->self) {
				/* prefetchd's own I/O (replay threads, this tracer's directory opens) */
				t->st.own_events++;
				if (ev->fd >= 0)
					close(ev->fd);
				continue;
			}
			if (t->fid)
				pf_trace_fid_event(t, ev, (const char *)buf + off);
			else
				handle_event(t, ev);
		}
	}
	return 0;
}

static int drain(struct pf_tracer *t, volatile sig_atomic_t *stop, int max_reads)
{
	int rc = drain_reads(t, stop, max_reads);
	if (t->fid)
		pf_trace_fid_read_done(t);
	return rc;
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
			 * on being scheduled, polling and reading one event at a time than on the events.  In fd
			 * mode queued events hold their mount (the event's path): only these 2 ms longer; FID mode's
			 * hold nothing.  A signal (stop) ends the pause. */
			struct timespec gather = { 0, t->fid ? FID_GATHER_NS : GATHER_NS };
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

static int fan_init(int bounded, int fid)
{
	unsigned flags = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | (fid ? FAN_REPORT_DFID_NAME | FAN_REPORT_FID : 0);
	/* O_NONBLOCK: the kernel opens every event's file for us; a FIFO would otherwise block that open */
	unsigned fflags = O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NOATIME | O_NONBLOCK;
	int fd = -1;
	if (!bounded) {
		fd = fanotify_init(flags | FAN_UNLIMITED_QUEUE, fflags);
		if (fd < 0 && errno == EPERM)
			return -EPERM; /* without CAP_SYS_ADMIN (5.13+ lets anyone have a FID group, a weaker one) */
	}
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

/* FID mode refused for one of the filesystems: fd mode for all (one group, one way of reading it); why noted. */
static int fall_back_to_fds(struct pf_tracer *t, int bounded, struct pf_note *fid_why, const char *why)
{
	close(t->fan_fd);
	t->fid = 0;
	pf_note(fid_why, "%s", why);
	t->fan_fd = fan_init(bounded, 0);
	return t->fan_fd < 0 ? t->fan_fd : 0;
}

/* The marks on every traced filesystem, in FID mode where all of them allow it (else why not noted to fid_why). */
static int watch(struct pf_tracer *t, int bounded, struct pf_note *fid_why, char *err, size_t errlen)
{
	int rc;
	if (t->fid && pf_trace_fid_setup(t) < 0 &&
	    (rc = fall_back_to_fds(t, bounded, fid_why, "traced filesystems without an fsid of their own")) < 0)
		return rc;
	for (int i = 0; i < t->nfs; i++) {
		if ((rc = fan_mark(t->fan_fd, t->fs[i].mountpoint)) == 0)
			continue;
		if (t->fid) {
			/* no file handles (EOPNOTSUPP), no fsid (ENODEV), a btrfs subvolume before 6.8 (EXDEV) */
			if ((rc = fall_back_to_fds(t, bounded, fid_why, "a traced filesystem without file handles")) < 0)
				return rc;
			i = -1;
			continue;
		}
		snprintf(err, errlen, "cannot watch %s: %s", t->fs[i].mountpoint, pf_strerror(rc));
		return rc;
	}
	return 0;
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
	const char *fid = getenv("PREFETCH_TRACE_FID");
	t->fid = !(fid && strcmp(fid, "0") == 0);
	struct pf_note fid_why = pf_note_into(t->fid_why, sizeof(t->fid_why));
	if (!t->fid)
		pf_note(&fid_why, "PREFETCH_TRACE_FID=0");
	int rc = fan_init(o->bounded_queue, t->fid);
	if (rc == -EINVAL && t->fid) {
		t->fid = 0;
		pf_note(&fid_why, "no FID mode in this kernel (5.9+)");
		rc = fan_init(o->bounded_queue, 0);
	}
	if (rc < 0) {
		snprintf(err, errlen, "fanotify_init: %s%s", pf_strerror(rc),
			 rc == -EPERM ? " (tracing needs root: CAP_SYS_ADMIN)" : "");
		goto fail;
	}
	t->fan_fd = rc;
	if ((rc = pf_trace_pick_mounts(o, &t->fs, &t->nfs, &t->nskipped, err, errlen)) ||
	    (rc = watch(t, o->bounded_queue, &fid_why, err, errlen)))
		goto fail;
	pf_trace_watch_unmounts(t);
	const char *src = getenv("PREFETCH_TRACE_PAGES");
	struct pf_note pages_why = pf_note_into(t->pages.why, sizeof(t->pages.why));
	pf_trace_pages_start(t, o->pages_mincore || (src && strcmp(src, "mincore") == 0), &pages_why);
	t->max_files = o->max_files ? o->max_files : DEFAULT_MAX_FILES;
	/* FID mode: no fd comes with an event */
	/* the fd limit raised either way: fd mode's reads need it, and FID mode may fall back to them (boot) */
	size_t fd_len = read_len_for_nofile();
	t->read_len = t->fid ? FID_EVENT_BUF / sizeof(struct fanotify_event_metadata) * sizeof(struct fanotify_event_metadata)
			     : fd_len;
	t->ignore_mode = FAN_MARK_IGNORE | FAN_MARK_IGNORED_SURV_MODIFY;
	t->start_ns = pf_monotonic_ns();
	struct timespec now;
	t->start_real_ns = clock_gettime(CLOCK_REALTIME_COARSE, &now) == 0
				   ? (int64_t)now.tv_sec * 1000000000ll + now.tv_nsec
				   : INT64_MAX; /* no clock: nothing counts as written */
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
	pf_fh_index_free(&t->handles);
	pf_dir_index_free(&t->dirs);
	pf_trace_free_mounts(t->fs, t->nfs + t->nskipped);
	free(t);
}
