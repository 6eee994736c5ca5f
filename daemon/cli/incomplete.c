/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "incomplete.h"

#include "log.h"

void pf_warn_if_incomplete(const struct pf_image *img, const char *path)
{
	if (!(img->flags & PF_IMG_INCOMPLETE))
		return;
	char why[512];
	pf_image_flags_text(img, why, sizeof(why));
	pf_warn("trace %s is %s", path, why);
}
