/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "support_tmpdir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

char pf_test_dir[PATH_MAX];

static const char *scratch_base(void)
{
	const char *b = getenv("PF_TEST_SCRATCH");
	if (!b || !*b)
		b = getenv("TMPDIR");
	return b && *b ? b : "/var/tmp";
}

char *pf_test_mkdtemp(char *buf, size_t len, const char *name)
{
	const char *base = scratch_base();
	if (mkdir(base, 0755) < 0 && errno != EEXIST)
		return NULL;
	int n = snprintf(buf, len, "%s/%s.XXXXXX", base, name);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return mkdtemp(buf);
}

int pf_test_rmtree(const char *dir)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int pf_test_dir_setup(void **state)
{
	(void)state;
	return pf_test_mkdtemp(pf_test_dir, sizeof(pf_test_dir), "pf-unit") ? 0 : -1;
}

int pf_test_dir_teardown(void **state)
{
	(void)state;
	return pf_test_rmtree(pf_test_dir);
}
