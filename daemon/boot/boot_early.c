/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_early.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What prefetch.service sets with OOMScoreAdjust=: under memory pressure the boot matters more than we do.
 * (The descriptor limit needs nothing here: the tracer raises its own.) */
#define EARLY_OOM_ADJ "500"

/* /proc and /sys are the last mounts initramfs-tools moves into the new root (after /run), immediately
 * before it executes init: once both are there, the new root is complete. */
static int root_complete(int relative)
{
	struct stat st;
	const char *proc = "/proc/self/mountinfo", *sys = "/sys/dev/block";
	return stat(proc + !!relative, &st) == 0 && stat(sys + !!relative, &st) == 0;
}

int pf_boot_copy_current(const char *root)
{
	struct stat self, installed;
	char bin[PATH_MAX];
	snprintf(bin, sizeof(bin), "%s" PF_PREFETCHD_PATH, root);
	return stat("/proc/self/exe", &self) == 0 && stat(bin, &installed) == 0 && self.st_size == installed.st_size;
}

void pf_boot_detach(void)
{
	signal(SIGHUP, SIG_IGN); /* the console may be hung up when init takes it */
	setsid();
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
}

static void write_small(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = write(fd, text, strlen(text)); /* best effort, as OOMScoreAdjust= would be */
	(void)n;
	close(fd);
}

int pf_boot_wait_root(int relative, int timeout_ms)
{
	/* Poll in 1 ms steps: init is executed right after the moves, and every millisecond we are late is a
	 * read of init's that the trace misses. */
	const struct timespec step = { 0, 1000000 };
	int waited = 0;
	while (!root_complete(relative) && waited < timeout_ms) {
		nanosleep(&step, NULL);
		waited++;
	}
	if (!root_complete(relative))
		return -ETIMEDOUT;
	const char *oom = "/proc/self/oom_score_adj";
	write_small(oom + !!relative, EARLY_OOM_ADJ);
	return waited;
}
