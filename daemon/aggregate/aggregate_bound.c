/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MAX_PREFETCH_MB / MAX_PREFETCH_FILES: the earliest-touched files are kept, the rest cut from the end.  The
 * file that crosses the byte bound keeps its first bytes up to the bound rather than being dropped, so that the
 * budget is used and the order of everything before it is untouched. */
#include "aggregate_int.h"

int agg_bound_admit(struct agg_bound *b, uint64_t bytes, uint64_t *allowed)
{
	if ((b->max_files && b->files >= b->max_files) || (b->max_bytes && b->bytes >= b->max_bytes))
		return 0;
	*allowed = bytes;
	if (b->max_bytes && *allowed > b->max_bytes - b->bytes)
		*allowed = b->max_bytes - b->bytes;
	b->files++;
	b->bytes += *allowed;
	return 1;
}

size_t agg_spans_truncate(struct agg_span *spans, size_t n, uint64_t allowed)
{
	size_t i = 0;
	for (; i < n && allowed; i++) {
		if (spans[i].length > allowed)
			spans[i].length = allowed;
		allowed -= spans[i].length;
	}
	return i;
}
