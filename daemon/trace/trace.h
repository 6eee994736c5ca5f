/* Tracing a boot: fanotify collects which files the boot opens and in what order; at the end a residency
 * pass (mincore) records which page ranges of them are in the page cache.  Result: a PF_KIND_TRACE image.
 *
 * Events caused by this process (any thread: replay runs in the same process during 'prefetchd boot') are
 * ignored, so the trace records what the boot used, not what the prefetcher pulled in.
 *
 * Order of use: pf_tracer_open (needs CAP_SYS_ADMIN; afterwards only CAP_DAC_READ_SEARCH and CAP_FOWNER are
 * needed, see privileges.h), pf_tracer_run, pf_tracer_finish, pf_tracer_close. */
#ifndef PREFETCH_TRACE_H
#define PREFETCH_TRACE_H

#include "format.h"

#include <signal.h>
#include <stddef.h>

struct pf_trace_opts {
	const char *const *mounts; /* mount points to trace; NULL/0 = every local block-device filesystem */
	int nmounts;
	int timeout_s;             /* stop after this long (0 = only on *stop) */
	int medium_override;       /* enum pf_medium_override, recorded per filesystem */
	/* Optional refinements (zero = default). */
	unsigned max_files;        /* files and directories kept (each holds an fd); 0 = 100000 */
	int bounded_queue;         /* tests: do not ask for FAN_UNLIMITED_QUEUE (lets the queue overflow) */
	char *err;                 /* if set: a one-line reason when pf_tracer_open fails */
	size_t errlen;
};

struct pf_trace_stats {
	unsigned long events;      /* fanotify events read */
	unsigned long own_events;  /* events caused by prefetchd itself (ignored) */
	unsigned long overflows;   /* queue overflows (trace marked incomplete) */
	unsigned files, dirs;      /* recorded */
	unsigned long long bytes;  /* resident bytes recorded */
	unsigned long lost;        /* events that could not be read (fd creation failed; trace marked incomplete) */
	unsigned long dropped;     /* files not recorded: over max_files, out of fds, deleted, path too long */
};

struct pf_tracer;

/* Set up fanotify marks.  Needs CAP_SYS_ADMIN.  Returns 0 or -errno. */
int pf_tracer_open(const struct pf_trace_opts *o, struct pf_tracer **out);
/* Collect events until *stop is set (checked at least every 100 ms) or the timeout passes.  Returns 0 or -errno. */
int pf_tracer_run(struct pf_tracer *t, volatile sig_atomic_t *stop);
/* Residency pass and image build.  Returns 0 or a negative pf error (lib/error.h).  st may be NULL. */
int pf_tracer_finish(struct pf_tracer *t, struct pf_image **trace, struct pf_trace_stats *st);
void pf_tracer_close(struct pf_tracer *t);

#endif
