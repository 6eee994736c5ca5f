/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mkaged: age a freshly made, mounted filesystem so that reorder has real work to do.
 *
 *   mkaged [--seed N] [--fill PCT] [--max-kb N] [--no-special] DIR
 *
 * Fills PCT % of the free space found at the start by interleaved writes and deletes: a few files grow at
 * the same time in small fsync'ed chunks (so their blocks interleave on disk instead of being packed by
 * delayed allocation), files are deleted along the way (so new ones land in the holes), and some old
 * files get appended to later (so they end up in pieces far apart).  The edge cases a block mover must
 * get right are planted too: sparse files, preallocated (unwritten) ranges, hard links, empty files, fast
 * and slow symlinks, nested and large directories.  Content is pseudo-random from the seed (zeros would
 * hide misplaced blocks), so the same seed always yields the same files.  Prints a one-line summary.
 */
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define MAX_FILES 100000
#define NDIRS 12
#define NOPEN 3

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: small, deterministic, good enough to scatter files */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t rnd_range(uint64_t lo, uint64_t hi) /* [lo, hi] */
{
	return lo + rnd() % (hi - lo + 1);
}

struct file {
	char path[128];
	uint64_t size;   /* bytes written so far */
	uint64_t target; /* size to reach */
	int fd;          /* >= 0 while growing */
	uint32_t id;
};

static struct file files[MAX_FILES];
static int nfiles;
static uint64_t live_bytes, target_bytes;
static int max_kb = 2048;
static int enospc;

static void fill(unsigned char *buf, size_t len, uint32_t id, uint64_t off)
{
	uint64_t s = (uint64_t)id * 0x9E3779B97F4A7C15ULL ^ (off / 8 + 1) * 0xD1B54A32D192ED03ULL ^ rng_state;
	for (size_t i = 0; i < len; i += 8) {
		s ^= s >> 33;
		s *= 0xff51afd7ed558ccdULL;
		s ^= s >> 29;
		size_t n = len - i < 8 ? len - i : 8;
		memcpy(buf + i, &s, n);
	}
}

static uint64_t pick_size(void)
{
	unsigned r = rnd() % 100;
	uint64_t kb;
	if (r < 55)
		kb = rnd_range(1, 16);
	else if (r < 88)
		kb = rnd_range(16, 128);
	else
		kb = rnd_range(128, (uint64_t)max_kb);
	return kb * 1024 - rnd() % 1024; /* odd sizes: partial last blocks */
}

static int write_chunk(struct file *f, uint64_t len)
{
	static unsigned char buf[256 * 1024];
	if (len > sizeof(buf))
		len = sizeof(buf);
	fill(buf, len, f->id, f->size);
	ssize_t n = pwrite(f->fd, buf, len, (off_t)f->size);
	if (n < 0) {
		if (errno == ENOSPC || errno == EDQUOT) {
			enospc = 1;
			return 0;
		}
		fprintf(stderr, "%s: %s\n", f->path, pf_strerror(-errno));
		return -1;
	}
	f->size += (uint64_t)n;
	live_bytes += (uint64_t)n;
	return 0;
}

