/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Boot-time log records (old logs too), /proc/diskstats parsing, the report's statistics, --by groups with their
 * comparisons (table, CSV, JSON), the line on a configured chunk size without boots, and SVG chart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "boot_log.h"
#include "report_stats.h"
#include "report_boots.h"
#include "report_chunk_note.h"
#include "report_groups.h"
#include "report_svg.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count(const char *hay, const char *needle);

static struct pf_boot_record rec(double boot, int prefetch, int reorder, long long io_ms)
{
	struct pf_boot_record r;
	pf_boot_record_init(&r);
	r.when = 1795288058;
	r.boot_s = boot;
	r.prefetch = prefetch;
	r.reorder = reorder;
	r.io_ms = io_ms;
	r.reads = 1000;
	r.sectors = 2048 * 10;
	strcpy(r.boot_id, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
	strcpy(r.end_source, "systemd");
	strcpy(r.disk, "sda");
	return r;
}

static void test_record_round_trip(void **state)
{
	(void)state;
	struct pf_boot_record a = rec(53.4, 1, 0, 12345), b;
	char line[PF_BOOTTIME_LINE_MAX];
	int n = pf_boot_record_format(&a, line, sizeof(line));
	assert_true(n > 0);
	assert_string_equal(line, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 1795288058 53.40 systemd 1 0 sda 12345 1000 20480 "
				 "0 - -1 -1 -1 -1 -1 -1 -1 -1 on -1 -1 - - -1 -1 -1");
	assert_int_equal(pf_boot_record_parse(line, &b), 0);
	assert_string_equal(b.boot_id, a.boot_id);
	assert_true(fabs(b.boot_s - 53.4) < 1e-9);
	assert_int_equal(b.prefetch, 1);
	assert_int_equal(b.reorder, 0);
	assert_int_equal(b.io_ms, 12345);
	assert_int_equal(b.sectors, 20480);
	assert_int_equal(pf_boot_record_setup(&b), PF_SETUP_REPLAY);
	/* a field with a space would shift the columns: written as "-" */
	strcpy(a.disk, "bad name");
	assert_true(pf_boot_record_format(&a, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, " - 12345 "));
	/* too small a buffer */
	assert_int_equal(pf_boot_record_format(&a, line, 10), -ENOSPC);
	/* a newer version may append fields */
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 1 - -1 -1 -1 0 - -1 -1 -1 -1 -1 -1 -1 -1 on 1 2 x y 3 extra", &b), 0);
	assert_int_equal(pf_boot_record_setup(&b), PF_SETUP_TRACE); /* nothing replayed */
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 1 - -1 -1 -1 extra", &b), 0);
	assert_int_equal(b.io_ms, -1);
	assert_true(b.replay_mib < 0 && b.psi_io_ms == -1 && !b.control); /* an older line: unknown */

	/* the self-check's columns round-trip; a line that stops among them keeps the rest unknown */
	a = rec(40.25, 0, 0, 900);
	a.control = 1;
	strcpy(a.policy, "narrow");
	a.replay_mib = 0;
	a.used_mib = 12.5;
	a.uncovered_mib = 80.126;
	a.psi_io_ms = 4321;
	a.replay_s = 1.5;
	a.replay_cpu_s = 0.25;
	a.replay_files = 0;
	a.used_files = 7;
	assert_true(pf_boot_record_format(&a, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, " 20480 1 narrow 0.00 12.50 80.13 4321 1.50 0.25 0 7"));
	assert_int_equal(pf_boot_record_parse(line, &b), 0);
	assert_int_equal(b.control, 1);
	assert_string_equal(b.policy, "narrow");
	assert_true(fabs(b.used_mib - 12.5) < 1e-9 && b.psi_io_ms == 4321 && fabs(b.replay_cpu_s - 0.25) < 1e-9);
	assert_true(b.replay_files == 0 && b.used_files == 7);
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 0 - -1 -1 -1 0 off 3.5", &b), 0);
	assert_string_equal(b.policy, "off");
	assert_true(fabs(b.replay_mib - 3.5) < 1e-9 && b.used_mib < 0 && b.psi_io_ms == -1);
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 0 - -1 -1 -1 2 off", &b), -EINVAL);   /* control 0/1 */
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 0 - -1 -1 -1 0 maybe", &b), -EINVAL); /* policy */
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 0 - -1 -1 -1 0 off -7", &b), -EINVAL); /* -1 only */
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 0 - -1 -1 -1 0 off nan", &b), -EINVAL);
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 0 - -1 -1 -1 0 off 1 1 1 1 1 1 -5", &b), -EINVAL);

	/* the settings' columns (0.2.0) round-trip */
	a = rec(31.5, 1, 0, 900);
	strcpy(a.policy, "replay");
	a.generation = 3;
	a.chunk = 512;
	strcpy(a.medium, "rotational");
	strcpy(a.kernel, "6.1.0-18-amd64");
	a.layout_age = 4;
	assert_true(pf_boot_record_format(&a, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, " on 3 512 rotational 6.1.0-18-amd64 4"));
	assert_int_equal(pf_boot_record_parse(line, &b), 0);
	assert_true(b.generation == 3 && b.chunk == 512 && b.layout_age == 4 && !b.off);
	assert_string_equal(b.medium, "rotational");
	assert_string_equal(b.kernel, "6.1.0-18-amd64");
	assert_int_equal(pf_boot_record_setup(&b), PF_SETUP_REORDER); /* replayed on a reordered disk */
	a.off = 1;
	a.prefetch = 0;
	assert_true(pf_boot_record_format(&a, line, sizeof(line)) > 0);
	assert_int_equal(pf_boot_record_parse(line, &b), 0);
	assert_int_equal(pf_boot_record_setup(&b), PF_SETUP_OFF);
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 0 - -1 -1 -1 0 off 1 1 1 1 1 1 1 1 maybe", &b), -EINVAL);
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 0 - -1 -1 -1 0 off 1 1 1 1 1 1 1 1 on -3", &b), -EINVAL);

	/* where the boot still waits, after the settings: round-trip, unknown by default, and refused when bad */
	assert_true(b.late_files == -1 && b.late_mib == -1.0);
	a.late_files = 12;
	a.late_mib = 3.25;
	assert_true(pf_boot_record_format(&a, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, " 4 12 3.25"));
	assert_int_equal(pf_boot_record_parse(line, &b), 0);
	assert_true(b.late_files == 12 && b.late_mib == 3.25 && b.layout_age == 4);
	const char *settings = "x 1 2.5 file 0 0 - -1 -1 -1 0 off 1 1 1 1 1 1 1 1 on 1 1 - - 1";
	snprintf(line, sizeof(line), "%s -2 1.00", settings);
	assert_int_equal(pf_boot_record_parse(line, &b), -EINVAL);
	snprintf(line, sizeof(line), "%s 3 -4.00", settings);
	assert_int_equal(pf_boot_record_parse(line, &b), -EINVAL);
	snprintf(line, sizeof(line), "%s 3", settings); /* a line cut after late_files: the MiB unknown */
	assert_int_equal(pf_boot_record_parse(line, &b), 0);
	assert_true(b.late_files == 3 && b.late_mib == -1.0);
}

/* A log as 0.1.0 wrote it (the self-check's columns, none of the settings'), and one from before the self-check:
 * both still read, each boot in the setup it had. */
static void test_old_logs(void **state)
{
	(void)state;
	const char *text = PF_BOOTTIME_HEADER "\n"
			   "# boot_id unix_time boot_s end_source prefetch reorder disk io_ms reads sectors\n"
			   "a1 1700000000 30.10 systemd 0 0 sda 12000 3000 400000 1 replay -1 -1 80.00 6200 -1 -1 -1 -1\n"
			   "a2 1700000100 25.20 systemd 1 0 sda 9000 2000 300000 0 replay 120.00 100.00 20.00 2000 3.10 0.50 900 800\n"
			   "a3 1700000200 24.00 systemd 1 0 sda 9000 2000 300000 0 narrow 30.00 25.00 20.00 2000 1.10 0.20 90 80\n"
			   "a4 1700000300 22.00 systemd 1 1 sda 7000 2000 300000 0 replay 120.00 100.00 20.00 2000 3.10 0.50 900 800\n"
			   "b1 1600000000 55.00 file 1 0 sda 9000 2000 300000\n"
			   "b2 1600000001 60.00 file 0 0 sda 9000 2000 300000\n";
	struct pf_boot_record *recs;
	size_t n, bad;
	assert_int_equal(pf_boottime_parse(text, &recs, &n, &bad), 0);
	assert_int_equal(n, 6);
	assert_int_equal(bad, 0);
	const enum pf_setup want[] = { PF_SETUP_TRACE, PF_SETUP_REPLAY, PF_SETUP_NARROW, PF_SETUP_REORDER, PF_SETUP_REPLAY,
				       PF_SETUP_TRACE };
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(pf_boot_record_setup(&recs[i]), want[i]);
		assert_true(recs[i].generation == -1 && recs[i].chunk == -1 && recs[i].layout_age == -1 && !recs[i].off);
		assert_true(recs[i].late_files == -1 && recs[i].late_mib == -1.0);
		assert_string_equal(recs[i].kernel, "-");
	}
	assert_int_equal(recs[0].psi_io_ms, 6200);
	free(recs);
}

