/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One line of a trace instance's trace_pipe (text output), as the tracer reads it while tracing
 * (trace_tracefs.c).  The lines look like
 *
 *        cat-4242    [001] ..... 123.456789: mm_filemap_get_pages: dev=7:3 ino=c ofs=8192-12287
 *        cat-4242    [001] ..... 123.456790: mm_filemap_fault: dev=7:3 ino=c ofs=40960
 *   CPU:1 [LOST 17 EVENTS]
 *
 * (with the record-tgid option a "(  4242)" column follows the task).  The tracer reads the binary records of
 * trace_pipe_raw instead (trace_page_raw.c) where it can; the text, which the three events print the same way
 * since they exist, where it cannot: a kernel that refused the filter on our task name (a record carries no
 * name), a record layout that reader does not know, PREFETCH_TRACE_RAW=0. */
#include "trace_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Digits only (strtoull would also take a sign, spaces and "0x"); overflow refused.  0, -EINVAL (no digit) or
 * -ERANGE. */
static int parse_u64(const char **p, unsigned base, uint64_t *v)
{
	uint64_t x = 0;
	const char *q = *p;
	for (;; q++) {
		unsigned d;
		if (*q >= '0' && *q <= '9')
			d = (unsigned)(*q - '0');
		else if (base == 16 && *q >= 'a' && *q <= 'f')
			d = (unsigned)(*q - 'a' + 10);
		else if (base == 16 && *q >= 'A' && *q <= 'F')
			d = (unsigned)(*q - 'A' + 10);
		else
			break;
		if (x > (UINT64_MAX - d) / base)
			return -ERANGE;
		x = x * base + d;
	}
	if (q == *p)
		return -EINVAL;
	*v = x;
	*p = q;
	return 0;
}

/* The literal lit next: 0 (skipped), or -EINVAL. */
static int expect(const char **p, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*p, lit, n))
		return -EINVAL;
	*p += n;
	return 0;
}

/* The task column: "comm-pid", right before the " [cpu]" column (the comm may hold spaces and dashes: the pid
 * is after the last dash).  pid -1 and an empty comm where it cannot be read. */
static void parse_task(const char *line, const char *event, struct pf_page_event *ev)
{
	ev->pid = -1;
	ev->comm[0] = '\0';
	const char *cpu = NULL;
	for (const char *q = line; q < event; q++)
		if (*q == '[')
			cpu = q;
	if (!cpu)
		return;
	const char *end = cpu;
	while (end > line && end[-1] == ' ')
		end--;
	if (end > line && end[-1] == ')') { /* the record-tgid column */
		while (end > line && end[-1] != '(')
			end--;
		if (end > line)
			end--;
		while (end > line && end[-1] == ' ')
			end--;
	}
	const char *dash = NULL;
	for (const char *q = line; q < end; q++)
		if (*q == '-')
			dash = q;
	if (!dash || dash + 1 == end)
		return;
	long pid = 0;
	for (const char *q = dash + 1; q < end; q++) {
		if (*q < '0' || *q > '9' || pid > 100000000)
			return;
		pid = pid * 10 + (*q - '0');
	}
	const char *start = line;
	while (start < dash && *start == ' ')
		start++;
	size_t n = (size_t)(dash - start);
	if (n >= sizeof(ev->comm))
		n = sizeof(ev->comm) - 1;
	memcpy(ev->comm, start, n);
	ev->comm[n] = '\0';
	ev->pid = (int)pid;
}

int pf_page_line_parse(const char *line, uint64_t page, struct pf_page_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	const char *lost = strstr(line, "[LOST ");
	if (lost && strstr(lost, " EVENTS]"))
		return PF_PAGE_LINE_LOST;
	const char *event = strstr(line, ": mm_filemap_");
	if (!event)
		return PF_PAGE_LINE_OTHER;
	const char *p = event + 2;
	int range;
	if (!expect(&p, "mm_filemap_get_pages: ") || !expect(&p, "mm_filemap_map_pages: "))
		range = 1;
	else if (!expect(&p, "mm_filemap_fault: "))
		range = 0;
	else
		return PF_PAGE_LINE_OTHER; /* another filemap event (not enabled by us) */
	uint64_t major, minor, ino, first, last;
	if (expect(&p, "dev=") || parse_u64(&p, 10, &major) || expect(&p, ":") || parse_u64(&p, 10, &minor) ||
	    expect(&p, " ino=") || parse_u64(&p, 16, &ino) || expect(&p, " ofs=") || parse_u64(&p, 10, &first))
		return PF_PAGE_LINE_BAD;
	if (range) {
		/* inclusive: the last byte of the last page */
		if (expect(&p, "-") || parse_u64(&p, 10, &last) || last < first)
			return PF_PAGE_LINE_BAD;
	} else {
		last = first + page - 1;
	}
	if (*p != '\0' && *p != ' ' && *p != '\n')
		return PF_PAGE_LINE_BAD;
	if (major > 0xfff || minor > 0xfffff || last == UINT64_MAX)
		return PF_PAGE_LINE_BAD;
	ev->major = (unsigned)major;
	ev->minor = (unsigned)minor;
	ev->ino = ino;
	ev->start = first / page * page;
	ev->end = (last / page + 1) * page;
	parse_task(line, event, ev);
	return PF_PAGE_LINE_EVENT;
}
