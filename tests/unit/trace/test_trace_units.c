/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tracer parts that need no fanotify: the residency pass (mincore + FIEMAP) on a real file, the pid file, the
 * index by file handle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "pidfile.h"
#include "support_tmpdir.h"
#include "trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_residency(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof(path), "%s/f", pf_test_dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	long pg = sysconf(_SC_PAGESIZE);
	char *buf = malloc((size_t)pg * 3);
	memset(buf, 'x', (size_t)pg);
	for (int i = 0; i < 16; i++)
		assert_int_equal(write(fd, buf, (size_t)pg), pg);
	assert_int_equal(write(fd, buf, 100), 100); /* a partial last page */
	assert_int_equal(fsync(fd), 0);
	struct statvfs sv;
	assert_int_equal(fstatvfs(fd, &sv), 0);
	uint32_t bs = (uint32_t)sv.f_bsize;
	uint64_t size = 16 * (uint64_t)pg + 100;

	/* Evict (clean pages go), then read pages 3..5 and the last page with readahead off for this fd. */
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	struct pf_range *r;
	size_t n;
	assert_int_equal(pf_resident_ranges(fd, size, bs, &r, &n), 0);
	if (n != 0) {
		free(r);
		close(fd);
		free(buf);
		skip(); /* this filesystem keeps the pages (e.g. tmpfs): nothing to measure */
	}
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
	assert_int_equal(pread(fd, buf, (size_t)pg * 3, 3 * pg), pg * 3);
	assert_int_equal(pread(fd, buf, 100, 16 * pg), 100);
	assert_int_equal(pf_resident_ranges(fd, size, bs, &r, &n), 0);
	/* merged view: [3pg, 6pg) and [16pg, size); extents may split them at physical boundaries */
	uint64_t covered = 0, first = UINT64_MAX, last_end = 0;
	for (size_t i = 0; i < n; i++) {
		covered += r[i].length;
		if (r[i].offset < first)
			first = r[i].offset;
		if (r[i].offset + r[i].length > last_end)
			last_end = r[i].offset + r[i].length;
		assert_true(r[i].offset % (uint64_t)pg == 0);
		if (i)
			assert_true(r[i].offset >= r[i - 1].offset + r[i - 1].length);
	}
	assert_int_equal(first, 3 * pg);
	assert_int_equal(last_end, size);
	assert_int_equal(covered, 3 * pg + 100);

	/* whole-file mapping (what directories get): everything, and a known position when FIEMAP works */
	free(r);
	assert_int_equal(pf_mapped_ranges(fd, size, bs, &r, &n), 0);
	covered = 0;
	for (size_t i = 0; i < n; i++)
		covered += r[i].length;
	assert_int_equal(covered, size);
	free(r);
	assert_int_equal(pf_resident_ranges(fd, 0, bs, &r, &n), 0);
	assert_int_equal(n, 0);
	close(fd);
	free(buf);
}

static struct file_handle *handle(int type, const char *bytes, unsigned n)
{
	struct file_handle *fh = malloc(sizeof(*fh) + n);
	assert_non_null(fh);
	fh->handle_type = type;
	fh->handle_bytes = n;
	memcpy(fh->f_handle, bytes, n);
	return fh;
}

/* FID mode's index: an entry is found by its filesystem and the exact handle (type, length, bytes), among
 * thousands (the table grows), and not by a handle that differs in any of them or on another filesystem. */
static void test_fh_index(void **state)
{
	(void)state;
	enum { N = 5000 };
	struct pf_trace_entry *ents = calloc(N + 1, sizeof(*ents));
	assert_non_null(ents);
	struct pf_fh_index x = { 0 };
	for (unsigned i = 0; i < N; i++) {
		uint32_t ino = i / 2; /* the same bytes on two filesystems */
		ents[i].fs = i % 2;
		ents[i].fh = handle(1, (const char *)&ino, sizeof(ino));
		assert_int_equal(pf_fh_index_put(&x, ents, i), 0);
	}
	assert_int_equal(pf_fh_index_put(&x, ents, N), 0); /* no handle: left out */
	for (unsigned i = 0; i < N; i++)
		assert_ptr_equal(pf_fh_index_get(&x, ents, i % 2, ents[i].fh), &ents[i]);
	uint32_t ino = 7;
	struct file_handle *other_type = handle(2, (const char *)&ino, sizeof(ino));
	struct file_handle *longer = handle(1, "\x07\0\0\0\0", 5);
	struct file_handle *absent = handle(1, "\xff\xff\xff\x7f", 4);
	assert_null(pf_fh_index_get(&x, ents, 0, other_type));
	assert_null(pf_fh_index_get(&x, ents, 0, longer));
	assert_null(pf_fh_index_get(&x, ents, 0, absent));
	assert_null(pf_fh_index_get(&x, ents, 2, ents[0].fh));
	free(other_type);
	free(longer);
	free(absent);
	for (unsigned i = 0; i < N; i++)
		free(ents[i].fh);
	free(ents);
	pf_fh_index_free(&x);
}

