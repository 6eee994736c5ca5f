/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "layout_origin.h"

#include "error.h"
#include "number.h"
#include "safe_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ORIGIN_MAX 4096

static int parse_line(char *line, struct pf_layout_origin *o, int *have_created)
{
	char *val = strchr(line, ' ');
	if (!val)
		return -EINVAL;
	*val++ = 0;
	long v;
	if (!strcmp(line, "image")) {
		if (!*val || strlen(val) >= sizeof(o->image))
			return -EINVAL;
		snprintf(o->image, sizeof(o->image), "%s", val);
	} else if (!strcmp(line, "date")) {
		if (pf_parse_long(val, 0, LONG_MAX, &v))
			return -EINVAL;
		o->date = v;
	} else if (!strcmp(line, "boots")) {
		if (pf_parse_long(val, 0, 1000000, &v))
			return -EINVAL;
		o->boots = (unsigned)v;
	} else if (!strcmp(line, "layout_created")) {
		if (pf_parse_long(val, 0, LONG_MAX, &v))
			return -EINVAL;
		o->layout_created = (uint64_t)v;
		*have_created = 1;
	} else if (!strcmp(line, "reordered")) {
		if (strcmp(val, "yes") && strcmp(val, "no"))
			return -EINVAL;
		o->reordered = !strcmp(val, "yes");
	} else {
		return -EINVAL;
	}
	return 0;
}

int pf_layout_origin_load(const char *layout_path, struct pf_layout_origin *o)
{
	memset(o, 0, sizeof(*o));
	o->reordered = -1;
	char path[4200];
	if (snprintf(path, sizeof(path), "%s.origin", layout_path) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	char *text;
	size_t len;
	int rc = pf_read_text(path, ORIGIN_MAX, 0, &text, &len);
	if (rc)
		return rc;
	char *save = NULL;
	int have_created = 0;
	for (char *line = strtok_r(text, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save))
		rc = parse_line(line, o, &have_created);
	free(text);
	if (!rc && (!o->image[0] || !have_created))
		rc = -EINVAL; /* the two it cannot be told without */
	return rc;
}

void pf_layout_origin_line(const struct pf_layout_origin *o, uint64_t layout_created, char *buf, size_t len)
{
	char when[32] = "?";
	time_t t = (time_t)o->date;
	struct tm tm;
	if (o->date && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
	if (layout_created != o->layout_created) {
		snprintf(buf, len, "learnt on this machine since (the layout installed from image %s on %s was "
			 "replaced)", o->image, when);
		return;
	}
	char boots[32] = "a layout given to it"; /* installed with --layout: not learnt by prefetch-image */
	if (o->boots)
		snprintf(boots, sizeof(boots), "%u boot%s learnt", o->boots, o->boots == 1 ? "" : "s");
	snprintf(buf, len, "from image %s (installed %s, %s%s)", o->image, when, boots,
		 o->reordered == 1 ? ", root reordered for it" : o->reordered == 0 ? ", root not reordered" : "");
}
