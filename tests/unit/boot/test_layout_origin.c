/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LAYOUT.origin: read back as prefetch-image writes it, its line for the layout it names and for a layout that
 * replaced it, and the files refused (unknown key, bad number, missing keys). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "layout_origin.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void write_origin(const char *layout, const char *text)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s.origin", layout);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_origin(void **state)
{
	(void)state;
	char layout[4100], line[400];
	snprintf(layout, sizeof(layout), "%s/layout", pf_test_dir);
	struct pf_layout_origin o;
	assert_int_equal(pf_layout_origin_load(layout, &o), -ENOENT);
	write_origin(layout, "image debian12.img\ndate 1764230400\nboots 3\nlayout_created 1764230000\nreordered yes\n");
	assert_int_equal(pf_layout_origin_load(layout, &o), 0);
	assert_string_equal(o.image, "debian12.img");
	assert_int_equal(o.boots, 3);
	assert_int_equal(o.reordered, 1);
	pf_layout_origin_line(&o, 1764230000, line, sizeof(line));
	assert_string_equal(line, "from image debian12.img (installed 2025-11-27 08:00 UTC, 3 boots learnt, root "
			    "reordered for it)");
	pf_layout_origin_line(&o, 1764239999, line, sizeof(line));
	assert_non_null(strstr(line, "learnt on this machine since"));
	write_origin(layout, "image x.img\nlayout_created 5\nflavour mint\n");
	assert_int_equal(pf_layout_origin_load(layout, &o), -EINVAL);
	write_origin(layout, "image x.img\nlayout_created 5\nboots three\n");
	assert_int_equal(pf_layout_origin_load(layout, &o), -EINVAL);
	write_origin(layout, "boots 1\n");
	assert_int_equal(pf_layout_origin_load(layout, &o), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_origin),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
