/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Scratch directories for the unit tests, on a real filesystem: some tests need one (FIEMAP, pages that can be
 * evicted) and would have to skip on tmpfs.  The base is $PF_TEST_SCRATCH (tests/run.sh points it into the build
 * tree), else $TMPDIR, else /var/tmp. */
#ifndef PREFETCH_TEST_SUPPORT_TMPDIR_H
#define PREFETCH_TEST_SUPPORT_TMPDIR_H

#include <stddef.h>

/* The group scratch directory made by pf_test_dir_setup. */
extern char pf_test_dir[];

/* A cmocka group setup/teardown pair: pf_test_dir made empty, then removed with what it holds. */
int pf_test_dir_setup(void **state);
int pf_test_dir_teardown(void **state);

/* A new empty directory "<base>/<name>.XXXXXX" into buf.  Returns buf, or NULL (errno set). */
char *pf_test_mkdtemp(char *buf, size_t len, const char *name);

/* Remove a directory made by pf_test_mkdtemp, with what it holds.  Returns 0 or -1. */
int pf_test_rmtree(const char *dir);

#endif
