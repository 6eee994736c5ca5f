/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/fsid.c on real images made by mke2fs: UUID and type from the ext superblock, an external journal (left
 * to blkid), what is not a filesystem, a missing file, a FAT volume's short serial; the device standing for a
 * path's filesystem; and UUID text both ways. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fsid.h"
#include "support_mkfs.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char *mkimage(const char *name, const char *args)
{
	const char *path = pf_test_mkfs(name, args);
	assert_non_null(path);
	return path;
}

static void check_fs(const char *args, const char *uuid, const char *type)
{
	const char *img = mkimage(type, args);
	struct pf_fsid id;
	assert_int_equal(pf_fsid_from_name(img, &id), 0);
	char text[37];
	pf_uuid_format(id.uuid, text);
	assert_string_equal(text, uuid);
	assert_string_equal(id.type, type);
	assert_string_equal(id.devname, img);
	assert_int_equal(id.devno, 0); /* an image file, not a block device */
}

static void test_ext_types(void **state)
{
	(void)state;
	check_fs("-t ext4 -U 0d1e2f30-4152-6374-8596-a7b8c9dae0f1", "0d1e2f30-4152-6374-8596-a7b8c9dae0f1", "ext4");
	check_fs("-t ext3 -U 11111111-2222-3333-4444-555555555555", "11111111-2222-3333-4444-555555555555", "ext3");
	check_fs("-t ext2 -U aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "ext2");
}

static void test_not_a_filesystem(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof(path), "%s/zeros", pf_test_dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	static const char block[4096];
	for (int i = 0; i < 256; i++)
		assert_int_equal(fwrite(block, 1, sizeof(block), f), sizeof(block));
	fclose(f);
	struct pf_fsid id;
	assert_int_equal(pf_fsid_from_name(path, &id), -ENODATA);

	/* an external journal carries the ext magic but is no ext filesystem: blkid names it */
	const char *jdev = mkimage("journal", "-O journal_dev -b 4096");
	assert_int_equal(pf_fsid_from_name(jdev, &id), 0);
	assert_string_equal(id.type, "jbd");

	snprintf(path, sizeof(path), "%s/missing", pf_test_dir);
	assert_int_equal(pf_fsid_from_name(path, &id), -ENOENT);
}

/* A FAT volume's 4-byte serial ("1234-ABCD"): padded to 16 bytes, so that a vfat /boot/efi is known across boots.
 * The image is a minimal FAT16 boot sector and FATs written here (no mkfs.vfat needed). */
static void test_short_volume_id(void **state)
{
	(void)state;
	static unsigned char img[2 << 20];
	memset(img, 0, sizeof(img));
	static const unsigned char bpb[] = {
		0xeb, 0x3c, 0x90, 'M', 'S', 'D', 'O', 'S', '5', '.', '0', /* jump, OEM */
		0x00, 0x02, 4, 1, 0, 2, 0x00, 0x02, 0x00, 0x10, 0xf8, 4, 0, /* 512 B/sector, 4/cluster, 1 reserved, 2 FATs,
									      * 512 root entries, 4096 sectors, media, 4/FAT */
		32, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* geometry, hidden, large total */
		0x80, 0, 0x29, 0xcd, 0xab, 0x34, 0x12, /* drive, extended signature, serial 0x1234ABCD */
		'N', 'O', ' ', 'N', 'A', 'M', 'E', ' ', ' ', ' ', ' ', 'F', 'A', 'T', '1', '6', ' ', ' ', ' ' };
	memcpy(img, bpb, sizeof(bpb));
	img[510] = 0x55;
	img[511] = 0xaa;
	for (int fat = 1; fat <= 5; fat += 4)
		memcpy(img + fat * 512, "\xf8\xff\xff\xff", 4);
	char path[256];
	snprintf(path, sizeof(path), "%s/fat", pf_test_dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, sizeof(img), f), sizeof(img));
	fclose(f);
	struct pf_fsid id;
	assert_int_equal(pf_fsid_from_name(path, &id), 0);
	assert_string_equal(id.type, "vfat");
	char text[37];
	pf_uuid_format(id.uuid, text);
	assert_string_equal(text, "1234abcd-0000-0000-0000-000000000000");
}

/* Where st_dev names a device (the test directory's filesystem, unless it is a btrfs subvolume or a tmpfs) it
 * is the answer as it was, nothing probed; a path that is not there has none.  btrfs: tests/integration. */
static void test_block_device(void **state)
{
	(void)state;
	struct stat st;
	assert_int_equal(stat(pf_test_dir, &st), 0);
	dev_t dev = 1;
	unsigned n = 9;
	assert_int_equal(pf_fsid_block_device(pf_test_dir, &dev, &n), 0);
	if (major(st.st_dev) != 0) {
		assert_true(dev == st.st_dev);
		assert_int_equal(n, 1);
	}
	char path[256];
	snprintf(path, sizeof(path), "%s/not-there", pf_test_dir);
	assert_int_equal(pf_fsid_block_device(path, &dev, &n), -ENOENT);
	assert_true(dev == 0);
	assert_int_equal(n, 0);
}

static void test_uuid_text(void **state)
{
	(void)state;
	uint8_t u[16];
	assert_int_equal(pf_uuid_parse("0D1E2F30-4152-6374-8596-A7B8C9DAE0F1", u), 0);
	char text[37];
	pf_uuid_format(u, text);
	assert_string_equal(text, "0d1e2f30-4152-6374-8596-a7b8c9dae0f1");
	assert_int_equal(pf_uuid_parse("0d1e2f30-4152-6374-8596-a7b8c9dae0", u), -EINVAL); /* short */
	assert_int_equal(pf_uuid_parse("0d1e2f30-4152-6374-8596-a7b8c9dae0f1ff", u), -EINVAL); /* long */
	assert_int_equal(pf_uuid_parse("zd1e2f30-4152-6374-8596-a7b8c9dae0f1", u), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ext_types),
		cmocka_unit_test(test_not_a_filesystem),
		cmocka_unit_test(test_short_volume_id),
		cmocka_unit_test(test_block_device),
		cmocka_unit_test(test_uuid_text),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