static void test_record_bad(void **state)
{
	(void)state;
	struct pf_boot_record r;
	assert_int_equal(pf_boot_record_parse("", &r), -EINVAL);
	assert_int_equal(pf_boot_record_parse("id 1 2.5 systemd 1 0 sda 5 6", &r), -EINVAL);       /* short */
	assert_int_equal(pf_boot_record_parse("id 1 abc systemd 1 0 sda 5 6 7", &r), -EINVAL);     /* not a number */
	assert_int_equal(pf_boot_record_parse("id 1 -3 systemd 1 0 sda 5 6 7", &r), -EINVAL);      /* negative time */
	assert_int_equal(pf_boot_record_parse("id 1 nan systemd 1 0 sda 5 6 7", &r), -EINVAL);
	assert_int_equal(pf_boot_record_parse("id 1 3 systemd 2 0 sda 5 6 7", &r), -EINVAL);       /* flag not 0/1 */
	assert_int_equal(pf_boot_record_parse("id 1 3 systemd 1 0 sda -5 6 7", &r), -EINVAL);      /* -1 only */
}

static void test_log_parse(void **state)
{
	(void)state;
	const char *text = PF_BOOTTIME_HEADER "\n"
			   "# boot_id unix_time ...\n"
			   "a 1 50.00 systemd 0 0 sda 900 10 20\n"
			   "garbage line\n"
			   "\n"
			   "b 2 40.00 systemd 1 0 sda 600 10 20\n"
			   "c 3 35.00 file 1 1 sda 400 10 20"; /* no final newline */
	struct pf_boot_record *recs;
	size_t n, bad;
	assert_int_equal(pf_boottime_parse(text, &recs, &n, &bad), 0);
	assert_int_equal(n, 3);
	assert_int_equal(bad, 1);
	assert_string_equal(recs[2].boot_id, "c");
	assert_string_equal(recs[2].end_source, "file");
	free(recs);
	assert_int_equal(pf_boottime_parse("# prefetch boottime log, format 2\na 1 50 systemd 0 0 sda 1 1 1\n", &recs, &n, &bad),
			 -EPROTO);
	assert_null(recs);
	assert_int_equal(pf_boottime_parse("", &recs, &n, &bad), 0);
	assert_int_equal(n, 0);
	free(recs);
}

