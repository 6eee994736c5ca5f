/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/error.c: every own code has its own text, errno values read as strerror does, libext2fs codes keep
 * com_err's text, and nothing reads "Unknown error N". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "error.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <et/com_err.h>
#include <ext2fs/ext2_err.h>

static void assert_readable(const char *s)
{
	assert_non_null(s);
	assert_true(s[0] != 0);
	assert_null(strstr(s, "Unknown error"));
	assert_null(strstr(s, "Unknown code"));
}

static void test_own_codes(void **state)
{
	(void)state;
	/* disjoint ranges: errno, own codes, libext2fs codes */
	assert_true(PF_EBADMAGIC < -PF_ERRNO_MAX);
	assert_true(PF_EEXT2_FIRST < PF_E_END);
	for (int a = PF_EBADMAGIC; a > PF_E_END; a--) {
		const char *s = pf_strerror(a);
		assert_readable(s);
		assert_string_not_equal(s, "unknown error");
		assert_string_not_equal(s, pf_strerror(0));
		for (int b = a - 1; b > PF_E_END; b--)
			assert_string_not_equal(s, pf_strerror(b));
	}
	assert_non_null(strstr(pf_strerror(PF_ECSUM), "checksum"));
	assert_string_equal(pf_strerror(PF_ENOTREG), "not a regular file");
}

static void test_errno(void **state)
{
	(void)state;
	assert_string_equal(pf_strerror(0), "success");
	assert_string_equal(pf_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(pf_strerror(-EIO), "Input/output error");
	assert_string_equal(pf_strerror(-ENOMEM), strerror(ENOMEM));
	for (int e = 1; e <= PF_ERRNO_MAX; e++)
		assert_readable(pf_strerror(-e));
}

static void test_unknown(void **state)
{
	(void)state;
	const int odd[] = { 1, EIO, INT_MAX, -4000, -PF_ERRNO_MAX - 1, PF_E_END, PF_EEXT2_FIRST + 1,
			    PF_EEXT2_FIRST - PF_EEXT2_SPAN + 1, PF_EEXT2_FIRST - PF_EEXT2_SPAN, INT_MIN };
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		assert_string_equal(pf_strerror(odd[i]), "unknown error");
}

static void test_ext2(void **state)
{
	(void)state;
	assert_int_equal(pf_err_from_ext2(0), 0);
	assert_int_equal(pf_err_from_ext2(ENOENT), -ENOENT); /* the unix io manager passes errno through */
	assert_int_equal(pf_err_from_ext2(EXT2_ET_NO_MEMORY), -ENOMEM);
	assert_int_equal(pf_err_from_ext2(0x12345600L), PF_EEXT2_OTHER); /* another com_err table */
	assert_readable(pf_strerror(PF_EEXT2_OTHER));
	/* every other libext2fs code keeps the text com_err gives it, and is told apart from ours */
	initialize_ext2_error_table();
	for (int k = 0; k < et_ext2_error_table.n_msgs; k++) {
		long ec = et_ext2_error_table.base + k;
		if (ec == EXT2_ET_NO_MEMORY)
			continue;
		int rc = pf_err_from_ext2(ec);
		assert_true(rc <= PF_EEXT2_FIRST && rc > PF_EEXT2_FIRST - PF_EEXT2_SPAN);
		assert_string_equal(pf_strerror(rc), error_message(ec));
	}
	assert_non_null(strstr(pf_strerror(pf_err_from_ext2(EXT2_ET_SHORT_READ)), "short read"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_codes),
		cmocka_unit_test(test_errno),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_ext2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
