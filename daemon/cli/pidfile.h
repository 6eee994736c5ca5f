/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pid file of a running tracer ('prefetchd trace' or 'prefetchd boot'), held with an flock for the whole
 * run: a stale file (the process died) is recognised because nobody holds the lock, and 'prefetchd stop' knows
 * the tracer is done when the lock is released.  Before it lets go, the tracer writes its outcome on the file's
 * second line ("stored" or "failed: REASON"), which 'prefetchd stop' reads through its own open descriptor after
 * the file is unlinked: a tracer that ends without that line (killed, crashed) stored nothing. */
#ifndef PREFETCH_PIDFILE_H
#define PREFETCH_PIDFILE_H

#include <sys/types.h>

#define PF_DEFAULT_PIDFILE "/run/prefetch/prefetchd.pid"
#define PF_PIDFILE_OUTCOME_MAX 2048 /* the longest outcome line 'prefetchd stop' reads back */

struct pf_pidfile {
	int fd;
	char *path;
};

/* Create path (and its directory, mode 0755, not the directory's parents), lock it and write our pid.  The file is opened in its trusted
 * directory (state_dir.h: PF_EUNSAFE, PF_ELINKED).  Returns 0; -EBUSY when a live process holds it (its pid in
 * *holder, waited for up to 3 s while the holder is still setting up; 0 if it wrote none by then); or a negative
 * pf error. */
int pf_pidfile_acquire(const char *path, struct pf_pidfile *pf, pid_t *holder);
/* The same in two steps: lock (the file stays empty, so "pid file non-empty" keeps meaning "set up", which
 * the init script and 'prefetchd stop' rely on), then publish our pid once set up.  Returns as above. */
int pf_pidfile_lock(const char *path, struct pf_pidfile *pf, pid_t *holder);
int pf_pidfile_publish(struct pf_pidfile *pf);
/* Record the outcome for 'prefetchd stop': why == NULL means the trace was stored, else why it was not.
 * Returns 0 or -errno. */
int pf_pidfile_outcome(struct pf_pidfile *pf, const char *why);
/* Remove the file and drop the lock.  Safe on a zeroed or released struct. */
void pf_pidfile_release(struct pf_pidfile *pf);

/* Send sig to the process holding path and wait (at most timeout_ms) until it has released it, i.e. exited.
 * Returns 0 when it finished and said its trace was stored, 2 when it finished without storing one (the reason
 * in err), 1 when no process holds path (none running), -EBADMSG when nobody holds it but it holds something
 * other than a pid (not prefetchd's: no guess), -ESRCH when its holder wrote no pid within 3 s, -ETIMEDOUT, or
 * -errno.  *pid gets the holder's pid (0 if
 * unknown). */
int pf_pidfile_stop(const char *path, int sig, int timeout_ms, pid_t *pid, char *err, size_t errlen);

#endif
