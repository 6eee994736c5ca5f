/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_measure.h"

#include "error.h"
#include "safe_file.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

uint64_t pf_layout_bytes_used(const struct pf_image *layout, const struct pf_image *trace, uint64_t *files)
{
	if (files)
		*files = 0;
	if (!layout || !trace || !trace->nfiles)
		return 0;
	char **paths = malloc(trace->nfiles * sizeof(*paths));
	if (!paths)
		return 0;
	for (uint32_t i = 0; i < trace->nfiles; i++)
		paths[i] = trace->files[i].path;
	qsort(paths, trace->nfiles, sizeof(*paths), cmp_str);
	/* each layout file looked up once; its extents then counted by that answer */
	uint8_t *opened = calloc(layout->nfiles ? layout->nfiles : 1, 1);
	if (!opened) {
		free(paths);
		return 0;
	}
	for (uint32_t i = 0; i < layout->nfiles; i++) {
		const char *p = layout->files[i].path;
		opened[i] = bsearch(&p, paths, trace->nfiles, sizeof(*paths), cmp_str) != NULL;
		if (files)
			*files += opened[i];
	}
	uint64_t used = 0;
	for (uint32_t i = 0; i < layout->nextents; i++)
		if (opened[layout->extents[i].file])
			used += layout->extents[i].length;
	free(opened);
	free(paths);
	return used;
}

int pf_psi_some_ms(const char *text, int64_t *ms)
{
	const char *line = strncmp(text, "some ", 5) == 0 ? text : strstr(text, "\nsome ");
	if (!line)
		return PF_ECORRUPT;
	const char *eol = strchr(line + 1, '\n');
	const char *t = strstr(line, " total=");
	if (!t || (eol && t > eol))
		return PF_ECORRUPT;
	char *end;
	unsigned long long us = strtoull(t + 7, &end, 10);
	if (end == t + 7)
		return PF_ECORRUPT;
	*ms = (int64_t)(us / 1000);
	return 0;
}

/* A figure from a small procfs file through its parser, into *v.  0, or the error of reading (a missing file:
 * an older kernel) or of parsing. */
static int read_proc(const char *path, int (*parse)(const char *text, int64_t *v), int64_t *v)
{
	char *text;
	size_t len;
	int rc = pf_read_text(path, 4096, 0, &text, &len);
	if (rc)
		return rc;
	rc = parse(text, v);
	free(text);
	return rc;
}

int pf_psi_io_ms(int64_t *ms)
{
	return read_proc("/proc/pressure/io", pf_psi_some_ms, ms);
}

