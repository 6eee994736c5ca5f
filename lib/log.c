/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *prog = "prefetch";
static const char *command;
static int threshold = PF_LOG_NOTICE;
static int journal = -1;
static int kmsg = -1;

int pf_log_to_kmsg_at(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (kmsg >= 0)
		close(kmsg);
	kmsg = fd;
	return 0;
}

int pf_log_to_kmsg(void)
{
	return pf_log_to_kmsg_at("/dev/kmsg");
}

void pf_log_init(const char *progname, int max_level)
{
	prog = progname;
	threshold = max_level;
}

void pf_log_set_command(const char *cmd)
{
	command = cmd;
}

const char *pf_log_progname(void)
{
	return prog;
}

const char *pf_log_command(void)
{
	return command;
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
	if (kmsg >= 0) {
		/* one write() per record; "<N>" sets its priority, the kernel rate-limits what users write */
		char rec[1100];
		int n = snprintf(rec, sizeof(rec), "<%d>%s: %s\n", level, prog, msg);
		if (n > 0 && write(kmsg, rec, (size_t)n < sizeof(rec) ? (size_t)n : sizeof(rec) - 1) > 0)
			return;
	}
	if (journal)
		fprintf(stderr, "<%d>%s\n", level, msg);
	else
		fprintf(stderr, "%s: %s%s%s%s\n", prog, command ? command : "", command ? ": " : "",
			level == PF_LOG_WARNING ? "warning: " : "", msg);
}