static void test_append_and_load(void **state)
{
	(void)state;
	char dir[96];
	assert_non_null(pf_test_mkdtemp(dir, sizeof(dir), "test_report"));
	char path[128];
	snprintf(path, sizeof(path), "%s/boottime.log", dir);
	struct pf_boot_record *recs;
	size_t n, bad;
	assert_int_equal(pf_boottime_load(path, &recs, &n, &bad), -ENOENT);
	for (int i = 0; i < 3; i++) {
		struct pf_boot_record r = rec(50 - i, i > 0, 0, 100 * i);
		assert_int_equal(pf_boottime_append(path, &r), 0);
	}
	assert_int_equal(pf_boottime_load(path, &recs, &n, &bad), 0);
	assert_int_equal(n, 3);
	assert_int_equal(bad, 0);
	assert_int_equal(recs[1].io_ms, 100);
	free(recs);
	/* the header is written once */
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[600];
	int headers = 0;
	while (fgets(line, sizeof(line), f))
		headers += !strncmp(line, PF_BOOTTIME_HEADER, strlen(PF_BOOTTIME_HEADER));
	fclose(f);
	assert_int_equal(headers, 1);
	/* a record cut by a crash (no newline): not read as a record, and the next one is not glued onto it */
	struct pf_boot_record r = rec(60, 1, 0, 7);
	char text[PF_BOOTTIME_LINE_MAX];
	int len = pf_boot_record_format(&r, text, sizeof(text));
	assert_true(len > 20);
	f = fopen(path, "a");
	assert_non_null(f);
	fwrite(text, 1, 20, f);
	fclose(f);
	assert_int_equal(pf_boottime_load(path, &recs, &n, &bad), 0);
	assert_int_equal(n, 3);
	assert_int_equal(bad, 1);
	free(recs);
	assert_int_equal(pf_boottime_append(path, &r), 0);
	assert_int_equal(pf_boottime_load(path, &recs, &n, &bad), 0);
	assert_int_equal(n, 4); /* the new one whole; the fragment a bad line of its own */
	assert_int_equal(bad, 1);
	assert_int_equal(recs[3].io_ms, 7);
	free(recs);
	unlink(path);
	rmdir(dir);
}

