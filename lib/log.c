#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *prog = "prefetch";
static int threshold = PF_LOG_NOTICE;
static int journal = -1;

void pf_log_init(const char *progname, int max_level)
{
	prog = progname;
	threshold = max_level;
}

void pf_log(int level, const char *fmt, ...)
{
	if (level > threshold)
		return;
	if (journal < 0)
		journal = getenv("JOURNAL_STREAM") != NULL;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (journal)
		fprintf(stderr, "<%d>%s\n", level, msg);
	else
		fprintf(stderr, "%s: %s%s\n", prog, level <= PF_LOG_ERR ? "error: " : level == PF_LOG_WARNING ? "warning: " : "", msg);
}
