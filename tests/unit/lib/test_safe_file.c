/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/safe_file: atomic write, then read back as bytes and as text. */
#include "error.h"
#include "safe_file.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static void test_text_round_trip(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof(path), "%s/text", pf_test_dir);
	assert_int_equal(pf_write_atomic(path, "KEY=5\n", 6, 0644), 0);
	char *text;
	size_t len;
	assert_int_equal(pf_read_text(path, 64, 0, &text, &len), 0);
	assert_int_equal(len, 6);
	assert_string_equal(text, "KEY=5\n"); /* terminated after the content */
	free(text);
	assert_int_equal(pf_read_text(path, 5, 0, &text, &len), PF_ETOOBIG);
	assert_null(text);
	assert_int_equal(pf_read_text(pf_test_dir, 64, 0, &text, &len), PF_ENOTREG);
	snprintf(path, sizeof(path), "%s/missing", pf_test_dir);
	assert_int_equal(pf_read_text(path, 64, 0, &text, &len), -ENOENT);
	assert_null(text);
}

/* pf_file_holds: the same bytes, owner and mode only; a longer, shorter, different or other-mode file, a
 * symlink or a missing one is not. Larger than its compare chunk, so that a difference at the end counts. */
static void test_file_holds(void **state)
{
	(void)state;
	char path[512], link[520];
	snprintf(path, sizeof(path), "%s/holds", pf_test_dir);
	snprintf(link, sizeof(link), "%s/holds.link", pf_test_dir);
	size_t len = 40000;
	char *buf = malloc(len);
	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)(i * 7);
	assert_int_equal(pf_file_holds(path, buf, len, 0600), 0);
	assert_int_equal(pf_write_atomic(path, buf, len, 0600), 0);
	assert_int_equal(pf_file_holds(path, buf, len, 0600), 1);
	assert_int_equal(pf_file_holds(path, buf, len, 0644), 0);
	assert_int_equal(pf_file_holds(path, buf, len - 1, 0600), 0);
	buf[len - 1] ^= 1;
	assert_int_equal(pf_file_holds(path, buf, len, 0600), 0);
	buf[len - 1] ^= 1;
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(pf_file_holds(link, buf, len, 0600), 0);
	unlink(link);
	unlink(path);
	free(buf);
}

static void test_empty_text(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof(path), "%s/empty", pf_test_dir);
	assert_int_equal(pf_write_atomic(path, "", 0, 0644), 0);
	char *text;
	size_t len = 99;
	assert_int_equal(pf_read_text(path, 64, 0, &text, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(text, "");
	free(text);
}

/* procfs says size 0: the whole text is read all the same (the self-check reads /proc/cmdline, /proc/self/io) */
static void test_proc_text(void **state)
{
	(void)state;
	char *text;
	size_t len;
	assert_int_equal(pf_read_text("/proc/self/status", 1 << 20, 0, &text, &len), 0);
	assert_true(len > 100);
	assert_non_null(strstr(text, "Name:"));
	assert_int_equal(strlen(text), len);
	free(text);
	assert_int_equal(pf_read_text("/proc/self/status", 16, 0, &text, &len), PF_ETOOBIG); /* bounded by max */
	assert_null(text);
}

/* A file another user made under the temp name an older version would have used ("PATH.tmp.PID"), here a hard
 * link to a file of someone else's: neither that file nor the link is written; the new file is a fresh one
 * (one link), and no temporary is left beside it. */
static void test_precreated_temp(void **state)
{
	(void)state;
	char path[512], tmp[600], victim[512];
	snprintf(path, sizeof(path), "%s/target", pf_test_dir);
	snprintf(victim, sizeof(victim), "%s/victim", pf_test_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(victim, "w");
	assert_non_null(f);
	fputs("not yours", f);
	fclose(f);
	assert_int_equal(link(victim, tmp), 0);
	assert_int_equal(pf_write_atomic(path, "new state", 9, 0600), 0);
	char *text;
	size_t len;
	assert_int_equal(pf_read_text(victim, 64, 0, &text, &len), 0);
	assert_string_equal(text, "not yours");
	free(text);
	assert_int_equal(pf_read_text(path, 64, 0, &text, &len), 0);
	assert_string_equal(text, "new state");
	free(text);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(st.st_mode & 07777, 0600);
	unlink(tmp);
	unlink(victim);
	DIR *d = opendir(pf_test_dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)))
		assert_true(strncmp(e->d_name, ".target", 7) != 0); /* no temporary left */
	closedir(d);
	unlink(path);
}

/* A FIFO, a directory or a missing file as input: refused before any read (no wait for a writer). */
static void test_input_not_regular(void **state)
{
	(void)state;
	char fifo[512];
	snprintf(fifo, sizeof(fifo), "%s/fifo", pf_test_dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10); /* a hang fails the test (SIGALRM) instead of blocking the suite */
	char *text;
	size_t len;
	assert_int_equal(pf_read_text(fifo, 64, 0, &text, &len), PF_ENOTREG);
	assert_int_equal(pf_open_input(fifo), PF_ENOTREG);
	assert_int_equal(pf_open_input(pf_test_dir), PF_ENOTREG);
	alarm(0);
	unlink(fifo);
}

/* An output path that is a FIFO or a directory (as /dev/null is a device): refused, left as it was, no
 * temporary left beside it. */
static void test_output_not_regular(void **state)
{
	(void)state;
	char fifo[512];
	snprintf(fifo, sizeof(fifo), "%s/out", pf_test_dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(pf_write_atomic(fifo, "x", 1, 0644), PF_ENOTREG);
	struct stat st;
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(pf_write_atomic(pf_test_dir, "x", 1, 0644), PF_ENOTREG);
	DIR *d = opendir(pf_test_dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		assert_true(strncmp(e->d_name, ".out", 4) != 0);
	closedir(d);
	unlink(fifo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precreated_temp),
		cmocka_unit_test(test_input_not_regular),
		cmocka_unit_test(test_output_not_regular),
		cmocka_unit_test(test_text_round_trip),
		cmocka_unit_test(test_file_holds),
		cmocka_unit_test(test_empty_text),
		cmocka_unit_test(test_proc_text),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
