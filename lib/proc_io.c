/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "proc_io.h"

#include "error.h"
#include "safe_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pf_proc_io_read_bytes(const char *text, int64_t *bytes)
{
	const char *l = strncmp(text, "read_bytes: ", 12) == 0 ? text : strstr(text, "\nread_bytes: ");
	if (!l)
		return PF_ECORRUPT;
	l = strchr(l + 1, ' ');
	char *end;
	long long v = strtoll(l, &end, 10);
	if (end == l || v < 0)
		return PF_ECORRUPT;
	*bytes = v;
	return 0;
}

/* read_bytes of one /proc io file.  0, or the error of reading or parsing it. */
static int read_io(const char *path, int64_t *bytes)
{
	char *text;
	size_t len;
	int rc = pf_read_text(path, 4096, 0, &text, &len);
	if (rc)
		return rc;
	rc = pf_proc_io_read_bytes(text, bytes);
	free(text);
	return rc;
}

int pf_self_read_bytes(int64_t *bytes)
{
	return read_io("/proc/self/io", bytes);
}

int pf_thread_read_bytes(int64_t *bytes)
{
	int rc = read_io("/proc/thread-self/io", bytes);
	return rc == -ENOENT ? read_io("proc/thread-self/io", bytes) : rc;
}
