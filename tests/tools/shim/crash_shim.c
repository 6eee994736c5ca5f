/* SPDX-License-Identifier: GPL-2.0-or-later */
/* crash_shim.so: LD_PRELOAD into the real prefetch-reorder to simulate a power cut on its own I/O path.
 *
 * The shim watches the descriptors opened for writing on one file or device (CRASH_SHIM_TARGET, matched by
 * device and inode at open), numbers their writes from 1 (pwrite, pwrite64, write, pwritev, pwritev2,
 * fallocate, ioctl BLKDISCARD/BLKZEROOUT/BLKSECDISCARD) and treats fsync/fdatasync (and writes on an O_SYNC /
 * O_DSYNC descriptor) as cache flushes.  sync_file_range and ioctl(BLKFLSBUF) write back the page cache but do
 * not flush a disk's cache: they are counted, not trusted.  Every write goes to the file at once (so the
 * program, and its O_DIRECT read-back, read what it wrote, as from a disk's cache); what it overwrote is kept
 * until the next flush, so that at the cut the disk can be put back to its state at the last flush and the
 * volatile cache played out as the mode says.
 *
 * Environment:
 *   CRASH_SHIM_TARGET  the image or device (required; without it the shim does nothing)
 *   CRASH_SHIM_CUT     K: the power goes at write K (write K and every later one never reach the disk; the
 *                      process _exits with status 99, nothing flushed or closed).  0 or unset: count only.
 *   CRASH_SHIM_MODE    what the disk's volatile cache does at the cut, with the writes since the last flush
 *                      (before K):
 *                        clean    all of them stored, in order (a write-through disk)
 *                        drop     none of them stored (the whole cache lost)
 *                        reorder  a random subset stored, in random order, each of more than one sector
 *                                 cut at a random sector boundary with probability 1/4 (applied in part)
 *                        torn     all of them stored, and write K itself stored up to a random sector
 *                                 boundary (at least one sector, never all of it)
 *                      or, not a cut:
 *                        eio      write K fails with EIO (nothing of it stored) and the program goes on, as on a
 *                                 disk with a bad sector: later writes over any of the same bytes fail too (a
 *                                 retry does not help), every other write is stored (its error path runs)
 *   CRASH_SHIM_SEED    seed of the random choices (default 1)
 *   CRASH_SHIM_SECTOR  the disk's atomic unit for torn writes, bytes (default 512)
 *   CRASH_SHIM_REPORT  file to append one line to at exit or at the cut:
 *                        writes W flushes F bytes B unflushed U kept P torn T syncs S direct_reads R digest D
 *                      (D hashes the write sequence, superblock writes excepted: two runs wrote the same when
 *                      their digests match; R counts reads through O_DIRECT descriptors on the target)
 *   CRASH_SHIM_TRACE   file to append "w K OFF LEN" per write and "f K" per flush to
 */
#include "crash_model.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define CUT_EXIT 99
#define MAXFD 1024

enum mode { M_CLEAN, M_DROP, M_REORDER, M_TORN, M_EIO };


static struct {
	int init, active;
	dev_t dev, rdev;
	ino_t ino;
	int blockdev;
	unsigned char fdkind[MAXFD]; /* 0 other, 1 target writable, 2 target writable + O_SYNC, 3 target O_DIRECT read */
	unsigned long long cut_at, writes, flushes, bytes, syncs, direct_reads, kept, torn, unflushed;
	enum mode mode;
	uint64_t seed, digest;
	size_t sector;
	struct crash_pending *pend;
	size_t npend, cap;
	uint64_t bad_off, bad_len; /* mode eio: the range write K failed on, which stays bad */
	const char *report, *trace;
	int in_shim; /* our own pread/pwrite go straight to libc */
} S = { .digest = CRASH_DIGEST_INIT, .sector = 512, .seed = 1 };

#define REAL(name) static __typeof__(name) *real_##name; if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static void say(const char *path, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!path || n <= 0)
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
		/* a report we cannot write shows as a missing line */
	}
	close(fd);
}

