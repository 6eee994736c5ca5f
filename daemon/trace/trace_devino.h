/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An index from a file's (device, inode) to its position in an array the caller keeps: the tracer's entries and
 * the page-cache events' files are both looked up this way, once per event. */
#ifndef PREFETCH_TRACE_DEVINO_H
#define PREFETCH_TRACE_DEVINO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pf_devino_slot {
	uint64_t dev, ino;
	size_t pos1; /* position + 1; 0: empty */
};

/* Zero-initialised: empty.  Open addressing, kept at most half full. */
struct pf_devino_index {
	struct pf_devino_slot *slot;
	size_t cap, n;
};

/* The position stored for (dev, ino), or -1. */
long pf_devino_get(const struct pf_devino_index *x, dev_t dev, ino_t ino);
/* Store pos for (dev, ino), which must not be in the index yet.  Returns 0 or -ENOMEM (the index unchanged). */
int pf_devino_put(struct pf_devino_index *x, dev_t dev, ino_t ino, size_t pos);
void pf_devino_free(struct pf_devino_index *x);

#endif
