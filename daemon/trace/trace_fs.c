/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the tracer's event paths (fanotify, tracefs page events, handles) ask about a file they are given: on
 * which traced filesystem it is, its path, its generation. */
#include "trace_internal.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int pf_trace_fs_index(const struct pf_tracer *t, dev_t dev, int *fsi)
{
	for (int i = 0; i < t->nfs; i++)
		if (t->fs[i].dev == dev) {
			*fsi = i;
			return 1;
		}
	return 0;
}

int pf_trace_fs_pages_of(const struct pf_tracer *t, dev_t page_dev)
{
	for (int i = 0; i < t->nfs; i++)
		if (t->fs[i].page_dev == page_dev)
			return 1;
	return 0;
}

char *pf_trace_fd_path(const struct pf_tracer *t, int fd)
{
	char link[64], buf[PATH_MAX];
	/* relative to a held /proc/self/fd: one name looked up per call, not five */
	snprintf(link, sizeof(link), t->proc_fd >= 0 ? "%d" : "/proc/self/fd/%d", fd);
	ssize_t l = readlinkat(t->proc_fd >= 0 ? t->proc_fd : AT_FDCWD, link, buf, sizeof(buf) - 1);
	if (l <= 0 || (size_t)l >= PF_MAX_PATH)
		return NULL;
	buf[l] = '\0';
	static const char deleted[] = " (deleted)";
	size_t dl = sizeof(deleted) - 1;
	if (buf[0] != '/' || ((size_t)l > dl && strcmp(buf + l - dl, deleted) == 0))
		return NULL;
	return strdup(buf);
}

uint32_t pf_trace_generation(int fd)
{
	int gen = 0;
	if (ioctl(fd, FS_IOC_GETVERSION, &gen) < 0)
		return 0; /* not supported by this filesystem */
	return (uint32_t)gen;
}
