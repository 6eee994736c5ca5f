/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recorded directories by path: the tracer records the directories above each new file (trace_fanotify.c,
 * add_parents), and the one right above is nearly always recorded already.  Looking its path up here instead of
 * stat()ing it saves a path walk per file.  A directory renamed while tracing keeps its old path here: a new
 * directory made under that name is then taken for the recorded one and left out, the same as one seen after
 * the file cap. */
#include "trace_internal.h"

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

/* A table of its own, the (dev, ino) index's code keyed by (0, the path's hash): the hash where the inode number
 * goes, whose low bits pick the slot. */
#define DIR_KEY 0

int pf_dir_index_get(const struct pf_dir_index *x, const struct pf_trace_entry *ents, const char *path, size_t *pos)
{
	size_t len = strlen(path), cursor = 0;
	while (pf_devino_next(&x->ix, DIR_KEY, hash_of(path, len), &cursor, pos))
		if (same(&ents[*pos], path, len))
			return 1;
	return 0;
}

int pf_dir_index_put(struct pf_dir_index *x, const struct pf_trace_entry *ents, size_t pos)
{
	const char *path = ents[pos].path;
	return path ? pf_devino_put_key(&x->ix, DIR_KEY, hash_of(path, strlen(path)), pos) : 0;
}

void pf_dir_index_free(struct pf_dir_index *x)
{
	pf_devino_free(&x->ix);
}
