/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The note sink (see note.h). */
#include "note.h"
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct pf_note pf_note_into(char *buf, size_t size)
{
	if (buf && size)
		buf[0] = '\0';
	return (struct pf_note){ .buf = size ? buf : NULL, .size = size, .level = -1 };
}

struct pf_note pf_note_to_log(int level)
{
	return (struct pf_note){ .level = level };
}

/* line into n's buffer: after the kept lines, separated by '\n', when it fits whole (the first line is cut to
 * fit); never after a line that did not fit. */
static void keep(struct pf_note *n, const char *line)
{
	if (!n->buf || n->kept < n->lines)
		return;
	size_t len = strlen(line), sep = n->used ? 1 : 0;
	if (n->used + sep + len >= n->size) {
		if (n->used)
			return;
		len = n->size - 1;
	}
	if (sep)
		n->buf[n->used++] = '\n';
	memcpy(n->buf + n->used, line, len);
	n->used += len;
	n->buf[n->used] = '\0';
	n->kept++;
}

void pf_note(struct pf_note *n, const char *fmt, ...)
{
	if (!n)
		return;
	char line[PF_NOTE_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	char *nl;
	while ((nl = strchr(line, '\n'))) /* one line is one line */
		*nl = ' ';
	keep(n, line);
	n->lines++;
	if (n->level >= 0)
		pf_log(n->level, "%s", line);
}

const char *pf_note_text(const struct pf_note *n)
{
	return n && n->buf ? n->buf : "";
}

int pf_note_next(const struct pf_note *n, size_t *pos, char *line, size_t len)
{
	if (!n || !n->buf || *pos >= n->used)
		return 0;
	const char *s = n->buf + *pos, *end = strchr(s, '\n');
	size_t k = end ? (size_t)(end - s) : strlen(s);
	if (len)
		snprintf(line, len, "%.*s", (int)k, s);
	*pos += k + 1;
	return 1;
}
