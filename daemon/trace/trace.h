/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tracing a boot: fanotify collects which files the boot opens and in what order; the page-cache tracepoints
 * (where tracefs has them, Linux 6.11+) which pages it asked for; at the end each file's page ranges are those
 * pages, or where the events are missing or were lost, what a residency pass (mincore) finds in the page cache
 * (each filesystem record says which: PF_FS_PAGES_TRACED, PF_FS_PAGES_LOST).  Result: a PF_KIND_TRACE image.
 *
 * Events caused by this process (any thread: replay runs in the same process during 'prefetchd boot') are
 * ignored, so the trace records what the boot used, not what the prefetcher pulled in.
 *
 * No file stays open while tracing: a file is identified by its file handle (name_to_handle_at, or its path
 * where the filesystem has no handles) and, unless it is unchanged since its first open (its size, times and
 * extent map are kept from then), opened again by it for the residency pass, so a traced filesystem
 * can be unmounted at any time; the trace then marks it gone (PF_FS_GONE).  What the trace misses is said in
 * its flags (format.h: PF_IMG_INCOMPLETE and the reason bits: events lost, file cap, filesystem gone,
 * timed out).
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
	int timeout_planned;       /* the time-out is the intended end (prefetchd trace --timeout); else reaching
				    * it means tracing was cut (TRACE_TIMEOUT: PF_IMG_TIMED_OUT) */
	int medium_override;       /* enum pf_medium_override, recorded per filesystem */
	/* Optional refinements (zero = default). */
	unsigned max_files;        /* files and directories recorded; 0 = 100000.  Past it: PF_IMG_FILE_CAP, and
				    * the marks are removed (later opens cost nothing) */
	int bounded_queue;         /* tests: do not ask for FAN_UNLIMITED_QUEUE (lets the queue overflow) */
	int pages_mincore;         /* ranges from mincore even where the page-cache tracepoints are available (also
				    * when the environment has PREFETCH_TRACE_PAGES=mincore: tests, comparisons) */
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
	unsigned long dropped;     /* files not recorded: over max_files, deleted, on a filesystem gone, path too long */
	unsigned gone;             /* traced filesystems unmounted during tracing */
	unsigned long page_events; /* page-cache events kept (pages the boot asked for) */
	unsigned long own_page_events;  /* ... of prefetchd's own threads (ignored) */
	unsigned long page_events_lost; /* ... lost in the ring buffer (then: mincore) */
	unsigned long long page_bytes_filled; /* bytes read without an event, filled from the cache (see
					       * trace_page_holes.c) */
	int fid;                   /* 1: fanotify named the files by handle (FID mode); 0: it opened each for us */
	char fid_why[64];          /* then: why, one line */
	uint64_t start_ns;         /* CLOCK_MONOTONIC when tracing began: the files' first_ns count from it */
	int pages_traced;          /* 1: the ranges of the files of at least one filesystem come from the events */
	char pages_why[128];       /* else: why mincore, one line */
};

struct pf_tracer;

/* Set up fanotify marks.  Needs CAP_SYS_ADMIN.  Returns 0 or -errno. */
int pf_tracer_open(const struct pf_trace_opts *o, struct pf_tracer **out);
/* Collect events until *stop is set (checked at least every 100 ms) or the timeout passes.  Returns 0 or -errno. */
int pf_tracer_run(struct pf_tracer *t, volatile sig_atomic_t *stop);
/* Residency pass (files changed since their first open opened again, one at a time) and image build; the flags
 * say what is missing.
 * Returns 0 or a negative pf error (lib/error.h).  st may be NULL. */
int pf_tracer_finish(struct pf_tracer *t, struct pf_image **trace, struct pf_trace_stats *st);
void pf_tracer_close(struct pf_tracer *t);

#endif
