/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /etc/default/prefetch parser: comments, quotes, bad values and unknown keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "config.h"

#include <stdio.h>
#include <string.h>

static int has_warning(const struct pf_config_diag *d, const char *needle)
{
	for (int i = 0; i < d->nwarnings; i++)
		if (strstr(d->warnings[i], needle))
			return 1;
	return 0;
}

static void test_defaults(void **state)
{
	(void)state;
	struct pf_config c;
	pf_config_defaults(&c);
	assert_int_equal(c.aggregation_count, 3);
	assert_int_equal(c.chunk_size_blocks, 2000);
	assert_int_equal(c.enable_reordering, 0);
	assert_int_equal(c.reorder_time_budget, 20);
	assert_string_equal(c.state_dir, "/var/lib/prefetch");
	assert_int_equal(c.nmounts, 0);
	assert_int_equal(c.enable_replay, 1);
}

static void test_historical_keys_and_quotes(void **state)
{
	(void)state;
	struct pf_config c;
	struct pf_config_diag d = { 0 };
	pf_config_defaults(&c);
	pf_config_parse(&c,
			"# comment\n"
			"\n"
			"PREFETCH_DIR=\"/srv/prefetch\"   # trailing comment\n"
			"  LOGIN_TRACING_DELAY=30\n"
			"export TRACE_AGGREGATION_COUNT='5'\n"
			"ENABLE_FILE_REORDERING=yes\n"
			"CHUNK_SIZE_BLOCKS=4096\n"
			"PREFETCH_MEDIUM=rotational\n"
			"TRACE_MOUNTS=\"/ /usr,/boot\"\n"
			"ENABLE_APP_PREFETCHING=1\n"
			"ENABLE_REPLAY=no\n",
			"test", &d);
	assert_int_equal(d.nwarnings, 0);
	assert_string_equal(c.state_dir, "/srv/prefetch");
	assert_int_equal(c.login_tracing_delay, 30);
	assert_int_equal(c.aggregation_count, 5);
	assert_int_equal(c.enable_reordering, 1);
	assert_int_equal(c.chunk_size_blocks, 4096);
	assert_int_equal(c.medium, PF_MEDIUM_FORCE_ROTATIONAL);
	assert_int_equal(c.nmounts, 3);
	assert_string_equal(c.mounts[1], "/usr");
	assert_string_equal(c.mounts[2], "/boot");
	assert_int_equal(c.enable_replay, 0);
	assert_int_equal(c.enable_prefetch, 1); /* the ignored historical key changes nothing */
}

static void test_bad_values_keep_defaults(void **state)
{
	(void)state;
	struct pf_config c;
	struct pf_config_diag d = { 0 };
	pf_config_defaults(&c);
	pf_config_parse(&c,
			"CHUNK_SIZE_BLOCKS=lots\n"
			"TRACE_AGGREGATION_COUNT=0\n"
			"ENABLE_FILE_REORDERING=maybe\n"
			"PREFETCH_DIR=relative/path\n"
			"NO_SUCH_KEY=1\n"
			"this is not an assignment\n"
			"MAX_PREFETCH_MB=\"12\n"
			"PREFETCH_MEDIUM=floppy\n",
			"/etc/default/prefetch", &d);
	assert_int_equal(c.chunk_size_blocks, 2000);
	assert_int_equal(c.aggregation_count, 3);
	assert_int_equal(c.enable_reordering, 0);
	assert_string_equal(c.state_dir, "/var/lib/prefetch");
	assert_int_equal(c.max_prefetch_mb, 256);
	assert_int_equal(c.medium, PF_MEDIUM_AUTO);
	assert_int_equal(d.nwarnings, 8);
	/* each warning names the file and line */
	assert_true(has_warning(&d, "/etc/default/prefetch:1: CHUNK_SIZE_BLOCKS"));
	assert_true(has_warning(&d, ":2: TRACE_AGGREGATION_COUNT"));
	assert_true(has_warning(&d, ":5: unknown key NO_SUCH_KEY"));
	assert_true(has_warning(&d, ":6: not a KEY=value"));
	assert_true(has_warning(&d, ":7: MAX_PREFETCH_MB: unterminated quote"));
}

static void test_missing_file(void **state)
{
	(void)state;
	struct pf_config c;
	pf_config_defaults(&c);
	assert_true(pf_config_load(&c, "/nonexistent/prefetch", NULL) < 0);
	assert_int_equal(c.aggregation_count, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_historical_keys_and_quotes),
		cmocka_unit_test(test_bad_values_keep_defaults),
		cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
