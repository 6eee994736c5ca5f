/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "clock.h"

#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

double pf_monotonic_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

uint64_t pf_monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int pf_uptime(double *up)
{
	FILE *f = fopen("/proc/uptime", "re");
	if (!f)
		return -errno;
	int ok = fscanf(f, "%lf", up) == 1;
	fclose(f);
	return ok ? 0 : PF_ECORRUPT;
}