static void test_diskstats(void **state)
{
	(void)state;
	const char *text = "   7       0 loop0 61 0 2244 12 0 0 0 0 0 28 12 0 0 0 0 0 0\n"
			   "   8       0 sda 14529 4161 1437714 8261 6318 7051 229466 9117 0 17108 17379 0 0 0 0 0 0\n"
			   "   8       1 sda1 14400 4100 1430000 8200 6300 7000 229000 9100 0 17000 17300\n";
	char name[32];
	int64_t reads, sectors, io;
	assert_int_equal(pf_diskstats_parse(text, 8, 0, name, sizeof(name), &reads, &sectors, &io), 0);
	assert_string_equal(name, "sda");
	assert_int_equal(reads, 14529);
	assert_int_equal(sectors, 1437714);
	assert_int_equal(io, 17108);
	assert_int_equal(pf_diskstats_parse(text, 8, 1, name, sizeof(name), &reads, &sectors, &io), 0);
	assert_string_equal(name, "sda1");
	assert_int_equal(io, 17000);
	assert_int_equal(pf_diskstats_parse(text, 8, 2, name, sizeof(name), &reads, &sectors, &io), -ENOENT);
	assert_int_equal(pf_diskstats_parse("8 0 sda 1 2 3\n", 8, 0, name, sizeof(name), &reads, &sectors, &io), -ENOENT);
}

static void test_stats(void **state)
{
	(void)state;
	struct pf_stat st;
	const double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	pf_stat_compute(v, 8, &st);
	assert_int_equal(st.n, 8);
	assert_true(fabs(st.mean - 5) < 1e-12);
	assert_true(fabs(st.stddev - sqrt(32.0 / 7)) < 1e-12); /* sample standard deviation */
	assert_true(st.min == 2 && st.max == 9);
	pf_stat_compute(v, 1, &st);
	assert_true(st.mean == 2 && st.stddev == 0 && st.min == 2 && st.max == 2);
	pf_stat_compute(NULL, 0, &st);
	assert_int_equal(st.n, 0);
	assert_true(st.mean == 0);
	/* close large values keep their precision */
	const double w[] = { 1e9 + 1, 1e9 + 2, 1e9 + 3 };
	pf_stat_compute(w, 3, &st);
	assert_true(fabs(st.stddev - 1) < 1e-6);
}

static void make_rows(struct pf_report_row rows[PF_SETUP_COUNT])
{
	struct pf_boot_record r[] = {
		rec(50, 0, 0, 20000), rec(52, 0, 0, 22000), rec(40, 1, 0, 12000), rec(42, 1, 0, -1),
		rec(44, 1, 0, 14000), rec(35, 1, 1, 8000),
	};
	assert_int_equal(pf_report_rows(r, 6, rows), 0);
}

static void test_rows(void **state)
{
	(void)state;
	struct pf_report_row rows[PF_SETUP_COUNT];
	make_rows(rows);
	assert_int_equal(rows[PF_SETUP_TRACE].boot_s.n, 2);
	assert_true(fabs(rows[PF_SETUP_TRACE].boot_s.mean - 51) < 1e-12);
	assert_int_equal(rows[PF_SETUP_REPLAY].boot_s.n, 3);
	assert_true(fabs(rows[PF_SETUP_REPLAY].boot_s.stddev - 2) < 1e-12);
	assert_int_equal(rows[PF_SETUP_REPLAY].io_s.n, 2); /* the unknown I/O value is left out */
	assert_true(fabs(rows[PF_SETUP_REPLAY].io_s.mean - 13) < 1e-12);
	assert_int_equal(rows[PF_SETUP_REORDER].boot_s.n, 1);
	assert_int_equal(rows[PF_SETUP_OFF].boot_s.n, 0);
	assert_true(fabs(rows[PF_SETUP_TRACE].read_mb.mean - 10) < 1e-12);
}

