/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing one boot into the state: a free trace name, the early-boot buffer, the reorder marker's one boot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "boot_store.h"
#include "config.h"
#include "safe_file.h"
#include "support_tmpdir.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Each test its own state and runtime dirs under the group's scratch directory. */
static void paths(struct pf_boot_paths *p, const char *test)
{
	struct pf_config cfg;
	pf_config_defaults(&cfg);
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s/%s/state", pf_test_dir, test);
	snprintf(cfg.runtime_dir, sizeof(cfg.runtime_dir), "%s/%s/run", pf_test_dir, test);
	pf_boot_paths_init(p, &cfg);
	char top[PF_BOOT_PATH];
	snprintf(top, sizeof(top), "%s/%s", pf_test_dir, test);
	assert_int_equal(pf_mkdir(top, 0700), 0); /* the directories' parent: the daemon creates no parents */
}

static void create(const char *dir, const char *name, const char *text)
{
	char path[PF_BOOT_PATH + 128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(pf_mkdir_p(dir, 0755), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_trace_name_free(void **state)
{
	(void)state;
	struct pf_boot_paths p;
	paths(&p, "name");
	char name[128];
	pf_boot_trace_name_free(&p, name, sizeof(name), 7, "id");
	assert_string_equal(name, "trace-7-id.pf");
	create(p.traces, "trace-7-id.pf", "");
	create(p.pending_traces, "trace-7-id-2.pf", "");
	pf_boot_trace_name_free(&p, name, sizeof(name), 7, "id");
	assert_string_equal(name, "trace-7-id-3.pf");
}

static void test_buffer_and_reorder(void **state)
{
	(void)state;
	struct pf_boot_paths p;
	paths(&p, "buffer");
	struct pf_boot_record r = { .when = 42, .boot_s = 3.5, .io_ms = -1, .reads = -1, .sectors = -1 };
	strcpy(r.boot_id, "b");
	strcpy(r.end_source, "file");
	strcpy(r.disk, "-");
	assert_int_equal(pf_boot_buffer_pending(&p, NULL, NULL, &r), 0);
	assert_int_equal(access(p.pending_boottime, F_OK), 0);

	assert_false(pf_boot_reorder_armed(&p));
	assert_int_equal(pf_boot_reorder_consume(&p, &r), 0); /* no marker: nothing to do */
	create(p.state, "reorder-armed", "1700000000 sda1\n");
	assert_true(pf_boot_reorder_armed(&p));
	assert_int_equal(pf_boot_reorder_consume(&p, &r), 0);
	assert_false(pf_boot_reorder_armed(&p));
	char line[256] = "";
	FILE *f = fopen(p.reorder_log, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "42 boot b recorded after reorder armed: 1700000000 sda1; shutdown run: outcome in "
				  "that shutdown's kernel log only\n");

	/* the run at the end of shutdown left its line (padded with newlines, as prefetch-reorder writes it) */
	create(p.state, "reorder-armed", "1700000100 sda1\n");
	assert_true(pf_boot_reorder_moved(&p)); /* no outcome kept: the arming counts */
	static const struct {
		const char *line;
		int moved;
	} outcomes[] = {
		{ "1700000150 pending: no outcome\n", 0 },
		{ "1700000150 done: moved 0 blocks (0.0 MB) in 0 units\n", 0 },
		{ "1700000150 not moved: below REORDER_MIN_GAIN_PERCENT\n", 0 },
		{ "1700000150 time budget spent: moved 7 blocks (0.0 MB)\n", 1 },
		{ "1700000150 write budget spent: moved 9 blocks (0.0 MB)\n", 1 },
		{ "1700000160 done: moved 42 blocks\n\n\n\n", 1 }, /* the last one is consumed below */
	};
	for (size_t i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++) {
		create(p.state, "reorder-outcome", outcomes[i].line);
		assert_int_equal(pf_boot_reorder_moved(&p), outcomes[i].moved);
	}
	r.when = 43;
	assert_int_equal(pf_boot_reorder_consume(&p, &r), 0);
	assert_int_equal(access(p.reorder_outcome, F_OK), -1); /* counted once */
	f = fopen(p.reorder_log, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "43 boot b recorded after reorder armed: 1700000100 sda1; shutdown run: done: moved 42 "
				  "blocks\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_name_free),
		cmocka_unit_test(test_buffer_and_reorder),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
