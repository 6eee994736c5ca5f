/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "support_sysfs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void pf_fake_sysfs_mkdirs(const char *root, const char *rel)
{
	char p[PATH_MAX + 256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
		*s = '/';
	}
	assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
}

void pf_fake_sysfs_put(const char *root, const char *rel, const char *text)
{
	char p[PATH_MAX + 256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}
