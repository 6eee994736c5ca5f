/* Tracing a boot: fanotify collects which files the boot opens and in what order; at the end a residency
 * pass (mincore) records which page ranges of them are in the page cache.  Result: a PF_KIND_TRACE image. */
#ifndef PREFETCH_TRACE_H
#define PREFETCH_TRACE_H

#include "format.h"

#include <signal.h>

struct pf_trace_opts {
	const char *const *mounts; /* mount points to trace; NULL/0 = every local block-device filesystem */
	int nmounts;
	int timeout_s;             /* stop after this long (0 = only on *stop) */
	int medium_override;       /* enum pf_medium_override, recorded per filesystem */
};

struct pf_trace_stats {
	unsigned long events;      /* fanotify events read */
	unsigned long own_events;  /* events caused by prefetchd itself (ignored) */
	unsigned long overflows;   /* queue overflows (trace marked incomplete) */
	unsigned files, dirs;      /* recorded */
	unsigned long long bytes;  /* resident bytes recorded */
};

struct pf_tracer;

/* Set up fanotify marks.  Needs CAP_SYS_ADMIN.  Returns 0 or -errno. */
int pf_tracer_open(const struct pf_trace_opts *o, struct pf_tracer **out);
/* Collect events until *stop is set or the timeout passes.  Returns 0 or -errno. */
int pf_tracer_run(struct pf_tracer *t, volatile sig_atomic_t *stop);
/* Residency pass and image build.  Returns 0 or a negative error. */
int pf_tracer_finish(struct pf_tracer *t, struct pf_image **trace, struct pf_trace_stats *st);
void pf_tracer_close(struct pf_tracer *t);

#endif
