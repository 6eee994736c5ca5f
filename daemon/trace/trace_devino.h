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

/* The position stored for (dev, ino): 1 with it in *pos, or 0 when there is none. */
int pf_devino_get(const struct pf_devino_index *x, dev_t dev, ino_t ino, size_t *pos);
/* Store pos for (dev, ino), which must not be in the index yet.  Returns 0 or -ENOMEM (the index unchanged). */
int pf_devino_put(struct pf_devino_index *x, dev_t dev, ino_t ino, size_t pos);
/* The same table keyed by any pair of numbers, more than one position to a key (trace_dirindex.c: a path's hash,
 * the paths compared by the caller).  pf_devino_put_key stores pos under (a, b); pf_devino_next gives the
 * positions stored under (a, b) one per call (*cursor 0 at first): 1 with the next in *pos, then 0.  b takes an
 * inode number's place: its low bits pick the slot (a hash goes there, not in a). */
int pf_devino_put_key(struct pf_devino_index *x, uint64_t a, uint64_t b, size_t pos);
int pf_devino_next(const struct pf_devino_index *x, uint64_t a, uint64_t b, size_t *cursor, size_t *pos);
void pf_devino_free(struct pf_devino_index *x);

#endif
