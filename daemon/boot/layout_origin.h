/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where an installed layout came from.  prefetch-image (image/) writes LAYOUT.origin beside the layout it puts
 * into a disk image: a few "key value" lines —
 *   image NAME            the image it was learnt on (its file name)
 *   date EPOCH            when it was installed (unix seconds)
 *   boots N               the boots learnt
 *   layout_created EPOCH  the layout's own creation time (its header): the origin speaks for that layout only
 *   reordered yes|no      whether the image's root filesystem was reordered for it
 * A separate small file, not a field of the layout: layouts stay in their one format, older readers read them as
 * before, and a layout the machine re-aggregates itself (another creation time) is no longer "from the image". */
#ifndef PREFETCH_LAYOUT_ORIGIN_H
#define PREFETCH_LAYOUT_ORIGIN_H

#include <stddef.h>
#include <stdint.h>

struct pf_layout_origin {
	char image[128];
	int64_t date;
	unsigned boots;
	uint64_t layout_created;
	int reordered;            /* 1 yes, 0 no, -1 not said */
};

/* Read LAYOUT.origin beside layout_path.  Returns 0, -ENOENT (none: a layout learnt on this machine), or another
 * negative pf error (unreadable, or a line that is not "key value" with a known key and a valid value). */
int pf_layout_origin_load(const char *layout_path, struct pf_layout_origin *o);

/* The origin in one line, for a layout created at layout_created: "from image X (installed DATE, N boots learnt,
 * root reordered)", or, when the layout is not the one installed, "learnt on this machine since (the layout
 * installed from image X on DATE was replaced)". */
void pf_layout_origin_line(const struct pf_layout_origin *o, uint64_t layout_created, char *buf, size_t len);

#endif
