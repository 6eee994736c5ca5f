/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Free runs: alternate find-first-zero / find-first-set over the block bitmap. */
#include "freespace.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>

int pf_freespace(ext2_filsys fs, struct pf_brange **runs, size_t *n)
{
	blk64_t first = fs->super->s_first_data_block, last = ext2fs_blocks_count(fs->super) - 1;
	struct pf_brange *r = NULL;
	size_t cnt = 0, cap = 0;
	blk64_t pos = first;
	while (pos <= last) {
		blk64_t z, s;
		if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, pos, last, &z))
			break; /* ENOENT: no more free blocks */
		if (ext2fs_find_first_set_block_bitmap2(fs->block_map, z, last, &s))
			s = last + 1;
		if (PF_ARRAY_RESERVE(r, cap, cnt + 1, 256)) {
			free(r);
			return -ENOMEM;
		}
		r[cnt++] = (struct pf_brange){ .start = z, .count = s - z };
		pos = s;
	}
	*runs = r;
	*n = cnt;
	return 0;
}
