/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Is a recorded file still what the trace saw?  A layout naming a file that was replaced (package upgrade) or
 * rewritten would make replay read stale ranges and reorder move the wrong blocks. */
#include "aggregate_int.h"

#include <sys/stat.h>

enum agg_fate agg_check_file(const struct pf_file *f)
{
	struct stat st;
	/* lstat: a path that became a symlink is another file */
	if (lstat(f->path, &st) != 0)
		return AGG_VANISHED; /* gone, or no longer reachable (a missing mount counts the same) */
	if ((uint64_t)st.st_ino != f->ino || ((f->mode & S_IFMT) && (st.st_mode & S_IFMT) != (f->mode & S_IFMT)))
		return AGG_CHANGED;
	if (S_ISDIR(st.st_mode))
		return AGG_KEPT; /* a directory's size and mtime move with every entry added: not a change of content */
	if (f->flags & PF_FILE_WRITTEN) /* written at every boot: the same inode is the same file */
		return S_ISREG(st.st_mode) ? AGG_KEPT : AGG_CHANGED;
	int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if ((uint64_t)st.st_size != f->size || mtime != f->mtime_ns)
		return AGG_CHANGED;
	return AGG_KEPT;
}
