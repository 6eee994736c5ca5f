/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading layouts and selecting the part for this filesystem. */
#include "layout_load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fsid.h"
#include "layout_order.h"

static int add(struct pf_layouts *l, size_t *cap, const struct pf_file *f, uint64_t off, uint64_t len)
{
	if (PF_ARRAY_RESERVE(l->want, *cap, l->nwant + 1, 1024))
		return -ENOMEM;
	l->want[l->nwant++] = (struct pf_want){ .file = f, .offset = off, .length = len };
	return 0;
}

/* Append img's part for fs index fsi, in the order it is laid out (layout_order.h). */
static int select_fs(struct pf_layouts *l, size_t *cap, const struct pf_image *img, uint32_t fsi)
{
	struct pf_lorder_opts o = { .flags = PF_LORDER_PLACEMENT | PF_LORDER_ONE_FS, .fs = fsi };
	struct pf_litem *it;
	size_t n;
	int rc = pf_layout_order(img, &o, &it, &n);
	for (size_t i = 0; i < n && !rc; i++)
		rc = add(l, cap, &img->files[it[i].file], it[i].offset, it[i].length);
	free(it);
	return rc;
}

int pf_layouts_load(const char *const *paths, int n, unsigned load_opts, const uint8_t uuid[16],
		    struct pf_layouts *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	size_t cap = 0;
	int rc = 0;
	out->imgs = calloc(n > 0 ? (size_t)n : 1, sizeof(*out->imgs));
	if (!out->imgs)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		rc = pf_image_load(paths[i], load_opts, PF_KIND_LAYOUT, &out->imgs[i]);
		if (rc) {
			if (rc == PF_EOWNER)
				snprintf(err, errlen, "layout %s: %s (it must be owned by root and not writable by "
					 "group or others)", paths[i], pf_strerror(rc));
			else
				snprintf(err, errlen, "layout %s: %s", paths[i], pf_strerror(rc));
			goto fail;
		}
		out->nimgs++;
		uint32_t fsi;
		if (!pf_image_find_fs(out->imgs[i], uuid, &fsi))
			continue;
		out->matched++;
		rc = select_fs(out, &cap, out->imgs[i], fsi);
		if (rc) {
			snprintf(err, errlen, "layout %s: %s", paths[i], pf_strerror(rc));
			goto fail;
		}
	}
	if (!out->matched) {
		char u[37];
		pf_uuid_format(uuid, u);
		snprintf(err, errlen, "layout is for another filesystem (none of the %d layout%s has UUID %s)", n,
			 n == 1 ? "" : "s", u);
		rc = -ENOENT;
		goto fail;
	}
	return 0;
fail:
	pf_layouts_free(out);
	return rc;
}

void pf_layouts_free(struct pf_layouts *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->nimgs; i++)
		pf_image_free(l->imgs[i]);
	free(l->imgs);
	free(l->want);
	memset(l, 0, sizeof(*l));
}