static void init(void)
{
	if (S.init)
		return;
	S.init = 1;
	const char *t = getenv("CRASH_SHIM_TARGET"), *v;
	struct stat st;
	if (!t || stat(t, &st) != 0)
		return;
	S.active = 1;
	S.blockdev = S_ISBLK(st.st_mode);
	S.dev = st.st_dev;
	S.ino = st.st_ino;
	S.rdev = st.st_rdev;
	if ((v = getenv("CRASH_SHIM_CUT")))
		S.cut_at = strtoull(v, NULL, 0);
	if ((v = getenv("CRASH_SHIM_SEED")))
		S.seed = strtoull(v, NULL, 0) * 0x9E3779B97F4A7C15ULL + 1;
	if ((v = getenv("CRASH_SHIM_SECTOR")) && atol(v) > 0)
		S.sector = (size_t)atol(v);
	v = getenv("CRASH_SHIM_MODE");
	if (!v || !strcmp(v, "clean"))
		S.mode = M_CLEAN;
	else if (!strcmp(v, "drop"))
		S.mode = M_DROP;
	else if (!strcmp(v, "reorder"))
		S.mode = M_REORDER;
	else if (!strcmp(v, "torn"))
		S.mode = M_TORN;
	else if (!strcmp(v, "eio"))
		S.mode = M_EIO;
	else {
		fprintf(stderr, "crash_shim: unknown CRASH_SHIM_MODE '%s'\n", v);
		_exit(2);
	}
	S.report = getenv("CRASH_SHIM_REPORT");
	S.trace = getenv("CRASH_SHIM_TRACE");
}

static void report(const char *how)
{
	say(S.report, "writes %llu flushes %llu bytes %llu unflushed %llu kept %llu torn %llu syncs %llu direct_reads %llu digest %016llx %s\n",
	    S.writes, S.flushes, S.bytes, S.unflushed, S.kept, S.torn, S.syncs, S.direct_reads,
	    (unsigned long long)S.digest, how);
}

__attribute__((destructor)) static void at_exit(void)
{
	if (S.active && !S.in_shim)
		report("end");
}

static int is_target(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return 0;
	if (S.blockdev)
		return S_ISBLK(st.st_mode) && st.st_rdev == S.rdev;
	return st.st_dev == S.dev && st.st_ino == S.ino;
}

static int opened(int fd, int flags)
{
	if (fd < 0 || fd >= MAXFD)
		return fd;
	init();
	S.fdkind[fd] = 0;
	if (!S.active || !is_target(fd))
		return fd;
	if ((flags & O_ACCMODE) != O_RDONLY)
		S.fdkind[fd] = (flags & (O_SYNC | O_DSYNC)) ? 2 : 1;
	else if (flags & O_DIRECT)
		S.fdkind[fd] = 3;
	return fd;
}

static int watched(int fd)
{
	return fd >= 0 && fd < MAXFD && (S.fdkind[fd] == 1 || S.fdkind[fd] == 2);
}

static ssize_t raw_pwrite(int fd, const void *b, size_t n, uint64_t off)
{
	REAL(pwrite64);
	size_t done = 0;
	while (done < n) {
		ssize_t k = real_pwrite64(fd, (const char *)b + done, n - done, (off_t)(off + done));
		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return (ssize_t)done;
}

static void flushed(void)
{
	crash_pending_forget(S.pend, &S.npend);
	S.flushes++;
	say(S.trace, "f %llu\n", S.writes);
}

/* Store the first LEN bytes of a pending write (or put back what it overwrote: old). */
static void put(const struct crash_pending *p, const unsigned char *what, size_t len)
{
	if (raw_pwrite(p->fd, what, len, p->off) < 0)
		_exit(98);
}

/* A random sector boundary strictly inside a write of more than one sector, in bytes; 0 if there is none. */
static size_t tear_point(size_t len)
{
	size_t sectors = (len + S.sector - 1) / S.sector;
	if (sectors < 2)
		return 0;
	return (size_t)(1 + crash_rnd(&S.seed) % (sectors - 1)) * S.sector;
}

/* The power goes: the disk keeps what the mode says of the writes since the last flush, then nothing more.
 * CUR is the write in flight (write K), not yet stored. */
static void cut(const struct crash_pending *cur)
{
	S.in_shim = 1;
	S.unflushed = S.npend;
	/* back to the state at the last flush: undo in reverse issue order */
	for (size_t i = S.npend; i-- > 0;)
		put(&S.pend[i], S.pend[i].old, S.pend[i].len);
	size_t *order = malloc((S.npend + 1) * sizeof(*order));
	if (!order)
		_exit(98);
	size_t n = 0;
	for (size_t i = 0; i < S.npend; i++)
		if (S.mode == M_CLEAN || S.mode == M_TORN || (S.mode == M_REORDER && (crash_rnd(&S.seed) & 1)))
			order[n++] = i;
	if (S.mode == M_REORDER)
		for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
			size_t j = (size_t)(crash_rnd(&S.seed) % i), t = order[i - 1];
			order[i - 1] = order[j];
			order[j] = t;
		}
	for (size_t i = 0; i < n; i++) {
		const struct crash_pending *p = &S.pend[order[i]];
		size_t len = p->len, t;
		if (S.mode == M_REORDER && crash_rnd(&S.seed) % 4 == 0 && (t = tear_point(p->len))) {
			len = t;
			S.torn++;
		}
		put(p, p->data, len);
		S.kept++;
	}
	if (S.mode == M_TORN && cur && cur->data) {
		size_t t = tear_point(cur->len);
		if (t) {
			put(cur, cur->data, t);
			S.torn++;
		}
	}
	free(order);
	report("cut");
	_exit(CUT_EXIT);
}