static int new_file(const char *dir, uint64_t target)
{
	if (nfiles >= MAX_FILES)
		return -1;
	struct file *f = &files[nfiles];
	f->id = (uint32_t)nfiles;
	snprintf(f->path, sizeof(f->path), "%s/f%05d", dir, nfiles);
	f->fd = open(f->path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (f->fd < 0) {
		if (errno == ENOSPC)
			enospc = 1;
		else
			fprintf(stderr, "%s: %s\n", f->path, pf_strerror(-errno));
		return -1;
	}
	f->size = 0;
	f->target = target;
	nfiles++;
	return nfiles - 1;
}

static int delete_file(int i)
{
	struct file *f = &files[i];
	if (f->fd >= 0 || !f->path[0])
		return 0;
	if (unlink(f->path) < 0)
		return 0;
	live_bytes -= f->size;
	f->path[0] = 0;
	return 1;
}

/* Append to a finished file: its new blocks land wherever free space is now, far from the old ones. */
static int append_old(int i)
{
	struct file *f = &files[i];
	if (f->fd >= 0 || !f->path[0])
		return 0;
	f->fd = open(f->path, O_WRONLY);
	if (f->fd < 0)
		return 0;
	int rc = write_chunk(f, rnd_range(1, 32) * 1024);
	if (rc == 0)
		fsync(f->fd);
	close(f->fd);
	f->fd = -1;
	return rc;
}

static void special_files(const char *top, const char dirs[][64])
{
	char p[256], q[512];
	unsigned char buf[64 * 1024];

	/* sparse: data, a hole, data, a hole at the end */
	snprintf(p, sizeof(p), "%s/sparse", dirs[1]);
	int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd >= 0) {
		fill(buf, sizeof(buf), 900001, 0);
		if (pwrite(fd, buf, 12288, 0) < 0 || pwrite(fd, buf, sizeof(buf), 1 << 20) < 0 ||
		    ftruncate(fd, 3 << 20) < 0)
			enospc = 1;
		fsync(fd);
		close(fd);
	}
	/* preallocated range past data: unwritten extents on ext4 must still read as zeros after a move */
	snprintf(p, sizeof(p), "%s/prealloc", dirs[2]);
	fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd >= 0) {
		fill(buf, sizeof(buf), 900002, 0);
		if (pwrite(fd, buf, 20000, 0) < 0)
			enospc = 1;
		if (fallocate(fd, 0, 0, 256 * 1024) < 0 && errno != EOPNOTSUPP)
			enospc = 1;
		if (pwrite(fd, buf, 8192, 128 * 1024) < 0)
			enospc = 1;
		fsync(fd);
		close(fd);
	}
	/* hard link to a regular file: one inode, two paths */
	for (int i = 0; i < nfiles; i++) {
		if (files[i].path[0] && files[i].size > 8192) {
			snprintf(q, sizeof(q), "%s/hardlink", dirs[3]);
			if (link(files[i].path, q) < 0)
				fprintf(stderr, "%s: %s\n", q, pf_strerror(-errno));
			break;
		}
	}
	/* empty files, a fast symlink (target in the inode) and a slow one (target in a data block) */
	snprintf(p, sizeof(p), "%s/empty", dirs[4]);
	fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/fastlink", top);
	if (symlink("d00/f00000", p) < 0)
		fprintf(stderr, "%s: %s\n", p, pf_strerror(-errno));
	char longt[200];
	memset(longt, 'x', sizeof(longt) - 1);
	longt[sizeof(longt) - 1] = 0;
	snprintf(p, sizeof(p), "%s/slowlink", top);
	if (symlink(longt, p) < 0)
		fprintf(stderr, "%s: %s\n", p, pf_strerror(-errno));
	/* a directory with enough entries to need several blocks (and an htree on ext3/4) */
	snprintf(p, sizeof(p), "%s/bigdir", top);
	if (mkdir(p, 0755) == 0) {
		for (int i = 0; i < 300 && !enospc; i++) {
			snprintf(q, sizeof(q), "%s/entry-with-a-long-name-%04d", p, i);
			fd = open(q, O_CREAT | O_WRONLY, 0644);
			if (fd < 0) {
				enospc = 1;
				break;
			}
			fill(buf, 100, 800000 + (uint32_t)i, 0);
			if (write(fd, buf, 100 + (size_t)i) < 0)
				enospc = 1;
			close(fd);
		}
	}
}

