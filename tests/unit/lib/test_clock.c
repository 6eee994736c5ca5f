/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/clock.c: the monotonic clock in both units, its pace against a sleep, and the uptime beside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "clock.h"

#include <math.h>
#include <time.h>

static void test_monotonic(void **state)
{
	(void)state;
	uint64_t a = pf_monotonic_ns();
	double s = pf_monotonic_s();
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	while (nanosleep(&nap, &nap) != 0)
		;
	uint64_t b = pf_monotonic_ns();
	assert_true(a > 0);
	assert_true(b - a >= 20u * 1000 * 1000); /* a sleep of 20 ms passed on it */
	assert_true(b - a < 10ull * 1000 * 1000 * 1000);
	assert_true(fabs(s - (double)a / 1e9) < 1.0); /* the same clock in seconds */
	assert_true(pf_monotonic_s() >= s + 0.02);
}

static void test_uptime(void **state)
{
	(void)state;
	double mono = pf_monotonic_s();
	double up = 0;
	assert_int_equal(pf_uptime(&up), 0);
	/* /proc/uptime counts from boot like CLOCK_MONOTONIC, plus any time suspended: never less */
	assert_true(up > 0);
	assert_true(up >= mono - 0.05);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monotonic),
		cmocka_unit_test(test_uptime),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
