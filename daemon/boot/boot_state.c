/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_state.h"
#include "array.h"
#include "boot_log.h"
#include "format.h"
#include "safe_file.h"
#include "state_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void join(char *out, const char *dir, const char *name)
{
	/* config paths are < 256 bytes, so this never truncates; checked all the same */
	if (snprintf(out, PF_BOOT_PATH, "%s/%s", dir, name) >= PF_BOOT_PATH)
		out[0] = '\0';
}

void pf_boot_paths_init(struct pf_boot_paths *p, const struct pf_config *cfg)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->state, sizeof(p->state), "%s", cfg->state_dir);
	snprintf(p->runtime, sizeof(p->runtime), "%s", cfg->runtime_dir);
	join(p->traces, p->state, "traces");
	join(p->layout, p->state, "layout");
	join(p->boottime, p->state, "boottime.log");
	join(p->reorder_armed, p->state, "reorder-armed");
	join(p->reorder_log, p->state, "reorder.log");
	join(p->reorder_outcome, p->state, "reorder-outcome");
	join(p->reorder_placed, p->state, "reorder-placed");
	join(p->pidfile, p->runtime, "prefetchd.pid");
	join(p->boot_end, p->runtime, "boot-end");
	join(p->pending, p->runtime, "pending");
	join(p->pending_traces, p->pending, "traces");
	join(p->pending_boottime, p->pending, "boottime.log");
}

int pf_boot_dir_writable(const char *dir)
{
	int rc = pf_mkdir(dir, 0700); /* not its parents: a /var not mounted yet is not written under */
	if (rc)
		return rc;
	int fd = pf_state_dir_open(dir);
	if (fd < 0)
		return fd;
	rc = faccessat(fd, ".", W_OK, AT_EACCESS) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

int pf_boot_dirs_trusted(const struct pf_boot_paths *p, char *err, size_t errlen)
{
	const char *dirs[] = { p->state, p->traces };
	err[0] = '\0';
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int fd = pf_state_dir_open(dirs[i]);
		if (fd >= 0) {
			close(fd);
		} else if (fd == PF_EUNSAFE) {
			pf_state_dir_why(dirs[i], err, errlen);
			return fd;
		}
	}
	return 0;
}

void pf_trace_name(char *buf, size_t len, int64_t when, const char *boot_id)
{
	snprintf(buf, len, "trace-%" PRId64 "-%s.pf", when, boot_id && boot_id[0] ? boot_id : "-");
}

/* Is name a trace's, "trace-<time>-...pf"?  1 with its time in *t, or 0. */
static int trace_time(const char *name, int64_t *t)
{
	size_t len = strlen(name);
	if (strncmp(name, "trace-", 6) != 0 || len < 10 || strcmp(name + len - 3, ".pf") != 0)
		return 0;
	char *end;
	errno = 0;
	long long v = strtoll(name + 6, &end, 10);
	if (errno || end == name + 6 || *end != '-' || v < 0)
		return 0;
	*t = v;
	return 1;
}

/* One trace in the listing: its name, the time in it and the file's modification time. */
struct trace_item {
	char *name;
	int64_t t;
	int64_t mtime_ns;
};

/* By the time in the name; within one second (several boots' traces: a test's scripted boots, a machine without a
 * real-time clock) by which file was written last, the name last: "-2", "-3" suffixes and other boots' ids do not
 * sort by when they were written. */
static int by_time(const void *a, const void *b)
{
	const struct trace_item *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

void pf_trace_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int pf_traces_list(const char *dir, char ***names, size_t *n)
{
	*names = NULL;
	*n = 0;
	int err;
	DIR *d = pf_state_opendir(dir, &err);
	if (!d)
		return err == -ENOENT ? 0 : err;
	struct trace_item *items = NULL;
	size_t cap = 0, count = 0;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		int64_t t;
		struct stat st;
		if (!trace_time(e->d_name, &t))
			continue;
		if ((rc = PF_ARRAY_RESERVE(items, cap, count + 1, 16)))
			break;
		/* not followed: a link is no trace of ours (the loader refuses it too); it sorts as written at 0 */
		int64_t mt = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
				     ? (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec
				     : 0;
		items[count] = (struct trace_item){ .name = strdup(e->d_name), .t = t, .mtime_ns = mt };
		if (!items[count].name) {
			rc = -ENOMEM;
			break;
		}
		count++;
	}
	closedir(d);
	if (!rc && count) {
		qsort(items, count, sizeof(*items), by_time);
		*names = malloc(count * sizeof(char *));
		if (!*names)
			rc = -ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		if (rc)
			free(items[i].name);
		else
			(*names)[i] = items[i].name;
	}
	free(items);
	if (!rc)
		*n = count;
	return rc;
}

int pf_traces_rotate(const char *dir, size_t keep)
{
	char **names;
	size_t n;
	int rc = pf_traces_list(dir, &names, &n);
	if (rc)
		return rc;
	int removed = 0;
	for (size_t i = 0; i + keep < n; i++) {
		char path[PF_BOOT_PATH];
		join(path, dir, names[i]);
		int r = pf_state_unlink(path);
		if (r == 0)
			removed++;
		else if (r != -ENOENT && rc == 0)
			rc = r;
	}
	pf_trace_names_free(names, n);
	return rc ? rc : removed;
}

/* copy then unlink: the runtime dir is another filesystem (tmpfs), rename() cannot cross */
static int move_file(const char *from, const char *to)
{
	void *buf;
	size_t len;
	int rc = pf_state_read(from, 1u << 30, &buf, &len);
	if (rc)
		return rc;
	rc = pf_state_write(to, buf, len, 0600);
	free(buf);
	if (rc == 0)
		pf_state_unlink(from);
	return rc;
}

int pf_boot_flush_pending(const struct pf_boot_paths *p)
{
	int moved = 0, rc = 0;
	char **names;
	size_t n;
	int lrc = pf_traces_list(p->pending_traces, &names, &n);
	if (lrc)
		return lrc;
	if (n && (rc = pf_state_mkdir(p->traces, 0700))) {
		pf_trace_names_free(names, n);
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		char from[PF_BOOT_PATH], to[PF_BOOT_PATH];
		join(from, p->pending_traces, names[i]);
		join(to, p->traces, names[i]);
		int r = move_file(from, to);
		if (r == 0)
			moved++;
		else if (rc == 0)
			rc = r;
	}
	pf_trace_names_free(names, n);

	struct pf_boot_record *recs;
	size_t nrec, bad;
	int r = pf_boottime_load(p->pending_boottime, &recs, &nrec, &bad);
	if (r == 0) {
		size_t i;
		for (i = 0; i < nrec; i++)
			if ((r = pf_boottime_append(p->boottime, &recs[i])))
				break;
		free(recs);
		if (i == nrec) {
			pf_state_unlink(p->pending_boottime);
			moved += (int)nrec;
		} else if (rc == 0) {
			rc = r; /* keep the buffer: appending it again later may duplicate some lines, never lose them */
		}
	} else if (r != -ENOENT && rc == 0) {
		rc = r;
	}
	return rc ? rc : moved;
}
