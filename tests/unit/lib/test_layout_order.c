/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The layout's reading order on a small hand-made layout: the replay's (init's file in the head bin,
 * directories by rank before what lies below them, data in access order, contiguous pieces merged, bins) and
 * the placement prefetch-reorder lays out; the head predicates; bin numbering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "layout_order.h"

#include <stdlib.h>

#define MiB (1ull << 20)

enum { INIT, USR, USR_LIB, A_SO, ETC_X, B_SO, OTHER_FS };

/* Files by rank: /sbin/init (init's, rank 1), /usr (directory, no blocks), /usr/lib (directory, one block),
 * /usr/lib/a.so (three pieces, two of them contiguous), /etc/x (inode only), /usr/lib/b.so (4 MiB in two
 * pieces of unknown place), /data/y on the second filesystem. */
static struct pf_image *layout(void)
{
	struct pf_image *l = pf_image_new(PF_KIND_LAYOUT);
	struct pf_fs fs[] = { { .block_size = 4096, .mountpoint = "/" }, { .block_size = 1024, .mountpoint = "/data" } };
	assert_int_equal(pf_image_add_fs(l, &fs[0]), 0);
	assert_int_equal(pf_image_add_fs(l, &fs[1]), 1);
	static const struct {
		const char *path;
		uint32_t fs, flags;
	} f[] = { [INIT] = { "/sbin/init", 0, PF_FILE_INIT },
		  [USR] = { "/usr", 0, PF_FILE_DIR },
		  [USR_LIB] = { "/usr/lib", 0, PF_FILE_DIR },
		  [A_SO] = { "/usr/lib/a.so", 0, 0 },
		  [ETC_X] = { "/etc/x", 0, PF_FILE_METADATA },
		  [B_SO] = { "/usr/lib/b.so", 0, 0 },
		  [OTHER_FS] = { "/data/y", 1, 0 } };
	for (int i = 0; i < 7; i++) {
		struct pf_file pf = { .fs = f[i].fs, .flags = f[i].flags, .ino = 10 + i, .size = 8 * MiB,
				      .first_order = i + 1, .path = (char *)f[i].path };
		assert_int_equal(pf_image_add_file(l, &pf), i);
	}
	static const struct pf_extent e[] = {
		{ .file = INIT, .flags = PF_EXT_PHYS_KNOWN, .offset = 0, .length = 8192, .physical = 900 },
		{ .file = USR_LIB, .flags = PF_EXT_PHYS_KNOWN, .offset = 0, .length = 4096, .physical = 50 },
		{ .file = A_SO, .flags = PF_EXT_PHYS_KNOWN, .offset = 0, .length = 4096, .physical = 200 },
		{ .file = A_SO, .flags = PF_EXT_PHYS_KNOWN, .offset = 4096, .length = 4096, .physical = 201 },
		{ .file = B_SO, .offset = 0, .length = 3 * MiB },
		{ .file = B_SO, .offset = 3 * MiB, .length = MiB },
		{ .file = OTHER_FS, .flags = PF_EXT_PHYS_KNOWN, .offset = 0, .length = MiB, .physical = 10 },
		{ .file = A_SO, .flags = PF_EXT_PHYS_KNOWN, .offset = 8192, .length = 4096, .physical = 202 },
	};
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		assert_true(pf_image_add_extent(l, &e[i]) >= 0);
	return l;
}

struct want {
	uint32_t file, kind, bin;
	uint64_t offset, length;
};

/* The order of l under o is w; returns the items (to be freed). */
static struct pf_litem *order_is(const struct pf_image *l, const struct pf_lorder_opts *o, const struct want *w,
				 size_t nw)
{
	struct pf_litem *it;
	size_t n;
	assert_int_equal(pf_layout_order(l, o, &it, &n), 0);
	assert_int_equal(n, nw);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(it[i].file, w[i].file);
		assert_int_equal(it[i].kind, w[i].kind);
		assert_int_equal(it[i].bin, w[i].bin);
		assert_int_equal(it[i].offset, w[i].offset);
		assert_int_equal(it[i].length, w[i].length);
	}
	return it;
}

