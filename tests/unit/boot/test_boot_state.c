/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd boot's state directory: trace names, listing order, rotation, the early-boot buffer, boot-end file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "boot_end.h"
#include "boot_state.h"
#include "boot_log.h"
#include "config.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[192]; /* room for "/state" and more in the config's paths */

static int setup(void **state)
{
	(void)state;
	return pf_test_mkdtemp(root, sizeof(root), "test_boot_state") ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return pf_test_rmtree(root);
}

static void touch(const char *dir, const char *name, const char *text)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void paths(struct pf_boot_paths *p)
{
	struct pf_config cfg;
	pf_config_defaults(&cfg);
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s/state", root);
	snprintf(cfg.runtime_dir, sizeof(cfg.runtime_dir), "%s/run", root);
	pf_boot_paths_init(p, &cfg);
}

static void test_paths_and_names(void **state)
{
	(void)state;
	struct pf_boot_paths p;
	paths(&p);
	char want[600];
	snprintf(want, sizeof(want), "%s/state/layout", root);
	assert_string_equal(p.layout, want);
	snprintf(want, sizeof(want), "%s/run/prefetchd.pid", root);
	assert_string_equal(p.pidfile, want);
	snprintf(want, sizeof(want), "%s/run/pending/traces", root);
	assert_string_equal(p.pending_traces, want);
	char name[128];
	pf_trace_name(name, sizeof(name), 1795288058, "0f1e");
	assert_string_equal(name, "trace-1795288058-0f1e.pf");
	pf_trace_name(name, sizeof(name), 5, "");
	assert_string_equal(name, "trace-5--.pf");
}

