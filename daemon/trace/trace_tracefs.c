/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pages the boot asked for, from the page-cache tracepoints (Linux 6.11+): mm_filemap_get_pages (a read:
 * the page range it asks for), mm_filemap_map_pages (a fault on a mapping: the fault-around window mapped from
 * the cache) and mm_filemap_fault (a page not mapped yet).  Kernel readahead and read-around add pages to the
 * cache without any of these, so the ranges they give are what was read, where mincore (trace_residency.c) sees
 * every resident page, readahead windows included.
 *
 * Where.  A trace instance of our own (instances/prefetch-PID): its ring buffer, events and filters are ours
 * alone, so neither a running ftrace session nor another tracer disturbs them, nor we them.  It is removed when
 * tracing ends and on every path out (pf_tracer_close); one left by a tracer that was killed is removed by the
 * next one.  tracefs is used at /sys/kernel/tracing; where nothing is mounted there we mount it, keep fds of its
 * directories, and detach the mount at once: all later access goes through those fds, and the system's mount
 * table is left as it was.  Without tracefs (containers, no /sys), without the events (kernels before 6.11), or
 * without the privilege, the tracer goes on with mincore and says why.
 *
 * Which events.  A filter keeps those of the traced filesystems' devices and drops our own task name: the
 * replay threads of 'prefetchd boot' (they share our name) and the residency pass ask for pages too, and what
 * prefetchd reads is not what the boot used.  The filter is evaluated in the kernel when the event fires, so it
 * sees the real task; the lines are checked again (our pid, our name) in case the kernel refused the filter.
 *
 * Reading.  Each CPU's trace_pipe_raw, the records as the ring buffer holds them (trace_page_raw.c); where that
 * cannot be (see trace_page_line.c), the text of trace_pipe.  The order between CPUs does not matter: the pages
 * of a file are a set (trace_page_table.c), the order of files comes from fanotify.
 *
 * Buffer.  The pipe is read each time the tracer's poll loop turns (at least every 100 ms), so the ring buffer
 * only has to hold what comes between two reads; each event takes 48 bytes in it, and a boot makes one per read()
 * call or fault, not per page.  4 MiB per CPU (80000 events), 64 MiB in all at most (1 MiB per CPU at least),
 * holds whole boots even unread.  Events lost anyway (the buffer overran: its per_cpu stats, or a "[LOST n
 * EVENTS]" line) leave the events' ranges incomplete in an unknown way: the whole trace then takes mincore's.
 * PREFETCH_TRACE_BUFFER_KB=N sets the per-CPU size instead (tests: a tiny buffer to make it overrun). */
#include "trace_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define TRACEFS "/sys/kernel/tracing"
#define TRACEFS_MAGIC_NR 0x74726163
#define BUF_KB_PER_CPU 4096
#define BUF_KB_TOTAL (64 * 1024)
#define BUF_KB_MIN 1024

static const char *const events[] = { "mm_filemap_get_pages", "mm_filemap_map_pages", "mm_filemap_fault" };

