/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fiemap.h"

#include <errno.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

static size_t fm_size(uint32_t batch)
{
	return sizeof(struct fiemap) + (size_t)batch * sizeof(struct fiemap_extent);
}

int pf_fiemap_open(struct pf_fiemap *w, int fd, uint64_t start, uint64_t len, uint32_t batch)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->next = start;
	w->end = len > UINT64_MAX - start ? UINT64_MAX : start + len;
	w->batch = batch;
	if (!batch)
		return -EINVAL;
	w->fm = malloc(fm_size(batch));
	return w->fm ? 0 : -ENOMEM;
}

int pf_fiemap_next(struct pf_fiemap *w)
{
	w->ext = NULL;
	w->n = 0;
	if (w->done || !w->fm || w->next >= w->end)
		return 0;
	struct fiemap *fm = w->fm;
	memset(fm, 0, fm_size(w->batch)); /* whole: valgrind does not know FIEMAP fills the extents */
	fm->fm_start = w->next;
	fm->fm_length = w->end - w->next;
	fm->fm_extent_count = w->batch;
	if (ioctl(w->fd, FS_IOC_FIEMAP, fm) < 0) {
		w->done = 1;
		return -errno;
	}
	uint32_t k = fm->fm_mapped_extents < w->batch ? fm->fm_mapped_extents : w->batch;
	if (!k) {
		w->done = 1;
		return 0;
	}
	w->ext = fm->fm_extents;
	w->n = k;
	w->from = w->next;
	for (uint32_t i = 0; i < k; i++)
		if (fm->fm_extents[i].fe_flags & FIEMAP_EXTENT_LAST)
			w->done = 1;
	const struct fiemap_extent *last = &fm->fm_extents[k - 1];
	w->next = last->fe_logical + last->fe_length;
	if (w->next <= w->from)
		w->done = 1; /* asking again would get the same batch */
	return 1;
}

void pf_fiemap_close(struct pf_fiemap *w)
{
	free(w->fm);
	w->fm = NULL;
	w->ext = NULL;
	w->n = 0;
}
