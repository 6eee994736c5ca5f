/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reorder/erase_block.c: the size from a fake sysfs tree (an SD card's partition with its discard granularity
 * and offset, an SSD whose granularity is a page, an md array's optimal I/O size, a loop device, a device sysfs
 * does not know), the geometry in filesystem blocks (rounding, phase), and the count of erase blocks a range
 * touches and covers whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "erase_block.h"
#include "support_sysfs.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char sys[PATH_MAX];

/* devices/<name> with queue/discard_granularity and queue/optimal_io_size; a partition <part> starting at
 * sector <start> when part is given; dev/block/<maj>:<min> links to the partition or the disk. */
static void disk(const char *name, const char *gran, const char *opt, const char *part, const char *start,
		 unsigned maj, unsigned min)
{
	char d[PATH_MAX], f[PATH_MAX + 64], link[PATH_MAX + 64], target[PATH_MAX + 64];
	snprintf(d, sizeof(d), "devices/%s", name);
	snprintf(f, sizeof(f), "%s/queue", d);
	pf_fake_sysfs_mkdirs(sys, f);
	snprintf(f, sizeof(f), "%s/queue/discard_granularity", d);
	pf_fake_sysfs_put(sys, f, gran);
	snprintf(f, sizeof(f), "%s/queue/optimal_io_size", d);
	pf_fake_sysfs_put(sys, f, opt);
	if (part) {
		snprintf(d + strlen(d), sizeof(d) - strlen(d), "/%s", part);
		pf_fake_sysfs_mkdirs(sys, d);
		snprintf(f, sizeof(f), "%s/partition", d);
		pf_fake_sysfs_put(sys, f, "1\n");
		snprintf(f, sizeof(f), "%s/start", d);
		pf_fake_sysfs_put(sys, f, start);
	}
	pf_fake_sysfs_mkdirs(sys, "dev/block");
	snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sys, maj, min);
	snprintf(target, sizeof(target), "../../%s", d);
	assert_int_equal(symlink(target, link), 0);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(pf_test_mkdtemp(sys, sizeof(sys), "sysfs"));
	disk("mmcblk0", "4194304\n", "0\n", "mmcblk0p2", "532480\n", 179, 2); /* 260 MiB into the card */
	disk("sda", "4096\n", "0\n", NULL, NULL, 8, 0);
	disk("md0", "0\n", "524288\n", NULL, NULL, 9, 0);
	disk("loop0", "4194304\n", "0\n", NULL, NULL, 7, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return pf_test_rmtree(sys);
}

static void test_sysfs(void **state)
{
	(void)state;
	uint64_t part;
	char why[128];
	struct pf_note n = pf_note_into(why, sizeof(why));
	assert_int_equal(pf_erase_block_sysfs(sys, makedev(179, 2), &part, &n), 4u << 20);
	assert_int_equal(part, 532480ull * 512);
	assert_string_equal(why, "mmcblk0 discard_granularity");
	/* a page, not an erase block */
	n = pf_note_into(why, sizeof(why));
	assert_int_equal(pf_erase_block_sysfs(sys, makedev(8, 0), &part, &n), 0);
	assert_string_equal(why, ""); /* nothing found, nothing said */
	assert_int_equal(pf_erase_block_sysfs(sys, makedev(9, 0), &part, &n), 512u << 10);
	assert_string_equal(why, "md0 optimal_io_size");
	assert_int_equal(part, 0);
	/* a loop device's disk is not where the filesystem will end up */
	assert_int_equal(pf_erase_block_sysfs(sys, makedev(7, 0), &part, NULL), 0);
	assert_int_equal(pf_erase_block_sysfs(sys, makedev(1, 99), &part, NULL), 0);
}

static void test_geometry(void **state)
{
	(void)state;
	struct pf_erase_block eb = { 0 };
	/* 4 MiB on 4 KiB blocks, the partition 260 MiB in: 65 erase blocks, phase 0 */
	pf_erase_block_set(&eb, 4u << 20, 4096, 532480ull * 512);
	assert_int_equal(eb.blocks, 1024);
	assert_int_equal(eb.phase, 0);
	/* 1 MiB erase blocks, partition 1 MiB + 64 KiB in, 1 KiB blocks: block 960 starts one */
	pf_erase_block_set(&eb, 1u << 20, 1024, (1u << 20) + (64u << 10));
	assert_int_equal(eb.blocks, 1024);
	assert_int_equal(eb.phase, 64);
	/* smaller than a block, or not a multiple of one: the least common multiple */
	pf_erase_block_set(&eb, 1024, 4096, 0);
	assert_int_equal(eb.bytes, 4096);
	assert_int_equal(eb.blocks, 1);
	pf_erase_block_set(&eb, 6144, 4096, 0);
	assert_int_equal(eb.bytes, 12288);
	assert_int_equal(eb.blocks, 3);
}

static void test_touched(void **state)
{
	(void)state;
	struct pf_erase_block eb = { .bytes = 64 << 10, .blocks = 64, .phase = 16 }; /* boundaries at 48, 112, ... */
	uint64_t whole;
	assert_int_equal(pf_erase_blocks_touched(&eb, 48, 128, &whole), 2);
	assert_int_equal(whole, 2);
	assert_int_equal(pf_erase_blocks_touched(&eb, 40, 136, &whole), 3); /* [40, 176): 8 before 48 */
	assert_int_equal(whole, 2);
	assert_int_equal(pf_erase_blocks_touched(&eb, 50, 10, &whole), 1);
	assert_int_equal(whole, 0);
	struct pf_erase_block none = { .blocks = 1 };
	assert_int_equal(pf_erase_blocks_touched(&none, 7, 5, &whole), 5);
	assert_int_equal(whole, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sysfs, setup, teardown),
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_touched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
