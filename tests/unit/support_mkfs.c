/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "support_mkfs.h"

#include "support_tmpdir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

const char *pf_test_mkfs(const char *name, const char *args)
{
	static char path[PATH_MAX];
	char cmd[PATH_MAX + 512];
	snprintf(path, sizeof(path), "%s/%s", pf_test_dir, name);
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F %s '%s' 8M >/dev/null 2>&1", args, path);
	return system(cmd) == 0 ? path : NULL;
}
