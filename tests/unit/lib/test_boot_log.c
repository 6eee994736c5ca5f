/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Boot-time log: inputs found by fuzzing it, each kept here so that what it
 * broke stays fixed.  (The log's ordinary behaviour is tested with the report, tests/unit/report/.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "boot_log.h"

#include <errno.h>
#include <string.h>

/* A record that reads must write back to a line that reads to the same record: 'prefetchd report' reads
 * what 'prefetchd boot' appends. */
static void assert_rewrites(const char *line)
{
	struct pf_boot_record r, back;
	char out[PF_BOOTTIME_LINE_MAX], again[PF_BOOTTIME_LINE_MAX];
	assert_int_equal(pf_boot_record_parse(line, &r), 0);
	assert_true(pf_boot_record_format(&r, out, sizeof(out)) > 0);
	assert_int_equal(pf_boot_record_parse(out, &back), 0);
	assert_true(pf_boot_record_format(&back, again, sizeof(again)) > 0);
	assert_string_equal(out, again);
}

/* fuzz_boot_log: a boot time just under the limit was read, but written rounded to the limit ("10000000.00"),
 * which did not read any more. */
static void test_boot_s_rounded_up_to_the_limit(void **state)
{
	(void)state;
	assert_rewrites("0d3e5f6a 1795288158 9999999.999 systemd 1 0 sda 2210 3120 398112");
	struct pf_boot_record r;
	assert_int_equal(pf_boot_record_parse("id 1 10000000.01 systemd 1 0 sda 5 6 7", &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot_s_rounded_up_to_the_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
