/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_measure.h"

#include "error.h"
#include "safe_file.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* qsort_r: trace file indices by path. */
static int cmp_path(const void *a, const void *b, void *trace)
{
	const struct pf_image *t = trace;
	return strcmp(t->files[*(const uint32_t *)a].path, t->files[*(const uint32_t *)b].path);
}

/* For each layout file, the trace's file with the same path (its index + 1), 0 where the trace has none: the
 * boot did not open it.  NULL without memory. */
static uint32_t *trace_file_of(const struct pf_image *layout, const struct pf_image *trace)
{
	uint32_t *of = calloc(layout->nfiles ? layout->nfiles : 1, sizeof(*of));
	uint32_t *by_path = malloc((trace->nfiles ? trace->nfiles : 1) * sizeof(*by_path));
	if (!of || !by_path) {
		free(of), free(by_path);
		return NULL;
	}
	for (uint32_t i = 0; i < trace->nfiles; i++)
		by_path[i] = i;
	qsort_r(by_path, trace->nfiles, sizeof(*by_path), cmp_path, (void *)trace);
	for (uint32_t i = 0; i < layout->nfiles; i++) {
		size_t lo = 0, hi = trace->nfiles;
		while (lo < hi) { /* the first trace path not below the layout's */
			size_t mid = (lo + hi) / 2;
			if (strcmp(trace->files[by_path[mid]].path, layout->files[i].path) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < trace->nfiles && !strcmp(trace->files[by_path[lo]].path, layout->files[i].path))
			of[i] = by_path[lo] + 1;
	}
	free(by_path);
	return of;
}

/* The layout's bytes in files of which pick() says yes, and how many files those are. */
static uint64_t bytes_of(const struct pf_image *layout, const uint8_t *pick, uint64_t *files)
{
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < layout->nfiles && files; i++)
		*files += pick[i];
	for (uint32_t i = 0; i < layout->nextents; i++)
		if (pick[layout->extents[i].file])
			bytes += layout->extents[i].length;
	return bytes;
}

/* The layout's files picked by when the boot opened them (opened: the trace has them; late: also before the
 * replay read them). */
static uint64_t picked_bytes(const struct pf_image *layout, const struct pf_image *trace, uint64_t trace_start_ns,
			     const uint64_t *read_at_ns, uint64_t *files)
{
	if (files)
		*files = 0;
	if (!layout || !trace || !trace->nfiles || !layout->nfiles)
		return 0;
	uint32_t *of = trace_file_of(layout, trace);
	uint8_t *pick = calloc(layout->nfiles, 1);
	uint64_t bytes = 0;
	if (of && pick) {
		for (uint32_t i = 0; i < layout->nfiles; i++)
			pick[i] = of[i] && (!read_at_ns || !read_at_ns[i] ||
					    trace_start_ns + trace->files[of[i] - 1].first_ns < read_at_ns[i]);
		bytes = bytes_of(layout, pick, files);
	}
	free(of);
	free(pick);
	return bytes;
}

uint64_t pf_layout_bytes_used(const struct pf_image *layout, const struct pf_image *trace, uint64_t *files)
{
	return picked_bytes(layout, trace, 0, NULL, files);
}

uint64_t pf_layout_bytes_late(const struct pf_image *layout, const struct pf_image *trace, uint64_t trace_start_ns,
			      const uint64_t *read_at_ns, uint64_t *files)
{
	if (!read_at_ns) {
		if (files)
			*files = 0;
		return 0;
	}
	return picked_bytes(layout, trace, trace_start_ns, read_at_ns, files);
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

