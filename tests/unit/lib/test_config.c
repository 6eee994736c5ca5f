/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /etc/default/prefetch parser: comments, quotes, bad values and unknown keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "config.h"
#include "note.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int has_warning(const struct pf_note *d, const char *needle)
{
	return strstr(pf_note_text(d), needle) != NULL;
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
	char kept[PF_CONFIG_WARNINGS_SIZE];
	struct pf_note d = pf_note_into(kept, sizeof(kept));
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
	assert_int_equal(d.kept, 0);
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
	char kept[PF_CONFIG_WARNINGS_SIZE];
	struct pf_note d = pf_note_into(kept, sizeof(kept));
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
	assert_int_equal(d.kept, 8);
	assert_int_equal(d.lines, 8);
	/* each warning names the file and line, and for a number the range */
	assert_true(has_warning(&d, "/etc/default/prefetch:1: CHUNK_SIZE_BLOCKS: 'lots' is not a number (1..1073741824); "
				    "line ignored"));
	assert_true(has_warning(&d, ":2: TRACE_AGGREGATION_COUNT: '0' is not a number (1..32)"));
	assert_true(has_warning(&d, ":3: ENABLE_FILE_REORDERING: 'maybe' is not 0 or 1"));
	assert_true(has_warning(&d, ":4: PREFETCH_DIR: 'relative/path' is not an absolute path"));
	assert_true(has_warning(&d, ":5: unknown key NO_SUCH_KEY; line ignored"));
	assert_true(has_warning(&d, ":6: not a KEY=value line; line ignored"));
	assert_true(has_warning(&d, ":7: MAX_PREFETCH_MB: unterminated quote"));
	assert_true(has_warning(&d, ":8: PREFETCH_MEDIUM: 'floppy' is not auto, rotational, slow-flash or fast-flash"));
}

/* What sh would read differently (or run) is a bad line, never taken another way; what sh reads the same is. */
static void test_shell_syntax(void **state)
{
	(void)state;
	struct pf_config c;
	char kept[PF_CONFIG_WARNINGS_SIZE];
	struct pf_note d = pf_note_into(kept, sizeof(kept));
	pf_config_defaults(&c);
	pf_config_parse(&c,
			"PREFETCH_DIR=$HOME/x\n"                   /* 1 */
			"LOGIN_TRACING_DELAY=30s\n"                /* 2 */
			"TRACE_TIMEOUT = 5\n"                      /* 3 */
			"REPLAY_TIMEOUT= 5\n"                      /* 4 */
			"REPLAY_THREADS=5 6\n"                     /* 5 */
			"PREFETCH_RUNTIME_DIR=\"/run/$USER\"\n"     /* 6 */
			"MAX_PREFETCH_MB=`echo 5`\n"               /* 7 */
			"MAX_PREFETCH_FILES=5;reboot\n"            /* 8 */
			"TRACE_MOUNTS=~/x\n"                       /* 9 */
			"CHUNK_SIZE_BLOCKS=\\5\n"                   /* 10 */
			"REORDER_TIME_BUDGET=5\r\n"                /* 11 */
			"TRACE_AGGREGATION_COUNT=' 5'\n"           /* 12: sh keeps the blank: not a number */
			"ENABLE_PREFETCH=0 # off for now\n"        /* good from here on */
			"REORDER_FREE_RESERVE_PERCENT=1\"0\"\n"     /* words run together: 10 */
			"export ENABLE_REPLAY=\"no\"\n"
			"START_FROM_INITRAMFS=o'ff'\n"
			"\tPREFETCH_MEDIUM=hdd\n"
			"TRACE_MOUNTS='/a /b' # a comment\n"
			"LOGIN_TRACING_DELAY=\"1\"'2'3\n",
			"f", &d);
	assert_int_equal(d.lines, 12);
	assert_true(has_warning(&d, "f:1: PREFETCH_DIR: $ expansion is not supported; line ignored"));
	assert_true(has_warning(&d, "f:2: LOGIN_TRACING_DELAY: '30s' is not a number (0..3600); line ignored"));
	assert_true(has_warning(&d, "f:3: TRACE_TIMEOUT: no spaces allowed around '='"));
	assert_true(has_warning(&d, "f:4: REPLAY_TIMEOUT: no spaces allowed around '='"));
	assert_true(has_warning(&d, "f:5: REPLAY_THREADS: text after the value"));
	assert_true(has_warning(&d, "f:6: PREFETCH_RUNTIME_DIR: $ expansion is not supported"));
	assert_true(has_warning(&d, "f:7: MAX_PREFETCH_MB: ` command substitution"));
	assert_true(has_warning(&d, "f:8: MAX_PREFETCH_FILES: unquoted"));
	assert_true(has_warning(&d, "f:9: TRACE_MOUNTS: ~ expansion"));
	assert_true(has_warning(&d, "f:10: CHUNK_SIZE_BLOCKS: a backslash"));
	assert_true(has_warning(&d, "f:11: REORDER_TIME_BUDGET: carriage return"));
	assert_true(has_warning(&d, "f:12: TRACE_AGGREGATION_COUNT: ' 5' is not a number (1..32)"));
	struct pf_config def;
	pf_config_defaults(&def);
	assert_string_equal(c.state_dir, def.state_dir);
	assert_string_equal(c.runtime_dir, def.runtime_dir);
	assert_int_equal(c.trace_timeout, def.trace_timeout);
	assert_int_equal(c.replay_threads, def.replay_threads);
	assert_int_equal(c.aggregation_count, def.aggregation_count);
	assert_int_equal(c.enable_prefetch, 0);
	assert_int_equal(c.reorder_reserve_percent, 10);
	assert_int_equal(c.enable_replay, 0);
	assert_int_equal(c.start_from_initramfs, 0);
	assert_int_equal(c.medium, PF_MEDIUM_FORCE_ROTATIONAL);
	assert_int_equal(c.nmounts, 2);
	assert_string_equal(c.mounts[0], "/a");
	assert_string_equal(c.mounts[1], "/b");
	assert_int_equal(c.login_tracing_delay, 123);
}

