/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "medium.h"
#include "config.h"
#include "format.h"

#include <stdio.h>
#include <sys/sysmacros.h>

static int read_rotational(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int v = -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int pf_medium_of_devno(dev_t devno, int override)
{
	if (override == PF_MEDIUM_FORCE_ROTATIONAL)
		return PF_MEDIUM_ROTATIONAL;
	if (override == PF_MEDIUM_FORCE_SOLID)
		return PF_MEDIUM_SOLID;
	char path[128];
	/* a whole disk has queue/ itself; a partition finds it one level up */
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/rotational", major(devno), minor(devno));
	int v = read_rotational(path);
	if (v < 0) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/rotational", major(devno), minor(devno));
		v = read_rotational(path);
	}
	return v < 0 ? PF_MEDIUM_UNKNOWN : v ? PF_MEDIUM_ROTATIONAL : PF_MEDIUM_SOLID;
}
