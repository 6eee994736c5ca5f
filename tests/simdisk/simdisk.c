/* SPDX-License-Identifier: GPL-2.0-or-later */
/* simdisk: a simulated disk (7200 rpm, SD card or SATA SSD).  A single-threaded FUSE file system exposing one
 * image file (kept on tmpfs) as the file "disk"; every request to it is charged by a disk model, and either
 * really waited for ("sleep" mode) or only added up ("count" mode: exact and fast).
 *
 *   simdisk [--model hdd|sd|ssd] [--mode count|sleep] [--rate MBPS] [--stretch K] [--log FILE] IMAGE MOUNTPOINT
 *           [FUSE options]
 *
 * --stretch K: sleep mode waits K times each request's model time, for a guest whose CPU runs K times slower
 * than a real machine's (the boot lab under qemu TCG), so that CPU and disk keep a real machine's balance.
 * Put a loop device (losetup --direct-io=on) on MOUNTPOINT/disk and a file system on that.
 * The control file MOUNTPOINT/stats reads as "key value" lines; writing to it runs commands:
 *   reset             zero the counters and park the head at offset 0
 *   mode count|sleep  switch the timing mode
 *   log FILE | log off  start/stop the request log ("R|W offset length cost_us start_ms" per request; start_ms
 *                      since the log was opened, at CLOCK_MONOTONIC log_t0_ns in the stats: 0 without a log)
 *
 * Each request is charged by a model of lib/disk_model.h (the ones prefetch-reorder --check uses), in bytes over
 * the image's size, at --rate MB/s (default the model's):
 *   hdd (default)  the 7200 rpm disk: transfer only where the last request ended, a short forward gap read
 *                  through, otherwise a seek, then the transfer; no NCQ, like a disk without a command queue;
 *   sd             the A1 SD card: a fixed cost per request, then the transfer; queue depth 1, so serving one
 *                  request at a time is exactly the card; writes by what they program and copy, one erase
 *                  block kept open for a write that continues the last;
 *   ssd            the SATA SSD: the fixed cost divided by its effective queue depth (8), then the transfer.
 *                  This server sees one request at a time and cannot tell how many the kernel holds: every
 *                  request is charged as if the queue were full, the best case (a lower bound on the time).
 * Requests are served one at a time, in arrival order.  Flushes and discards cost nothing.
 */
#define FUSE_USE_VERSION 35
#include <fuse.h>

#include "disk_model.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DISK_PATH "/disk"
#define STATS_PATH "/stats"
#define FH_DISK 1

enum mode { MODE_COUNT, MODE_SLEEP };

