/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recorded directories by path: the tracer records the directories above each new file (trace_fanotify.c,
 * add_parents), and the one right above is nearly always recorded already.  Looking its path up here instead of
 * stat()ing it saves a path walk per file.  A directory renamed while tracing keeps its old path here: a new
 * directory made under that name is then taken for the recorded one and left out, the same as one seen after
 * the file cap. */
#include "trace_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_of(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int same(const struct pf_trace_entry *e, const char *path, size_t len)
{
	return e->path && strncmp(e->path, path, len) == 0 && e->path[len] == '\0';
}

long pf_dir_index_get(const struct pf_dir_index *x, const struct pf_trace_entry *ents, const char *path)
{
	if (!x->cap)
		return -1;
	size_t len = strlen(path);
	uint64_t h = hash_of(path, len);
	for (size_t i = h & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		const struct pf_dir_slot *s = &x->slot[i];
		if (!s->pos1)
			return -1;
		if (s->hash == h && same(&ents[s->pos1 - 1], path, len))
			return (long)(s->pos1 - 1);
	}
}

static void place(struct pf_dir_slot *slot, size_t cap, const struct pf_dir_slot *s)
{
	size_t i = s->hash & (cap - 1);
	while (slot[i].pos1)
		i = (i + 1) & (cap - 1);
	slot[i] = *s;
}

int pf_dir_index_put(struct pf_dir_index *x, const struct pf_trace_entry *ents, size_t pos)
{
	const char *path = ents[pos].path;
	if (!path)
		return 0;
	if ((x->n + 1) * 2 > x->cap) {
		size_t ncap = x->cap ? x->cap * 2 : 256;
		struct pf_dir_slot *slot = calloc(ncap, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		for (size_t i = 0; i < x->cap; i++)
			if (x->slot[i].pos1)
				place(slot, ncap, &x->slot[i]);
		free(x->slot);
		x->slot = slot;
		x->cap = ncap;
	}
	place(x->slot, x->cap, &(struct pf_dir_slot){ hash_of(path, strlen(path)), pos + 1 });
	x->n++;
	return 0;
}

void pf_dir_index_free(struct pf_dir_index *x)
{
	free(x->slot);
	*x = (struct pf_dir_index){ 0 };
}
