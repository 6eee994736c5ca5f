/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd trace: record which files (and page ranges) are used until told to stop, then write the trace. */
#include "boot_state.h"
#include "commands.h"
#include "config.h"
#include "medium.h"
#include "error.h"
#include "format.h"
#include "incomplete.h"
#include "log.h"
#include "number.h"
#include "pidfile.h"
#include "privileges.h"
#include "trace.h"
#include "usage_error.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_MOUNT_ARGS 64

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd trace --output FILE [--mount DIR]... [--timeout SEC] [--pid-file FILE]\n"
		"\n"
		"Trace which files other processes open (fanotify), until SIGTERM, SIGINT or SIGUSR1, --timeout, or\n"
		"'prefetchd stop'; then record which page ranges of them are in the page cache and write the trace.\n"
		"Opens by prefetchd itself are ignored.  Needs root (CAP_SYS_ADMIN for fanotify); afterwards only\n"
		"CAP_DAC_READ_SEARCH and CAP_FOWNER are kept.\n"
		"\n"
		"  --output FILE     where to write the trace (written atomically)\n"
		"  --mount DIR       trace the filesystem holding DIR (repeatable); default: TRACE_MOUNTS from the\n"
		"                    configuration, else every local block-device filesystem mounted now\n"
		"  --timeout SEC     stop after SEC seconds (default: no limit)\n"
		"  --pid-file FILE   default PREFETCH_RUNTIME_DIR/prefetchd.pid (%s); a second tracer on the\n"
		"                    same pid file is refused\n"
		"  --config FILE     configuration (default %s; only PREFETCH_MEDIUM and TRACE_MOUNTS are used)\n"
		"  --max-files N     files and directories recorded at most (default 100000); past it tracing stops\n"
		"                    watching and the trace is flagged incomplete (file cap reached)\n"
		"  --bounded-queue   do not ask for an unlimited event queue (for testing overflow handling)\n"
		"\n"
		"Prints a one-line summary (files, dirs, bytes, events, overflows) on exit.  A trace that misses files\n"
		"(events lost, file cap reached, a traced filesystem unmounted meanwhile) is written, flagged\n"
		"incomplete with the reasons, and a warning says so.  No file is held open while tracing: a traced\n"
		"filesystem can be unmounted.  Exit status: 0, 1 on failure, 2 on usage errors.\n",
		PF_DEFAULT_PIDFILE, PF_DEFAULT_CONFIG);
}

static int dir_of_exists(const char *path)
{
	char *d = strdup(path);
	if (!d)
		return 0;
	char *slash = strrchr(d, '/');
	const char *dir = ".";
	if (slash) {
		if (slash == d)
			slash[1] = '\0';
		else
			*slash = '\0';
		dir = d;
	}
	struct stat st;
	int ok = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
	free(d);
	return ok;
}

struct trace_args {
	const char *output, *pidpath, *config;
	const char *mounts[MAX_MOUNT_ARGS];
	int nmounts, bounded;
	long timeout, max_files;
};

/* The command line into *a.  Returns 1 with *status when the command ends here (help, usage error), else 0. */
static int parse_args(int argc, char **argv, struct trace_args *a, int *status)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },   { "mount", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },  { "pid-file", required_argument, NULL, 'p' },
		{ "config", required_argument, NULL, 'c' },   { "max-files", required_argument, NULL, 'M' },
		{ "bounded-queue", no_argument, NULL, 'B' },  { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	*a = (struct trace_args){ 0 };
	*status = PF_EXIT_OK;
	optind = 1;
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":o:m:t:p:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->output = optarg; break;
		case 'm':
			if (a->nmounts == MAX_MOUNT_ARGS)
				return *status = pf_usage_error("at most %d --mount options", MAX_MOUNT_ARGS), 1;
			a->mounts[a->nmounts++] = optarg;
			break;
		case 't':
			if (pf_parse_long(optarg, 0, INT_MAX, &a->timeout))
				return *status = pf_usage_error("--timeout: '%s' is not a number of seconds (0..%d)", optarg,
								INT_MAX), 1;
			break;
		case 'p': a->pidpath = optarg; break;
		case 'c': a->config = optarg; break;
		case 'M':
			if (pf_parse_long(optarg, 1, PF_MAX_FILES, &a->max_files))
				return *status = pf_usage_error("--max-files: '%s' is not a number (1..%u)", optarg,
								PF_MAX_FILES), 1;
			break;
		case 'B': a->bounded = 1; break;
		case 'h': usage(stdout); return 1;
		default: return *status = pf_usage_bad_option(c, argv), 1;
		}
	}
	if (optind != argc)
		return *status = pf_usage_error("unexpected argument '%s'", argv[optind]), 1;
	if (!a->output)
		return *status = pf_usage_error("--output FILE is required"), 1;
	if (!dir_of_exists(a->output)) {
		pf_err("--output %s: its directory does not exist", a->output);
		return *status = PF_EXIT_FAILURE, 1;
	}
	return 0;
}

/* The tracer started, the pid file held, the privileges dropped to the tracer's.  PF_EXIT_OK or
 * PF_EXIT_FAILURE (said why; nothing left open). */
