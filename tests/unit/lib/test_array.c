/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/array.c: growing from the first capacity, doubling, the limit, byte-count overflow, the typed macro. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static void test_first_then_doubling(void **state)
{
	(void)state;
	int *v = NULL;
	size_t cap = 0;
	assert_int_equal(PF_ARRAY_RESERVE(v, cap, 1, 16), 0);
	assert_non_null(v);
	assert_int_equal(cap, 16);
	for (int i = 0; i < 16; i++)
		v[i] = i * 7;
	int *before = v;
	assert_int_equal(PF_ARRAY_RESERVE(v, cap, 16, 16), 0); /* room already: nothing moves */
	assert_ptr_equal(v, before);
	assert_int_equal(cap, 16);
	assert_int_equal(PF_ARRAY_RESERVE(v, cap, 17, 16), 0);
	assert_int_equal(cap, 32);
	assert_int_equal(PF_ARRAY_RESERVE(v, cap, 200, 16), 0); /* doubles until it fits */
	assert_int_equal(cap, 256);
	for (int i = 0; i < 16; i++)
		assert_int_equal(v[i], i * 7); /* kept across the moves */
	v[255] = 1;
	free(v);
}

static void test_first_zero_means_one(void **state)
{
	(void)state;
	void *s = NULL;
	size_t cap = 0;
	assert_int_equal(pf_array_reserve(&s, &cap, 1, 1, 0), 0);
	assert_int_equal(cap, 1);
	assert_int_equal(pf_array_reserve(&s, &cap, 3, 1, 0), 0);
	assert_int_equal(cap, 4);
	free(s);
}

static void test_limit(void **state)
{
	(void)state;
	void *p = NULL;
	size_t cap = 0;
	assert_int_equal(pf_array_reserve_max(&p, &cap, 65, 8, 64, 100), 0);
	assert_int_equal(cap, 100); /* doubling stops at the limit */
	void *was = p;
	assert_int_equal(pf_array_reserve_max(&p, &cap, 101, 8, 64, 100), -E2BIG);
	assert_ptr_equal(p, was); /* left as it was */
	assert_int_equal(cap, 100);
	free(p);
}

static void test_byte_count_overflow(void **state)
{
	(void)state;
	uint64_t *v = NULL;
	size_t cap = 0;
	assert_int_equal(PF_ARRAY_RESERVE(v, cap, SIZE_MAX / sizeof(*v) + 1, 16), -ENOMEM);
	assert_null(v);
	assert_int_equal(cap, 0);
	assert_int_equal(PF_ARRAY_RESERVE(v, cap, 4, 16), 0);
	assert_int_equal(PF_ARRAY_RESERVE(v, cap, SIZE_MAX / 2, 16), -ENOMEM); /* wraps in bytes */
	assert_non_null(v);
	assert_int_equal(cap, 16);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_then_doubling),
		cmocka_unit_test(test_first_zero_means_one),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_byte_count_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
