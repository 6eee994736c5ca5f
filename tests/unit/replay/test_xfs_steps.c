/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The elevator of XFS's metadata steps (xfs_steps.h): ascending within a round, a step added behind the head in
 * the next round, which starts over from the low end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "xfs_steps.h"

static struct pf_xstep at(uint64_t addr, uint32_t idx)
{
	return (struct pf_xstep){ .addr = addr, .len = 10, .kind = 0, .idx = idx };
}

static void test_ascending(void **state)
{
	(void)state;
	struct pf_xsteps q = { 0 };
	uint64_t addrs[] = { 500, 100, 900, 300, 700, 200 };
	for (uint32_t i = 0; i < 6; i++)
		assert_int_equal(pf_xsteps_add(&q, at(addrs[i], i)), 0);
	struct pf_xstep s;
	uint64_t last = 0;
	for (int i = 0; i < 6; i++) {
		assert_int_equal(pf_xsteps_next(&q, &s), 1);
		assert_true(s.addr >= last);
		last = s.addr;
		assert_int_equal(q.head, s.addr + 10);
	}
	assert_int_equal(pf_xsteps_next(&q, &s), 0);
	pf_xsteps_free(&q);
}

/* Steps before a limit only, in this round; the head moves with the sweep. */
static void test_before_limit(void **state)
{
	(void)state;
	struct pf_xsteps q = { 0 };
	assert_int_equal(pf_xsteps_add(&q, at(100, 1)), 0);
	assert_int_equal(pf_xsteps_add(&q, at(300, 2)), 0);
	struct pf_xstep s;
	assert_int_equal(pf_xsteps_next_before(&q, 100, &s), 0); /* not before 100 */
	assert_int_equal(pf_xsteps_next_before(&q, 200, &s), 1);
	assert_int_equal(s.idx, 1);
	assert_int_equal(pf_xsteps_next_before(&q, 200, &s), 0);
	pf_xsteps_at(&q, 250); /* a data item read up to 250 */
	/* added behind the head: the next round, after everything of this one, however low */
	assert_int_equal(pf_xsteps_add(&q, at(50, 3)), 0);
	assert_int_equal(pf_xsteps_add(&q, at(400, 4)), 0);
	assert_int_equal(pf_xsteps_next_before(&q, 1000, &s), 1);
	assert_int_equal(s.idx, 2);
	assert_int_equal(pf_xsteps_next_before(&q, 1000, &s), 1);
	assert_int_equal(s.idx, 4);
	assert_int_equal(pf_xsteps_next_before(&q, 1000, &s), 0); /* the next round's waits for pf_xsteps_next */
	assert_int_equal(pf_xsteps_next(&q, &s), 1);
	assert_int_equal(s.idx, 3);
	assert_int_equal(q.round, 1);
	/* in the new round, from where the head is now (60) */
	assert_int_equal(pf_xsteps_add(&q, at(55, 5)), 0);
	assert_int_equal(pf_xsteps_add(&q, at(70, 6)), 0);
	assert_int_equal(pf_xsteps_next(&q, &s), 1);
	assert_int_equal(s.idx, 6);
	assert_int_equal(pf_xsteps_next(&q, &s), 1);
	assert_int_equal(s.idx, 5);
	assert_int_equal(s.round, 2);
	assert_int_equal(pf_xsteps_next(&q, &s), 0);
	pf_xsteps_free(&q);
}

/* Many steps: the heap keeps them in order. */
static void test_many(void **state)
{
	(void)state;
	struct pf_xsteps q = { 0 };
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(pf_xsteps_add(&q, at((i * 7919u) % 1000 * 100, i)), 0);
	struct pf_xstep s;
	uint64_t last = 0;
	size_t n = 0;
	while (pf_xsteps_next(&q, &s)) {
		assert_true(s.addr >= last);
		last = s.addr;
		n++;
	}
	assert_int_equal(n, 1000);
	pf_xsteps_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascending),
		cmocka_unit_test(test_before_limit),
		cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
