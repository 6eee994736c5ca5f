/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/compare.c: the comparison of two kinds of boots that the self-check and 'prefetchd report' share, on
 * known samples: a clear difference each way, clearly none, not clear (with how many more boots), too few. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "compare.h"

#include <math.h>
#include <string.h>

static void test_clear(void **state)
{
	(void)state;
	const double off[] = { 30.1, 29.8, 31.0, 30.4, 30.7 }, on[] = { 25.2, 24.9, 25.6, 25.0, 24.7, 25.3 };
	struct pf_comparison c;
	assert_int_equal(pf_compare(off, 5, on, 6, 0.03 * 30.4, &c), 0);
	assert_int_equal(c.na, 5);
	assert_int_equal(c.nb, 6);
	assert_true(fabs(c.median_a - 30.4) < 1e-9);
	assert_true(fabs(c.median_b - 25.1) < 1e-9);
	assert_true(fabs(c.diff + 5.3) < 1e-9);
	/* the interval holds the difference and lies within what resampled medians can give */
	assert_true(c.lo <= c.diff && c.diff <= c.hi);
	assert_true(c.lo >= 24.7 - 31.0 && c.hi <= 25.6 - 29.8 && c.hi < 0);
	assert_int_equal(c.verdict, PF_VERDICT_LOWER);
	char buf[200];
	assert_string_equal(pf_comparison_words(&c, "off", "on", "faster", "slower", "s", buf, sizeof(buf)), "clear: 5.30 s faster");
	/* the other way round: higher */
	assert_int_equal(pf_compare(on, 6, off, 5, 0.03 * 25.1, &c), 0);
	assert_int_equal(c.verdict, PF_VERDICT_HIGHER);
	assert_string_equal(pf_comparison_words(&c, "off", "on", "faster", "slower", "s", buf, sizeof(buf)), "clear: 5.30 s slower");
	/* the same samples, the same interval (a fixed seed) */
	struct pf_comparison again;
	assert_int_equal(pf_compare(on, 6, off, 5, 0.03 * 25.1, &again), 0);
	assert_true(again.lo == c.lo && again.hi == c.hi);
}

static void test_same(void **state)
{
	(void)state;
	/* a fast medium: 0.1 s apart, every resample within 3 % of 20 s */
	const double a[] = { 20.0, 20.3, 19.8, 20.1 }, b[] = { 20.2, 19.9, 20.1, 20.4 };
	struct pf_comparison c;
	assert_int_equal(pf_compare(a, 4, b, 4, 0.03 * 20.05, &c), 0);
	assert_int_equal(c.verdict, PF_VERDICT_SAME);
	assert_true(c.lo >= -0.6015 && c.hi <= 0.6015);
	char buf[200];
	assert_string_equal(pf_comparison_words(&c, "off", "on", "faster", "slower", "s", buf, sizeof(buf)),
			    "clear: no difference beyond 0.60 s either way");
}

static void test_unclear(void **state)
{
	(void)state;
	/* boot times spread over 11 s, medians 1 s apart: not clear, and more boots are named */
	const double a[] = { 28, 34, 31, 25, 36, 30 }, b[] = { 27, 33, 29, 24, 34, 30 };
	struct pf_comparison c;
	assert_int_equal(pf_compare(a, 6, b, 6, 0.03 * 30.5, &c), 0);
	assert_int_equal(c.verdict, PF_VERDICT_UNCLEAR);
	assert_true(c.lo < 0 && c.hi > 0);
	assert_true(c.more_a >= 1 && c.more_a == c.more_b);
	char buf[200];
	pf_comparison_words(&c, "off", "on", "faster", "slower", "s", buf, sizeof(buf));
	assert_non_null(strstr(buf, "not clear"));
	/* a 4 s difference in the same spread needs fewer boots than a 1 s one */
	const double b4[] = { 24, 30, 27, 21, 32, 26 };
	struct pf_comparison d;
	assert_int_equal(pf_compare(a, 6, b4, 6, 0.03 * 30.5, &d), 0);
	if (d.verdict == PF_VERDICT_UNCLEAR)
		assert_true(d.more_a < c.more_a);
	else
		assert_int_equal(d.verdict, PF_VERDICT_LOWER);
	/* a difference just within the margin: no likely number of boots settles which side of it it is */
	const double x[] = { 10, 12, 14, 10, 12, 14 }, y[] = { 10.29, 12.29, 14.29, 10.29, 12.29, 14.29 };
	assert_int_equal(pf_compare(x, 6, y, 6, 0.3, &d), 0);
	assert_int_equal(d.verdict, PF_VERDICT_UNCLEAR);
	assert_true(d.more_a > PF_COMPARE_MORE_MAX);
	pf_comparison_words(&d, "off", "on", "faster", "slower", "s", buf, sizeof(buf));
	assert_non_null(strstr(buf, "too close to the margin"));
}

static void test_too_few(void **state)
{
	(void)state;
	const double a[] = { 30, 31 }, b[] = { 25, 26, 24, 25 };
	struct pf_comparison c;
	assert_int_equal(pf_compare(a, 2, b, 4, 0.9, &c), 0);
	assert_int_equal(c.verdict, PF_VERDICT_TOO_FEW);
	assert_int_equal(c.more_a, 1);
	assert_int_equal(c.more_b, 0);
	assert_true(fabs(c.diff + 5.5) < 1e-9); /* the medians are still given */
	char buf[200];
	assert_string_equal(pf_comparison_words(&c, "off", "on", "faster", "slower", "s", buf, sizeof(buf)),
			    "too few boots to tell: 1 more off boot needed");
	assert_int_equal(pf_compare(a, 0, b, 0, 0.9, &c), 0);
	assert_int_equal(c.verdict, PF_VERDICT_TOO_FEW);
	assert_true(c.median_a < 0 && c.median_b < 0);
	assert_int_equal(c.more_a, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_unclear),
		cmocka_unit_test(test_too_few),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
