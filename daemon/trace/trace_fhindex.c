/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The recorded entries by file handle, per traced filesystem: in FID mode (trace_fid.c) an event names its file
 * and the file's directory by handle, and this is how a repeated open, or the directory of a new file, is found
 * among those recorded.  The (dev, ino) index's table keyed by (fs, the handle's hash), the handles compared. */
#include "trace_internal.h"

#include <string.h>

static uint64_t hash_of(const struct file_handle *fh)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint32_t)fh->handle_type; /* FNV-1a */
	for (unsigned i = 0; i < fh->handle_bytes; i++)
		h = (h ^ fh->f_handle[i]) * 0x100000001b3ull;
	return h;
}

static int same(const struct file_handle *a, const struct file_handle *b)
{
	return a && a->handle_type == b->handle_type && a->handle_bytes == b->handle_bytes &&
	       !memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

struct pf_trace_entry *pf_fh_index_get(const struct pf_fh_index *x, struct pf_trace_entry *ents, uint32_t fs,
				       const struct file_handle *fh)
{
	size_t cursor = 0, pos;
	while (pf_devino_next(&x->ix, fs, hash_of(fh), &cursor, &pos))
		if (ents[pos].fs == fs && same(ents[pos].fh, fh))
			return &ents[pos];
	return NULL;
}

int pf_fh_index_put(struct pf_fh_index *x, const struct pf_trace_entry *ents, size_t pos)
{
	const struct pf_trace_entry *e = &ents[pos];
	return e->fh ? pf_devino_put_key(&x->ix, e->fs, hash_of(e->fh), pos) : 0;
}

void pf_fh_index_free(struct pf_fh_index *x)
{
	pf_devino_free(&x->ix);
}