static void test_reading_order(void **state)
{
	(void)state;
	struct pf_image *l = layout();
	struct pf_lorder_opts o = { .first_bin_bytes = 2 * MiB, .max_bin_bytes = 4 * MiB };
	/* init's file alone in bin 0; the directories (rank 2, 3: /usr/lib read whole, its block ignored) before
	 * a.so (rank 4), /etc/x before b.so; a.so's and b.so's contiguous pieces merged; the first bin (1 here)
	 * closes once it holds 2 MiB of data, so /data/y and a.so's late piece fall into the next one */
	static const struct want w[] = {
		{ INIT, PF_LITEM_DATA, 0, 0, 8192 },     { USR, PF_LITEM_DIR, 1, 0, 0 },
		{ USR_LIB, PF_LITEM_DIR, 1, 0, 0 },      { A_SO, PF_LITEM_DATA, 1, 0, 8192 },
		{ ETC_X, PF_LITEM_META, 1, 0, 0 },       { B_SO, PF_LITEM_DATA, 1, 0, 4 * MiB },
		{ OTHER_FS, PF_LITEM_DATA, 2, 0, MiB },  { A_SO, PF_LITEM_DATA, 2, 8192, 4096 },
	};
	struct pf_litem *it = order_is(l, &o, w, sizeof(w) / sizeof(w[0]));
	/* places in bytes, by each filesystem's block size */
	assert_true(it[0].phys_known);
	assert_int_equal(it[0].physical, 900 * 4096);
	assert_int_equal(it[3].physical, 200 * 4096);
	assert_false(it[5].phys_known);
	assert_int_equal(it[6].physical, 10 * 1024);
	free(it);

	/* without init's files the bins start at 0 */
	size_t n;
	l->files[INIT].flags = 0;
	assert_int_equal(pf_layout_order(l, &o, &it, &n), 0);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(it[i].bin, i < 6 ? 0u : 1u);
	free(it);
	pf_image_free(l);
}

static void test_placement_order(void **state)
{
	(void)state;
	struct pf_image *l = layout();
	struct pf_lorder_opts o = { .flags = PF_LORDER_PLACEMENT | PF_LORDER_ONE_FS, .fs = 0 };
	/* the directories first, whole, by rank (the one with a recorded block too); then every extent of this
	 * filesystem's files in layout order; pieces not merged; no inode-only file; bins as for the replay
	 * (ignored) */
	static const struct want w[] = {
		{ USR, PF_LITEM_DIR, 1, 0, 0 },        { USR_LIB, PF_LITEM_DIR, 1, 0, 0 },
		{ INIT, PF_LITEM_DATA, 0, 0, 8192 },    { A_SO, PF_LITEM_DATA, 1, 0, 4096 },
		{ A_SO, PF_LITEM_DATA, 1, 4096, 4096 }, { B_SO, PF_LITEM_DATA, 1, 0, 3 * MiB },
		{ B_SO, PF_LITEM_DATA, 1, 3 * MiB, MiB }, { A_SO, PF_LITEM_DATA, 1, 8192, 4096 },
	};
	free(order_is(l, &o, w, sizeof(w) / sizeof(w[0])));

	/* the other filesystem: its one file */
	o.fs = 1;
	static const struct want w1[] = { { OTHER_FS, PF_LITEM_DATA, 0, 0, MiB } };
	free(order_is(l, &o, w1, 1));
	/* a filesystem without files: nothing */
	o.fs = 2;
	assert_null(order_is(l, &o, NULL, 0));
	pf_image_free(l);
}

static void test_head(void **state)
{
	(void)state;
	struct pf_image *l = layout();
	assert_true(pf_lorder_is_head(&l->files[INIT]));
	assert_false(pf_lorder_is_head(&l->files[A_SO]));
	struct pf_file d = { .fs = 0, .flags = PF_FILE_DIR, .path = "/sbin/" };
	assert_true(pf_lorder_above_head(l, &d));
	d.path = "/";
	assert_true(pf_lorder_above_head(l, &d));
	d.path = "/sbi";
	assert_false(pf_lorder_above_head(l, &d));
	assert_false(pf_lorder_above_head(l, &l->files[USR]));
	d.path = "/sbin";
	d.fs = 1;
	assert_false(pf_lorder_above_head(l, &d));
	pf_image_free(l);
}

static void test_bins(void **state)
{
	(void)state;
	/* twelve items of 1 MiB, the fourth a directory (no data bytes): bins of 2, 4, 4, ... MiB of data */
	struct pf_lorder_bins b;
	pf_lorder_bins_init(&b, 2 * MiB, 4 * MiB);
	static const uint32_t want[12] = { 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3 };
	for (int i = 0; i < 12; i++)
		assert_int_equal(pf_lorder_bins_next(&b, i == 3 ? 0 : MiB), want[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reading_order),
		cmocka_unit_test(test_placement_order),
		cmocka_unit_test(test_head),
		cmocka_unit_test(test_bins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
