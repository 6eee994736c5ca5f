/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recorded entries: looked up by (dev, ino), appended (and indexed by inode, by path for directories, by
 * handle in FID mode), the directories above a new file recorded by path, the ignore marks that keep a recorded
 * inode's later opens from being events, and the file cap.  Both event paths (fd mode, trace_fanotify.c; FID
 * mode, trace_fid.c) and init's files (trace_init.c) record through here. */
#include "trace_internal.h"

#include "array.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_NEW_PARENTS 128 /* directories recorded above one file at most (deeper ones: outermost left out) */

struct pf_trace_entry *pf_trace_lookup(struct pf_tracer *t, dev_t dev, ino_t ino)
{
	size_t pos;
	return pf_devino_get(&t->index, dev, ino, &pos) ? &t->ents[pos] : NULL;
}

struct pf_trace_entry *pf_trace_append(struct pf_tracer *t, const struct pf_trace_entry *src)
{
	/* a pending entry (FID mode) has no inode number yet: indexed by it when resolved */
	if (PF_ARRAY_RESERVE(t->ents, t->cap_ents, t->nents + 1, 256) ||
	    (!src->pending && pf_devino_put(&t->index, src->dev, src->ino, t->nents)))
		return NULL;
	t->ents[t->nents] = *src;
	if (src->flags & PF_FILE_DIR)
		(void)pf_dir_index_put(&t->dirs, t->ents, t->nents); /* without it: a stat in add_parents */
	if (t->fid)
		(void)pf_fh_index_put(&t->handles, t->ents, t->nents); /* without it: a second entry, left out when
									* resolved */
	return &t->ents[t->nents++];
}

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

/* Stop the kernel from reporting further opens of the inode (those that would tell us nothing new). */
void pf_trace_ignore_at(struct pf_tracer *t, int dirfd, const char *name, uint32_t flags)
{
	if (!t->ignore_mode || t->fan_fd < 0)
		return;
	uint64_t mask = FAN_OPEN;
	if (flags & PF_FILE_EXEC)
		mask |= FAN_OPEN_EXEC;
	if (flags & PF_FILE_DIR)
		mask |= FAN_ONDIR;
	while (fanotify_mark(t->fan_fd, FAN_MARK_ADD | t->ignore_mode, mask, dirfd, name) < 0) {
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

static int open_dir(const char *dir, const struct stat *want)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	int fd = open(dir, flags | O_NOATIME);
	if (fd < 0)
		fd = open(dir, flags);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != want->st_dev || st.st_ino != want->st_ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void pf_trace_add_parents(struct pf_tracer *t, const char *path, dev_t dev, int fsi, uint64_t now)
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
		/* opened briefly: generation, handle and ignore mark need an fd; closed right after.  Not through
		 * a link, and the directory stat showed. */
		int fd = open_dir(dir, &st);
		char *p = fd >= 0 ? strdup(dir) : NULL;
		if (!p) {
			if (fd >= 0)
				close(fd);
			t->st.dropped++;
			break;
		}
		fresh[nf] = (struct pf_trace_entry){ .dev = dev, .ino = st.st_ino, .fh = pf_trace_handle_of(fd),
						     .fs = (uint32_t)fsi, .flags = PF_FILE_DIR,
						     .generation = pf_trace_generation(fd), .first_ns = now, .path = p,
						     .marked = 1 };
		pf_trace_snapshot(t, &fresh[nf], fd, &st);
		pf_trace_ignore_at(t, fd, NULL, PF_FILE_DIR);
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