static struct {
	int fd;                 /* the image */
	struct pf_disk_model model; /* in bytes; its span is the image's size */
	const char *model_name;     /* hdd, sd, ssd */
	enum mode mode;
	uint64_t head;          /* byte offset where the last request ended */
	uint64_t write_end;     /* byte offset where the last write ended (flash: its open erase block) */
	FILE *log;
	uint64_t log_t0;        /* CLOCK_MONOTONIC when the log was opened */
	/* counters, reset by "reset" */
	uint64_t reads, writes, read_bytes, write_bytes, seeks, flushes;
	uint64_t model_ns;      /* sum of the model's service times */
	uint64_t wall_ns;       /* measured time spent serving disk requests (sleep mode: about model_ns x stretch) */
	double stretch;         /* sleep mode waits this many times the model's time (the boot lab: TCG's slowdown) */
} sd = { .fd = -1, .model = { .unit = 1, .rate = PF_DISK_RATE_BPS }, .model_name = "hdd", .stretch = 1 };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Charge one request: count it, log it and, in sleep mode, wait until the modelled end. */
static void charge(int write, uint64_t off, uint64_t len, uint64_t start)
{
	int seeked;
	uint64_t cost = write ? pf_disk_write_ns(&sd.model, sd.head, sd.write_end, off, len, &seeked)
			      : pf_disk_request_ns(&sd.model, sd.head, off, len, &seeked);
	if (sd.log)
		fprintf(sd.log, "%c %" PRIu64 " %" PRIu64 " %.1f %.3f\n", write ? 'W' : 'R', off, len, cost / 1e3,
			(double)(start - sd.log_t0) / 1e6);
	sd.head = off + len;
	sd.seeks += seeked;
	sd.model_ns += cost;
	if (write) {
		sd.writes++;
		sd.write_bytes += len;
		sd.write_end = off + len;
	} else {
		sd.reads++;
		sd.read_bytes += len;
	}
	if (sd.mode == MODE_SLEEP) {
		uint64_t end = start + (uint64_t)((double)cost * sd.stretch);
		struct timespec ts = { .tv_sec = (time_t)(end / 1000000000u), .tv_nsec = (long)(end % 1000000000u) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	sd.wall_ns += now_ns() - start;
}

static char *stats_text(void)
{
	char *s = NULL;
	if (sd.log)
		fflush(sd.log);
	if (asprintf(&s,
		     "mode %s\nrequests %" PRIu64 "\nreads %" PRIu64 "\nwrites %" PRIu64 "\nread_bytes %" PRIu64
		     "\nwrite_bytes %" PRIu64 "\nseeks %" PRIu64 "\nflushes %" PRIu64 "\nmodel_ns %" PRIu64
		     "\nwall_ns %" PRIu64 "\nhead %" PRIu64 "\nspan %" PRIu64 "\nrate %.0f\nmodel %s\nrequest_ns %.0f\nstretch %g\nlog_t0_ns %" PRIu64 "\n",
		     sd.mode == MODE_SLEEP ? "sleep" : "count", sd.reads + sd.writes, sd.reads, sd.writes, sd.read_bytes,
		     sd.write_bytes, sd.seeks, sd.flushes, sd.model_ns, sd.wall_ns, sd.head, sd.model.span, sd.model.rate,
		     sd.model_name, pf_disk_per_request_s(&sd.model) * 1e9, sd.stretch, sd.log ? sd.log_t0 : 0) < 0)
		return NULL;
	return s;
}

static int set_log(const char *path)
{
	if (sd.log)
		fclose(sd.log);
	sd.log = NULL;
	if (!path)
		return 0;
	sd.log = fopen(path, "we");
	sd.log_t0 = now_ns();
	return sd.log ? 0 : -errno;
}

/* One command written to the stats file. */
static int command(const char *cmd)
{
	if (!strcmp(cmd, "reset")) {
		sd.reads = sd.writes = sd.read_bytes = sd.write_bytes = sd.seeks = sd.flushes = 0;
		sd.model_ns = sd.wall_ns = 0;
		sd.head = sd.write_end = 0;
		return 0;
	}
	if (!strcmp(cmd, "mode count") || !strcmp(cmd, "mode sleep")) {
		sd.mode = cmd[5] == 's' ? MODE_SLEEP : MODE_COUNT;
		return 0;
	}
	if (!strcmp(cmd, "log off"))
		return set_log(NULL);
	if (!strncmp(cmd, "log ", 4) && cmd[4])
		return set_log(cmd + 4);
	return -EINVAL;
}

static int sd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (!strcmp(path, DISK_PATH)) {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = (off_t)sd.model.span;
		st->st_blocks = (blkcnt_t)(sd.model.span / 512);
	} else if (!strcmp(path, STATS_PATH)) {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
	} else {
		return -ENOENT;
	}
	return 0;
}

static int sd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	if (strcmp(path, "/"))
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, DISK_PATH + 1, NULL, 0, 0);
	fill(buf, STATS_PATH + 1, NULL, 0, 0);
	return 0;
}

static int sd_open(const char *path, struct fuse_file_info *fi)
{
	fi->direct_io = 1; /* no page cache on this side: every read reaches the model */
	if (!strcmp(path, DISK_PATH)) {
		fi->fh = FH_DISK;
		return 0;
	}
	if (strcmp(path, STATS_PATH))
		return -ENOENT;
	/* Snapshot at open so one read sequence sees consistent figures. */
	char *s = stats_text();
	if (!s)
		return -ENOMEM;
	fi->fh = (uint64_t)(uintptr_t)s;
	return 0;
}

static int sd_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	if (fi->fh != FH_DISK)
		free((char *)(uintptr_t)fi->fh);
	return 0;
}

static int sd_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	if (fi->fh != FH_DISK) {
		const char *s = (const char *)(uintptr_t)fi->fh;
		size_t len = strlen(s);
		if ((size_t)off >= len)
			return 0;
		if (size > len - (size_t)off)
			size = len - (size_t)off;
		memcpy(buf, s + off, size);
		return (int)size;
	}
	uint64_t start = now_ns();
	ssize_t n = pread(sd.fd, buf, size, off);
	if (n < 0)
		return -errno;
	if (n > 0)
		charge(0, (uint64_t)off, (uint64_t)n, start);
	return (int)n;
}

static int sd_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	if (fi->fh != FH_DISK) {
		char cmd[512];
		size_t len = size < sizeof(cmd) - 1 ? size : sizeof(cmd) - 1;
		memcpy(cmd, buf, len);
		while (len && (cmd[len - 1] == '\n' || cmd[len - 1] == ' '))
			len--;
		cmd[len] = 0;
		int r = command(cmd);
		return r < 0 ? r : (int)size;
	}
	if ((uint64_t)off + size > sd.model.span)
		return -ENOSPC; /* a disk does not grow */
	uint64_t start = now_ns();
	ssize_t n = pwrite(sd.fd, buf, size, off);
	if (n < 0)
		return -errno;
	if (n > 0)
		charge(1, (uint64_t)off, (uint64_t)n, start);
	return (int)n;
}

