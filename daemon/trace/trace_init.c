/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What init loaded before tracing could see it.  Started from the initramfs, prefetchd has its fanotify marks in
 * place a few hundred milliseconds after init was executed, so init's binary and libraries (the first reads of
 * the boot, all made before systemd starts anything) reached a trace only when some other program opened them
 * later, late in the order, and the systemd binary never: the replay then read them in the middle of its sweep,
 * with init waiting for them.  When tracing ends, /proc/1/maps names them: they are recorded (flagged
 * PF_FILE_INIT) and put first. */
#include "trace_internal.h"

#include "array.h"
#include "format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* A mapped file tracing never saw: open it by the path maps gives (ours: same root), check it is that inode. */
static struct pf_trace_entry *record(struct pf_tracer *t, const char *path, dev_t dev, ino_t ino, int fsi)
{
	if (t->nents >= t->max_files) {
		pf_trace_cap_reached(t);
		t->st.dropped++;
		return NULL;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME | O_NONBLOCK);
	if (fd < 0 && errno == EPERM)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return NULL;
	char *p = NULL;
	if (fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino || !S_ISREG(st.st_mode) ||
	    !(p = pf_trace_fd_path(t, fd))) {
		close(fd);
		return NULL;
	}
	struct pf_trace_entry e = { .dev = dev, .ino = ino, .fh = pf_trace_handle_of(fd), .fs = (uint32_t)fsi,
				    .generation = pf_trace_generation(fd), .path = p };
	close(fd); /* opened again with the others for the residency pass */
	struct pf_trace_entry *r = pf_trace_append(t, &e);
	if (!r) {
		free(e.fh);
		free(p);
	}
	return r;
}

/* The traced filesystem of a mapped file, 1 with its index in *fsi and its st_dev in *dev, or 0.  maps names a
 * file by its superblock's device, which on btrfs is no subvolume's st_dev: there the path's, same inode. */
static int mapped_fs(const struct pf_tracer *t, const char *path, ino_t ino, dev_t *dev, int *fsi)
{
	struct stat st;
	if (pf_trace_fs_index(t, *dev, fsi))
		return 1;
	if (!pf_trace_fs_pages_of(t, *dev) || stat(path, &st) < 0 || st.st_ino != ino ||
	    !pf_trace_fs_index(t, st.st_dev, fsi) || t->fs[*fsi].page_dev != *dev)
		return 0;
	*dev = st.st_dev;
	return 1;
}

int pf_trace_init_files(struct pf_tracer *t, const char *maps, size_t **idx, size_t *n)
{
	*idx = NULL;
	*n = 0;
	FILE *f = fopen(maps, "re");
	if (!f)
		return 0; /* no such process, or not ours to read: the order stays as traced */
	size_t *v = NULL, cap = 0;
	char *line = NULL;
	size_t linecap = 0;
	int rc = 0;
	while (getline(&line, &linecap, f) > 0) {
		unsigned maj, min;
		unsigned long long ino;
		int pathat = 0;
		/* start-end perms offset major:minor inode path */
		if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu %n", &maj, &min, &ino, &pathat) != 3 || !ino || !pathat ||
		    line[pathat] != '/')
			continue;
		char *path = line + pathat;
		path[strcspn(path, "\n")] = '\0';
		dev_t dev = makedev(maj, min);
		int fsi;
		if (strstr(path, " (deleted)") || !mapped_fs(t, path, (ino_t)ino, &dev, &fsi))
			continue;
		struct pf_trace_entry *e = pf_trace_lookup(t, dev, (ino_t)ino);
		if (!e && !(e = record(t, path, dev, (ino_t)ino, fsi)))
			continue;
		if (e->flags & PF_FILE_INIT)
			continue; /* a file maps in several pieces: listed at its first */
		if ((rc = PF_ARRAY_RESERVE(v, cap, *n + 1, 32)))
			break;
		e->flags |= PF_FILE_INIT;
		e->first_ns = 0; /* needed when the boot began, whenever tracing first saw it */
		v[(*n)++] = (size_t)(e - t->ents);
	}
	free(line);
	fclose(f);
	if (rc) {
		free(v);
		*n = 0;
		return rc;
	}
	*idx = v;
	return 0;
}
