/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Boot-time log records, /proc/diskstats parsing, the report's statistics, table and SVG chart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "boot_log.h"
#include "report_stats.h"
#include "report_boots.h"
#include "report_svg.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
				 "0 - -1 -1 -1 -1 -1 -1 -1 -1");
	assert_int_equal(pf_boot_record_parse(line, &b), 0);
	assert_string_equal(b.boot_id, a.boot_id);
	assert_true(fabs(b.boot_s - 53.4) < 1e-9);
	assert_int_equal(b.prefetch, 1);
	assert_int_equal(b.reorder, 0);
	assert_int_equal(b.io_ms, 12345);
	assert_int_equal(b.sectors, 20480);
	assert_int_equal(pf_boot_record_setup(&b), PF_SETUP_PREFETCH);
	/* a field with a space would shift the columns: written as "-" */
	strcpy(a.disk, "bad name");
	assert_true(pf_boot_record_format(&a, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, " - 12345 "));
	/* too small a buffer */
	assert_int_equal(pf_boot_record_format(&a, line, 10), -ENOSPC);
	/* a newer version may append fields */
	assert_int_equal(pf_boot_record_parse("x 1 2.5 file 0 1 - -1 -1 -1 extra", &b), 0);
	assert_int_equal(pf_boot_record_setup(&b), PF_SETUP_REORDER_ONLY);
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

static void test_rows_and_table(void **state)
{
	(void)state;
	struct pf_report_row rows[PF_SETUP_COUNT];
	make_rows(rows);
	assert_int_equal(rows[PF_SETUP_NONE].boot_s.n, 2);
	assert_true(fabs(rows[PF_SETUP_NONE].boot_s.mean - 51) < 1e-12);
	assert_int_equal(rows[PF_SETUP_PREFETCH].boot_s.n, 3);
	assert_true(fabs(rows[PF_SETUP_PREFETCH].boot_s.stddev - 2) < 1e-12);
	assert_int_equal(rows[PF_SETUP_PREFETCH].io_s.n, 2); /* the unknown I/O value is left out */
	assert_true(fabs(rows[PF_SETUP_PREFETCH].io_s.mean - 13) < 1e-12);
	assert_int_equal(rows[PF_SETUP_PREFETCH_REORDER].boot_s.n, 1);
	assert_int_equal(rows[PF_SETUP_REORDER_ONLY].boot_s.n, 0);
	assert_true(fabs(rows[PF_SETUP_NONE].read_mb.mean - 10) < 1e-12);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	pf_report_table(f, rows);
	fclose(f);
	assert_non_null(strstr(buf, "average"));
	assert_non_null(strstr(buf, "stddev"));
	/* none: 2 boots, 51.00 mean, 1.41 stddev, 50..52 */
	assert_non_null(strstr(buf, "none                  2    51.00    1.41   50.00   52.00"));
	assert_non_null(strstr(buf, "prefetch              3    42.00    2.00   40.00   44.00"));
	assert_non_null(strstr(buf, "-17.6%")); /* 42 vs 51 */
	assert_non_null(strstr(buf, "prefetch+reorder      1    35.00    0.00"));
	assert_null(strstr(buf, "\nreorder ")); /* empty rare row hidden */
	free(buf);

	/* no boots at all: the three rows with dashes */
	assert_int_equal(pf_report_rows(NULL, 0, rows), 0);
	f = open_memstream(&buf, &len);
	pf_report_table(f, rows);
	fclose(f);
	assert_non_null(strstr(buf, "prefetch+reorder      0        -"));
	free(buf);
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
	/* every boot a point, the control boot hollow; 3 setups with boots summarised, with the change vs none */
	assert_int_equal(count(svg, "class=\"point\""), 6);
	assert_non_null(strstr(svg, "<title>boot 2: 52.00 s, none (control boot)</title>"));
	assert_int_equal(count(svg, "fill=\"white\" stroke="), 2); /* the control boot, and the legend's */
	assert_int_equal(count(svg, "class=\"summary\""), 3);
	assert_non_null(strstr(svg, "prefetch: mean 42.00 s, stddev 2.00 s, min 40.00 s, max 44.00 s, 3 boots"));
	assert_non_null(strstr(svg, "-17.6 %")); /* prefetch 42 against none 51 */
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
	assert_non_null(strstr(buf, ",prefetch,0,-,40.50,"));
	free(buf);
	struct pf_control_change cc = { 1, 1, 50, 40.5, -0.19, 0 };
	f = open_memstream(&buf, &len);
	pf_report_json(f, "/x/\"log\"", r, 2, rows, &cc);
	fclose(f);
	assert_non_null(strstr(buf, "\"log\": \"/x/\\\"log\\\"\""));
	assert_non_null(strstr(buf, "\"control\": true"));
	assert_non_null(strstr(buf, "\"io_s\": null"));
	assert_non_null(strstr(buf, "\"replay_mib\": 61.250"));
	assert_non_null(strstr(buf, "\"prefetch+reorder\": {\"boot_s\": null"));
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
		cmocka_unit_test(test_rows_and_table),    cmocka_unit_test(test_svg), cmocka_unit_test(test_boots_outputs),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
