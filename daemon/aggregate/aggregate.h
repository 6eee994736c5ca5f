/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Merging the last N traces into one layout: stable files and ranges, ordered by first touch across boots,
 * vanished/changed files dropped, size bounded.
 *
 * Rules (the reasons are in daemon/aggregate*.c):
 *  - Filesystems are matched by UUID (st_dev changes across boots; a filesystem without a UUID is matched by
 *    its mount point).  The layout's fs table is their union; block size, medium and mount point come from the
 *    newest trace that has the filesystem.
 *  - A file is (fs UUID, inode, generation).  When a newer trace shows the same path with another identity
 *    (package upgrade: new inode), the older identity is superseded: it is dropped (counted as changed), and the
 *    boots it was seen in count for the new identity's stability; pages, size and physical blocks come only from
 *    the newest identity.
 *  - Vote: with n traces a file is stable when it is in more than n/2 of them, or in exactly n/2 including the
 *    newest (n=1: that trace; n=2: whatever the newest has; n=3: 2 of 3).  So a file enters once it is in a
 *    majority and leaves once it is gone from the newer half.  A page of a stable file is kept by the same vote
 *    among the m traces holding that identity.
 *  - Incomplete traces: an incomplete trace cannot make a file vanish.  A trace flagged PF_IMG_INCOMPLETE (events
 *    lost, file cap, a filesystem gone, timed out) votes for the files it has and is left out of the vote on
 *    the files it lacks (n and "the newest" are taken over the traces that vote on that file).  A trace in
 *    which a filesystem went away (PF_FS_GONE) votes nothing for that filesystem: neither on its files nor on
 *    their pages.  Complete traces vote as above, so a file still leaves once the complete traces drop it.  The
 *    layout carries the union of the traces' PF_IMG_INCOMPLETE and reason bits and the sum of lost_events.
 *  - Order: mean over the traces holding the file of its normalised rank first_order/nfiles (robust to boots of
 *    different speed), ties by mean first_ns; a directory never comes after a file below it.  In the layout
 *    first_order is the merged rank (1-based), first_ns the mean, boots the traces the file was counted in.
 *  - check_files: lstat each stable path: gone -> vanished; another inode, or (non-directories) another size or
 *    mtime than the newest trace recorded -> changed.  A directory's mtime moves with every new entry, so only
 *    its inode is compared.
 *  - Bounds: files are taken in layout order; the file that crosses max_bytes is truncated to the bound (its
 *    first pages by offset), everything after it is cut; files beyond max_files are cut.
 *  - Extents: page aligned, in layout order (file by rank, then offset), clipped to the newest size, merged
 *    where contiguous; physical blocks come from the newest trace that knows them (PF_EXT_PHYS_KNOWN), and an
 *    extent is split where they are not contiguous.
 * Every distinct identity is counted once in the report, by the first rule that drops it:
 *    files_seen = files_kept + files_unstable + files_vanished + files_changed + files_cut.
 */
#ifndef PREFETCH_AGGREGATE_H
#define PREFETCH_AGGREGATE_H

#include "aggregate_opts.h"
#include "format.h"

#include <stddef.h>
#include <stdint.h>

/* traces[0] is the oldest, traces[n-1] the newest; all must be PF_KIND_TRACE (else PF_EKIND).  n == 0 gives an
 * empty layout.  o may be NULL (no bounds, no checks), rep may be NULL.  Returns 0 or a negative pf error
 * (lib/error.h: -E2BIG for more than PF_AGGREGATE_MAX_TRACES, -ENOMEM). */
int pf_aggregate(struct pf_image *const *traces, size_t n, const struct pf_aggregate_opts *o, struct pf_image **layout,
		 struct pf_aggregate_report *rep);

#endif