/* A bad TRACE_MOUNTS line changes nothing, not even its good paths; a later line overrides an earlier one. */
static void test_line_ignored_as_a_whole(void **state)
{
	(void)state;
	struct pf_config c;
	char kept[PF_CONFIG_WARNINGS_SIZE];
	struct pf_note d = pf_note_into(kept, sizeof(kept));
	pf_config_defaults(&c);
	pf_config_parse(&c, "TRACE_MOUNTS=/a\nTRACE_MOUNTS=\"/b relative\"\nREPLAY_THREADS=2\nREPLAY_THREADS=3\n", "f", &d);
	assert_int_equal(d.lines, 1);
	assert_true(has_warning(&d, "f:2: TRACE_MOUNTS: 'relative' is not an absolute path"));
	assert_int_equal(c.nmounts, 1);
	assert_string_equal(c.mounts[0], "/a");
	assert_int_equal(c.replay_threads, 3);

	/* the same text parses to the same bytes every time (the fuzz target compares whole structs) */
	struct pf_config again;
	pf_config_defaults(&again);
	pf_config_parse(&again, "TRACE_MOUNTS=/a\nTRACE_MOUNTS=\"/b relative\"\nREPLAY_THREADS=2\nREPLAY_THREADS=3\n", "f", NULL);
	assert_memory_equal(&c, &again, sizeof(c));
}

/* The values as 'prefetchd config' prints them, for every key; unknown keys are -ENOENT. */
static void test_get(void **state)
{
	(void)state;
	struct pf_config c;
	pf_config_defaults(&c);
	pf_config_parse(&c, "TRACE_MOUNTS=/,/usr\nPREFETCH_MEDIUM=solid\nENABLE_FILE_REORDERING=yes\n", "f", NULL);
	char v[64];
	assert_int_equal(pf_config_get(&c, "TRACE_MOUNTS", v, sizeof(v)), 0);
	assert_string_equal(v, "/ /usr");
	assert_int_equal(pf_config_get(&c, "PREFETCH_MEDIUM", v, sizeof(v)), 0);
	assert_string_equal(v, "fast-flash");
	/* the flash classes, and ssd kept for old configs */
	pf_config_parse(&c, "PREFETCH_MEDIUM=slow-flash\n", "f", NULL);
	assert_int_equal(c.medium, PF_MEDIUM_FORCE_SLOW_FLASH);
	assert_int_equal(pf_config_get(&c, "PREFETCH_MEDIUM", v, sizeof(v)), 0);
	assert_string_equal(v, "slow-flash");
	pf_config_parse(&c, "PREFETCH_MEDIUM=ssd\n", "f", NULL);
	assert_int_equal(c.medium, PF_MEDIUM_FORCE_FAST_FLASH);
	pf_config_parse(&c, "PREFETCH_MEDIUM=Fast-Flash\n", "f", NULL);
	assert_int_equal(c.medium, PF_MEDIUM_FORCE_FAST_FLASH);
	assert_int_equal(pf_medium_override_parse("floppy"), -EINVAL);
	assert_int_equal(pf_medium_override_parse("hdd"), PF_MEDIUM_FORCE_ROTATIONAL);
	assert_int_equal(pf_config_get(&c, "ENABLE_FILE_REORDERING", v, sizeof(v)), 0);
	assert_string_equal(v, "1");
	assert_int_equal(pf_config_get(&c, "CHUNK_SIZE_BLOCKS", v, sizeof(v)), 0);
	assert_string_equal(v, "2000");
	assert_int_equal(pf_config_get(&c, "PREFETCH_DIR", v, sizeof(v)), 0);
	assert_string_equal(v, "/var/lib/prefetch");
	assert_int_equal(pf_config_get(&c, "NO_SUCH_KEY", v, sizeof(v)), -ENOENT);
	assert_int_equal(pf_config_get(&c, "ENABLE_APP_PREFETCHING", v, sizeof(v)), -ENOENT);
	assert_int_equal(pf_config_get(&c, "PREFETCH_DIR", v, 4), -ENOSPC);
	/* every listed key has a value, and the list is the struct's settings */
	size_t n = 0;
	for (const char *k; (k = pf_config_key_name(n)); n++)
		assert_int_equal(pf_config_get(&c, k, v, sizeof(v)), 0);
	assert_int_equal(n, 24);
}

