/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Is this file still the one the trace recorded (see file_identity.h)? */
#include "file_identity.h"

/* The type rule 3 expects, 0 for none. */
static uint32_t expected_type(const struct pf_file *rec, unsigned how)
{
	if (how & PF_ID_AS_READ)
		return (rec->flags & PF_FILE_DIR) ? S_IFDIR : S_IFREG;
	return rec->mode & S_IFMT;
}

/* t rounded down to its second (toward minus infinity, as an inode's seconds are). */
static int64_t whole_seconds(int64_t t)
{
	return (t >= 0 ? t : t - 999999999) / 1000000000 * 1000000000;
}

enum pf_identity pf_file_identity(const struct pf_file *rec, const struct pf_file_now *now, unsigned how)
{
	uint32_t type = now->mode & S_IFMT, want = expected_type(rec, how);
	if (now->ino != rec->ino)
		return PF_ID_INODE;
	if (rec->generation && now->generation_known && now->generation != rec->generation)
		return PF_ID_GENERATION;
	if (want && type != want)
		return PF_ID_TYPE;
	if (type == S_IFDIR && !(how & PF_ID_DIR_CONTENT))
		return PF_ID_SAME;
	if (rec->flags & PF_FILE_WRITTEN)
		return type == S_IFREG ? PF_ID_SAME : PF_ID_NOT_REGULAR;
	if (now->size != rec->size)
		return PF_ID_SIZE;
	int64_t mtime = now->mtime_seconds ? whole_seconds(rec->mtime_ns) : rec->mtime_ns;
	return now->mtime_ns == mtime ? PF_ID_SAME : PF_ID_MTIME;
}

void pf_file_now_stat(struct pf_file_now *now, const struct stat *st)
{
	*now = (struct pf_file_now){
		.ino = (uint64_t)st->st_ino,
		.mode = (uint32_t)st->st_mode,
		.size = (uint64_t)st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
	};
}
