/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A read plan as text (read_plan.h), one line per item: prefetchd's --dump-plan, and the tests that compare
 * the plan the replay reads with the one prefetch-reorder's mapping builds. */
#include "read_plan.h"

#include <stdio.h>

void pf_rplan_dump(FILE *f, const struct pf_image *l, const struct pf_ritem *items, size_t n)
{
	static const char *const kind[] = { "data", "dir", "meta" }, *const src[] = { "none", "layout", "now" };
	for (size_t i = 0; i < n; i++) {
		const struct pf_ritem *it = &items[i];
		fprintf(f, "%u %u %s %s %llu %llu %llu %s\n", it->bin, it->fs, kind[it->kind <= 2 ? it->kind : 0],
			src[it->phys_src <= 2 ? it->phys_src : 0], (unsigned long long)it->physical,
			(unsigned long long)it->offset, (unsigned long long)it->length, l->files[it->file].path);
	}
	fflush(f);
}