/* The flash keys of a reorder (issue #17): 0 = auto / none, in range taken, out of range a warning naming it. */
static void test_reorder_flash_keys(void **state)
{
	(void)state;
	struct pf_config c;
	char kept[PF_CONFIG_WARNINGS_SIZE];
	struct pf_note d = pf_note_into(kept, sizeof(kept));
	pf_config_defaults(&c);
	assert_int_equal(c.reorder_erase_block_kb, 0);
	assert_int_equal(c.reorder_write_budget_mb, 0);
	pf_config_parse(&c, "REORDER_ERASE_BLOCK_KB=1024\nREORDER_WRITE_BUDGET_MB=64\n", "cfg", &d);
	assert_int_equal(d.lines, 0);
	assert_int_equal(c.reorder_erase_block_kb, 1024);
	assert_int_equal(c.reorder_write_budget_mb, 64);
	/* REORDER_MAKE_ROOM (issue #13): on by default, a boolean */
	assert_int_equal(c.reorder_make_room, 1);
	pf_config_parse(&c, "REORDER_MAKE_ROOM=no\n", "cfg", &d);
	assert_int_equal(d.lines, 0);
	assert_int_equal(c.reorder_make_room, 0);
	pf_config_parse(&c, "REORDER_ERASE_BLOCK_KB=65537\nREORDER_WRITE_BUDGET_MB=-1\n", "cfg", &d);
	assert_int_equal(d.lines, 2);
	assert_int_equal(c.reorder_erase_block_kb, 1024);
	assert_int_equal(c.reorder_write_budget_mb, 64);
	assert_true(has_warning(&d, "cfg:1: REORDER_ERASE_BLOCK_KB: '65537' is not a number (0..65536)"));
	assert_true(has_warning(&d, "cfg:2: REORDER_WRITE_BUDGET_MB: '-1' is not a number (0..1048576)"));
	char v[32];
	assert_int_equal(pf_config_get(&c, "REORDER_ERASE_BLOCK_KB", v, sizeof(v)), 0);
	assert_string_equal(v, "1024");
}

/* The defaults are in range: each parsed back from its own printed value gives the same settings. */
static void test_defaults_round_trip(void **state)
{
	(void)state;
	struct pf_config c, back;
	pf_config_defaults(&c);
	memcpy(&back, &c, sizeof(c));
	char text[4096] = "", v[256];
	const char *k;
	for (size_t i = 0; (k = pf_config_key_name(i)); i++) {
		assert_int_equal(pf_config_get(&c, k, v, sizeof(v)), 0);
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s='%s'\n", k, v);
	}
	char kept[PF_CONFIG_WARNINGS_SIZE];
	struct pf_note d = pf_note_into(kept, sizeof(kept));
	pf_config_parse(&back, text, "f", &d);
	assert_int_equal(d.lines, 0);
	assert_memory_equal(&c, &back, sizeof(c));
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
		cmocka_unit_test(test_shell_syntax),
		cmocka_unit_test(test_line_ignored_as_a_whole),
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_defaults_round_trip),
		cmocka_unit_test(test_reorder_flash_keys),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
