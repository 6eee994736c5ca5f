/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "trace_devino.h"

#include <errno.h>
#include <stdlib.h>

/* Inode numbers that differ only in their low 4 bits share a run of 16 slots: files created together, which a
 * boot tends to use together, are looked up in the same cache lines (the table outgrows the caches at tens of
 * thousands of files).  The rest of the number and the device are mixed as before, so that inode numbers a
 * power of two apart (the same place in other block groups) spread over the table. */
#define RUN 16u

static size_t hash_of(uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino / RUN) * 0x9E3779B97F4A7C15ull ^ dev * 0xC2B2AE3D27D4EB4Full;
	h ^= h >> 29;
	return (size_t)(h - h % RUN + ino % RUN);
}

int pf_devino_next(const struct pf_devino_index *x, uint64_t a, uint64_t b, size_t *cursor, size_t *pos)
{
	if (!x->cap)
		return 0;
	size_t i = *cursor ? *cursor : (hash_of(a, b) & (x->cap - 1)) + 1; /* slot + 1 to look at next */
	for (;; i = i % x->cap + 1) {
		const struct pf_devino_slot *s = &x->slot[i - 1];
		if (!s->pos1)
			return 0;
		if (s->dev == a && s->ino == b) {
			*cursor = i % x->cap + 1;
			*pos = s->pos1 - 1;
			return 1;
		}
	}
}

int pf_devino_get(const struct pf_devino_index *x, dev_t dev, ino_t ino, size_t *pos)
{
	size_t cursor = 0;
	return pf_devino_next(x, (uint64_t)dev, (uint64_t)ino, &cursor, pos);
}

static void place(struct pf_devino_slot *slot, size_t cap, const struct pf_devino_slot *s)
{
	size_t i = hash_of(s->dev, s->ino) & (cap - 1);
	while (slot[i].pos1)
		i = (i + 1) & (cap - 1);
	slot[i] = *s;
}

int pf_devino_put_key(struct pf_devino_index *x, uint64_t a, uint64_t b, size_t pos)
{
	if ((x->n + 1) * 2 > x->cap) {
		size_t ncap = x->cap ? x->cap * 2 : 1024;
		struct pf_devino_slot *slot = calloc(ncap, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		for (size_t i = 0; i < x->cap; i++)
			if (x->slot[i].pos1)
				place(slot, ncap, &x->slot[i]);
		free(x->slot);
		x->slot = slot;
		x->cap = ncap;
	}
	place(x->slot, x->cap, &(struct pf_devino_slot){ a, b, pos + 1 });
	x->n++;
	return 0;
}

int pf_devino_put(struct pf_devino_index *x, dev_t dev, ino_t ino, size_t pos)
{
	return pf_devino_put_key(x, (uint64_t)dev, (uint64_t)ino, pos);
}

void pf_devino_free(struct pf_devino_index *x)
{
	free(x->slot);
	*x = (struct pf_devino_index){ 0 };
}
