/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Is a recorded file still what the trace saw (lib/file_identity.h)?  A layout naming a file that was replaced
 * (package upgrade) or rewritten would make replay read stale ranges and reorder move the wrong blocks. */
#include "aggregate_int.h"

#include "file_identity.h"

#include <sys/stat.h>

enum agg_fate agg_check_file(const struct pf_file *f)
{
	struct stat st;
	/* lstat: a path that became a symlink is another file */
	if (lstat(f->path, &st) != 0)
		return AGG_VANISHED; /* gone, or no longer reachable (a missing mount counts the same) */
	struct pf_file_now now;
	pf_file_now_stat(&now, &st);
	/* against the record as it is, type included (none recorded: mode 0); a directory by inode and type */
	return pf_file_identity(f, &now, 0) == PF_ID_SAME ? AGG_KEPT : AGG_CHANGED;
}
