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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_round_trip),
		cmocka_unit_test(test_file_holds),
		cmocka_unit_test(test_empty_text),
		cmocka_unit_test(test_proc_text),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
