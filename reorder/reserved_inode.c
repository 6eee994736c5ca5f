/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "reserved_inode.h"

int pf_inode_reserved(ext2_filsys fs, ext2_ino_t ino)
{
	const struct ext2_super_block *s = fs->super;
	/* the root directory too: e2fsck checks it by number, and a damaged root is a question, not a preen fix */
	if (ino < EXT2_FIRST_INODE(s))
		return 1;
	const __u32 named[] = { s->s_journal_inum,   s->s_usr_quota_inum, s->s_grp_quota_inum,
				s->s_prj_quota_inum, s->s_orphan_file_inum, s->s_snapshot_inum,
				s->s_lpf_ino,        s->s_last_orphan };
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i] && named[i] == ino)
			return 1;
	return 0;
}
