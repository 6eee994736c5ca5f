/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Discard of the freed blocks (see discard.h). */
#include "discard.h"

#include "error.h"
#include "runs.h"

#include <errno.h>
#include <stdlib.h>

/* Discard the free stretches of [s, s+len). */
static int discard_free(ext2_filsys fs, uint64_t s, uint64_t len, uint64_t *blocks, uint64_t *requests)
{
	blk64_t end = s + len - 1;
	while (s <= end) {
		blk64_t z, u;
		if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, s, end, &z))
			return 0; /* no free block left in the range */
		if (ext2fs_find_first_set_block_bitmap2(fs->block_map, z, end, &u))
			u = end + 1;
		errcode_t ec = io_channel_discard(fs->io, z, u - z);
		if (ec == EXT2_ET_UNIMPLEMENTED || ec == EOPNOTSUPP)
			return 1;
		if (ec)
			return pf_err_from_ext2(ec);
		*blocks += u - z;
		(*requests)++;
		s = u;
	}
	return 0;
}

int pf_discard_freed(ext2_filsys fs, const struct pf_plan *p, size_t done, uint64_t *blocks, uint64_t *requests)
{
	*blocks = *requests = 0;
	size_t n = 0;
	for (size_t u = 0; u < done && u < p->nunits; u++)
		n += 2 * p->units[u].count;
	if (!n)
		return 0;
	struct pf_brange *r = malloc(n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	n = 0;
	for (size_t u = 0; u < done && u < p->nunits; u++)
		for (size_t i = p->units[u].first; i < p->units[u].first + p->units[u].count; i++) {
			r[n++] = (struct pf_brange){ p->moves[i].src, p->moves[i].len };
			r[n++] = (struct pf_brange){ p->moves[i].dst, p->moves[i].len };
		}
	n = pf_branges_normalize(r, n, 0); /* merge what touches: fewer, longer discards */
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = discard_free(fs, r[i].start, r[i].count, blocks, requests);
	free(r);
	return rc;
}