/* Write a short text to a file of the instance.  Returns 0 or -errno. */
static int put(int dir, const char *path, const char *text)
{
	int fd = openat(dir, path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = strlen(text);
	ssize_t w = write(fd, text, n);
	int rc = w == (ssize_t)n ? 0 : w < 0 ? -errno : -EIO;
	close(fd);
	return rc;
}

/* Instances named prefetch-PID whose process is gone: a tracer killed before it could remove its own. */
static void remove_stale(int inst_fd)
{
	int fd = openat(inst_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "prefetch-", 9))
			continue;
		long pid = strtol(de->d_name + 9, &end, 10);
		if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		(void)unlinkat(inst_fd, de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* The instances/ directory of tracefs, mounted by us (and detached at once) where nothing is mounted.  Returns
 * its fd, or -errno with the page trace's reason noted to why. */
static int open_instances(struct pf_note *why)
{
	struct statfs sf;
	if (statfs(TRACEFS, &sf) < 0) {
		int rc = -errno;
		pf_note(why, "no " TRACEFS);
		return rc;
	}
	if ((unsigned long)sf.f_type == TRACEFS_MAGIC_NR) {
		int fd = open(TRACEFS "/instances", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int rc = fd < 0 ? -errno : fd;
		if (fd < 0)
			pf_note(why, "%s", rc == -ENOENT ? "tracefs has no instances" : "tracefs not accessible");
		return rc;
	}
	if (mount("nodev", TRACEFS, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		int rc = -errno;
		pf_note(why, "tracefs not mounted, and mounting it failed");
		return rc;
	}
	int fd = open(TRACEFS "/instances", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd < 0 ? -errno : fd;
	(void)umount2(TRACEFS, MNT_DETACH); /* the fd keeps it reachable; nothing else sees our mount */
	if (fd < 0)
		pf_note(why, "tracefs has no instances");
	return rc;
}

static int buffer_kb(void)
{
	/* a test knob: a tiny buffer overruns at once, to check that the loss is seen */
	const char *force = getenv("PREFETCH_TRACE_BUFFER_KB");
	if (force && atoi(force) > 0)
		return atoi(force);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 1)
		ncpu = 1;
	long kb = BUF_KB_TOTAL / ncpu;
	if (kb > BUF_KB_PER_CPU)
		kb = BUF_KB_PER_CPU;
	return (int)(kb < BUF_KB_MIN ? BUF_KB_MIN : kb);
}

/* "(s_dev == A || s_dev == B) && comm != \"NAME\"": the kernel's dev_t is major << 20 | minor; each superblock
 * once (the subvolumes of a btrfs share one). */
static void make_filter(const struct pf_tracer *t, int with_comm, char *buf, size_t len)
{
	size_t used = 0;
	used += (size_t)snprintf(buf + used, len - used, "(");
	for (int i = 0, n = 0; i < t->nfs && used < len; i++) {
		dev_t d = t->fs[i].page_dev;
		int seen = 0;
		for (int j = 0; j < i; j++)
			seen |= t->fs[j].page_dev == d;
		if (!seen)
			used += (size_t)snprintf(buf + used, len - used, "%ss_dev == %u", n++ ? " || " : "",
						 major(d) << 20 | minor(d));
	}
	if (used < len)
		used += (size_t)snprintf(buf + used, len - used, ")");
	if (with_comm && used < len)
		snprintf(buf + used, len - used, " && comm != \"%s\"", t->pages.comm);
}

static void own_comm(char *comm, size_t len)
{
	comm[0] = '\0';
	FILE *f = fopen("/proc/self/comm", "re");
	if (!f)
		return;
	if (fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/* A small text file of the instance (NUL-terminated in buf).  Returns 0 or -errno. */
static int read_text(int dir, const char *path, char *buf, size_t len)
{
	int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t used = 0;
	ssize_t n;
	while (used + 1 < len && (n = read(fd, buf + used, len - 1 - used)) > 0)
		used += (size_t)n;
	close(fd);
	buf[used] = '\0';
	return used ? 0 : -EIO;
}

static void raw_close(struct pf_page_trace *p)
{
	for (int i = 0; i < p->ncpu; i++)
		close(p->cpu_fd[i]);
	free(p->cpu_fd);
	free(p->raw_buf);
	p->cpu_fd = NULL;
	p->raw_buf = NULL;
	p->ncpu = 0;
	p->raw = 0;
}

/* The layouts of the events' records and of a buffer page. */
static int raw_formats(struct pf_page_trace *p)
{
	char text[4096], path[128];
	/* an instance's events/ may lack header_page: the top level's is the same */
	if ((read_text(p->dir_fd, "events/header_page", text, sizeof(text)) &&
	     read_text(p->inst_fd, "../events/header_page", text, sizeof(text))) ||
	    pf_page_raw_header(text, &p->commit_size, &p->data_off))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), "events/filemap/%s/format", events[i]);
		if (read_text(p->dir_fd, path, text, sizeof(text)) || pf_page_raw_format(text, &p->fmt[i]))
			return -EINVAL;
	}
	/* one read returns one sub-buffer (buffer_subbuf_size_kb, 6.8+; a page before) */
	size_t len = (size_t)p->page;
	if (read_text(p->dir_fd, "buffer_subbuf_size_kb", text, sizeof(text)) == 0 && atoi(text) > 0)
		len = (size_t)atoi(text) * 1024;
	p->raw_len = len < p->page ? (size_t)p->page : len;
	return (p->raw_buf = malloc(p->raw_len)) ? 0 : -ENOMEM;
}

/* The per-CPU trace_pipe_raw files, where the records are read as they are (trace_page_raw.c).  Needs the comm
 * in the filter: a record has no task name, and our threads' events are told by it.  PREFETCH_TRACE_RAW=0
 * keeps the text pipe (tests).  Returns 0 or -errno (then the text pipe). */
static int raw_open(struct pf_tracer *t)
{
	struct pf_page_trace *p = &t->pages;
	const char *env = getenv("PREFETCH_TRACE_RAW");
	if (!p->comm_in_filter || (env && strcmp(env, "0") == 0) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return -ENOTSUP;
	int rc = raw_formats(p);
	int fd = rc ? -1 : openat(p->dir_fd, "per_cpu", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return rc ? rc : -ENOENT;
	}
	struct dirent *de;
	while ((de = readdir(d)) && rc == 0) {
		char path[300];
		if (strncmp(de->d_name, "cpu", 3))
			continue;
		int *v = realloc(p->cpu_fd, (size_t)(p->ncpu + 1) * sizeof(*v));
		if (!v) {
			rc = -ENOMEM;
			break;
		}
		p->cpu_fd = v;
		snprintf(path, sizeof(path), "per_cpu/%s/trace_pipe_raw", de->d_name);
		int cfd = openat(p->dir_fd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (cfd < 0)
			rc = -errno;
		else
			p->cpu_fd[p->ncpu++] = cfd;
	}
	closedir(d);
	return rc ? rc : p->ncpu ? 0 : -ENOENT;
}

/* The instance sized, the tracepoints filtered and enabled, the pipe opened.  Returns 0, or -errno with which
 * step failed noted to why. */
static int setup(struct pf_tracer *t, struct pf_note *why)
{
	struct pf_page_trace *p = &t->pages;
	char path[128], num[32], filter[PF_MAX_FS * 32 + 64];
	snprintf(num, sizeof(num), "%d", buffer_kb());
	int rc = put(p->dir_fd, "buffer_size_kb", num);
	if (rc < 0) {
		pf_note(why, "the trace buffer could not be sized");
		return rc;
	}
	p->comm_in_filter = 1;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), "events/filemap/%s/filter", events[i]);
		make_filter(t, 1, filter, sizeof(filter));
		if (!p->comm[0] || put(p->dir_fd, path, filter) < 0) { /* no comm filter: our lines dropped in take_line */
			p->comm_in_filter = 0;
			make_filter(t, 0, filter, sizeof(filter));
			(void)put(p->dir_fd, path, filter);
		}
		snprintf(path, sizeof(path), "events/filemap/%s/enable", events[i]);
		rc = put(p->dir_fd, path, "1");
		if (rc < 0) {
			pf_note(why, "%s", rc == -ENOENT
						   ? "this kernel has no page-cache tracepoints (mm_filemap_get_pages: 6.11+)"
						   : "the page-cache tracepoints could not be enabled");
			return rc;
		}
	}
	if (raw_open(t) == 0) {
		p->raw = 1;
		return 0;
	}
	raw_close(p);
	p->pipe_fd = openat(p->dir_fd, "trace_pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (p->pipe_fd < 0) {
		rc = -errno;
		pf_note(why, "the trace pipe could not be opened");
		return rc;
	}
	return 0;
}

void pf_trace_pages_start(struct pf_tracer *t, int force_mincore, struct pf_note *why)
{
	struct pf_page_trace *p = &t->pages;
	p->state = PF_PAGES_OFF;
	p->inst_fd = p->dir_fd = p->pipe_fd = -1;
	if (force_mincore) {
		pf_note(why, "mincore asked for");
		return;
	}
	long pg = sysconf(_SC_PAGESIZE);
	p->page = pg > 0 ? (uint64_t)pg : 4096;
	own_comm(p->comm, sizeof(p->comm));
	if (!(p->fs_events = calloc((size_t)(t->nfs ? t->nfs : 1), sizeof(*p->fs_events)))) {
		pf_note(why, "out of memory");
		return;
	}
	if ((p->inst_fd = open_instances(why)) < 0)
		return;
	remove_stale(p->inst_fd);
	snprintf(p->name, sizeof(p->name), "prefetch-%ld", (long)t->self);
	if (mkdirat(p->inst_fd, p->name, 0700) < 0) {
		p->name[0] = '\0';
		pf_note(why, "a trace instance could not be made");
		return;
	}
	p->dir_fd = openat(p->inst_fd, p->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->dir_fd < 0) {
		pf_note(why, "the trace instance could not be opened");
		pf_trace_pages_close(t);
		return;
	}
	if (setup(t, why) < 0) {
		pf_trace_pages_close(t);
		return;
	}
	p->state = PF_PAGES_ON;
}

static void take_event(void *ctx, const struct pf_page_event *e);

static void take_line(struct pf_tracer *t, const char *line)
{
	struct pf_page_trace *p = &t->pages;
	struct pf_page_event ev;
	int kind = pf_page_line_parse(line, p->page, &ev);
	if (kind == PF_PAGE_LINE_LOST || kind == PF_PAGE_LINE_BAD) {
		p->state = PF_PAGES_LOST; /* a line we cannot read is an event lost too */
		return;
	}
	if (kind == PF_PAGE_LINE_EVENT)
		take_event(t, &ev);
}

/* One event, from a line or a raw record (comm empty there: only where the kernel filters by it). */
static void take_event(void *ctx, const struct pf_page_event *e)
{
	struct pf_tracer *t = ctx;
	struct pf_page_trace *p = &t->pages;
	struct pf_page_event ev = *e;
	if (p->state != PF_PAGES_ON)
		return;
	/* The comm a line prints is not the event's: the kernel looks the pid up in its small cache of task names
	 * when the line is read, and a stale entry there can name another task, whose pages we would drop.  So
	 * it is compared only where the kernel could not filter. */
	if (ev.pid == t->self || (!p->comm_in_filter && ev.comm[0] && strcmp(ev.comm, p->comm) == 0)) {
		t->st.own_page_events++;
		return;
	}
	dev_t dev = makedev(ev.major, ev.minor); /* the superblock's: one for all subvolumes of a btrfs */
	if (!pf_trace_fs_pages_of(t, dev))
		return;
	if (pf_page_table_add(&p->table, dev, (ino_t)ev.ino, ev.start, ev.end) < 0) {
		p->state = PF_PAGES_LOST; /* out of memory: the events are incomplete from here on */
		return;
	}
	for (int i = 0; i < t->nfs; i++)
		if (t->fs[i].page_dev == dev)
			p->fs_events[i]++;
	t->st.page_events++;
}

/* Split what was read into lines; a line cut by the end of the read waits in carry for the rest. */
static void take(struct pf_tracer *t, const char *buf, size_t len)
{
	struct pf_page_trace *p = &t->pages;
	size_t start = 0;
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		size_t n = i - start;
		if (p->ncarry + n < sizeof(p->carry)) {
			memcpy(p->carry + p->ncarry, buf + start, n);
			p->carry[p->ncarry + n] = '\0';
			if (p->state == PF_PAGES_ON)
				take_line(t, p->carry);
		} else if (p->state == PF_PAGES_ON) {
			p->state = PF_PAGES_LOST; /* no event line is this long */
		}
		p->ncarry = 0;
		start = i + 1;
	}
	size_t rest = len - start;
	if (p->ncarry + rest < sizeof(p->carry)) {
		memcpy(p->carry + p->ncarry, buf + start, rest);
		p->ncarry += rest;
	} else {
		p->ncarry = sizeof(p->carry) - 1; /* overlong: dropped when its end comes (above) */
	}
}

/* raw: what each CPU's buffer holds, a sub-buffer per read (at most max_reads in all, 0 = until empty) */
static void raw_read(struct pf_tracer *t, int max_reads)
{
	struct pf_page_trace *p = &t->pages;
	int reads = 0;
	for (int c = 0; c < p->ncpu; c++) {
		while (max_reads <= 0 || reads < max_reads) {
			ssize_t n = read(p->cpu_fd[c], p->raw_buf, p->raw_len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break; /* EAGAIN: empty for now */
			reads++;
			int missed = 0;
			if (pf_page_raw_parse(p->raw_buf, (size_t)n, p->commit_size, p->data_off, p->fmt,
					      sizeof(p->fmt) / sizeof(p->fmt[0]), p->page, take_event, t, &missed) < 0 ||
			    missed)
				p->state = p->state == PF_PAGES_ON ? PF_PAGES_LOST : p->state;
		}
	}
}

void pf_trace_pages_read(struct pf_tracer *t, int max_reads)
{
	struct pf_page_trace *p = &t->pages;
	if (p->raw) {
		raw_read(t, max_reads);
		return;
	}
	if (p->pipe_fd < 0)
		return;
	char buf[8192];
	for (int reads = 0; max_reads <= 0 || reads < max_reads; reads++) {
		ssize_t n = read(p->pipe_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* EAGAIN: empty for now */
		take(t, buf, (size_t)n);
	}
}

/* The ring buffer's own count of events it lost: per CPU, "overrun" (overwritten before being read) and
 * "dropped events" (not written), into *out.  0, or -errno when the counters cannot be read (*out 0). */
static int lost_in_buffer(int dir_fd, unsigned long *out)
{
	*out = 0;
	int fd = openat(dir_fd, "per_cpu", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int rc = -errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	unsigned long lost = 0;
	int seen = 0, rc = 0;
	struct dirent *de;
	while (!rc && (de = readdir(d))) {
		if (strncmp(de->d_name, "cpu", 3))
			continue;
		char path[300], line[128];
		snprintf(path, sizeof(path), "per_cpu/%s/stats", de->d_name);
		int sfd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
		FILE *f = sfd >= 0 ? fdopen(sfd, "re") : NULL;
		if (!f) {
			rc = -errno;
			if (sfd >= 0)
				close(sfd);
			break;
		}
		seen++;
		while (fgets(line, sizeof(line), f)) {
			unsigned long v;
			if (sscanf(line, "overrun: %lu", &v) == 1 || sscanf(line, "dropped events: %lu", &v) == 1)
				lost += v;
		}
		fclose(f);
	}
	closedir(d);
	if (!rc && !seen)
		rc = -ENOENT;
	if (!rc)
		*out = lost;
	return rc;
}

void pf_trace_pages_stop(struct pf_tracer *t)
{
	struct pf_page_trace *p = &t->pages;
	if (p->state == PF_PAGES_ON || p->state == PF_PAGES_LOST) {
		/* nothing more is written from here on, so reading until empty ends */
		(void)put(p->dir_fd, "tracing_on", "0");
		pf_trace_pages_read(t, 0);
		unsigned long lost;
		if (lost_in_buffer(p->dir_fd, &lost) || lost) /* not known counts as lost */
			p->state = PF_PAGES_LOST;
		t->st.page_events_lost = lost;
		if (p->state == PF_PAGES_ON)
			p->state = PF_PAGES_DONE;
	}
	pf_trace_pages_close(t);
}

void pf_trace_pages_close(struct pf_tracer *t)
{
	struct pf_page_trace *p = &t->pages;
	raw_close(p);
	if (p->pipe_fd >= 0)
		close(p->pipe_fd);
	if (p->dir_fd >= 0)
		close(p->dir_fd);
	p->pipe_fd = p->dir_fd = -1;
	/* the instance goes with its buffer and events (an open file of it would make this fail: all closed) */
	if (p->inst_fd >= 0 && p->name[0])
		(void)unlinkat(p->inst_fd, p->name, AT_REMOVEDIR);
	p->name[0] = '\0';
	if (p->inst_fd >= 0)
		close(p->inst_fd);
	p->inst_fd = -1;
	if (p->state == PF_PAGES_ON)
		p->state = PF_PAGES_LOST; /* closed without a stop: the events were not all read */
}

int pf_trace_pages_cover(const struct pf_tracer *t, int fsi)
{
	return t->pages.state == PF_PAGES_DONE && fsi >= 0 && fsi < t->nfs && t->pages.fs_events[fsi] > 0;
}
