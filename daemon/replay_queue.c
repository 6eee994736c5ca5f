/* A short disk queue while the rotational sweep runs.  readahead(2) returns as soon as its requests are
 * queued, so a sweep left alone queues the whole layout at once (hundreds of requests, up to the device's
 * nr_requests), and every read of the boot's own that the layout does not cover (init's first page faults,
 * a metadata block, udev's probes) waits behind all of it: in the boot lab init started only once the replay
 * had ended, 1.4 s late.  So before each readahead the sweep waits until the disk has fewer than depth
 * requests in flight (sysfs counts everyone's), with small chunks: the disk still always has our next read
 * queued, and a read of the boot's waits behind a few of ours at most. */
#include "replay_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define POLL_NS 500000L           /* between looks at the counters while the queue is full */
#define WAIT_MAX_NS 200000000L    /* per read: a queue others keep full does not stall the sweep for good */

int pf_rqueue_open(dev_t dev)
{
	char path[128];
	struct stat st;
	/* the whole disk's requests: a partition's own counters miss those of its neighbours */
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", major(dev), minor(dev));
	const char *fmt = stat(path, &st) == 0 ? "/sys/dev/block/%u:%u/../inflight" : "/sys/dev/block/%u:%u/inflight";
	snprintf(path, sizeof(path), fmt, major(dev), minor(dev));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[64];
	long r, w;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0 || (buf[n] = 0, sscanf(buf, "%ld %ld", &r, &w) != 2)) {
		close(fd);
		return -1;
	}
	return fd;
}

static long in_flight(int fd)
{
	char buf[64];
	long r, w;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return sscanf(buf, "%ld %ld", &r, &w) == 2 ? r + w : -1;
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

void pf_rqueue_wait(struct pf_rctx *c, const struct pf_rfs *f)
{
	if (f->inflight_fd < 0 || c->queue_depth <= 0)
		return;
	long long t0 = 0, waited = 0;
	const struct timespec step = { 0, POLL_NS };
	for (;;) {
		long q = in_flight(f->inflight_fd);
		if (q < 0 || q < c->queue_depth || waited >= WAIT_MAX_NS || pf_rctx_should_stop(c))
			break;
		if (!t0)
			t0 = now_ns();
		nanosleep(&step, NULL);
		waited = now_ns() - t0;
	}
	if (t0) {
		c->queue.waits++;
		c->queue.ns += (uint64_t)waited;
	}
}
