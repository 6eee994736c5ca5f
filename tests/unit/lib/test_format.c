/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Trace/layout file format: round trip, and every kind of bad input refused with its own error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "format.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct pf_image *sample(void)
{
	struct pf_image *img = pf_image_new(PF_KIND_LAYOUT);
	img->created = 1795288058;
	img->boots = 3;
	img->flags = PF_IMG_INCOMPLETE;
	img->lost_events = 7;
	struct pf_fs fs = { .uuid = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 },
			    .dev = 0x803, .block_size = 4096, .medium = PF_MEDIUM_ROTATIONAL, .mountpoint = "/" };
	assert_int_equal(pf_image_add_fs(img, &fs), 0);
	for (int i = 0; i < 3; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/usr/lib/lib%d.so", i);
		struct pf_file f = { .fs = 0, .flags = i == 2 ? PF_FILE_DIR : 0, .ino = 100 + i, .generation = 42,
				     .mode = 0100644, .size = 8192 * (i + 1), .mtime_ns = -5, .ctime_ns = 1234567890123,
				     .first_ns = 1000 * i, .first_order = i + 1, .boots = 3, .path = path };
		assert_int_equal(pf_image_add_file(img, &f), i);
	}
	struct pf_extent e1 = { .file = 1, .flags = PF_EXT_PHYS_KNOWN, .offset = 0, .length = 4096, .physical = 777 };
	struct pf_extent e2 = { .file = 0, .offset = 4096, .length = 8192 };
	assert_int_equal(pf_image_add_extent(img, &e1), 0);
	assert_int_equal(pf_image_add_extent(img, &e2), 1);
	return img;
}

