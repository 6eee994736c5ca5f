/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The keys of XFS's data sweep (replay_xfs_order.c): going up, a place is its own key; going down, the groups
 * come from the last down, each from its start up, its group-start steps before its data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "replay_xfs_int.h"

#define MIB (1ull << 20)

static struct pf_xfs_sweep four_groups(int down)
{
	struct pf_xfs_sweep x = { 0 };
	x.agcount = 4;
	x.agbytes = 256 * MIB;
	x.down = down;
	return x;
}

static void test_up(void **state)
{
	(void)state;
	struct pf_xfs_sweep x = four_groups(0);
	assert_int_equal(pf_xfs_key(&x, 777 * MIB, 0), 777 * MIB);
	assert_int_equal(pf_xfs_key(&x, 777 * MIB, 1), 777 * MIB);
	assert_int_equal(pf_xfs_group(&x, 777 * MIB), 3);
	assert_int_equal(pf_xfs_group(&x, 5000 * MIB), 3); /* past the last group: the last one */
}

static void test_down(void **state)
{
	(void)state;
	struct pf_xfs_sweep x = four_groups(1);
	/* in sweep order: the last group's start steps, its data, then the group below's */
	uint64_t order[][2] = {
		{ 768 * MIB, 1 }, { 900 * MIB, 1 }, { 768 * MIB, 0 }, { 1000 * MIB, 0 },
		{ 513 * MIB, 1 }, { 767 * MIB, 1 }, { 512 * MIB, 0 }, { 600 * MIB, 0 },
		{ 256 * MIB, 1 }, { 300 * MIB, 0 }, { 0, 1 },	      { 1 * MIB, 1 }, { 0, 0 }, { 255 * MIB, 0 },
	};
	for (size_t i = 1; i < sizeof(order) / sizeof(order[0]); i++)
		assert_true(pf_xfs_key(&x, order[i - 1][0], (int)order[i - 1][1]) <
			    pf_xfs_key(&x, order[i][0], (int)order[i][1]));
	/* within a group and a half, distances are kept: the elevator's head moves by a step's length */
	assert_int_equal(pf_xfs_key(&x, 600 * MIB, 0) - pf_xfs_key(&x, 512 * MIB, 0), 88 * MIB);
	/* a place past the last group (a last group longer than the others) stays within its own keys */
	assert_true(pf_xfs_key(&x, 1100 * MIB, 0) < pf_xfs_key(&x, 513 * MIB, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_up),
		cmocka_unit_test(test_down),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
