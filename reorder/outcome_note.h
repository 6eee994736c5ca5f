/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shutdown run's outcome, kept where the next boot finds it.  At the very end of shutdown nothing can be
 * written to the root through the kernel any more, so the shutdown hook prepares a file for it while the root is
 * still writable ($PREFETCH_DIR/reorder-outcome: one line saying "pending", padded with newlines to 4 KiB, its
 * blocks written and synced), and prefetch-reorder overwrites that file's first block in place with its one-line
 * outcome: no block is allocated, no inode, bitmap or journal touched.  The next boot's record moves the line
 * into reorder.log (daemon/boot/boot_store.h). */
#ifndef PREFETCH_REORDER_OUTCOME_NOTE_H
#define PREFETCH_REORDER_OUTCOME_NOTE_H

#include <stddef.h>

/* The longest outcome line kept (the smallest ext2 block less its newline). */
#define PF_OUTCOME_MAX 1000

/* Write line (truncated to PF_OUTCOME_MAX, then "\n", then newlines to the end of the block or the file) over
 * the first block of the file at path (from the filesystem's root, e.g. "/var/lib/prefetch/reorder-outcome") on
 * device, with O_DIRECT where the device allows it, and wait until it is on the disk.  The same refusals as a
 * reorder's (mounted read-write, or read-only without allow_ro_mount; not clean; unsupported features); the
 * file must be a regular file of 1 byte to 64 KiB whose first block is allocated and written (not a hole, not
 * preallocated, not inline data).  Returns 0, or a negative pf error (lib/error.h) with the reason in err:
 * nothing written then. */
int pf_outcome_note(const char *device, const char *path, const char *line, int allow_ro_mount, char *err,
		    size_t errlen);

#endif
