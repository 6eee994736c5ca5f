/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a boot got from prefetch: the PSI parser on the kernel's text, and the layout's bytes in files the trace
 * holds (the process's reads from storage: tests/unit/lib/test_proc_io.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "boot_measure.h"
#include "error.h"

#include <string.h>

static void test_psi(void **state)
{
	(void)state;
	int64_t ms = 0;
	assert_int_equal(pf_psi_some_ms("some avg10=0.50 avg60=0.10 avg300=0.02 total=1234567\n"
					"full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n", &ms), 0);
	assert_int_equal(ms, 1234);
	assert_int_equal(pf_psi_some_ms("full avg10=0.00 avg60=0.00 avg300=0.00 total=99\nsome avg10=0 total=5000\n", &ms), 0);
	assert_int_equal(ms, 5);
	ms = 7;
	assert_int_equal(pf_psi_some_ms("full avg10=0.00 total=99\n", &ms), PF_ECORRUPT); /* no "some" line */
	assert_int_equal(pf_psi_some_ms("some avg10=0.00\nfull total=99\n", &ms), PF_ECORRUPT); /* total on another line */
	assert_int_equal(pf_psi_some_ms("", &ms), PF_ECORRUPT);
	assert_int_equal(ms, 7); /* untouched when the text does not say */
	int rc = pf_psi_io_ms(&ms); /* this kernel: a figure, or an error without PSI */
	assert_true(rc == 0 ? ms >= 0 : rc < 0);
}

/* An image of one filesystem; a layout also gets paths[i] as file i (inode 10 + i) with one extent of 4 KiB << i. */
static struct pf_image *image_of(int kind, const char *const *paths, uint32_t n)
{
	struct pf_image *img = pf_image_new(kind);
	assert_non_null(img);
	struct pf_fs fs = { .block_size = 4096, .mountpoint = "/" };
	assert_int_equal(pf_image_add_fs(img, &fs), 0);
	for (uint32_t i = 0; i < n; i++) {
		struct pf_file f = { .ino = 10 + i, .mode = 0100644, .path = (char *)paths[i] };
		assert_true(pf_image_add_file(img, &f) >= 0);
		struct pf_extent e = { .file = i, .offset = 0, .length = 4096u << i };
		assert_true(pf_image_add_extent(img, &e) >= 0);
	}
	return img;
}

static void test_bytes_used(void **state)
{
	(void)state;
	const char *paths[] = { "/usr/lib/a.so", "/usr/bin/b", "/etc/c" };
	struct pf_image *layout = image_of(PF_KIND_LAYOUT, paths, 3), *trace = image_of(PF_KIND_TRACE, NULL, 0);
	struct pf_file opened = { .ino = 11, .mode = 0100755, .path = "/usr/bin/b" };
	assert_true(pf_image_add_file(trace, &opened) >= 0);
	uint64_t files;
	assert_int_equal(pf_layout_bytes_used(layout, trace, &files), 8192);
	assert_int_equal(files, 1);
	struct pf_file other = { .ino = 99, .mode = 0100644, .path = "/not/in/layout" };
	assert_true(pf_image_add_file(trace, &other) >= 0);
	assert_int_equal(pf_layout_bytes_used(layout, trace, NULL), 8192);
	assert_int_equal(pf_layout_bytes_used(layout, NULL, &files), 0);
	assert_int_equal(files, 0);
	pf_image_free(layout);
	pf_image_free(trace);
}

/* Late: the boot opened the file (trace start + first_ns) before the replay read it, or the replay never did. */
static void test_bytes_late(void **state)
{
	(void)state;
	const char *paths[] = { "/a", "/b", "/c", "/d" };
	struct pf_image *layout = image_of(PF_KIND_LAYOUT, paths, 4), *trace = image_of(PF_KIND_TRACE, NULL, 0);
	/* the trace in another order than the layout: /d, /c, /a opened at 5, 20, 30 ms of tracing; /b never */
	const uint64_t ms = 1000000, start = 1000 * ms;
	struct pf_file d = { .ino = 13, .mode = 0100644, .path = "/d", .first_ns = 5 * ms };
	struct pf_file c = { .ino = 12, .mode = 0100644, .path = "/c", .first_ns = 20 * ms };
	struct pf_file a = { .ino = 10, .mode = 0100644, .path = "/a", .first_ns = 30 * ms };
	assert_true(pf_image_add_file(trace, &d) >= 0);
	assert_true(pf_image_add_file(trace, &c) >= 0);
	assert_true(pf_image_add_file(trace, &a) >= 0);
	/* read: /a at 10 ms (ahead), /b at 1 ms (not opened), /c at 25 ms (behind the boot), /d never */
	const uint64_t read_at[] = { start + 10 * ms, start + 1 * ms, start + 25 * ms, 0 };
	uint64_t files = 99;
	assert_int_equal(pf_layout_bytes_late(layout, trace, start, read_at, &files), (4096u << 2) + (4096u << 3));
	assert_int_equal(files, 2);
	/* at the same nanosecond the replay was there first */
	struct pf_image *t2 = image_of(PF_KIND_TRACE, NULL, 0);
	struct pf_file c2 = { .ino = 12, .mode = 0100644, .path = "/c", .first_ns = 25 * ms };
	assert_true(pf_image_add_file(t2, &c2) >= 0);
	assert_int_equal(pf_layout_bytes_late(layout, t2, start, read_at, &files), 0);
	assert_int_equal(files, 0);
	/* unknown without the replay's times */
	files = 99;
	assert_int_equal(pf_layout_bytes_late(layout, trace, start, NULL, &files), 0);
	assert_int_equal(files, 0);
	pf_image_free(t2);
	pf_image_free(layout);
	pf_image_free(trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_psi),
		cmocka_unit_test(test_bytes_used),
		cmocka_unit_test(test_bytes_late),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
