/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An inode as the identity check sees it (see inode_identity.h). */
#include "inode_identity.h"

#include "error.h"

#include <stddef.h>
#include <string.h>

int64_t pf_inode_mtime_ns(ext2_filsys fs, const struct ext2_inode_large *in, int *has_ns)
{
	int64_t sec = (int32_t)in->i_mtime;
	*has_ns = 0;
	if (EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE &&
	    in->i_extra_isize >= offsetof(struct ext2_inode_large, i_mtime_extra) + 4 - EXT2_GOOD_OLD_INODE_SIZE) {
		sec += (int64_t)(in->i_mtime_extra & 3) << 32;
		*has_ns = 1;
		return sec * 1000000000LL + (in->i_mtime_extra >> 2);
	}
	return sec * 1000000000LL;
}

int pf_inode_now(ext2_filsys fs, uint64_t ino, struct ext2_inode_large *in, struct pf_file_now *now)
{
	if (ino < 1 || ino > fs->super->s_inodes_count ||
	    (fs->inode_map && !ext2fs_test_inode_bitmap2(fs->inode_map, (ext2_ino_t)ino)))
		return 0;
	memset(in, 0, sizeof(*in));
	errcode_t ec = ext2fs_read_inode_full(fs, (ext2_ino_t)ino, (struct ext2_inode *)in, sizeof(*in));
	if (ec)
		return pf_err_from_ext2(ec);
	if (in->i_links_count == 0 || in->i_dtime)
		return 0;
	int has_ns;
	*now = (struct pf_file_now){ .ino = ino, .mode = in->i_mode, .size = EXT2_I_SIZE(in),
				     .mtime_ns = pf_inode_mtime_ns(fs, in, &has_ns), .generation = in->i_generation,
				     .generation_known = 1 };
	now->mtime_seconds = !has_ns;
	return 1;
}
