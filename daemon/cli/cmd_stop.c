/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd stop: tell the running tracer to finish (it writes its trace) and wait until it has. */
#include "boot_state.h"
#include "commands.h"
#include "config.h"
#include "error.h"
#include "log.h"
#include "number.h"
#include "pidfile.h"
#include "usage_error.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd stop [--pid-file FILE | --config FILE] [--timeout SEC]\n"
		"\n"
		"Send SIGTERM to the tracer ('prefetchd trace' or 'prefetchd boot') holding the pid file and wait\n"
		"until it has written its trace and exited.\n"
		"\n"
		"  --pid-file FILE   default PREFETCH_RUNTIME_DIR/prefetchd.pid (%s)\n"
		"  --config FILE     the configuration that names PREFETCH_RUNTIME_DIR (default %s)\n"
		"  --timeout SEC     wait at most this long (default 30)\n"
		"\n"
		"Exit status: 0 when the tracer finished with its trace stored, and also when none is running (a\n"
		"note says so: a stop unit must not fail because tracing already ended); 1 if it finished without\n"
		"storing its trace (the reason is printed), did not finish in time or could not be signalled; 2 on\n"
		"usage errors.\n",
		PF_DEFAULT_PIDFILE, PF_DEFAULT_CONFIG);
}

int cmd_stop(int argc, char **argv)
{
	static const struct option opts[] = { { "pid-file", required_argument, NULL, 'p' },
					       { "config", required_argument, NULL, 'c' },
					       { "timeout", required_argument, NULL, 't' },
					       { "help", no_argument, NULL, 'h' },
					       { NULL, 0, NULL, 0 } };
	const char *pidpath = NULL, *config = NULL;
	long timeout = 30;
	int c;
	optind = 1;
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":p:c:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pidpath = optarg; break;
		case 'c': config = optarg; break;
		case 't':
			if (pf_parse_long(optarg, 0, INT_MAX / 1000, &timeout))
				return pf_usage_error("--timeout: '%s' is not a number of seconds (0..%d)", optarg,
						      INT_MAX / 1000);
			break;
		case 'h': usage(stdout); return PF_EXIT_OK;
		default: return pf_usage_bad_option(c, argv);
		}
	}
	if (optind != argc)
		return pf_usage_error("unexpected argument '%s'", argv[optind]);
	struct pf_boot_paths paths; /* the default pid file: the one 'prefetchd boot' holds */
	if (!pidpath) {
		struct pf_config cfg;
		pf_config_read_or_defaults(&cfg, config);
		pf_boot_paths_init(&paths, &cfg);
		pidpath = paths.pidfile;
	}
	pid_t pid;
	char err[PF_PIDFILE_OUTCOME_MAX];
	int rc = pf_pidfile_stop(pidpath, SIGTERM, (int)timeout * 1000, &pid, err, sizeof(err));
	if (rc == 1) {
		printf("no tracer running (%s)\n", pidpath);
		return PF_EXIT_OK;
	}
	if (rc == 2) {
		pf_err("tracer (pid %ld) finished but stored no trace: %s", (long)pid, err);
		return PF_EXIT_FAILURE;
	}
	if (rc == -ETIMEDOUT) {
		pf_err("tracer (pid %ld) did not finish within %ld s", (long)pid, timeout);
		return PF_EXIT_FAILURE;
	}
	if (rc == -EBADMSG) {
		pf_err("%s holds no pid: not a pid file of prefetchd's (remove it if no tracer runs)", pidpath);
		return PF_EXIT_FAILURE;
	}
	if (rc == -ESRCH) {
		pf_err("%s is held, but its holder wrote no pid within 3 s: cannot tell which process to stop", pidpath);
		return PF_EXIT_FAILURE;
	}
	if (rc) {
		pf_err("cannot stop the tracer (%s): %s", pidpath, pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	printf("tracer (pid %ld) finished\n", (long)pid);
	return PF_EXIT_OK;
}