static void usage(FILE *out)
{
	fprintf(out, "usage: mkaged [--seed N] [--fill PCT] [--max-kb N] [--no-special] DIR\n"
		     "Age a mounted filesystem: fill PCT %% of its free space by interleaved writes and deletes.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "seed", required_argument, 0, 's' },
					      { "fill", required_argument, 0, 'f' },
					      { "max-kb", required_argument, 0, 'm' },
					      { "no-special", no_argument, 0, 'n' },
					      { "help", no_argument, 0, 'h' },
					      { 0, 0, 0, 0 } };
	unsigned long seed = 1;
	double fillpct = 50;
	int special = 1, c;
	while ((c = getopt_long(argc, argv, "s:f:m:nh", opts, NULL)) != -1) {
		switch (c) {
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 'f': fillpct = atof(optarg); break;
		case 'm': max_kb = atoi(optarg); break;
		case 'n': special = 0; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1 || fillpct <= 0 || fillpct > 100 || max_kb < 128) {
		usage(stderr);
		return 2;
	}
	/* Paths relative to the filesystem's top, so that they fit the fixed buffers however long the mount
	 * point's path is (a long TMPDIR once made them spill over onto the filesystem below). */
	if (chdir(argv[optind]) < 0) {
		fprintf(stderr, "%s: %s\n", argv[optind], pf_strerror(-errno));
		return 1;
	}
	const char *top = ".";
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;

	struct statvfs sv;
	if (statvfs(top, &sv) < 0) {
		fprintf(stderr, "%s: %s\n", top, pf_strerror(-errno));
		return 1;
	}
	uint64_t free_bytes = (uint64_t)sv.f_bfree * sv.f_frsize;
	target_bytes = (uint64_t)(free_bytes * fillpct / 100.0);
	/* a big file in a small filesystem would make the fill level jumpy */
	if ((uint64_t)max_kb * 1024 * 8 > free_bytes)
		max_kb = (int)(free_bytes / 8 / 1024) < 128 ? 128 : (int)(free_bytes / 8 / 1024);

	static char dirs[NDIRS][64];
	for (int i = 0; i < NDIRS; i++) {
		if (i < 8)
			snprintf(dirs[i], sizeof(dirs[i]), "%s/d%02d", top, i);
		else /* nested */
			snprintf(dirs[i], sizeof(dirs[i]), "%s/d%02d/s%02d", top, i - 8, i);
		if (mkdir(dirs[i], 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "%s: %s\n", dirs[i], pf_strerror(-errno));
			return 1;
		}
	}

	int open_idx[NOPEN];
	for (int i = 0; i < NOPEN; i++)
		open_idx[i] = -1;
	unsigned long steps = 0, deletes = 0, appends = 0;
	int special_done = !special;
	/* Stop a little early at high fill: the last few percent go in one pass without deletes. */
	while (!enospc && live_bytes < target_bytes) {
		steps++;
		/* the special files go in early, so that later writes and deletes age around them too */
		if (!special_done && live_bytes >= target_bytes / 3) {
			special_files(top, dirs);
			special_done = 1;
		}
		int slot = (int)(rnd() % NOPEN);
		if (open_idx[slot] < 0) {
			uint64_t sz = pick_size();
			if (sz > target_bytes - live_bytes + 4096)
				sz = target_bytes - live_bytes + 4096;
			open_idx[slot] = new_file(dirs[rnd() % NDIRS], sz);
			if (open_idx[slot] < 0)
				break;
		}
		struct file *f = &files[open_idx[slot]];
		uint64_t chunk = rnd_range(1, 8) * 4096;
		if (chunk > f->target - f->size)
			chunk = f->target - f->size;
		if (write_chunk(f, chunk) < 0)
			return 1;
		if (rnd() % 2)
			fsync(f->fd); /* allocate now, next to whatever the other open files just got */
		if (f->size >= f->target || enospc) {
			fsync(f->fd);
			close(f->fd);
			f->fd = -1;
			open_idx[slot] = -1;
		}
		/* Deletes: fewer as the target gets close, none in the last stretch, so the fill level is met. */
		if (nfiles > 8 && live_bytes < target_bytes * 9 / 10 && rnd() % 100 < 12) {
			deletes += (unsigned long)delete_file((int)(rnd() % (uint64_t)nfiles));
		}
		if (nfiles > 8 && rnd() % 100 < 4) {
			if (append_old((int)(rnd() % (uint64_t)nfiles)) < 0)
				return 1;
			appends++;
		}
	}
	for (int i = 0; i < NOPEN; i++) {
		if (open_idx[i] >= 0) {
			fsync(files[open_idx[i]].fd);
			close(files[open_idx[i]].fd);
			files[open_idx[i]].fd = -1;
		}
	}
	int hit_full = enospc;
	enospc = 0;
	if (!special_done)
		special_files(top, dirs);
	sync();
	int live = 0;
	for (int i = 0; i < nfiles; i++)
		live += files[i].path[0] != 0;
	if (statvfs(top, &sv) < 0) {
		fprintf(stderr, "%s: %s\n", top, pf_strerror(-errno));
		return 1;
	}
	printf("mkaged: %d files (%d created, %lu deleted, %lu appends), %.1f MiB data, %.0f%% of blocks used%s\n",
	       live, nfiles, deletes, appends, live_bytes / 1048576.0,
	       100.0 * (double)(sv.f_blocks - sv.f_bfree) / (double)sv.f_blocks, hit_full ? " (filesystem full)" : "");
	return 0;
}
