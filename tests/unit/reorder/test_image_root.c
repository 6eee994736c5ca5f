/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The root filesystem of a disk image (image_root.h): an MBR written by hand with an empty partition 1 and an ext4
 * made at partition 2's offset; the partition asked for; one without a filesystem; one that does not exist; a
 * table without an ext2/3/4 partition; and a bare filesystem image. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "error.h"
#include "image_root.h"
#include "support_mkfs.h"
#include "support_tmpdir.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1024 * 1024)

static void mbr_entry(unsigned char *e, uint8_t type, uint32_t start, uint32_t sectors)
{
	e[4] = type;
	for (int i = 0; i < 4; i++) {
		e[8 + i] = (unsigned char)(start >> (8 * i));
		e[12 + i] = (unsigned char)(sectors >> (8 * i));
	}
}

/* A 32 MiB image: partition 1 (swap type, 4 MiB of zeros) at 1 MiB, partition 2 (Linux) at 8 MiB to the end,
 * holding an ext4 when with_fs. */
static const char *disk(const char *name, int with_fs)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s/%s", pf_test_dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 32 * MIB), 0);
	unsigned char mbr[512] = { 0 };
	mbr_entry(mbr + 446, 0x82, 2048, 8192);
	mbr_entry(mbr + 462, 0x83, 16384, 65536 - 16384);
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	assert_int_equal(pwrite(fd, mbr, sizeof(mbr), 0), (ssize_t)sizeof(mbr));
	close(fd);
	if (with_fs) {
		char cmd[4400];
		snprintf(cmd, sizeof(cmd), "mke2fs -q -F -t ext4 -E offset=%d '%s' %dk >/dev/null 2>&1", 8 * MIB, path,
			 24 * 1024);
		assert_int_equal(system(cmd), 0);
	}
	return path;
}

static void test_mbr(void **state)
{
	(void)state;
	const char *img = disk("mbr.img", 1);
	struct pf_image_root r;
	char err[512];
	assert_int_equal(pf_image_root_find(img, 0, &r, err, sizeof(err)), 0);
	assert_int_equal(r.partno, 2);
	assert_int_equal(r.offset, 8 * MIB);
	assert_int_equal(r.size, 24 * MIB);
	assert_string_equal(r.table, "dos");
	assert_string_equal(r.type, "ext4");
	assert_string_equal(r.why, "partition 2 of its dos table, its only ext2/3/4");
	char io[48];
	pf_image_root_io_options(&r, io, sizeof(io));
	assert_string_equal(io, "offset=8388608");
	assert_int_equal(pf_image_root_find(img, 2, &r, err, sizeof(err)), 0);
	assert_string_equal(r.why, "partition 2 of its dos table, as asked");
	assert_int_equal(pf_image_root_find(img, 1, &r, err, sizeof(err)), PF_EOPEN);
	assert_non_null(strstr(err, "partition 1 holds no filesystem known, not ext2/3/4: nothing changed"));
	assert_int_equal(pf_image_root_find(img, 3, &r, err, sizeof(err)), PF_EOPEN);
	assert_non_null(strstr(err, "no partition 3 (partitions: 1 unknown, 2 ext4)"));
}

static void test_no_root(void **state)
{
	(void)state;
	const char *img = disk("empty.img", 0);
	struct pf_image_root r;
	char err[512];
	assert_int_equal(pf_image_root_find(img, 0, &r, err, sizeof(err)), PF_EOPEN);
	assert_non_null(strstr(err, ": no ext2/3/4 root filesystem in its dos partition table (partitions: 1 unknown, "
				    "2 unknown): nothing changed"));
	assert_int_equal(pf_image_root_find("/nonexistent/disk.img", 0, &r, err, sizeof(err)), PF_EOPEN);
	assert_non_null(strstr(err, "cannot open"));
}

static void test_bare(void **state)
{
	(void)state;
	const char *img = pf_test_mkfs("bare.img", "-t ext4");
	assert_non_null(img);
	struct pf_image_root r;
	char err[512], io[48];
	assert_int_equal(pf_image_root_find(img, 0, &r, err, sizeof(err)), 0);
	assert_int_equal(r.partno, 0);
	assert_int_equal(r.offset, 0);
	assert_int_equal(r.size, 0);
	assert_string_equal(r.type, "ext4");
	pf_image_root_io_options(&r, io, sizeof(io));
	assert_string_equal(io, "");
	assert_int_equal(pf_image_root_find(img, 1, &r, err, sizeof(err)), PF_EOPEN);
	assert_non_null(strstr(err, "no partition table, so no partition 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mbr),
		cmocka_unit_test(test_no_root),
		cmocka_unit_test(test_bare),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
