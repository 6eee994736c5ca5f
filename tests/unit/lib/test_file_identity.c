/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/file_identity.c: a recorded file against what is there now, rule by rule in its order, with each asker's
 * flags: the aggregation's (none), the replay's (PF_ID_AS_READ), the reorder's (PF_ID_DIR_CONTENT). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "file_identity.h"

#define MTIME 5000000123ll

static struct pf_file regular(void)
{
	return (struct pf_file){ .ino = 42, .generation = 7, .mode = S_IFREG | 0644, .size = 1000, .mtime_ns = MTIME };
}

static struct pf_file_now now_of(const struct pf_file *f)
{
	return (struct pf_file_now){ .ino = f->ino, .mode = f->mode, .size = f->size, .mtime_ns = f->mtime_ns,
				     .generation = f->generation, .generation_known = 1 };
}

static void test_same_and_changed(void **state)
{
	(void)state;
	struct pf_file f = regular();
	struct pf_file_now n = now_of(&f);
	for (unsigned how = 0; how < 4; how++) {
		assert_int_equal(pf_file_identity(&f, &n, how), PF_ID_SAME);
		n.ino = 43;
		assert_int_equal(pf_file_identity(&f, &n, how), PF_ID_INODE);
		n = now_of(&f);
		n.generation = 8;
		assert_int_equal(pf_file_identity(&f, &n, how), PF_ID_GENERATION);
		n.generation_known = 0; /* stat(2): none to compare */
		assert_int_equal(pf_file_identity(&f, &n, how), PF_ID_SAME);
		n = now_of(&f);
		n.size = 1001;
		assert_int_equal(pf_file_identity(&f, &n, how), PF_ID_SIZE);
		n.size = 1000;
		n.mtime_ns++;
		assert_int_equal(pf_file_identity(&f, &n, how), PF_ID_MTIME);
		n = now_of(&f);
	}
	f.generation = 0; /* none recorded: any generation now */
	n.generation = 99;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_SAME);
	/* the first broken rule answers: another inode before its size */
	n.ino = 1;
	n.size = 1;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_INODE);
	assert_true(pf_identity_replaced(PF_ID_INODE) && pf_identity_replaced(PF_ID_GENERATION) &&
		    pf_identity_replaced(PF_ID_TYPE));
	assert_false(pf_identity_replaced(PF_ID_SAME) || pf_identity_replaced(PF_ID_NOT_REGULAR) ||
		     pf_identity_replaced(PF_ID_SIZE) || pf_identity_replaced(PF_ID_MTIME));
}

/* An inode without nanoseconds: the record's mtime is compared to its second, rounded down. */
static void test_mtime_seconds(void **state)
{
	(void)state;
	struct pf_file f = regular();
	struct pf_file_now n = now_of(&f);
	n.mtime_seconds = 1;
	n.mtime_ns = 5000000000ll;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_SAME);
	n.mtime_ns = 6000000000ll;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_MTIME);
	f.mtime_ns = -1500000000ll; /* before 1970: down is toward the earlier second */
	n.mtime_ns = -2000000000ll;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_SAME);
	n.mtime_seconds = 0;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_MTIME);
}

/* The type: the record's mode (none recorded: any), or with PF_ID_AS_READ what the replay reads it as. */
static void test_type(void **state)
{
	(void)state;
	struct pf_file f = regular();
	struct pf_file_now n = now_of(&f);
	n.mode = S_IFLNK | 0777;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_TYPE);
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_AS_READ), PF_ID_TYPE);
	n.mode = S_IFDIR | 0755;
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_DIR_CONTENT), PF_ID_TYPE);
	f.mode = 0; /* no type recorded: inode, size and mtime decide, or being a directory */
	n.mode = S_IFIFO | 0644;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_SAME);
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_AS_READ), PF_ID_TYPE); /* read as a regular file */
	n.mode = S_IFDIR | 0755;
	n.size = 4096;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_SAME);
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_DIR_CONTENT), PF_ID_SIZE);
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_AS_READ), PF_ID_TYPE);
	f.flags = PF_FILE_DIR; /* read as a directory, whatever the mode says */
	f.mode = S_IFREG | 0644;
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_AS_READ), PF_ID_SAME);
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_TYPE);
}

/* A directory: inode, generation and type only (entries come and go), unless PF_ID_DIR_CONTENT. */
static void test_directory(void **state)
{
	(void)state;
	struct pf_file f = { .ino = 2, .generation = 3, .flags = PF_FILE_DIR, .mode = S_IFDIR | 0755, .size = 4096,
			     .mtime_ns = MTIME };
	struct pf_file_now n = now_of(&f);
	n.size = 8192;
	n.mtime_ns += 1;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_SAME);
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_AS_READ), PF_ID_SAME);
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_DIR_CONTENT), PF_ID_SIZE);
	n.size = 4096;
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_DIR_CONTENT), PF_ID_MTIME);
	n.generation = 4;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_GENERATION);
	n = now_of(&f);
	n.mode = S_IFREG | 0644;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_TYPE);
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_AS_READ), PF_ID_TYPE);
}

/* A file the boot writes: inode, generation and type; its size and mtime move at every boot. */
static void test_written(void **state)
{
	(void)state;
	struct pf_file f = regular();
	f.flags = PF_FILE_WRITTEN;
	struct pf_file_now n = now_of(&f);
	n.size = 5000;
	n.mtime_ns += 10;
	for (unsigned how = 0; how < 4; how++)
		assert_int_equal(pf_file_identity(&f, &n, how), PF_ID_SAME);
	n.generation = 8;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_GENERATION);
	n.generation = 7;
	f.mode = 0; /* no type recorded: it must still be a regular file */
	n.mode = S_IFSOCK | 0644;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_NOT_REGULAR);
	n.mode = S_IFDIR | 0755;
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_SAME); /* rule 4 comes first */
	assert_int_equal(pf_file_identity(&f, &n, PF_ID_DIR_CONTENT), PF_ID_NOT_REGULAR);
}

static void test_from_stat(void **state)
{
	(void)state;
	struct stat st = { .st_ino = 42, .st_size = 1000, .st_mode = S_IFREG | 0644 };
	st.st_mtim.tv_sec = 5;
	st.st_mtim.tv_nsec = 123;
	struct pf_file_now n = { .generation_known = 1, .mtime_seconds = 1 };
	pf_file_now_stat(&n, &st);
	assert_int_equal(n.ino, 42);
	assert_int_equal(n.size, 1000);
	assert_int_equal(n.mode, S_IFREG | 0644);
	assert_true(n.mtime_ns == MTIME);
	assert_int_equal(n.generation_known, 0);
	assert_int_equal(n.mtime_seconds, 0);
	struct pf_file f = regular();
	assert_int_equal(pf_file_identity(&f, &n, 0), PF_ID_SAME);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_and_changed), cmocka_unit_test(test_mtime_seconds),
		cmocka_unit_test(test_type),		 cmocka_unit_test(test_directory),
		cmocka_unit_test(test_written),		 cmocka_unit_test(test_from_stat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
