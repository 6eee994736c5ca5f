#include "boot_early.h"

#include "log.h" /* pf_log_to_kmsg */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What prefetch.service sets with OOMScoreAdjust=: under memory pressure the boot matters more than we do.
 * (The descriptor limit needs nothing here: the tracer raises its own.) */
#define EARLY_OOM_ADJ "500"

/* /proc and /sys are the last mounts initramfs-tools moves into the new root (after /run), immediately
 * before it executes init: once both are there, the new root is complete. */
static int root_complete(void)
{
	struct stat st;
	return stat("/proc/self/mountinfo", &st) == 0 && stat("/sys/dev/block", &st) == 0;
}

static void detach(void)
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

int pf_boot_early_setup(int timeout_ms)
{
	detach();
	/* Poll in 1 ms steps: init is executed right after the moves, and every millisecond we are late is a
	 * read of init's that the trace misses. */
	const struct timespec step = { 0, 1000000 };
	int waited = 0;
	while (!root_complete() && waited < timeout_ms) {
		nanosleep(&step, NULL);
		waited++;
	}
	pf_log_to_kmsg(); /* /dev is the root's already (udev's init-bottom script moved it) */
	if (!root_complete())
		return -ETIMEDOUT;
	write_small("/proc/self/oom_score_adj", EARLY_OOM_ADJ);
	return waited;
}