/* Before write number S.writes+1 of LEN bytes at OFF (DATA NULL: zeros, for discard / zero-out) goes down
 * on FD.  Returns 0 if it may go down, -1 if it must fail with EIO (mode eio); does not return at a cut. */
static int before_write(int fd, uint64_t off, size_t len, const void *data)
{
	S.writes++;
	say(S.trace, "w %llu %llu %zu\n", S.writes, (unsigned long long)off, len);
	struct crash_pending cur = { .fd = fd, .off = off, .len = len, .data = (unsigned char *)data };
	if (S.mode == M_EIO) {
		if (S.writes == S.cut_at) {
			S.bad_off = off;
			S.bad_len = len;
		} else if (!S.bad_len || off + len <= S.bad_off || off >= S.bad_off + S.bad_len) {
			return 0;
		}
		say(S.trace, "eio %llu\n", S.writes);
		errno = EIO;
		return -1;
	}
	if (S.cut_at && S.writes >= S.cut_at)
		cut(&cur);
	S.bytes += len;
	crash_digest_add(&S.digest, &off, sizeof(off));
	crash_digest_add(&S.digest, &len, sizeof(len));
	/* the superblock carries timestamps: its content is left out */
	if (data && !(off == 1024 && len == 1024))
		crash_digest_add(&S.digest, data, len);
	if (!S.cut_at)
		return 0; /* counting only: nothing to undo */
	if (S.npend == S.cap) {
		size_t cap = S.cap ? S.cap * 2 : 256;
		struct crash_pending *np = realloc(S.pend, cap * sizeof(*np));
		if (!np)
			abort();
		S.pend = np;
		S.cap = cap;
	}
	struct crash_pending *p = &S.pend[S.npend++];
	p->fd = fd;
	crash_pending_set(p, off, len, data);
	REAL(pread64);
	size_t got = 0;
	while (got < len) {
		ssize_t k = real_pread64(fd, p->old + got, len - got, (off_t)(off + got));
		if (k < 0)
			abort();
		if (k == 0)
			break;
		got += (size_t)k;
	}
	memset(p->old + got, 0, len - got);
	return 0;
}

static void after_write(int fd, ssize_t rc)
{
	if (rc >= 0 && S.fdkind[fd] == 2)
		flushed();
}

/* ---- the intercepted calls ---- */

static int open_flags_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	REAL(open);
	va_list ap;
	va_start(ap, flags);
	int mode = open_flags_mode(flags, ap);
	va_end(ap);
	return opened(real_open(path, flags, mode), flags);
}

int open64(const char *path, int flags, ...)
{
	REAL(open64);
	va_list ap;
	va_start(ap, flags);
	int mode = open_flags_mode(flags, ap);
	va_end(ap);
	return opened(real_open64(path, flags, mode), flags);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(openat);
	va_list ap;
	va_start(ap, flags);
	int mode = open_flags_mode(flags, ap);
	va_end(ap);
	return opened(real_openat(dirfd, path, flags, mode), flags);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	REAL(openat64);
	va_list ap;
	va_start(ap, flags);
	int mode = open_flags_mode(flags, ap);
	va_end(ap);
	return opened(real_openat64(dirfd, path, flags, mode), flags);
}

/* What _FORTIFY_SOURCE builds call (libext2fs does) */
int __open_2(const char *path, int flags)
{
	REAL(__open_2);
	return opened(real___open_2(path, flags), flags);
}

int __open64_2(const char *path, int flags)
{
	REAL(__open64_2);
	return opened(real___open64_2(path, flags), flags);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	REAL(__openat_2);
	return opened(real___openat_2(dirfd, path, flags), flags);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	REAL(__openat64_2);
	return opened(real___openat64_2(dirfd, path, flags), flags);
}

