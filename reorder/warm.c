/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One sorted sweep over the metadata a run will read (see warm.h). */
#include "warm.h"

#include "blockmap.h"


#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Blocks apart by at most this are read through: 512 KiB take about one seek's time at 100 MB/s. */
#define WARM_GAP_BYTES (512u << 10)
/* One request at most this long (the buffer). */
#define WARM_MAX_BYTES (4u << 20)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int pf_warm_blocks(ext2_filsys fs, uint64_t *blocks, size_t n)
{
	if (!n)
		return 0;
	uint64_t bs = fs->blocksize, gap = WARM_GAP_BYTES / bs, max = WARM_MAX_BYTES / bs;
	char *buf = malloc(WARM_MAX_BYTES);
	if (!buf)
		return -ENOMEM;
	qsort(blocks, n, sizeof(*blocks), cmp_u64);
	uint64_t last = ext2fs_blocks_count(fs->super);
	for (size_t i = 0; i < n;) {
		uint64_t s = blocks[i], e = s + 1;
		size_t j = i + 1;
		for (; j < n && blocks[j] <= e + gap && blocks[j] + 1 - s <= max; j++)
			if (blocks[j] + 1 > e)
				e = blocks[j] + 1;
		if (s < last) {
			if (e > last)
				e = last;
			(void)io_channel_read_blk64(fs->io, s, (int)(e - s), buf);
		}
		i = j;
	}
	free(buf);
	return 0;
}

int pf_warm_inodes(ext2_filsys fs, const ext2_ino_t *inos, size_t n)
{
	uint64_t *b = malloc((n ? n : 1) * sizeof(*b));
	if (!b)
		return -ENOMEM;
	size_t k = 0;
	uint32_t ipg = fs->super->s_inodes_per_group, isz = EXT2_INODE_SIZE(fs->super);
	for (size_t i = 0; i < n; i++) {
		if (inos[i] < 1 || inos[i] > fs->super->s_inodes_count)
			continue;
		dgrp_t g = (dgrp_t)((inos[i] - 1) / ipg);
		uint64_t t = ext2fs_inode_table_loc(fs, g);
		if (t)
			b[k++] = t + (uint64_t)((inos[i] - 1) % ipg) * isz / fs->blocksize;
	}
	int rc = pf_warm_blocks(fs, b, k);
	/* the extent tree blocks named by the inodes themselves (now read from the cache) */
	k = 0;
	size_t cap = n ? n : 1;
	for (size_t i = 0; i < n && !rc; i++) {
		struct ext2_inode in;
		if (inos[i] < 1 || inos[i] > fs->super->s_inodes_count || ext2fs_read_inode(fs, inos[i], &in) ||
		    !(in.i_flags & EXT4_EXTENTS_FL))
			continue;
		const struct ext3_extent_header *eh = (const struct ext3_extent_header *)in.i_block;
		if (ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC || !eh->eh_depth)
			continue;
		const struct ext3_extent_idx *ix = (const struct ext3_extent_idx *)(eh + 1);
		size_t ne = ext2fs_le16_to_cpu(eh->eh_entries);
		for (size_t e = 0; e < ne && e < 4; e++) {
			if (k == cap) {
				uint64_t *nb = realloc(b, 2 * cap * sizeof(*b));
				if (!nb) {
					rc = -ENOMEM;
					break;
				}
				b = nb;
				cap *= 2;
			}
			b[k++] = ext2fs_le32_to_cpu(ix[e].ei_leaf) | ((uint64_t)ext2fs_le16_to_cpu(ix[e].ei_leaf_hi) << 32);
		}
	}
	if (!rc)
		rc = pf_warm_blocks(fs, b, k);
	free(b);
	return rc;
}