static void test_pidfile(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof(path), "%s/run/sub/p.pid", pf_test_dir);
	pid_t pid;
	char why[PF_PIDFILE_OUTCOME_MAX];
	assert_int_equal(pf_pidfile_stop(path, SIGTERM, 100, &pid, why, sizeof(why)), 1); /* none running */

	struct pf_pidfile a, b;
	pid_t holder;
	assert_int_equal(pf_pidfile_acquire(path, &a, &holder), -ENOENT); /* no missing parent is created */
	snprintf(path, sizeof(path), "%s/run/p.pid", pf_test_dir); /* its own directory is */
	assert_int_equal(pf_pidfile_acquire(path, &a, &holder), 0);
	assert_int_equal(pf_pidfile_acquire(path, &b, &holder), -EBUSY);
	assert_int_equal(holder, getpid());
	pf_pidfile_release(&a);
	pf_pidfile_release(&a); /* twice is harmless */
	assert_int_equal(access(path, F_OK), -1);

	/* a stale file (nobody holds the lock) is "none running" and can be taken over */
	FILE *f = fopen(path, "w");
	fprintf(f, "999999\n");
	fclose(f);
	assert_int_equal(pf_pidfile_stop(path, SIGTERM, 100, &pid, why, sizeof(why)), 1);
	assert_int_equal(pf_pidfile_acquire(path, &a, &holder), 0);
	pf_pidfile_release(&a);

	/* in two steps: locked but not yet published = busy, yet empty (the stale pid is gone); then our pid */
	f = fopen(path, "w");
	fprintf(f, "999999\n");
	fclose(f);
	struct stat st;
	assert_int_equal(pf_pidfile_lock(path, &a, &holder), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(pf_pidfile_lock(path, &b, &holder), -EBUSY);
	assert_int_equal(holder, 0);
	assert_int_equal(pf_pidfile_publish(&a), 0);
	assert_int_equal(pf_pidfile_acquire(path, &b, &holder), -EBUSY);
	assert_int_equal(holder, getpid());
	pf_pidfile_release(&a);

	/* a live holder gets the signal, and stop returns once it has released, with the outcome it left: stored
	 * (0), failed with its reason (2), or nothing said (2: killed or crashed) */
	static const char *const outcomes[] = { "", "no space", NULL };
	for (int k = 0; k < 3; k++) {
		int ready[2];
		assert_int_equal(pipe(ready), 0);
		pid_t child = fork();
		if (child == 0) {
			sigset_t set;
			sigemptyset(&set);
			sigaddset(&set, SIGTERM);
			sigprocmask(SIG_BLOCK, &set, NULL);
			struct pf_pidfile c;
			if (pf_pidfile_acquire(path, &c, NULL))
				_exit(1);
			if (write(ready[1], "x", 1) != 1)
				_exit(1);
			int sig;
			sigwait(&set, &sig);
			usleep(100000); /* "writing the trace" */
			if (outcomes[k] && pf_pidfile_outcome(&c, outcomes[k][0] ? outcomes[k] : NULL))
				_exit(1);
			pf_pidfile_release(&c);
			_exit(0);
		}
		char x;
		assert_int_equal(read(ready[0], &x, 1), 1);
		assert_int_equal(pf_pidfile_stop(path, SIGTERM, 5000, &pid, why, sizeof(why)), k == 0 ? 0 : 2);
		assert_int_equal(pid, child);
		if (k == 1)
			assert_string_equal(why, "no space");
		if (k == 2)
			assert_non_null(strstr(why, "without reporting"));
		int status;
		assert_int_equal(waitpid(child, &status, 0), child);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		close(ready[0]);
		close(ready[1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_residency),
		cmocka_unit_test(test_pidfile),
		cmocka_unit_test(test_fh_index),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