static int start(const struct trace_args *a, const struct pf_config *cfg, const char *pidpath, struct pf_tracer **t,
		 struct pf_pidfile *pid)
{
	char err[512] = "";
	/* --timeout is the length asked for, not a cut (unlike prefetchd boot's TRACE_TIMEOUT) */
	struct pf_trace_opts o = { .mounts = a->mounts, .nmounts = a->nmounts, .timeout_s = (int)a->timeout,
				   .timeout_planned = 1, .medium_override = cfg->medium,
				   .max_files = (unsigned)a->max_files, .bounded_queue = a->bounded, .err = err,
				   .errlen = sizeof(err) };
	int rc = pf_tracer_open(&o, t);
	if (rc) {
		pf_err("cannot start tracing: %s", err[0] ? err : pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	pid_t holder = 0;
	rc = pf_pidfile_acquire(pidpath, pid, &holder);
	if (rc) {
		if (rc == -EBUSY)
			pf_err("another tracer is running (pid %ld, %s); stop it with 'prefetchd stop'", (long)holder,
			       pidpath);
		else
			pf_err("pid file %s: %s", pidpath, pf_strerror(rc));
		pf_tracer_close(*t);
		return PF_EXIT_FAILURE;
	}
	static const cap_value_t keep[] = PF_TRACER_CAPS;
	if ((rc = pf_privileges_drop(keep, (int)(sizeof(keep) / sizeof(keep[0])))))
		pf_warn("could not drop capabilities: %s", pf_strerror(rc));
	return PF_EXIT_OK;
}

/* The one-line summary of a trace written to output. */
static void print_summary(const struct pf_image *img, const struct pf_trace_stats *st, const char *output)
{
	printf("trace: %u files, %u dirs, %llu bytes, %lu events (%lu own ignored), %lu overflows", st->files, st->dirs,
	       st->bytes, st->events, st->own_events, st->overflows);
	printf(", fanotify: %s%s%s", st->fid ? "handles" : "fds (", st->fid ? "" : st->fid_why[0] ? st->fid_why : "?",
	       st->fid ? "" : ")");
	if (st->lost)
		printf(", %lu lost", st->lost);
	if (st->dropped)
		printf(", %lu not recorded", st->dropped);
	if (st->pages_traced)
		printf(", ranges: pages read (%lu page events, %lu own ignored, %llu bytes read without "
		       "an event)", st->page_events, st->own_page_events, st->page_bytes_filled);
	else if (st->page_events_lost)
		printf(", ranges: resident pages (mincore: %lu page events lost)", st->page_events_lost);
	else
		printf(", ranges: resident pages (mincore: %s)", st->pages_why[0] ? st->pages_why : "?");
	printf("%s -> %s\n", img->flags & PF_IMG_INCOMPLETE ? " (incomplete)" : "", output);
	fflush(stdout);
}

/* The trace built and written (flagged incomplete when tracing failed).  Returns 1 when it failed, with the
 * reason in lost (for 'prefetchd stop'). */
static int store(struct pf_tracer *t, int failed, const struct pf_config *cfg, const char *output, char *lost,
		 size_t lostlen)
{
	struct pf_image *img = NULL;
	struct pf_trace_stats st = { 0 };
	int rc = pf_tracer_finish(t, &img, &st);
	static const cap_value_t done[] = PF_TRACER_CAPS_DONE;
	(void)pf_privileges_drop(done, (int)(sizeof(done) / sizeof(done[0]))); /* fewer than before: cannot fail */
	if (rc) {
		snprintf(lost, lostlen, "building the trace failed: %s", pf_strerror(rc));
		pf_err("%s", lost);
		pf_image_free(img);
		return 1;
	}
	if (failed)
		img->flags |= PF_IMG_INCOMPLETE;
	pf_medium_log_image(img, cfg->medium);
	rc = pf_image_save(output, img);
	if (rc) {
		snprintf(lost, lostlen, "cannot write %s: %s", output, pf_strerror(rc));
		pf_err("%s", lost);
		failed = 1;
	} else {
		print_summary(img, &st, output);
		pf_warn_if_incomplete(img, output);
	}
	pf_image_free(img);
	return failed;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_args a;
	int status;
	if (parse_args(argc, argv, &a, &status))
		return status;
	struct pf_config cfg;
	pf_config_read_or_defaults(&cfg, a.config);
	struct pf_boot_paths paths; /* the default pid file: the one 'prefetchd boot' holds */
	pf_boot_paths_init(&paths, &cfg);
	const char *pidpath = a.pidpath ? a.pidpath : paths.pidfile;
	if (a.nmounts == 0)
		for (int i = 0; i < cfg.nmounts && i < MAX_MOUNT_ARGS; i++)
			a.mounts[a.nmounts++] = cfg.mounts[i];

	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: poll() returns at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	struct pf_tracer *t;
	struct pf_pidfile pid = { .fd = -1 };
	if ((status = start(&a, &cfg, pidpath, &t, &pid)))
		return status;
	pf_notify_ready();
	pf_notify_status("tracing");
	int failed = 0, rc = pf_tracer_run(t, &stop_requested);
	if (rc) {
		pf_err("tracing stopped early: %s", pf_strerror(rc));
		failed = 1;
	}
	pf_notify_stopping();
	char lost[PATH_MAX + 256] = ""; /* why no trace was stored, for 'prefetchd stop' */
	failed = store(t, failed, &cfg, a.output, lost, sizeof(lost));
	pf_tracer_close(t);
	if ((rc = pf_pidfile_outcome(&pid, lost[0] ? lost : NULL)))
		pf_warn("cannot record the outcome in %s: %s", pidpath, pf_strerror(rc));
	pf_pidfile_release(&pid); /* last: 'prefetchd stop' returns when this lock goes, the trace is written */
	return failed ? PF_EXIT_FAILURE : PF_EXIT_OK;
}
