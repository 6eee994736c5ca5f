/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The read plan's placing and passes (lib/read_plan.h) with a table for a block mapper: the same table handed
 * over as a callback (the replay's and the prediction's way) and straight to pf_rplan_place_file gives the
 * same items; ranges lying in several places are cut; files the mapper cannot map keep the layout's places;
 * the counts say so; the head goes first, stably. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "read_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB 1024ull

/* Files 0..3, regular, touched in that order, inodes in the reverse one (the placing goes by inode). */
static struct pf_image *layout(void)
{
	struct pf_image *l = pf_image_new(PF_KIND_LAYOUT);
	struct pf_fs fs = { .block_size = 4096, .mountpoint = "/" };
	assert_int_equal(pf_image_add_fs(l, &fs), 0);
	for (int i = 0; i < 4; i++) {
		char path[16];
		snprintf(path, sizeof(path), "/f%d", i);
		struct pf_file f = { .ino = 40 - (uint64_t)i, .size = 1024 * KiB, .first_order = (uint32_t)i + 1,
				     .path = path };
		assert_int_equal(pf_image_add_file(l, &f), i);
	}
	return l;
}

static void add_ext(struct pf_image *l, uint32_t file, uint64_t off, uint64_t len, uint64_t phys_block)
{
	struct pf_extent e = { .file = file, .offset = off, .length = len, .flags = PF_EXT_PHYS_KNOWN,
			       .physical = phys_block };
	assert_true(pf_image_add_extent(l, &e) >= 0);
}

/* The table: file 0 in two places apart (its second half moved), file 1 where the layout says, file 2 not
 * there (UNMAPPED), file 3 refused (-EOPNOTSUPP). */
static const struct pf_rplan_extent file0[] = { { 0, 32 * KiB, 1000 * 4096, 1 }, { 32 * KiB, 32 * KiB, 5000 * 4096, 1 } };
static const struct pf_rplan_extent file1[] = { { 0, 64 * KiB, 200 * 4096, 1 } };

struct table {
	unsigned calls;
	uint32_t order[8];
};

static int table_map(void *arg, uint32_t file, uint64_t start, uint64_t end, struct pf_rplan_extent **x, size_t *nx,
		     uint64_t *covered)
{
	struct table *t = arg;
	(void)start;
	*covered = end;
	t->order[t->calls++ % 8] = file;
	const struct pf_rplan_extent *src = file == 0 ? file0 : file1;
	size_t n = file == 0 ? 2 : 1;
	if (file == 2)
		return PF_RPLAN_UNMAPPED;
	if (file == 3)
		return -EOPNOTSUPP;
	*x = malloc(n * sizeof(**x));
	assert_non_null(*x);
	memcpy(*x, src, n * sizeof(**x));
	*nx = n;
	return 0;
}

static struct pf_image *example(void)
{
	struct pf_image *l = layout();
	add_ext(l, 0, 0, 64 * KiB, 1000); /* the layout says one place: it now lies in two */
	add_ext(l, 1, 0, 64 * KiB, 200);
	add_ext(l, 2, 0, 8 * KiB, 300);
	add_ext(l, 3, 0, 8 * KiB, 400);
	return l;
}