static void encode(const struct pf_image *img, unsigned char **buf, size_t *len)
{
	assert_int_equal(pf_image_encode(img, (void **)buf, len), 0);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct pf_image *a = sample(), *b = NULL;
	unsigned char *buf;
	size_t len;
	encode(a, &buf, &len);
	assert_int_equal(pf_image_decode(buf, len, &b), 0);
	assert_int_equal(b->kind, PF_KIND_LAYOUT);
	assert_int_equal(b->created, a->created);
	assert_int_equal(b->boots, 3);
	assert_int_equal(b->flags, PF_IMG_INCOMPLETE);
	assert_int_equal(b->lost_events, 7);
	assert_int_equal(b->nfs, 1);
	assert_memory_equal(b->fs[0].uuid, a->fs[0].uuid, 16);
	assert_string_equal(b->fs[0].mountpoint, "/");
	assert_int_equal(b->fs[0].medium, PF_MEDIUM_ROTATIONAL);
	assert_int_equal(b->nfiles, 3);
	for (int i = 0; i < 3; i++) {
		assert_string_equal(b->files[i].path, a->files[i].path);
		assert_int_equal(b->files[i].ino, a->files[i].ino);
		assert_int_equal(b->files[i].size, a->files[i].size);
		assert_true(b->files[i].mtime_ns == a->files[i].mtime_ns);
		assert_true(b->files[i].ctime_ns == a->files[i].ctime_ns);
		assert_int_equal(b->files[i].flags, a->files[i].flags);
	}
	assert_int_equal(b->nextents, 2);
	assert_int_equal(b->extents[0].physical, 777);
	assert_int_equal(b->extents[1].offset, 4096);
	assert_int_equal(pf_image_bytes(b), 12288);
	/* encoding the decoded image gives the same bytes */
	unsigned char *buf2;
	size_t len2;
	encode(b, &buf2, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	free(buf2);
	free(buf);
	pf_image_free(a);
	pf_image_free(b);
}

/* The reasons a trace is incomplete: header bits and the per-filesystem flag survive a round trip, in words. */
static void test_incomplete_reasons(void **state)
{
	(void)state;
	struct pf_image *a = sample(), *b = NULL;
	unsigned char *buf;
	size_t len;
	char text[256];
	/* a file without the new bits (version 1 as written before them): the fs record's bytes 40..47 are zero */
	encode(a, &buf, &len);
	static const unsigned char zero[8];
	assert_memory_equal(buf + 64 + 40, zero, 8);
	free(buf);
	pf_image_flags_text(a, text, sizeof(text));
	assert_string_equal(text, "incomplete (7 events lost)"); /* the bare old bit with a count */
	a->lost_events = 0;
	pf_image_flags_text(a, text, sizeof(text));
	assert_string_equal(text, "incomplete (cut short)");
	a->flags = 0;
	pf_image_flags_text(a, text, sizeof(text));
	assert_string_equal(text, "none");

	a->flags = PF_IMG_INCOMPLETE | PF_IMG_EVENTS_LOST | PF_IMG_FILE_CAP | PF_IMG_FS_GONE | PF_IMG_TIMED_OUT;
	a->lost_events = 5;
	a->fs[0].flags = PF_FS_GONE;
	encode(a, &buf, &len);
	assert_int_equal(pf_image_decode(buf, len, &b), 0);
	assert_int_equal(b->flags, a->flags);
	assert_int_equal(b->fs[0].flags, PF_FS_GONE);
	pf_image_flags_text(b, text, sizeof(text));
	assert_string_equal(text, "incomplete (5 events lost, file cap reached, filesystem / gone, timed out)");
	/* cut to the buffer, still terminated */
	pf_image_flags_text(b, text, 20);
	assert_int_equal(strlen(text), 19);
	free(buf);
	pf_image_free(a);
	pf_image_free(b);
}

static void test_truncated(void **state)
{
	(void)state;
	struct pf_image *a = sample(), *b = NULL;
	unsigned char *buf;
	size_t len;
	encode(a, &buf, &len);
	assert_int_equal(pf_image_decode(buf, 0, &b), PF_EBADMAGIC);
	/* every proper prefix is refused, never crashes or accepted */
	for (size_t cut = 1; cut < len; cut++) {
		int rc = pf_image_decode(buf, cut, &b);
		assert_int_equal(rc, PF_ETRUNC);
		assert_null(b);
	}
	free(buf);
	pf_image_free(a);
}

static void test_corrupt(void **state)
{
	(void)state;
	struct pf_image *a = sample(), *b = NULL;
	unsigned char *buf;
	size_t len;
	encode(a, &buf, &len);
	/* flipping any bit after the magic/version is caught (checksum, or a field check before it) */
	for (size_t i = 12; i < len; i++) {
		buf[i] ^= 0x10;
		int rc = pf_image_decode(buf, len, &b);
		assert_true(rc == PF_ECSUM || rc == PF_ECORRUPT || rc == PF_ETOOBIG || rc == PF_ETRUNC);
		assert_null(b);
		buf[i] ^= 0x10;
	}
	buf[0] = 'X';
	assert_int_equal(pf_image_decode(buf, len, &b), PF_EBADMAGIC);
	buf[0] = 'P';
	buf[8] = 2; /* version */
	assert_int_equal(pf_image_decode(buf, len, &b), PF_EVERSION);
	buf[8] = 1;
	/* trailing garbage */
	unsigned char *longer = malloc(len + 1);
	memcpy(longer, buf, len);
	longer[len] = 0;
	assert_int_equal(pf_image_decode(longer, len + 1, &b), PF_ECORRUPT);
	free(longer);
	free(buf);
	pf_image_free(a);
}

static void test_oversized(void **state)
{
	(void)state;
	struct pf_image *a = sample(), *b = NULL;
	unsigned char *buf;
	size_t len;
	encode(a, &buf, &len);
	/* claims 2^31 extents: refused by the limits before any allocation */
	buf[40] = 0;
	buf[41] = 0;
	buf[42] = 0;
	buf[43] = 0x80;
	assert_int_equal(pf_image_decode(buf, len, &b), PF_ETOOBIG);
	free(buf);
	pf_image_free(a);
}

static void test_bad_references(void **state)
{
	(void)state;
	struct pf_image *img = pf_image_new(PF_KIND_TRACE);
	struct pf_file f = { .fs = 0, .path = "/x" };
	assert_int_equal(pf_image_add_file(img, &f), PF_ECORRUPT); /* no fs 0 yet */
	struct pf_extent e = { .file = 0, .length = 1 };
	assert_int_equal(pf_image_add_extent(img, &e), PF_ECORRUPT);
	pf_image_free(img);
}

static void test_files(void **state)
{
	(void)state;
	char dir[96];
	assert_non_null(pf_test_mkdtemp(dir, sizeof(dir), "pf-format"));
	char path[128];
	snprintf(path, sizeof(path), "%s/layout", dir);
	struct pf_image *a = sample(), *b = NULL;
	mode_t old = umask(0);
	assert_int_equal(pf_image_save(path, a), 0);
	umask(old);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600); /* whatever the umask: a layout lists the files users opened */
	assert_int_equal(pf_image_load(path, 0, PF_KIND_LAYOUT, &b), 0);
	assert_int_equal(b->nextents, 2);
	pf_image_free(b);
	assert_int_equal(pf_image_load(path, 0, PF_KIND_TRACE, &b), PF_EKIND);
	assert_null(b);
	/* group/world writable layouts are refused when root ownership is required */
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(pf_image_load(path, PF_LOAD_REQUIRE_ROOT, 0, &b), PF_EOWNER);
	assert_int_equal(chmod(path, 0644), 0);
	if (getuid() == 0) {
		assert_int_equal(pf_image_load(path, PF_LOAD_REQUIRE_ROOT, 0, &b), 0);
		pf_image_free(b);
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(pf_image_load(path, PF_LOAD_REQUIRE_ROOT, 0, &b), PF_EOWNER);
	}
	assert_int_equal(pf_image_load(dir, 0, 0, &b), PF_ENOTREG);
	char missing[160];
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	assert_int_equal(pf_image_load(missing, 0, 0, &b), -ENOENT);
	assert_non_null(strstr(pf_strerror(PF_ECSUM), "checksum"));
	unlink(path);
	rmdir(dir);
	pf_image_free(a);
}

