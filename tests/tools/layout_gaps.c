/* SPDX-License-Identifier: GPL-2.0-or-later */
/* layout_gaps: how far a layout is from being one sequential read on an unmounted ext2/3/4 image.
 *
 *   layout_gaps LAYOUT IMAGE
 *
 * Walks the layout's ranges in access order, maps every block of them to where it is on disk now (by inode
 * and offset, not by the physical block recorded in the layout), and prints
 *   blocks B discontinuities D backward J seek_blocks S missing M
 * D counts consecutive blocks of the walk that are not physically consecutive, J those among them that
 * go backwards, S the summed distance of the jumps, M the ranges whose inode is gone or changed.  This is
 * the test suite's own yardstick, independent of prefetch-reorder --check.
 */
#include "error.h"
#include "format.h"

#include <ext2fs/ext2fs.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: layout_gaps LAYOUT IMAGE\n");
		return 2;
	}
	struct pf_image *img;
	int rc = pf_image_load(argv[1], 0, PF_KIND_LAYOUT, &img);
	if (rc < 0) {
		fprintf(stderr, "layout_gaps: %s: %s\n", argv[1], pf_strerror(rc));
		return 1;
	}
	ext2_filsys fs;
	errcode_t e = ext2fs_open(argv[2], EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs);
	if (e) {
		fprintf(stderr, "layout_gaps: %s: %s\n", argv[2], pf_strerror(pf_err_from_ext2(e)));
		return 1;
	}
	uint64_t bs = fs->blocksize, blocks = 0, gaps = 0, back = 0, seek = 0, missing = 0;
	blk64_t prev = 0;
	for (uint32_t i = 0; i < img->nextents; i++) {
		const struct pf_extent *x = &img->extents[i];
		const struct pf_file *f = &img->files[x->file];
		struct ext2_inode in;
		if (f->ino > fs->super->s_inodes_count || ext2fs_read_inode(fs, (ext2_ino_t)f->ino, &in) ||
		    in.i_links_count == 0 || in.i_generation != f->generation) {
			missing++;
			continue;
		}
		uint64_t size = EXT2_I_SIZE(&in), end = x->offset + x->length;
		if (end > size)
			end = size;
		for (uint64_t lb = x->offset / bs; lb * bs < end; lb++) {
			blk64_t pb = 0;
			int flags = 0;
			if (ext2fs_bmap2(fs, (ext2_ino_t)f->ino, &in, NULL, 0, lb, &flags, &pb) || pb == 0 ||
			    (flags & BMAP_RET_UNINIT))
				continue; /* hole: nothing to read */
			if (blocks > 0 && pb != prev + 1) {
				gaps++;
				if (pb <= prev)
					back++;
				seek += pb > prev ? pb - prev : prev - pb;
			}
			prev = pb;
			blocks++;
		}
	}
	printf("blocks %" PRIu64 " discontinuities %" PRIu64 " backward %" PRIu64 " seek_blocks %" PRIu64
	       " missing %" PRIu64 "\n",
	       blocks, gaps, back, seek, missing);
	ext2fs_close_free(&fs);
	pf_image_free(img);
	return 0;
}
