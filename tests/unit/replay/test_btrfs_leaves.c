/* SPDX-License-Identifier: GPL-2.0-or-later */
/* btrfs internal nodes as the metadata pass reads them off the device (btrfs_leaves.h): the key pointers of a
 * node in the on-disk format, and the nodes refused (not the block asked for, a leaf, a count past the node's
 * end).  The walk over a real filesystem: tests/integration/35-replay-btrfs-xfs.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "btrfs_leaves.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#define NODESIZE 16384

static void put64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

/* A node at bytenr: header (bytenr at 48, item count at 96, level at 100), then 33-byte key pointers. */
static void make_node(unsigned char *n, uint64_t bytenr, uint32_t items, uint8_t level)
{
	memset(n, 0, NODESIZE);
	put64(n + 48, bytenr);
	uint32_t c = htole32(items);
	memcpy(n + 96, &c, 4);
	n[100] = level;
	for (uint32_t i = 0; i < items && 101 + (i + 1) * 33 <= NODESIZE; i++) {
		unsigned char *p = n + 101 + i * 33;
		put64(p, 256 + 10 * i);        /* objectid */
		p[8] = 1;                       /* INODE_ITEM */
		put64(p + 9, i);                /* offset */
		put64(p + 17, 30408704 + 16384 * (uint64_t)i); /* blockptr */
		put64(p + 25, 7);               /* generation */
	}
}

struct seen {
	struct pf_btrfs_key k[8];
	uint64_t ptr[8];
	int n;
};

static void child(void *arg, const struct pf_btrfs_key *k, uint64_t blockptr)
{
	struct seen *s = arg;
	if (s->n < 8)
		s->k[s->n] = *k, s->ptr[s->n] = blockptr;
	s->n++;
}

static void test_children_in_order(void **state)
{
	(void)state;
	static unsigned char n[NODESIZE];
	make_node(n, 31260672, 3, 1);
	struct seen s = { 0 };
	assert_int_equal(pf_btrfs_node_children(n, NODESIZE, 31260672, 1, child, &s), 0);
	assert_int_equal(s.n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s.k[i].objectid, 256 + 10 * i);
		assert_int_equal(s.k[i].type, 1);
		assert_int_equal(s.k[i].offset, i);
		assert_int_equal(s.ptr[i], 30408704 + 16384 * (uint64_t)i);
	}
}

static void test_refused(void **state)
{
	(void)state;
	static unsigned char n[NODESIZE];
	struct seen s = { 0 };
	make_node(n, 31260672, 3, 1);
	/* another block than the one asked for: the pointer that led here is stale */
	assert_int_equal(pf_btrfs_node_children(n, NODESIZE, 31277056, 1, child, &s), -EBADMSG);
	/* another level than the one asked for: a node rewritten since its parent pointed to it */
	assert_int_equal(pf_btrfs_node_children(n, NODESIZE, 31260672, 2, child, &s), -EBADMSG);
	make_node(n, 31260672, 3, 0); /* a leaf has items, not key pointers */
	assert_int_equal(pf_btrfs_node_children(n, NODESIZE, 31260672, 1, child, &s), -EBADMSG);
	assert_int_equal(pf_btrfs_node_children(n, NODESIZE, 31260672, 0, child, &s), -EBADMSG);
	make_node(n, 31260672, 0, 1);
	assert_int_equal(pf_btrfs_node_children(n, NODESIZE, 31260672, 1, child, &s), -EBADMSG);
	make_node(n, 31260672, (NODESIZE - 101) / 33 + 1, 1); /* more pointers than the node holds */
	assert_int_equal(pf_btrfs_node_children(n, NODESIZE, 31260672, 1, child, &s), -EBADMSG);
	assert_int_equal(pf_btrfs_node_children(n, 64, 31260672, 1, child, &s), -EBADMSG);
	assert_int_equal(s.n, 0);
	make_node(n, 31260672, (NODESIZE - 101) / 33, 2); /* full: the last pointer ends within the node */
	assert_int_equal(pf_btrfs_node_children(n, NODESIZE, 31260672, 2, child, &s), 0);
	assert_int_equal(s.n, (NODESIZE - 101) / 33);
}

static void test_key_order(void **state)
{
	(void)state;
	const struct pf_btrfs_key a = { 256, 1, 0 }, b = { 256, 12, 0 }, c = { 257, 0, 0 }, d = { 256, 12, 5 };
	assert_true(pf_btrfs_key_cmp(&a, &b) < 0);
	assert_true(pf_btrfs_key_cmp(&b, &c) < 0);
	assert_true(pf_btrfs_key_cmp(&d, &b) > 0);
	assert_int_equal(pf_btrfs_key_cmp(&a, &a), 0);
	const struct pf_btrfs_key csum = { (uint64_t)-10, 128, 0 };
	assert_true(pf_btrfs_key_cmp(&c, &csum) < 0); /* objectids compare unsigned: the csum items come last */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_children_in_order),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_key_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
