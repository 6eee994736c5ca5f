/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd dump: extent lines, file lines, path escaping, summary, and the seek estimate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dump.h"
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct pf_image *sample(void)
{
	struct pf_image *img = pf_image_new(PF_KIND_TRACE);
	img->created = 0;
	struct pf_fs fs = { .uuid = { 0xb4, 0xe8, 0x6b, 0x98 }, .block_size = 4096, .medium = PF_MEDIUM_SOLID,
			    .mountpoint = "/" };
	assert_int_equal(pf_image_add_fs(img, &fs), 0);
	struct pf_file d = { .flags = PF_FILE_DIR, .ino = 2, .size = 4096, .first_order = 1, .boots = 1, .path = "/" };
	struct pf_file a = { .flags = PF_FILE_EXEC, .ino = 12, .size = 20000, .first_ns = 1500000, .first_order = 2,
			     .boots = 1, .path = "/a b\tc" };
	struct pf_file m = { .flags = PF_FILE_METADATA, .ino = 13, .first_order = 3, .boots = 1, .path = "/m" };
	assert_int_equal(pf_image_add_file(img, &d), 0);
	assert_int_equal(pf_image_add_file(img, &a), 1);
	assert_int_equal(pf_image_add_file(img, &m), 2);
	/* dir at block 100; a: 0-8191 at 500 (2 blocks), 8192-20000 at 502 (contiguous), then unknown */
	struct pf_extent x[] = {
		{ .file = 0, .flags = PF_EXT_PHYS_KNOWN, .offset = 0, .length = 4096, .physical = 100 },
		{ .file = 1, .flags = PF_EXT_PHYS_KNOWN, .offset = 0, .length = 8192, .physical = 500 },
		{ .file = 1, .flags = PF_EXT_PHYS_KNOWN, .offset = 8192, .length = 11808, .physical = 502 },
		{ .file = 1, .flags = 0, .offset = 0, .length = 4096 },
	};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(pf_image_add_extent(img, &x[i]), (int)i);
	return img;
}

static char *capture(void (*fn)(FILE *, const struct pf_image *), const struct pf_image *img)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, img);
	fclose(f);
	return buf;
}

static void test_extent_lines(void **state)
{
	(void)state;
	struct pf_image *img = sample();
	char *s = capture(pf_dump_extents, img);
	assert_string_equal(s, "# path\toffset\tlength\torder\tphysical\n"
			       "/\t0\t4096\t0\t100\n"
			       "/a b\\011c\t0\t8192\t1\t500\n"
			       "/a b\\011c\t8192\t11808\t2\t502\n"
			       "/a b\\011c\t0\t4096\t3\t-\n");
	free(s);
	pf_image_free(img);
}

static void test_file_lines(void **state)
{
	(void)state;
	struct pf_image *img = sample();
	img->files[2].flags |= PF_FILE_WRITTEN; /* a log the boot writes: w, last */
	char *s = capture(pf_dump_files, img);
	assert_non_null(strstr(s, "1\td----\t4096\t2\t0.000\t1\t0\t/\n"));
	assert_non_null(strstr(s, "2\t-x---\t20000\t12\t1.500\t1\t0\t/a b\\011c\n"));
	assert_non_null(strstr(s, "3\t--m-w\t0\t13\t0.000\t1\t0\t/m\n"));
	free(s);
	pf_image_free(img);
}

static void test_summary(void **state)
{
	(void)state;
	struct pf_image *img = sample();
	img->flags = PF_IMG_INCOMPLETE;
	img->lost_events = 3;
	char *s = capture(pf_dump_summary, img);
	assert_non_null(strstr(s, "# kind: trace\n"));
	assert_non_null(strstr(s, "# created: 1970-01-01 00:00:00 UTC (0)\n"));
	assert_non_null(strstr(s, "# flags: incomplete (3 events lost)\n"));
	assert_non_null(strstr(s, "# filesystem 0: uuid b4e86b98-0000-0000-0000-000000000000, mountpoint /, "
				  "medium fast-flash, block size 4096, ranges: resident pages (mincore)\n"));
	assert_non_null(strstr(s, "# files: 2 (exec 1, metadata only 1)\n"));
	assert_non_null(strstr(s, "# dirs: 1\n"));
	assert_non_null(strstr(s, "# bytes: 28192 "));
	assert_non_null(strstr(s, "# extents: 4 (physical block known: 3)\n"));
	assert_non_null(strstr(s, "# estimated seeks: 1 in access order, 1 sorted by physical block\n"));
	free(s);
	pf_image_free(img);
}

/* The reasons of an incomplete trace, and the filesystem that went away. */
static void test_summary_incomplete(void **state)
{
	(void)state;
	struct pf_image *img = sample();
	img->flags = PF_IMG_INCOMPLETE | PF_IMG_FILE_CAP | PF_IMG_FS_GONE;
	img->fs[0].flags = PF_FS_GONE;
	char *s = capture(pf_dump_summary, img);
	assert_non_null(strstr(s, "# flags: incomplete (file cap reached, filesystem / gone)\n"));
	assert_non_null(strstr(s, "# filesystem 0: uuid b4e86b98-0000-0000-0000-000000000000, mountpoint /, "
				  "medium fast-flash, block size 4096, gone (unmounted during tracing), "
				  "ranges: resident pages (mincore)\n"));
	free(s);
	pf_image_free(img);
}

static void test_seeks(void **state)
{
	(void)state;
	struct pf_image *img = pf_image_new(PF_KIND_LAYOUT);
	struct pf_fs fs = { .block_size = 1024, .mountpoint = "/" };
	pf_image_add_fs(img, &fs);
	pf_image_add_fs(img, &fs); /* a second filesystem: switching is a seek */
	struct pf_file f = { .path = "/f" }, g = { .fs = 1, .path = "/g" };
	pf_image_add_file(img, &f);
	pf_image_add_file(img, &g);
	/* access order: 10-13, 30-33, 14-17, 30-31 (overlap), g:10-13 */
	uint64_t phys[] = { 10, 30, 14, 30, 10 };
	uint32_t file[] = { 0, 0, 0, 0, 1 };
	uint64_t len[] = { 4096, 4096, 4096, 2048, 4096 };
	for (int i = 0; i < 5; i++) {
		struct pf_extent x = { .file = file[i], .flags = PF_EXT_PHYS_KNOWN, .length = len[i], .physical = phys[i] };
		pf_image_add_extent(img, &x);
	}
	uint64_t in_order, sorted;
	pf_dump_seeks(img, &in_order, &sorted);
	assert_int_equal(in_order, 4);  /* every step is a jump */
	assert_int_equal(sorted, 2);    /* 10-17 | 30-33 | fs 1 */
	pf_image_free(img);

	struct pf_image *empty = pf_image_new(PF_KIND_TRACE);
	pf_dump_seeks(empty, &in_order, &sorted);
	assert_int_equal(in_order, 0);
	assert_int_equal(sorted, 0);
	pf_image_free(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extent_lines),
		cmocka_unit_test(test_file_lines),
		cmocka_unit_test(test_summary), cmocka_unit_test(test_summary_incomplete),
		cmocka_unit_test(test_seeks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
