/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The header flags of a trace or layout in words (format.h: pf_image_flags_text). */
#include "format.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

struct out {
	char *buf;
	size_t len, used;
	int n;                     /* reasons written */
};

static void add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct out *o, const char *fmt, ...)
{
	if (o->used >= o->len)
		return;
	if (o->n++) {
		int w = snprintf(o->buf + o->used, o->len - o->used, ", ");
		o->used += w > 0 ? (size_t)w : 0;
		if (o->used >= o->len)
			return;
	}
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	o->used += w > 0 ? (size_t)w : 0;
}

/* A mount point is cut at its first control character: the text is one line. */
static int printable_len(const char *s)
{
	int n = 0;
	while (s[n] && (unsigned char)s[n] >= 0x20 && s[n] != 0x7f && n < 1024)
		n++;
	return n;
}

void pf_image_flags_text(const struct pf_image *img, char *buf, size_t len)
{
	if (!len)
		return;
	buf[0] = '\0';
	if (!(img->flags & (PF_IMG_INCOMPLETE | PF_IMG_REASONS))) {
		snprintf(buf, len, "none");
		return;
	}
	struct out o = { .buf = buf, .len = len };
	add(&o, "incomplete (");
	o.n = 0;
	if ((img->flags & PF_IMG_EVENTS_LOST) || img->lost_events)
		add(&o, "%" PRIu32 " events lost", img->lost_events);
	if (img->flags & PF_IMG_FILE_CAP)
		add(&o, "file cap reached");
	if (img->flags & PF_IMG_FS_GONE) {
		int named = 0;
		for (uint32_t i = 0; i < img->nfs; i++)
			if (img->fs[i].flags & PF_FS_GONE) {
				add(&o, "filesystem %.*s gone", printable_len(img->fs[i].mountpoint), img->fs[i].mountpoint);
				named = 1;
			}
		if (!named)
			add(&o, "a filesystem gone");
	}
	if (img->flags & PF_IMG_TIMED_OUT)
		add(&o, "timed out");
	if (!o.n)
		add(&o, "cut short"); /* the summary bit alone: tracing stopped by an error, or an old file */
	o.n = 0;
	add(&o, ")");
}