static int sd_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi;
	if (!strcmp(path, STATS_PATH))
		return 0; /* "echo cmd > stats" truncates first */
	return (uint64_t)size == sd.model.span ? 0 : -EPERM;
}

static int sd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path, (void)datasync, (void)fi;
	sd.flushes++;
	return 0; /* the image is on tmpfs: nothing to make durable */
}

static int sd_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, DISK_PATH))
		return -EOPNOTSUPP;
	/* Discards from the loop device punch holes; keep the size. */
	return fallocate(sd.fd, mode | FALLOC_FL_KEEP_SIZE, off, len) ? -errno : 0;
}

static void sd_destroy(void *data)
{
	(void)data;
	set_log(NULL);
}

static const struct fuse_operations ops = {
	.getattr = sd_getattr,
	.readdir = sd_readdir,
	.open = sd_open,
	.release = sd_release,
	.read = sd_read,
	.write = sd_write,
	.truncate = sd_truncate,
	.fsync = sd_fsync,
	.fallocate = sd_fallocate,
	.destroy = sd_destroy,
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: simdisk [--model hdd|sd|ssd] [--mode count|sleep] [--rate MBPS] [--stretch K] [--log FILE]\n"
		     "               IMAGE MOUNTPOINT [FUSE options]\n"
		     "Serve IMAGE as MOUNTPOINT/disk through a disk model: hdd (7200 rpm, default), sd (A1 SD card) or\n"
		     "ssd (SATA SSD) (foreground, single-threaded).  --stretch K: sleep mode waits K times the model's\n"
		     "time (its counters stay the model's).\n"
		     "MOUNTPOINT/stats: counters; write 'reset', 'mode count|sleep', 'log FILE', 'log off' to it.\n");
}

int main(int argc, char **argv)
{
	const char *log = NULL;
	double rate = 0;
	int i = 1;
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "count") || !strcmp(argv[i], "sleep"))
				sd.mode = argv[i][0] == 's' ? MODE_SLEEP : MODE_COUNT;
			else
				break;
		} else if (!strcmp(argv[i], "--model") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "hdd") || !strcmp(argv[i], "sd") || !strcmp(argv[i], "ssd"))
				sd.model_name = argv[i];
			else
				break;
		} else if (!strcmp(argv[i], "--rate") && i + 1 < argc) {
			rate = atof(argv[++i]) * 1e6;
			if (!(rate > 0))
				break;
		} else if (!strcmp(argv[i], "--stretch") && i + 1 < argc) {
			sd.stretch = atof(argv[++i]);
			if (!(sd.stretch > 0 && sd.stretch <= 1000))
				break;
		} else if (!strcmp(argv[i], "--log") && i + 1 < argc) {
			log = argv[++i];
		} else {
			break;
		}
	}
	if (argc - i < 2 || !strncmp(argv[i], "--", 2)) {
		usage(stderr);
		return 2;
	}
	const char *image = argv[i], *mnt = argv[i + 1];
	sd.fd = open(image, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (sd.fd < 0 || fstat(sd.fd, &st) || st.st_size <= 0) {
		fprintf(stderr, "simdisk: cannot use image %s: %s\n", image, sd.fd < 0 ? strerror(errno) : "empty");
		return 1;
	}
	uint64_t span = (uint64_t)st.st_size;
	sd.model = !strcmp(sd.model_name, "sd")	   ? pf_disk_sd(span, 1)
		   : !strcmp(sd.model_name, "ssd") ? pf_disk_ssd(span, 1)
						   : pf_disk_7200rpm(span, 1);
	if (rate > 0)
		sd.model.rate = rate;
	if (log && set_log(log)) {
		fprintf(stderr, "simdisk: cannot open log %s: %s\n", log, strerror(errno));
		return 1;
	}

	/* Foreground and single-threaded: one request at a time, in arrival order. */
	char *fargv[64];
	int fargc = 0;
	fargv[fargc++] = argv[0];
	fargv[fargc++] = (char *)mnt;
	fargv[fargc++] = "-f";
	fargv[fargc++] = "-s";
	fargv[fargc++] = "-o";
	fargv[fargc++] = "fsname=simdisk,subtype=simdisk";
	for (int j = i + 2; j < argc && fargc < 63; j++)
		fargv[fargc++] = argv[j];
	fargv[fargc] = NULL;
	int r = fuse_main(fargc, fargv, &ops, NULL);
	close(sd.fd);
	return r ? 1 : 0;
}
