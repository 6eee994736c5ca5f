/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "usage_error.h"

#include "log.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

int pf_usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pf_err("%s", msg);
	const char *cmd = pf_log_command();
	fprintf(stderr, "Try '%s%s%s --help'.\n", pf_log_progname(), cmd ? " " : "", cmd ? cmd : "");
	return PF_USAGE_EXIT;
}

int pf_usage_bad_option(int c, char **argv)
{
	/* getopt leaves the offending word just before optind, except for a short option inside a group */
	const char *word = optind > 0 ? argv[optind - 1] : "";
	if (optopt && !(word[0] == '-' && word[1] == '-'))
		return pf_usage_error(c == ':' ? "option '-%c' needs a value" : "unknown option '-%c'", optopt);
	return pf_usage_error(c == ':' ? "option '%s' needs a value" : "unknown option '%s'", word);
}
