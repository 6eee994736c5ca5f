/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/proc_io.c: read_bytes in /proc/PID/io text, and the process's and the calling thread's own counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "error.h"
#include "proc_io.h"

static void test_parse(void **state)
{
	(void)state;
	int64_t b = 0;
	assert_int_equal(pf_proc_io_read_bytes("rchar: 10\nwchar: 2\nread_bytes: 4096\nwrite_bytes: 0\n", &b), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(pf_proc_io_read_bytes("read_bytes: 8192\n", &b), 0);
	assert_int_equal(b, 8192);
	assert_int_equal(pf_proc_io_read_bytes("rchar: 10\n", &b), PF_ECORRUPT);
	assert_int_equal(pf_proc_io_read_bytes("read_bytes: x\n", &b), PF_ECORRUPT);
	assert_int_equal(pf_proc_io_read_bytes("read_bytes: -5\n", &b), PF_ECORRUPT);
}

static void test_self_and_thread(void **state)
{
	(void)state;
	int64_t b = -1;
	assert_int_equal(pf_self_read_bytes(&b), 0);
	assert_true(b >= 0);
	b = -1;
	assert_int_equal(pf_thread_read_bytes(&b), 0);
	assert_true(b >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_self_and_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