/* A layout saved again with nothing changed but its creation time and first-touch means is not written: same
 * inode, mtime and "created"; any other change, a file of the wrong mode or a damaged one is written. */
static void test_save_changed(void **state)
{
	(void)state;
	char dir[96];
	assert_non_null(pf_test_mkdtemp(dir, sizeof(dir), "pf-format"));
	char path[128];
	snprintf(path, sizeof(path), "%s/layout", dir);
	struct pf_image *a = sample(), *b = NULL;
	struct stat st0, st;
	assert_int_equal(pf_layout_save_changed(path, a), 0); /* no file yet */
	assert_int_equal(stat(path, &st0), 0);
	a->created += 3600;
	assert_int_equal(pf_layout_save_changed(path, a), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_ino, st0.st_ino);
	assert_int_equal(st.st_mtim.tv_nsec, st0.st_mtim.tv_nsec);
	assert_int_equal(pf_image_load(path, 0, PF_KIND_LAYOUT, &b), 0);
	assert_int_equal(b->created, 1795288058); /* when that content was made */
	pf_image_free(b);
	/* one extent longer: written, with its own time */
	a->extents[1].length += 4096;
	assert_int_equal(pf_layout_save_changed(path, a), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_not_equal(st.st_ino, st0.st_ino);
	assert_int_equal(pf_image_load(path, 0, PF_KIND_LAYOUT, &b), 0);
	assert_int_equal(b->created, 1795288058 + 3600);
	assert_int_equal(b->extents[1].length, 8192 + 4096);
	pf_image_free(b);
	/* the same content in a file of the wrong mode: written again, so that it is 0600 */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(pf_layout_save_changed(path, a), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* other first-touch means, same order: not written, the old means stay */
	a->files[0].first_ns += 12345;
	assert_int_equal(pf_layout_save_changed(path, a), 1);
	assert_int_equal(pf_image_load(path, 0, PF_KIND_LAYOUT, &b), 0);
	assert_int_equal(b->files[0].first_ns, a->files[0].first_ns - 12345);
	pf_image_free(b);
	/* another order (first_order) is a change */
	a->files[0].first_order = 9;
	assert_int_equal(pf_layout_save_changed(path, a), 0);
	/* a trace is not a layout; a file holding a trace is replaced by the layout */
	a->kind = PF_KIND_TRACE;
	assert_int_equal(pf_layout_save_changed(path, a), PF_EKIND);
	assert_int_equal(pf_image_save(path, a), 0);
	a->kind = PF_KIND_LAYOUT;
	assert_int_equal(pf_layout_save_changed(path, a), 0);
	assert_int_equal(pf_image_load(path, 0, PF_KIND_LAYOUT, &b), 0);
	pf_image_free(b);
	/* a damaged file (one byte of the body) is replaced */
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, 70, SEEK_SET), 0);
	int c = fgetc(f);
	assert_int_equal(fseek(f, 70, SEEK_SET), 0);
	fputc(c ^ 0xff, f);
	fclose(f);
	assert_int_equal(pf_layout_save_changed(path, a), 0);
	assert_int_equal(pf_image_load(path, 0, PF_KIND_LAYOUT, &b), 0);
	pf_image_free(b);
	unlink(path);
	rmdir(dir);
	pf_image_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip), cmocka_unit_test(test_incomplete_reasons), cmocka_unit_test(test_truncated), cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_oversized),  cmocka_unit_test(test_bad_references), cmocka_unit_test(test_files),
		cmocka_unit_test(test_save_changed),
	};
	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