static void test_place_by_callback(void **state)
{
	(void)state;
	struct pf_image *l = example();
	struct pf_ritem *it, *own;
	size_t n;
	assert_int_equal(pf_rplan_build(l, NULL, &it, &n), 0);
	assert_int_equal(n, 4);
	struct table t = { 0 };
	struct pf_rplan_mapper m = { .map = table_map, .arg = &t };
	struct pf_rplan_placed placed = { 0 };
	struct pf_ritem *items = it;
	assert_int_equal(pf_rplan_place(l, &m, &items, &n, &own, &placed), 0);
	/* by inode: file 3 (ino 37) first, file 0 (ino 40) last; file 2 asked but not counted */
	assert_int_equal(t.calls, 4);
	assert_int_equal(t.order[0], 3);
	assert_int_equal(t.order[3], 0);
	assert_int_equal(placed.files, 3);
	assert_int_equal(placed.failed, 1);
	assert_int_equal(placed.now, 3);    /* file 0's two pieces, file 1 */
	assert_int_equal(placed.layout, 1); /* file 3: refused, the layout's place stands */
	assert_int_equal(placed.moved, 0);  /* file 0's first piece is where the layout said */
	assert_int_equal(placed.pieces, 1);
	assert_non_null(own);
	assert_int_equal(n, 5);
	assert_int_equal(items[0].length, 32 * KiB);
	assert_int_equal(items[0].physical, 1000 * 4096);
	assert_int_equal(items[0].phys_src, PF_RPHYS_NOW);
	assert_int_equal(items[4].file, 0);
	assert_int_equal(items[4].offset, 32 * KiB);
	assert_int_equal(items[4].physical, 5000 * 4096);
	assert_int_equal(items[4].seq, items[0].seq);
	assert_int_equal(items[2].phys_src, PF_RPHYS_LAYOUT); /* file 2: not mapped, untouched */
	assert_int_equal(items[3].phys_src, PF_RPHYS_LAYOUT); /* file 3: refused */
	assert_int_equal(items[3].physical, 400 * 4096);

	/* The same table straight to pf_rplan_place_file: the same items. */
	struct pf_ritem *again;
	size_t m2;
	assert_int_equal(pf_rplan_build(l, NULL, &again, &m2), 0);
	struct pf_rvec more = { 0 };
	struct pf_ritem *p0 = &again[0], *p1 = &again[1];
	assert_int_equal(pf_rplan_place_file(&p0, 1, file0, 2, UINT64_MAX, &more), 0);
	assert_int_equal(pf_rplan_place_file(&p1, 1, file1, 1, UINT64_MAX, &more), 0);
	assert_int_equal(more.n, 1);
	assert_memory_equal(&again[0], &items[0], sizeof(again[0]));
	assert_memory_equal(&again[1], &items[1], sizeof(again[1]));
	assert_memory_equal(&more.v[0], &items[4], sizeof(more.v[0]));
	free(more.v);
	free(again);
	free(own);
	free(it);
	pf_image_free(l);
}

/* The sweep: placed, sorted by place (file 1 at block 200 before file 0's at 1000 and 5000), coalesced. */
static void test_sweep_and_flash(void **state)
{
	(void)state;
	struct pf_image *l = example();
	struct pf_ritem *it, *own;
	size_t n;
	struct table t = { 0 };
	struct pf_rplan_mapper m = { .map = table_map, .arg = &t };
	struct pf_rplan_placed placed = { 0 };
	assert_int_equal(pf_rplan_build(l, NULL, &it, &n), 0);
	struct pf_ritem *items = it;
	assert_int_equal(pf_rplan_sweep(l, &m, &items, &n, &own, &placed), 0);
	assert_int_equal(n, 5);
	static const uint64_t want[] = { 200, 300, 400, 1000, 5000 };
	for (size_t i = 0; i < n; i++)
		assert_int_equal(items[i].physical, want[i] * 4096);
	free(own);
	free(it);

	/* flash: file 0's two pieces are not adjacent on the device: kept apart, in first-touch order */
	assert_int_equal(pf_rplan_build(l, NULL, &it, &n), 0);
	items = it;
	assert_int_equal(pf_rplan_flash(l, &m, &items, &n, &own, &placed), 0);
	assert_int_equal(n, 5);
	for (size_t i = 1; i < n; i++)
		assert_true(items[i - 1].seq <= items[i].seq);
	free(own);
	free(it);
	pf_image_free(l);
}

/* The head (init's files) to the front, stably; none, or all of them: 0 (one sweep). */
static void test_head_first(void **state)
{
	(void)state;
	struct pf_image *l = example();
	struct pf_ritem *it;
	size_t n;
	assert_int_equal(pf_rplan_build(l, NULL, &it, &n), 0);
	assert_int_equal(pf_rplan_head_first(l, it, n), 0);
	free(it);
	l->files[1].flags |= PF_FILE_INIT;
	l->files[3].flags |= PF_FILE_INIT;
	assert_int_equal(pf_rplan_build(l, NULL, &it, &n), 0);
	assert_int_equal(pf_rplan_head_first(l, it, n), 2);
	static const uint32_t want[] = { 1, 3, 0, 2 };
	for (size_t i = 0; i < n; i++)
		assert_int_equal(it[i].file, want[i]);
	free(it);
	for (uint32_t f = 0; f < l->nfiles; f++)
		l->files[f].flags |= PF_FILE_INIT;
	assert_int_equal(pf_rplan_build(l, NULL, &it, &n), 0);
	assert_int_equal(pf_rplan_head_first(l, it, n), 0);
	free(it);
	pf_image_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_by_callback),
		cmocka_unit_test(test_sweep_and_flash),
		cmocka_unit_test(test_head_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
