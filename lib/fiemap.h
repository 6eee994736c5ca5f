/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A file's extent map (FS_IOC_FIEMAP), walked a batch of extents per call. */
#ifndef PREFETCH_FIEMAP_H
#define PREFETCH_FIEMAP_H

#include <linux/fiemap.h>
#include <stdint.h>

/* Extents whose fe_physical is no place on the device a reader could seek to. */
#define PF_FIEMAP_NO_PLACE                                                                                  \
	(FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE | \
	 FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_ENCRYPTED)

struct pf_fiemap {
	const struct fiemap_extent *ext; /* the current batch: ext[0 .. n), in logical order, as the kernel gave it */
	uint32_t n;
	uint64_t from;                   /* the byte the current batch was asked from */
	/* the walk's own */
	int fd, done;
	uint32_t batch;
	uint64_t next, end;
	struct fiemap *fm;
};

/* Starts a walk over the extents of fd that overlap [start, start + len) (to the end of the 64-bit range if
 * that overflows), up to batch extents per call.  No call is made yet.  Returns 0, -EINVAL (batch 0) or
 * -ENOMEM; pf_fiemap_close is safe after either. */
int pf_fiemap_open(struct pf_fiemap *w, int fd, uint64_t start, uint64_t len, uint32_t batch);

/* The next batch into w->ext, w->n and w->from: returns 1.  The following batch is asked from where the last
 * extent of this one ends.  Returns 0 when there is no more: the range is covered, the kernel mapped nothing
 * more, a batch held an extent flagged FIEMAP_EXTENT_LAST, or the map did not advance.  Returns -errno when
 * the call fails (-EOPNOTSUPP: the filesystem has no FIEMAP; -ENOTTY: fd is no file that has one).  After 0
 * or an error, every further call returns 0.  Flags are handed out untouched: what they mean is the
 * caller's. */
int pf_fiemap_next(struct pf_fiemap *w);

/* Frees what the walk holds. */
void pf_fiemap_close(struct pf_fiemap *w);

#endif
