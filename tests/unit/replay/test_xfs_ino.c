/* SPDX-License-Identifier: GPL-2.0-or-later */
/* XFS inode-number decoding (daddr values checked against xfs_db's "convert inode N daddr" on a 300 MiB
 * mkfs.xfs 6.1 image: 4 KiB blocks, 512-byte inodes, 19200 blocks per group, v5). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "xfs_ino.h"

#include <errno.h>

static const struct pf_xfs_geom g300 = { .blocksize = 4096, .inodesize = 512, .agblocks = 19200, .v5 = 1 };

/* xfs_db's daddr: 512-byte sectors, the inode's own */
static uint64_t daddr(const struct pf_xfs_ino *x, const struct pf_xfs_geom *g)
{
	return (x->fsblock * g->blocksize + (uint64_t)x->slot * g->inodesize) / 512;
}

static void test_decode_matches_xfs_db(void **state)
{
	(void)state;
	static const struct {
		uint64_t ino;
		uint32_t agno, agbno, slot;
		uint64_t daddr;
	} cases[] = {
		{ 128, 0, 16, 0, 128 },
		{ 131, 0, 16, 3, 131 },
		{ 12345, 0, 1543, 1, 12345 },
		{ 16777344, 64, 16, 0, 9830528 },   /* agblklog 15 + inopblog 3: group 64 starts at 64 << 18 */
		{ 16790000, 64, 1598, 0, 9843184 },
		{ 50331800, 192, 19, 0, 29491352 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pf_xfs_ino x;
		assert_int_equal(pf_xfs_ino_decode(&g300, cases[i].ino, &x), 0);
		assert_int_equal(x.agno, cases[i].agno);
		assert_int_equal(x.agbno, cases[i].agbno);
		assert_int_equal(x.slot, cases[i].slot);
		assert_int_equal(daddr(&x, &g300), cases[i].daddr);
	}
}

static void test_clusters(void **state)
{
	(void)state;
	struct pf_xfs_ino a, b, c, d;
	/* v5, 512-byte inodes: 16 KiB clusters, 4 blocks (32 inodes) */
	assert_int_equal(pf_xfs_ino_decode(&g300, 128, &a), 0);
	assert_int_equal(pf_xfs_ino_decode(&g300, 159, &b), 0); /* block 19, last slot */
	assert_int_equal(pf_xfs_ino_decode(&g300, 160, &c), 0); /* block 20: the next cluster */
	assert_int_equal(a.cluster_blocks, 4);
	assert_true(a.cluster == b.cluster);
	assert_true(a.cluster < c.cluster);
	assert_int_equal(a.cluster_block, 16);
	assert_int_equal(c.cluster_block, 20);
	/* the same block number in another group is another cluster, further on the disk */
	assert_int_equal(pf_xfs_ino_decode(&g300, (1u << 18) | 128, &d), 0);
	assert_int_equal(d.agno, 1);
	assert_int_equal(d.cluster_block, 19200 + 16);
	assert_true(d.cluster > c.cluster);
	/* v4, 256-byte inodes: 8 KiB clusters, 2 blocks */
	const struct pf_xfs_geom v4 = { .blocksize = 4096, .inodesize = 256, .agblocks = 16384, .v5 = 0 };
	assert_int_equal(pf_xfs_ino_decode(&v4, 64 * 16 + 3, &a), 0); /* block 64 */
	assert_int_equal(a.agbno, 64);
	assert_int_equal(a.slot, 3);
	assert_int_equal(a.cluster_blocks, 2);
}

static void test_refused(void **state)
{
	(void)state;
	struct pf_xfs_ino x;
	assert_int_equal(pf_xfs_ino_decode(&g300, 19300u << 3, &x), -EINVAL); /* block beyond the group */
	const struct pf_xfs_geom odd = { .blocksize = 4096, .inodesize = 300, .agblocks = 100 };
	assert_int_equal(pf_xfs_ino_decode(&odd, 128, &x), -EINVAL);
	const struct pf_xfs_geom big = { .blocksize = 512, .inodesize = 1024, .agblocks = 100 };
	assert_int_equal(pf_xfs_ino_decode(&big, 128, &x), -EINVAL);
	const struct pf_xfs_geom none = { .blocksize = 4096, .inodesize = 512, .agblocks = 0 };
	assert_int_equal(pf_xfs_ino_decode(&none, 128, &x), -EINVAL);
}

/* A group's first inode: its number decodes to that group, block 0, slot 0. */
static void test_ag_first_ino(void **state)
{
	(void)state;
	assert_int_equal(pf_xfs_ag_first_ino(&g300, 0), 0);
	assert_int_equal(pf_xfs_ag_first_ino(&g300, 64), 16777216); /* 64 << 18, as in the xfs_db case above */
	struct pf_xfs_ino x;
	assert_int_equal(pf_xfs_ino_decode(&g300, pf_xfs_ag_first_ino(&g300, 3), &x), 0);
	assert_int_equal(x.agno, 3);
	assert_int_equal(x.agbno, 0);
	assert_int_equal(x.slot, 0);
	const struct pf_xfs_geom odd = { .blocksize = 4096, .inodesize = 300, .agblocks = 100 };
	assert_int_equal(pf_xfs_ag_first_ino(&odd, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_matches_xfs_db),
		cmocka_unit_test(test_clusters),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_ag_first_ino),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