static char *groups_text(const struct pf_boot_record *r, size_t n, enum pf_report_key key, int form)
{
	struct pf_grouping g;
	assert_int_equal(pf_report_group(r, n, key, &g), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	if (form == 0)
		pf_report_groups_table(f, &g);
	else if (form == 1)
		pf_report_groups_csv(f, &g);
	else
		pf_report_groups_json(f, &g);
	fclose(f);
	pf_grouping_free(&g);
	return buf;
}

/* --by: off boots against replays (clear), the reorder's chunk sizes against each other (not clear), a kernel
 * with too few boots; the table, CSV and JSON say the same. */
static void test_by(void **state)
{
	(void)state;
	struct pf_boot_record r[32];
	size_t n = 0;
	const double off[] = { 30.1, 29.8, 31.0, 30.4, 30.7 }, on[] = { 25.2, 24.9, 25.6, 25.0, 24.7, 25.3 };
	const double c256[] = { 24.0, 22.0, 25.5, 23.1 }, c2000[] = { 23.5, 24.5, 22.5, 25.0 };
	for (size_t i = 0; i < 5; i++) {
		r[n] = rec(off[i], 0, 0, 9000);
		r[n].off = 1;
		r[n].generation = 0;
		strcpy(r[n++].kernel, "6.1.0");
	}
	for (size_t i = 0; i < 6; i++) {
		r[n] = rec(on[i], 1, 0, 6000);
		r[n].generation = 0;
		strcpy(r[n++].kernel, "6.1.0");
	}
	for (size_t i = 0; i < 4; i++) {
		r[n] = rec(c256[i], 1, 0, 5000);
		r[n].generation = 1;
		r[n].chunk = 256;
		strcpy(r[n++].kernel, i ? "6.1.0" : "6.12.0");
		r[n] = rec(c2000[i], 1, 0, 5000);
		r[n].generation = 2;
		r[n].chunk = 2000;
		strcpy(r[n++].kernel, "6.1.0");
	}
	char *t = groups_text(r, n, PF_BY_SETUP, 0);
	assert_non_null(strstr(t, "off                  5   30.40   30.40"));
	assert_non_null(strstr(t, "replay               6   25.10"));
	assert_non_null(strstr(t, "replay+reorder       8   23.75"));
	assert_non_null(strstr(t, "  replay against off: -5.30 s ("));
	assert_non_null(strstr(t, "5 boots): clear: 5.30 s faster\n"));
	assert_null(strstr(t, "trace against off")); /* a setup never used is no question */
	assert_non_null(strstr(t, "  replay+reorder against replay: -1.35 s"));
	free(t);
	t = groups_text(r, n, PF_BY_CHUNK, 0);
	/* none first (the baseline), then by number */
	char *none = strstr(t, "\nnone "), *small = strstr(t, "\n256 "), *big = strstr(t, "\n2000 ");
	assert_true(none && small && big && none < small && small < big);
	assert_non_null(strstr(t, "  256 against none: "));
	assert_non_null(strstr(t, "  2000 against none: "));
	free(t);
	t = groups_text(r, n, PF_BY_KERNEL, 0);
	assert_non_null(strstr(t, "  6.12.0 against 6.1.0: 1 and 18 boots: too few boots to tell: 2 more 6.12.0 boots needed"));
	free(t);
	t = groups_text(r, n, PF_BY_SETUP, 1);
	assert_non_null(strstr(t, "setup,boots,median_s,mean_s,stddev_s,min_s,max_s,io_mean_s,stall_mean_s,against,diff_s,"));
	assert_non_null(strstr(t, "\nreplay,6,25.100,"));
	assert_non_null(strstr(t, ",off,-5.300,"));
	assert_non_null(strstr(t, ",lower,0,0,\"clear: 5.30 s faster\"\n"));
	free(t);
	t = groups_text(r, n, PF_BY_SETUP, 2);
	assert_non_null(strstr(t, "{\"by\": \"setup\", \"groups\": ["));
	assert_non_null(strstr(t, "\"key\": \"replay\", \"boots\": 6, \"median_s\": 25.100"));
	assert_non_null(strstr(t, "\"against\": \"off\", \"comparison\": {\"diff_s\": -5.300"));
	assert_non_null(strstr(t, "\"verdict\": \"lower\", \"more_against\": 0, \"more_this\": 0, \"words\": \"clear: 5.30 s faster\"}"));
	assert_int_equal(count(t, "{"), count(t, "}"));
	free(t);
	enum pf_report_key k;
	assert_int_equal(pf_report_key_parse("chunk-size", &k), 0);
	assert_int_equal(k, PF_BY_CHUNK);
	assert_int_equal(pf_report_key_parse("chunk", &k), -EINVAL);
}

/* pf_report_chunk_note into buf (set to "" first). */
static int chunk_note(const struct pf_boot_record *r, size_t n, long configured, int reordering, char *buf, size_t len)
{
	struct pf_note note = pf_note_into(buf, len);
	return pf_report_chunk_note(r, n, configured, reordering, &note);
}

/* The configured chunk size without boots: one line saying why (placed by another size, not placed yet,
 * reordering off); none when it has boots; the table and the JSON carry it. */
static void test_chunk_note(void **state)
{
	(void)state;
	struct pf_boot_record r[6];
	char note[256];
	for (size_t i = 0; i < 6; i++) {
		r[i] = rec(30.0 - (double)i, i > 0, 0, 5000);
		r[i].generation = 0;
	}
	assert_int_equal(chunk_note(r, 0, 4000, 1, note, sizeof(note)), 0);
	assert_string_equal(note, "");
	assert_int_equal(chunk_note(r, 3, 4000, 0, note, sizeof(note)), 1);
	assert_string_equal(note, "CHUNK_SIZE_BLOCKS=4000 has no boots: reordering is off (ENABLE_FILE_REORDERING=0), "
				  "and the chunk size acts only through it");
	assert_int_equal(chunk_note(r, 3, 4000, 1, note, sizeof(note)), 1);
	assert_string_equal(note, "CHUNK_SIZE_BLOCKS=4000 has no boots: no reorder has placed the layout's files yet");
	for (size_t i = 3; i < 6; i++)
		r[i].generation = 2, r[i].chunk = 512;
	r[5].generation = -1; /* an old line: the placement known before it holds */
	assert_int_equal(chunk_note(r, 6, 4000, 1, note, sizeof(note)), 1);
	assert_string_equal(note, "CHUNK_SIZE_BLOCKS=4000 has no boots: the files still lie where chunk size 512 placed "
				  "them (generation 2); prefetch-reorder --check compares sizes on this disk");
	assert_int_equal(chunk_note(r, 6, 512, 1, note, sizeof(note)), 0);
	assert_string_equal(note, "");
	char small[20];
	assert_int_equal(chunk_note(r, 6, 4000, 1, small, sizeof(small)), 1); /* cut, never overrun */
	assert_int_equal(strlen(small), sizeof(small) - 1);

	struct pf_grouping g;
	assert_int_equal(pf_report_group(r, 6, PF_BY_CHUNK, &g), 0);
	chunk_note(r, 6, 4000, 1, g.note, sizeof(g.note));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	pf_report_groups_table(f, &g);
	fputc('\n', f);
	pf_report_groups_json(f, &g);
	fclose(f);
	assert_non_null(strstr(buf, "\n  CHUNK_SIZE_BLOCKS=4000 has no boots: the files still lie where chunk size 512"));
	assert_non_null(strstr(buf, "], \"note\": \"CHUNK_SIZE_BLOCKS=4000 has no boots: "));
	free(buf);
	g.note[0] = '\0';
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	pf_report_groups_json(f, &g);
	fclose(f);
	assert_non_null(strstr(buf, "], \"note\": null}"));
	free(buf);
	pf_grouping_free(&g);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_svg(void **state)
{
	(void)state;
	struct pf_boot_record r[] = {
		rec(50, 0, 0, 20000), rec(52, 0, 0, 22000), rec(40, 1, 0, 12000), rec(42, 1, 0, -1),
		rec(44, 1, 0, 14000), rec(35, 1, 1, 8000),
	};
	r[1].control = 1;
	struct pf_report_row rows[PF_SETUP_COUNT];
	assert_int_equal(pf_report_rows(r, 6, rows), 0);
	char *svg = pf_report_svg(rows, r, 6, "Debian <12> & co");
	assert_non_null(svg);
	assert_true(!strncmp(svg, "<?xml", 5));
	assert_non_null(strstr(svg, "</svg>\n"));
	assert_non_null(strstr(svg, "Debian &lt;12&gt; &amp; co"));
	/* every boot a point, the control boot hollow; off, trace, replay and replay+reorder summarised (off
	 * without boots), with the change against trace (no off boots) */
	assert_int_equal(count(svg, "class=\"point\""), 6);
	assert_non_null(strstr(svg, "<title>boot 2: 52.00 s, trace (control boot)</title>"));
	assert_int_equal(count(svg, "fill=\"white\" stroke="), 2); /* the control boot, and the legend's */
	assert_int_equal(count(svg, "class=\"summary\""), 3);
	assert_non_null(strstr(svg, "replay: mean 42.00 s, stddev 2.00 s, min 40.00 s, max 44.00 s, 3 boots"));
	assert_non_null(strstr(svg, "-17.6 %")); /* replay 42 against trace 51 */
	assert_non_null(strstr(svg, "6 boots, 1 of them control boots"));
	/* balanced tags: every <g opened is closed */
	assert_int_equal(count(svg, "<g"), count(svg, "</g>"));
	free(svg);

	pf_report_rows(NULL, 0, rows);
	svg = pf_report_svg(rows, NULL, 0, NULL);
	assert_non_null(svg);
	assert_int_equal(count(svg, "class=\"point\""), 0);
	assert_non_null(strstr(svg, "no boots"));
	free(svg);
}

/* --boots, --csv, --json: one line (or object) per boot, unknown values shown as such */
static void test_boots_outputs(void **state)
{
	(void)state;
	struct pf_boot_record r[2] = { rec(50, 0, 0, 20000), rec(40.5, 1, 0, -1) };
	r[0].control = 1;
	strcpy(r[0].policy, "replay");
	r[1].replay_mib = 61.25;
	r[1].used_mib = 50.5;
	r[1].psi_io_ms = 1500;
	struct pf_report_row rows[PF_SETUP_COUNT];
	assert_int_equal(pf_report_rows(r, 2, rows), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	pf_report_boots_table(f, r, 2);
	fclose(f);
	assert_non_null(strstr(buf, "control"));
	assert_non_null(strstr(buf, "   61.25     50.50         -     1.50        -"));
	free(buf);
	f = open_memstream(&buf, &len);
	pf_report_boots_csv(f, r, 2);
	fclose(f);
	assert_int_equal(count(buf, "\n"), 3);
	assert_non_null(strstr(buf, "boot,boot_id,unix_time,setup,control,policy,boot_s,"));
	assert_non_null(strstr(buf, ",replay,0,-,40.50,"));
	assert_non_null(strstr(buf, ",on,-1,-1,-,-,-1,-1,-1.00\n"));
	free(buf);
	struct pf_control_change cc = { 1, 1, 50, 40.5, -0.19, 0, { 0 } };
	cc.cmp.verdict = PF_VERDICT_TOO_FEW;
	cc.cmp.more_a = cc.cmp.more_b = 2;
	f = open_memstream(&buf, &len);
	pf_report_json(f, "/x/\"log\"", r, 2, rows, NULL, &cc);
	fclose(f);
	assert_non_null(strstr(buf, "\"log\": \"/x/\\\"log\\\"\""));
	assert_non_null(strstr(buf, "\"control\": true"));
	assert_non_null(strstr(buf, "\"io_s\": null"));
	assert_non_null(strstr(buf, "\"replay_mib\": 61.250"));
	assert_non_null(strstr(buf, "\"replay+reorder\": {\"boot_s\": null"));
	assert_non_null(strstr(buf, "\"verdict\": \"too few\", \"words\": \"too few boots to tell: 2 more control and 2 more replay boots needed\""));
	assert_non_null(strstr(buf, "\"run\": \"on\", \"generation\": null"));
	assert_non_null(strstr(buf, "\"change\": -0.1900"));
	assert_int_equal(count(buf, "{"), count(buf, "}"));
	assert_int_equal(count(buf, "["), count(buf, "]"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_round_trip), cmocka_unit_test(test_record_bad),
		cmocka_unit_test(test_log_parse),         cmocka_unit_test(test_append_and_load),
		cmocka_unit_test(test_diskstats),         cmocka_unit_test(test_stats),
		cmocka_unit_test(test_old_logs),          cmocka_unit_test(test_rows),
		cmocka_unit_test(test_by),                cmocka_unit_test(test_chunk_note), cmocka_unit_test(test_svg), cmocka_unit_test(test_boots_outputs),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
