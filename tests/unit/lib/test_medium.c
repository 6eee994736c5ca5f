/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/medium.c on a fake sysfs tree: a SATA hard disk, a SATA SSD (a partition of it), an NVMe drive, an SD
 * card's partition, a USB stick, a removable disk, a device-mapper device on the SD card and one on the SSD, a
 * device sysfs does not know; and the overrides. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "config.h"
#include "format.h"
#include "medium.h"
#include "note.h"
#include "support_sysfs.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char sys[PATH_MAX];

/* A disk at devices/<dir>/block/<name> with queue/rotational and removable, and /dev/block/<maj>:<min> to it
 * (or to its partition <part>, when given). */
static void disk(const char *dir, const char *name, int rot, int removable, const char *part, unsigned maj,
		 unsigned min)
{
	char d[PATH_MAX], f[PATH_MAX + 64], link[PATH_MAX + 64], target[PATH_MAX + 64];
	snprintf(d, sizeof(d), "devices/%s/block/%s", dir, name);
	snprintf(f, sizeof(f), "%s/queue", d);
	pf_fake_sysfs_mkdirs(sys, f);
	snprintf(f, sizeof(f), "%s/queue/rotational", d);
	pf_fake_sysfs_put(sys, f, rot ? "1\n" : "0\n");
	snprintf(f, sizeof(f), "%s/removable", d);
	pf_fake_sysfs_put(sys, f, removable ? "1\n" : "0\n");
	if (part) {
		snprintf(f, sizeof(f), "%s/%s", d, part);
		pf_fake_sysfs_mkdirs(sys, f);
		snprintf(d + strlen(d), sizeof(d) - strlen(d), "/%s", part);
	}
	pf_fake_sysfs_mkdirs(sys, "dev/block");
	snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sys, maj, min);
	snprintf(target, sizeof(target), "../../%s", d);
	assert_int_equal(symlink(target, link), 0);
}

/* A device-mapper disk dm-<n> stacked on the block device at devices/<under> */
static void dm(unsigned n, const char *under, unsigned min)
{
	char d[128], f[PATH_MAX], link[2 * PATH_MAX + 64], target[PATH_MAX + 64];
	snprintf(d, sizeof(d), "dm-%u", n);
	disk("virtual", d, 0, 0, NULL, 254, min);
	snprintf(f, sizeof(f), "devices/virtual/block/%s/slaves", d);
	pf_fake_sysfs_mkdirs(sys, f);
	snprintf(link, sizeof(link), "%s/%s/%s", sys, f, strrchr(under, '/') + 1);
	snprintf(target, sizeof(target), "../../../../../%s", under);
	assert_int_equal(symlink(target, link), 0);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(pf_test_mkdtemp(sys, sizeof(sys), "sysfs"));
	disk("pci0000:00/ata1/host0/target0:0:0/0:0:0:0", "sda", 1, 0, NULL, 8, 0);
	disk("pci0000:00/ata2/host1/target1:0:0/1:0:0:0", "sdb", 0, 0, "sdb2", 8, 18);
	disk("pci0000:00/0000:00:1d.0/nvme/nvme0", "nvme0n1", 0, 0, NULL, 259, 0);
	disk("platform/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa", "mmcblk0", 0, 0, "mmcblk0p2", 179, 2);
	disk("pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0", "sdc", 0, 1, NULL, 8, 32);
	disk("pci0000:00/ata3/host2/target2:0:0/2:0:0:0", "sdd", 0, 1, NULL, 8, 48);
	dm(0, "devices/platform/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0/mmcblk0p2", 0);
	dm(1, "devices/pci0000:00/ata2/host1/target1:0:0/1:0:0:0/block/sdb/sdb2", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return pf_test_rmtree(sys);
}

static void expect(unsigned maj, unsigned min, int medium, const char *why)
{
	char w[128];
	struct pf_note n = pf_note_into(w, sizeof(w));
	assert_int_equal(pf_medium_detect(sys, makedev(maj, min), &n), medium);
	assert_string_equal(w, why);
	assert_int_equal(n.lines, 1); /* one line, the stacked device's included */
}

static void test_detect(void **state)
{
	(void)state;
	expect(8, 0, PF_MEDIUM_ROTATIONAL, "sda: rotational");
	expect(8, 18, PF_MEDIUM_FAST_FLASH, "sdb: not rotational");
	expect(259, 0, PF_MEDIUM_FAST_FLASH, "nvme0n1: not rotational");
	expect(179, 2, PF_MEDIUM_SLOW_FLASH, "mmcblk0: SD/eMMC");
	expect(8, 32, PF_MEDIUM_SLOW_FLASH, "sdc: on USB");
	expect(8, 48, PF_MEDIUM_SLOW_FLASH, "sdd: removable");
	expect(254, 0, PF_MEDIUM_SLOW_FLASH, "mmcblk0: SD/eMMC (under dm-0)");
	expect(254, 1, PF_MEDIUM_FAST_FLASH, "dm-1: not rotational");
	expect(7, 99, PF_MEDIUM_UNKNOWN, "7:99: no queue in sysfs");
	assert_int_equal(pf_medium_detect(sys, makedev(179, 2), NULL), PF_MEDIUM_SLOW_FLASH);
}

static void test_override_and_names(void **state)
{
	(void)state;
	dev_t nowhere = makedev(4095, 1048575);
	assert_int_equal(pf_medium_of_devno(nowhere, PF_MEDIUM_FORCE_ROTATIONAL), PF_MEDIUM_ROTATIONAL);
	assert_int_equal(pf_medium_of_devno(nowhere, PF_MEDIUM_FORCE_SLOW_FLASH), PF_MEDIUM_SLOW_FLASH);
	assert_int_equal(pf_medium_of_devno(nowhere, PF_MEDIUM_FORCE_FAST_FLASH), PF_MEDIUM_FAST_FLASH);
	assert_int_equal(pf_medium_of_devno(nowhere, PF_MEDIUM_AUTO), PF_MEDIUM_UNKNOWN);
	char why[64];
	struct pf_note n = pf_note_into(why, sizeof(why));
	assert_int_equal(pf_medium_explain(nowhere, PF_MEDIUM_FORCE_SLOW_FLASH, &n), PF_MEDIUM_SLOW_FLASH);
	assert_string_equal(why, "PREFETCH_MEDIUM");
	assert_string_equal(pf_medium_name(PF_MEDIUM_ROTATIONAL), "rotational");
	assert_string_equal(pf_medium_name(PF_MEDIUM_SLOW_FLASH), "slow-flash");
	assert_string_equal(pf_medium_name(PF_MEDIUM_FAST_FLASH), "fast-flash");
	assert_string_equal(pf_medium_name(PF_MEDIUM_UNKNOWN), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_override_and_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
