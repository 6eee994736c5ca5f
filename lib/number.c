/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "number.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int pf_parse_long(const char *s, long lo, long hi, long *out)
{
	/* strtol would skip leading space: a value the shell reads differently must not pass */
	if (!s || isspace((unsigned char)s[0]))
		return -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}
