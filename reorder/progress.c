/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "progress.h"

#include <stdio.h>

static int drawn;

void pf_progress_show(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	unsigned pct = total ? (unsigned)(done * 100 / total) : 100;
	fprintf(stderr, "\rprefetch-reorder: moving blocks %3u%% (%llu/%llu)", pct, (unsigned long long)done,
		(unsigned long long)total);
	fflush(stderr);
	drawn = 1;
}

void pf_progress_done(void)
{
	if (drawn)
		fprintf(stderr, "\r\033[K");
	drawn = 0;
}
