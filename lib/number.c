/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "number.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int pf_parse_long(const char *s, long lo, long hi, long *out)
{
	/* strtol would skip leading space: a value the shell reads differently must not pass */
	if (!s || isspace((unsigned char)s[0]))
		return -EINVAL;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end)
		return -EINVAL;
	if (errno || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}
