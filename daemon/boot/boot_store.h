/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing one boot into the state that boot_state.h describes: a trace name not taken yet, the early-boot buffer,
 * and the reorder marker, which counts for one boot only.  Nothing here logs; errors are returned as -errno. */
#ifndef PREFETCH_BOOT_STORE_H
#define PREFETCH_BOOT_STORE_H

#include "boot_log.h"
#include "boot_state.h"
#include "format.h"

#include <stddef.h>
#include <stdint.h>

/* The trace name of a boot (pf_trace_name) that neither traces/ nor pending/traces/ holds yet: a second run
 * within the same second (tests) gets "<boot id>-2", "-3", ... */
void pf_boot_trace_name_free(const struct pf_boot_paths *p, char *name, size_t len, int64_t when, const char *boot_id);

/* PREFETCH_DIR not writable yet: buffer trace (if not NULL) as pending/traces/name and rec in
 * pending/boottime.log, for pf_boot_flush_pending().  Returns 0 or -errno. */
int pf_boot_buffer_pending(const struct pf_boot_paths *p, const struct pf_image *trace, const char *name,
			   const struct pf_boot_record *rec);

/* Was a reorder armed at the last shutdown (its marker present)? */
int pf_boot_reorder_armed(const struct pf_boot_paths *p);

/* Did the reorder armed at the last shutdown change the disk?  0 when the run's outcome says it moved nothing,
 * failed before moving, or never ran ("pending"); 1 when it moved blocks, or when it kept no outcome (then
 * only its arming is known, and it counts). */
int pf_boot_reorder_moved(const struct pf_boot_paths *p);

/* Once this boot is recorded: note in reorder.log, in one line, that it followed the armed reorder and what the
 * run at the end of that shutdown did (the first line of reorder-outcome, written there by prefetch-reorder
 * --outcome; "pending" when the run was cut off or never started; when there is no such file, the kernel log
 * of that shutdown is the only record), then remove the marker and the outcome file.
 * All state files through lib/state_dir.h (reorder.log: a whole line or nothing, never through a link).
 * Returns 0 (also when there is no marker), or the negative pf error of the note in reorder.log, else of the
 * marker's removal (the marker is removed either way: it is this boot's, not the next's). */
int pf_boot_reorder_consume(const struct pf_boot_paths *p, const struct pf_boot_record *rec);

#endif
