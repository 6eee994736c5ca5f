/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/state_dir: trusted directories only, no link followed or written through, appends whole or not at all. */
#include "error.h"
#include "state_dir.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", pf_test_dir, name);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *get(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Trusted: ours, not group/world-writable, not a symbolic link.  Each refusal says why. */
static void test_dir_trust(void **state)
{
	(void)state;
	char dir[512], link[512], why[1024];
	path_of(dir, sizeof(dir), "d");
	path_of(link, sizeof(link), "d-link");
	assert_int_equal(mkdir(dir, 0700), 0);
	int fd = pf_state_dir_open(dir);
	assert_true(fd >= 0);
	close(fd);
	pf_state_dir_why(dir, why, sizeof(why));
	assert_string_equal(why, "");
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(pf_state_dir_open(dir), PF_EUNSAFE);
	pf_state_dir_why(dir, why, sizeof(why));
	assert_non_null(strstr(why, "has mode 1777: writable by group or others"));
	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(pf_state_dir_open(dir), PF_EUNSAFE);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(symlink(dir, link), 0);
	assert_int_equal(pf_state_dir_open(link), PF_EUNSAFE);
	pf_state_dir_why(link, why, sizeof(why));
	assert_non_null(strstr(why, "is a symbolic link"));
	char file[600];
	snprintf(file, sizeof(file), "%s/f", link);
	assert_int_equal(pf_state_write(file, "x", 1, 0600), PF_EUNSAFE); /* nothing written through it */
	assert_int_equal(pf_state_mkdir(file, 0700), PF_EUNSAFE);
	assert_int_equal(access(file, F_OK), -1);
	unlink(link);
	rmdir(dir);
	assert_int_equal(pf_state_dir_open(dir), -ENOENT);
}

/* A symbolic link or a hard link at a state file's name: never written through. */
static void test_links_refused(void **state)
{
	(void)state;
	char victim[512], sym[512], hard[512];
	path_of(victim, sizeof(victim), "victim");
	path_of(sym, sizeof(sym), "sym.log");
	path_of(hard, sizeof(hard), "hard.log");
	put(victim, "root's\n");
	assert_int_equal(symlink(victim, sym), 0);
	assert_int_equal(link(victim, hard), 0);
	assert_true(pf_state_append(sym, NULL, "line\n", 5) < 0);
	assert_int_equal(pf_state_append(hard, NULL, "line\n", 5), PF_ELINKED);
	assert_int_equal(pf_state_open(hard, O_WRONLY, 0), PF_ELINKED);
	assert_true(pf_state_open(sym, O_RDONLY, 0) < 0);
	assert_string_equal(get(victim), "root's\n");
	assert_int_equal(pf_state_exists(sym), 0);
	/* an atomic replacement replaces the name, never the file behind it */
	assert_int_equal(pf_state_write(hard, "new\n", 4, 0600), 0);
	assert_string_equal(get(victim), "root's\n");
	assert_string_equal(get(hard), "new\n");
	unlink(sym);
	unlink(hard);
	unlink(victim);
}

/* A FIFO at a state file's name: refused, not waited on. */
static void test_fifo_refused(void **state)
{
	(void)state;
	char fifo[512];
	path_of(fifo, sizeof(fifo), "fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10);
	char *text;
	size_t len;
	assert_int_equal(pf_state_read_text(fifo, 64, &text, &len), PF_ENOTREG);
	assert_int_equal(pf_state_append(fifo, NULL, "x\n", 2), PF_ENOTREG);
	alarm(0);
	unlink(fifo);
}

/* A write that runs out of room is cut back: the file is as before, with no fragment of the line.  The room
 * runs out through RLIMIT_FSIZE (a short write, then EFBIG), as on a full disk (ENOSPC). */
static void test_append_whole_or_nothing(void **state)
{
	(void)state;
	char log[512];
	path_of(log, sizeof(log), "boot.log");
	assert_int_equal(pf_state_append(log, "# header\n", "one\n", 4), 0);
	assert_string_equal(get(log), "# header\none\n");
	struct stat st;
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	struct rlimit old, lim;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size + 3; /* room for 3 of the next line's bytes */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	int rc = pf_state_append(log, "# header\n", "a longer line\n", 14);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_true(rc < 0);
	assert_string_equal(get(log), "# header\none\n");
	/* a fragment an older crash left: the next line starts on a line of its own */
	put(log, "# header\none\ntw");
	assert_int_equal(chmod(log, 0644), 0); /* as an older version made it */
	assert_int_equal(pf_state_append(log, "# header\n", "three\n", 6), 0);
	assert_string_equal(get(log), "# header\none\ntw\nthree\n");
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	unlink(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir_trust),
		cmocka_unit_test(test_links_refused),
		cmocka_unit_test(test_fifo_refused),
		cmocka_unit_test(test_append_whole_or_nothing),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
