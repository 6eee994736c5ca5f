/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_measure.h"

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

int64_t pf_psi_some_ms(const char *text)
{
	const char *line = strncmp(text, "some ", 5) == 0 ? text : strstr(text, "\nsome ");
	if (!line)
		return -1;
	const char *eol = strchr(line + 1, '\n');
	const char *t = strstr(line, " total=");
	if (!t || (eol && t > eol))
		return -1;
	char *end;
	unsigned long long us = strtoull(t + 7, &end, 10);
	if (end == t + 7)
		return -1;
	return (int64_t)(us / 1000);
}

/* A figure from a small procfs file through its parser; -1 when the file is missing (an older kernel). */
static int64_t read_proc(const char *path, int64_t (*parse)(const char *text))
{
	char *text;
	size_t len;
	if (pf_read_text(path, 4096, 0, &text, &len))
		return -1;
	int64_t v = parse(text);
	free(text);
	return v;
}

int64_t pf_psi_io_ms(void)
{
	return read_proc("/proc/pressure/io", pf_psi_some_ms);
}

int64_t pf_proc_io_read_bytes(const char *text)
{
	const char *l = strncmp(text, "read_bytes: ", 12) == 0 ? text : strstr(text, "\nread_bytes: ");
	if (!l)
		return -1;
	l = strchr(l + 1, ' ');
	char *end;
	long long v = strtoll(l, &end, 10);
	return end == l || v < 0 ? -1 : (int64_t)v;
}

int64_t pf_self_read_bytes(void)
{
	return read_proc("/proc/self/io", pf_proc_io_read_bytes);
}
