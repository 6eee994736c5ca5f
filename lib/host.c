/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The host's boot id and kernel command line, or the test's stand-ins (host.h). */
#include "host.h"
#include "safe_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pf_boot_id(char *buf, size_t len)
{
	char id[64];
	const char *given = getenv("PREFETCH_BOOT_ID");
	snprintf(buf, len, "-");
	if (given && sscanf(given, "%36s", id) == 1) {
		snprintf(buf, len, "%s", id);
		return;
	}
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return;
	if (fscanf(f, "%36s", id) == 1)
		snprintf(buf, len, "%s", id);
	fclose(f);
}

int pf_kernel_cmdline(char **text)
{
	const char *given = getenv("PREFETCH_CMDLINE");
	size_t len;
	*text = NULL;
	if (given)
		return (*text = strdup(given)) ? 0 : -ENOMEM;
	return pf_read_text("/proc/cmdline", 65536, 0, text, &len);
}
