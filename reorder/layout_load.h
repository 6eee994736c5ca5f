/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The layouts' wishes for one filesystem: which byte ranges of which files, in layout order. */
#ifndef PREFETCH_REORDER_LAYOUT_LOAD_H
#define PREFETCH_REORDER_LAYOUT_LOAD_H

#include "format.h"

#include <stddef.h>
#include <stdint.h>

struct pf_want {
	const struct pf_file *file;  /* points into one of the loaded images */
	uint64_t offset, length;     /* bytes; length 0 = the whole file (a directory the layout only names) */
};

struct pf_layouts {
	struct pf_image **imgs;
	int nimgs;
	int matched;                 /* layouts that have this filesystem */
	struct pf_want *want;
	size_t nwant;
};

/* Load every layout (pf_image_load with load_opts: PF_LOAD_REQUIRE_ROOT, PF_LOAD_STATE), keep what belongs to the filesystem with this
 * UUID, in the order it is laid out (layout_order.h, PF_LORDER_PLACEMENT: first the layout's directories,
 * whole, then its files' extents in order); layouts one after the other.  Returns 0 or a negative pf
 * error (lib/error.h) with a message, -ENOENT with "layout is for another filesystem" when no layout has this
 * UUID. */
int pf_layouts_load(const char *const *paths, int n, unsigned load_opts, const uint8_t uuid[16],
		    struct pf_layouts *out, char *err, size_t errlen);
void pf_layouts_free(struct pf_layouts *l);

#endif