int close(int fd)
{
	REAL(close);
	if (fd >= 0 && fd < MAXFD)
		S.fdkind[fd] = 0;
	return real_close(fd);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REAL(pwrite);
	if (S.in_shim || !watched(fd))
		return real_pwrite(fd, buf, n, off);
	if (before_write(fd, (uint64_t)off, n, buf))
		return -1;
	ssize_t rc = real_pwrite(fd, buf, n, off);
	after_write(fd, rc);
	return rc;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	REAL(pwrite64);
	if (S.in_shim || !watched(fd))
		return real_pwrite64(fd, buf, n, off);
	if (before_write(fd, (uint64_t)off, n, buf))
		return -1;
	ssize_t rc = real_pwrite64(fd, buf, n, off);
	after_write(fd, rc);
	return rc;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(write);
	if (S.in_shim || !watched(fd))
		return real_write(fd, buf, n);
	off_t off = lseek(fd, 0, SEEK_CUR);
	if (before_write(fd, (uint64_t)off, n, buf))
		return -1;
	ssize_t rc = real_write(fd, buf, n);
	after_write(fd, rc);
	return rc;
}

/* Vectored writes: gathered into one buffer, one write (a disk sees one request). */
static ssize_t vwrite(int fd, const struct iovec *iov, int cnt, off_t off, ssize_t (*go)(int, const struct iovec *, int, off_t, int), int fl)
{
	size_t len = 0;
	for (int i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	unsigned char *b = malloc(len ? len : 1);
	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0, at = 0; i < (size_t)cnt; at += iov[i].iov_len, i++)
		memcpy(b + at, iov[i].iov_base, iov[i].iov_len);
	int fail = before_write(fd, (uint64_t)(off < 0 ? lseek(fd, 0, SEEK_CUR) : off), len, b);
	free(b);
	if (fail) {
		errno = EIO;
		return -1;
	}
	ssize_t rc = go(fd, iov, cnt, off, fl);
	after_write(fd, rc);
	return rc;
}

static ssize_t go_pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int fl)
{
	REAL(pwritev2);
	return real_pwritev2(fd, iov, cnt, off, fl);
}

static ssize_t go_pwritev(int fd, const struct iovec *iov, int cnt, off_t off, int fl)
{
	(void)fl;
	REAL(pwritev);
	return real_pwritev(fd, iov, cnt, off);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	if (S.in_shim || !watched(fd))
		return go_pwritev(fd, iov, cnt, off, 0);
	return vwrite(fd, iov, cnt, off, go_pwritev, 0);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	return pwritev(fd, iov, cnt, off);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int fl)
{
	if (S.in_shim || !watched(fd))
		return go_pwritev2(fd, iov, cnt, off, fl);
	ssize_t rc = vwrite(fd, iov, cnt, off, go_pwritev2, fl);
	if (rc >= 0 && (fl & (RWF_SYNC | RWF_DSYNC)))
		flushed();
	return rc;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	if (S.in_shim || !watched(fd)) {
		REAL(writev);
		return real_writev(fd, iov, cnt);
	}
	return vwrite(fd, iov, cnt, -1, go_pwritev2, 0);
}

int fsync(int fd)
{
	REAL(fsync);
	int rc = real_fsync(fd);
	if (rc == 0 && watched(fd))
		flushed();
	return rc;
}

int fdatasync(int fd)
{
	REAL(fdatasync);
	int rc = real_fdatasync(fd);
	if (rc == 0 && watched(fd))
		flushed();
	return rc;
}

/* Writes back the page cache; a disk's own cache is not flushed by it. */
int sync_file_range(int fd, off64_t off, off64_t n, unsigned int fl)
{
	REAL(sync_file_range);
	if (watched(fd))
		S.syncs++;
	return real_sync_file_range(fd, off, n, fl);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	REAL(fallocate);
	if (!S.in_shim && watched(fd) && (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) &&
	    before_write(fd, (uint64_t)off, (size_t)len, NULL))
		return -1;
	return real_fallocate(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	return fallocate(fd, mode, off, len);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	REAL(pread64);
	if (fd >= 0 && fd < MAXFD && S.fdkind[fd] == 3)
		S.direct_reads++;
	return real_pread64(fd, buf, n, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return pread64(fd, buf, n, off);
}

int ioctl(int fd, unsigned long req, ...)
{
	REAL(ioctl);
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (!S.in_shim && watched(fd)) {
		if (req == BLKFLSBUF)
			S.syncs++;
		else if (req == BLKDISCARD || req == BLKZEROOUT || req == BLKSECDISCARD) {
			const uint64_t *r = arg;
			if (before_write(fd, r[0], (size_t)r[1], NULL))
				return -1;
		}
	}
	return real_ioctl(fd, req, arg);
}
