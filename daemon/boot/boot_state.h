/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state 'prefetchd boot' keeps between boots, and where it goes while /var cannot be written yet.
 *
 *   $PREFETCH_DIR/traces/trace-<unix time>-<boot id>.pf   the last traces (TRACE_AGGREGATION_COUNT + 2 kept)
 *   $PREFETCH_DIR/layout                                   what the next boot replays
 *   $PREFETCH_DIR/boottime.log                             one line per boot (lib/boot_log.h)
 *   $PREFETCH_DIR/reorder-armed, reorder.log               the shutdown reorder's marker and history
 *   $PREFETCH_DIR/reorder-outcome                          the shutdown run's outcome (reorder/outcome_note.h)
 *   $PREFETCH_DIR/reorder-placed                           the reorder that placed the layout's files
 *                                                          (boot_settings.h)
 *   $PREFETCH_RUNTIME_DIR/prefetchd.pid                    held while tracing ('prefetchd stop')
 *   $PREFETCH_RUNTIME_DIR/boot-end                         uptime at boot end, written by the stop init script
 *   $PREFETCH_RUNTIME_DIR/pending/                         early-boot buffer: traces/ and boottime.log
 *
 * When tracing ends before PREFETCH_DIR is writable (read-only root, /var not mounted yet), the trace and the
 * boot record are buffered under $PREFETCH_RUNTIME_DIR/pending and moved over by pf_boot_flush_pending(). */
#ifndef PREFETCH_BOOT_STATE_H
#define PREFETCH_BOOT_STATE_H

#include "config.h"

#include <stddef.h>
#include <stdint.h>

#define PF_BOOT_PATH 512

struct pf_boot_paths {
	char state[PF_BOOT_PATH], traces[PF_BOOT_PATH], layout[PF_BOOT_PATH], boottime[PF_BOOT_PATH];
	char reorder_armed[PF_BOOT_PATH], reorder_log[PF_BOOT_PATH], reorder_outcome[PF_BOOT_PATH];
	char reorder_placed[PF_BOOT_PATH];
	char runtime[PF_BOOT_PATH], pidfile[PF_BOOT_PATH], boot_end[PF_BOOT_PATH];
	char pending[PF_BOOT_PATH], pending_traces[PF_BOOT_PATH], pending_boottime[PF_BOOT_PATH];
};

void pf_boot_paths_init(struct pf_boot_paths *p, const struct pf_config *cfg);

/* Create dir (0700: what it holds lists the files users opened) if missing, not its parents (-ENOENT while
 * /var is not mounted yet).  Returns 0 when it exists, is trusted (state_dir.h) and is writable now, else
 * PF_EUNSAFE or -errno (-EROFS while the root is still read-only).  Every state file below is opened through lib/state_dir.h. */
int pf_boot_dir_writable(const char *dir);

/* Whether PREFETCH_DIR and its traces/ are trusted (state_dir.h; a missing one is not refused).  Returns 0, or
 * PF_EUNSAFE with what is wrong in err (e.g. "/x/state/traces is a symbolic link"). */
int pf_boot_dirs_trusted(const struct pf_boot_paths *p, char *err, size_t errlen);

/* "trace-<when>-<boot id>.pf" */
void pf_trace_name(char *buf, size_t len, int64_t when, const char *boot_id);

/* The trace files in dir, oldest first (by the time in the name, then by the file's modification time, then by
 * name).  *names is a malloc'd array of malloc'd names; free with pf_trace_names_free.  A missing dir gives 0
 * names.  Returns 0 or -errno. */
int pf_traces_list(const char *dir, char ***names, size_t *n);
void pf_trace_names_free(char **names, size_t n);

/* Remove all but the newest keep traces in dir.  Returns how many were removed, or -errno. */
int pf_traces_rotate(const char *dir, size_t keep);

/* Move buffered traces and boot records from the runtime dir into the state dir (which must be writable).
 * Returns how many items were moved, or the negative pf error (lib/error.h) of the first failure (what could not
 * move stays). */
int pf_boot_flush_pending(const struct pf_boot_paths *p);

#endif