static void test_list_and_rotate(void **state)
{
	(void)state;
	struct pf_boot_paths p;
	paths(&p);
	char **names;
	size_t n;
	/* a missing directory is an empty list */
	assert_int_equal(pf_traces_list(p.traces, &names, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(pf_boot_dir_writable(p.traces), -ENOENT); /* no missing parent is created */
	assert_int_equal(pf_boot_dir_writable(p.state), 0);
	assert_int_equal(pf_boot_dir_writable(p.traces), 0);
	/* numeric order, not string order; other files ignored */
	touch(p.traces, "trace-900-b.pf", "x");
	touch(p.traces, "trace-1000-a.pf", "x");
	touch(p.traces, "trace-99-c.pf", "x");
	touch(p.traces, "trace-1000-a.pf.tmp.12", "x");
	touch(p.traces, "notes.txt", "x");
	touch(p.traces, "trace-x-y.pf", "x");
	assert_int_equal(pf_traces_list(p.traces, &names, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(names[0], "trace-99-c.pf");
	assert_string_equal(names[1], "trace-900-b.pf");
	assert_string_equal(names[2], "trace-1000-a.pf");
	pf_trace_names_free(names, n);
	assert_int_equal(pf_traces_rotate(p.traces, 2), 1);
	assert_int_equal(pf_traces_rotate(p.traces, 2), 0);
	assert_int_equal(pf_traces_list(p.traces, &names, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "trace-900-b.pf");
	pf_trace_names_free(names, n);
	/* Three boots' traces within one second (same boot id: the "-N" suffixes; another machine's clock reset at
	 * every boot: other ids): by the file written last, not by name, where "-2" sorts before ".pf". */
	const char *same[] = { "trace-2000-id.pf", "trace-2000-id-2.pf", "trace-2000-id-3.pf" };
	for (int i = 0; i < 3; i++) {
		touch(p.traces, same[i], "x");
		struct timespec ts[2] = { { .tv_sec = 2000, .tv_nsec = 100 * (i + 1) }, { .tv_sec = 2000, .tv_nsec = 100 * (i + 1) } };
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", p.traces, same[i]);
		assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	}
	assert_int_equal(pf_traces_list(p.traces, &names, &n), 0);
	assert_int_equal(n, 5);
	for (int i = 0; i < 3; i++)
		assert_string_equal(names[2 + i], same[i]);
	pf_trace_names_free(names, n);
	assert_int_equal(pf_traces_rotate(p.traces, 2), 3); /* the last two written stay */
	assert_int_equal(pf_traces_list(p.traces, &names, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "trace-2000-id-2.pf");
	assert_string_equal(names[1], "trace-2000-id-3.pf");
	pf_trace_names_free(names, n);
}

static void test_flush_pending(void **state)
{
	(void)state;
	struct pf_boot_paths p;
	paths(&p);
	assert_int_equal(pf_boot_dir_writable(p.runtime), 0);
	assert_int_equal(pf_boot_dir_writable(p.pending), 0);
	assert_int_equal(pf_boot_dir_writable(p.pending_traces), 0);
	assert_int_equal(pf_boot_dir_writable(p.state), 0);
	/* the state directory is created root-only: what it holds lists the files users opened */
	struct stat sd;
	assert_int_equal(stat(p.state, &sd), 0);
	assert_int_equal(sd.st_mode & 0777, 0700);
	touch(p.pending_traces, "trace-2000-z.pf", "trace bytes");
	struct pf_boot_record r = { .when = 2000, .boot_s = 12.5, .prefetch = 1, .io_ms = -1, .reads = -1, .sectors = -1 };
	strcpy(r.boot_id, "z");
	strcpy(r.end_source, "file");
	strcpy(r.disk, "-");
	assert_int_equal(pf_boottime_append(p.pending_boottime, &r), 0);
	assert_int_equal(pf_boot_flush_pending(&p), 2);
	char path[700];
	snprintf(path, sizeof(path), "%s/trace-2000-z.pf", p.traces);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 11);
	assert_int_equal(st.st_mode & 0777, 0600); /* a trace lists the files users opened */
	snprintf(path, sizeof(path), "%s/trace-2000-z.pf", p.pending_traces);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(p.pending_boottime, F_OK), -1);
	struct pf_boot_record *recs;
	size_t n, bad;
	assert_int_equal(pf_boottime_load(p.boottime, &recs, &n, &bad), 0);
	assert_true(n >= 1);
	assert_string_equal(recs[n - 1].boot_id, "z");
	free(recs);
	/* nothing left: nothing moved */
	assert_int_equal(pf_boot_flush_pending(&p), 0);
}

static void test_unwritable(void **state)
{
	(void)state;
	char path[600];
	snprintf(path, sizeof(path), "%s/file", root);
	touch(root, "file", "x");
	snprintf(path, sizeof(path), "%s/file/sub", root);
	assert_int_equal(pf_boot_dir_writable(path), -ENOTDIR);
}

static void test_boot_end(void **state)
{
	(void)state;
	double up = 0;
	assert_int_equal(pf_boot_end_parse("53.40\n", &up), 0);
	assert_true(fabs(up - 53.4) < 1e-9);
	assert_int_equal(pf_boot_end_parse("53.40 12.00", &up), 0);
	assert_int_equal(pf_boot_end_parse("", &up), -EINVAL);
	assert_int_equal(pf_boot_end_parse("abc", &up), -EINVAL);
	assert_int_equal(pf_boot_end_parse("-1", &up), -EINVAL);
	assert_int_equal(pf_boot_end_parse("inf", &up), -EINVAL);
	assert_int_equal(pf_boot_end_parse("12x", &up), -EINVAL);
	/* the file wins over systemd and trace stop */
	touch(root, "boot-end", "42.25\n");
	char path[600], src[16];
	snprintf(path, sizeof(path), "%s/boot-end", root);
	up = pf_boot_end(path, src, sizeof(src));
	assert_string_equal(src, "file");
	assert_true(fabs(up - 42.25) < 1e-9);
	/* through a symbolic link: not read (the runtime directory's files are state files, state_dir.h) */
	char link[600];
	snprintf(link, sizeof(link), "%s/boot-end-link", root);
	assert_int_equal(symlink(path, link), 0);
	up = pf_boot_end(link, src, sizeof(src));
	assert_string_not_equal(src, "file");
	unlink(link);
	/* no file: systemd (when it is PID 1 and finished) or the uptime now */
	snprintf(path, sizeof(path), "%s/none", root);
	up = pf_boot_end(path, src, sizeof(src));
	assert_true(!strcmp(src, "systemd") || !strcmp(src, "trace-stop"));
	assert_true(up > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_and_names), cmocka_unit_test(test_list_and_rotate),
		cmocka_unit_test(test_flush_pending),   cmocka_unit_test(test_unwritable),
		cmocka_unit_test(test_boot_end),
	};
	return cmocka_run_group_tests_name("boot_state", tests, setup, teardown);
}
