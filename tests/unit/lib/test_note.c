/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/note.c: lines kept in a buffer (one line as a plain string, the first ones while they fit, a first line
 * cut), read back one by one, counted when not kept; a NULL sink; a logging sink keeps nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "log.h"
#include "note.h"

#include <string.h>

static void test_one_line(void **state)
{
	(void)state;
	char buf[32] = "garbage";
	struct pf_note n = pf_note_into(buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_string_equal(pf_note_text(&n), "");
	pf_note(&n, "%s: %s", "mmcblk0", "SD/eMMC");
	assert_string_equal(buf, "mmcblk0: SD/eMMC");
	assert_int_equal(n.lines, 1);
	assert_int_equal(n.kept, 1);
	pf_note(NULL, "nobody listens");
	assert_string_equal(pf_note_text(NULL), "");
}

static void test_lines_while_they_fit(void **state)
{
	(void)state;
	char buf[24];
	struct pf_note n = pf_note_into(buf, sizeof(buf));
	pf_note(&n, "f:1: one");
	pf_note(&n, "f:2: two\nhalf"); /* a line is one line */
	pf_note(&n, "f:3: three, too long to fit");
	pf_note(&n, "f:4");             /* would fit, but after one that did not: not kept */
	assert_string_equal(buf, "f:1: one\nf:2: two half");
	assert_int_equal(n.lines, 4);
	assert_int_equal(n.kept, 2);
	size_t pos = 0;
	char line[16];
	assert_int_equal(pf_note_next(&n, &pos, line, sizeof(line)), 1);
	assert_string_equal(line, "f:1: one");
	assert_int_equal(pf_note_next(&n, &pos, line, sizeof(line)), 1);
	assert_string_equal(line, "f:2: two half");
	assert_int_equal(pf_note_next(&n, &pos, line, sizeof(line)), 0);
}

static void test_first_line_cut(void **state)
{
	(void)state;
	char buf[8];
	struct pf_note n = pf_note_into(buf, sizeof(buf));
	pf_note(&n, "a reason longer than the buffer");
	assert_string_equal(buf, "a reaso");
	assert_int_equal(n.kept, 1);
	pf_note(&n, "x");
	assert_string_equal(buf, "a reaso");
	assert_int_equal(n.lines, 2);
}

static void test_log_keeps_nothing(void **state)
{
	(void)state;
	pf_log_init("test_note", PF_LOG_ERR); /* the line below is not shown */
	struct pf_note n = pf_note_to_log(PF_LOG_INFO);
	pf_note(&n, "logged, not kept");
	assert_int_equal(n.lines, 1);
	assert_int_equal(n.kept, 0);
	assert_string_equal(pf_note_text(&n), "");
	size_t pos = 0;
	assert_int_equal(pf_note_next(&n, &pos, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_line),
		cmocka_unit_test(test_lines_while_they_fit),
		cmocka_unit_test(test_first_line_cut),
		cmocka_unit_test(test_log_keeps_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
