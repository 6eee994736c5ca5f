/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running with only the privileges still needed, and telling systemd how far we are.
 *
 * Capabilities are per thread: call pf_privileges_drop() before starting any thread (threads inherit the
 * creator's set), otherwise threads started earlier keep the full set. */
#ifndef PREFETCH_PRIVILEGES_H
#define PREFETCH_PRIVILEGES_H

#include <sys/capability.h>
#include <sys/types.h>

/* What the tracer needs once its fanotify marks are in place (fanotify_init/mark needed CAP_SYS_ADMIN; reading
 * events from the open fanotify fd needs nothing):
 *   CAP_DAC_READ_SEARCH  open the parent directories of traced files by path (e.g. below a 0700 home), and
 *                        let the residency pass and replay open any file for reading;
 *   CAP_FOWNER           mincore() reports the real page-cache residency of a file only to its owner, a
 *                        holder of CAP_FOWNER, or one who may write it (mm/mincore.c can_do_mincore); to anyone
 *                        else it claims every page resident, and the trace would hold whole files (verified by
 *                        tests/integration/10-trace.sh with a private file of another user); also O_NOATIME on
 *                        files not owned;
 *   CAP_SYS_PTRACE       read /proc/1/maps when tracing ends (init's binary and libraries, loaded before the
 *                        marks were in place: trace_init.c); init is not dumpable to a process with fewer
 *                        capabilities.  Dropped right after (PF_TRACER_CAPS_DONE).
 * Not needed: CAP_SYS_RAWIO (only FIBMAP and raw SCSI need it; we use FIEMAP, and reading a root-owned block
 * device node as uid 0 is plain DAC), CAP_DAC_OVERRIDE (state files are root's own). */
#define PF_TRACER_CAPS { CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_SYS_PTRACE }
/* Once the trace is built: writing it, aggregating (the identity checks stat any path). */
#define PF_TRACER_CAPS_DONE { CAP_DAC_READ_SEARCH, CAP_FOWNER }

/* Keep only the capabilities in keep[] (those not held are ignored) in the effective, permitted and
 * bounding sets, and set no_new_privs so that nothing executed later regains more.  Returns 0 or -errno. */
int pf_privileges_drop(const cap_value_t *keep, int nkeep);

/* sd_notify wrappers: no-ops (returning 0) when not started by systemd (no NOTIFY_SOCKET). */
int pf_notify_ready(void);                       /* READY=1 */
int pf_notify_stopping(void);                    /* STOPPING=1 */
/* The unit adopts pid as its main process (MAINPID=, READY=1): systemd accepts a process outside the unit from
 * root, so prefetch.service shows the tracer the initramfs started as running and stops it with the unit. */
int pf_notify_adopt(pid_t pid, const char *status);
int pf_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* STATUS=... */

#endif
