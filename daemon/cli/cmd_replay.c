/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd replay LAYOUT: prefetch a layout into the page cache and exit.
 *
 * Exit codes, chosen so that a boot never waits on or fails because of prefetching:
 *   0  done (also: timed out, stopped, files skipped), or nothing to do: no layout yet, or a layout that matches
 *      none of the mounted filesystems (stale: the next aggregation replaces it);
 *   1  the layout cannot be used: unreadable, corrupt, truncated, a trace, not root-owned or writable by others
 *      (one error line; prefetch.service ignores the status: the boot goes on without prefetch);
 *   2  bad command line. */
#include "commands.h"
#include "config.h"
#include "medium.h"
#include "error.h"
#include "format.h"
#include "log.h"
#include "number.h"
#include "replay.h"
#include "usage_error.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd replay LAYOUT [--config FILE] [--medium M] [--threads N] [--timeout SEC]\n"
		"                        [--dump-plan FILE]\n"
		"\n"
		"Read the files and ranges of LAYOUT into the page cache, then print one summary line.\n"
		"Rotational disks: inode tables and directories first, then the data in physical order (of where\n"
		"the blocks are now: FIEMAP; the layout's block numbers only where that fails, and on XFS when the\n"
		"sweep goes down its allocation groups, each group's inodes at its start).\n"
		"Slow flash (SD, eMMC, USB): first-touch order, each file's ranges merged where they are adjacent on\n"
		"the device (small holes read through), two readers.  Fast flash: N readers in first-touch order.\n"
		"Changed or missing files are skipped.\n"
		"\n"
		"  --config FILE   settings (default " PF_DEFAULT_CONFIG "; missing = defaults)\n"
		"  --medium M      auto (sysfs), rotational, slow-flash or fast-flash (ssd) (PREFETCH_MEDIUM)\n"
		"  --threads N     readers on fast flash, 1-64 (REPLAY_THREADS)\n"
		"  --timeout SEC   give up after SEC seconds, 0 = never (REPLAY_TIMEOUT)\n"
		"  --dump-plan FILE  write the rotational sweep's plan there, one line per item in sweep order:\n"
		"                  BIN FS KIND SRC PHYSICAL OFFSET LENGTH PATH (SRC: now = FIEMAP, layout, none);\n"
		"                  before them the metadata pass's steps, the blocks each asks for (bytes):\n"
		"                  m FS meta STEP PHYSICAL 0 LENGTH -\n"
		"                  (mode 0600: it lists the files a boot opens)\n"
		"\n"
		"Exit status: 0 done or nothing to do (no layout yet, or a stale one), 1 unusable layout, 2 usage.\n"
		"ENABLE_PREFETCH and ENABLE_REPLAY govern 'prefetchd boot'; this command always replays.\n");
}

/* The plan lists the files a boot opens: 0600, like traces and layouts, also when it replaces a file. */
static FILE *open_dump(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fchmod(fd, 0600) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	FILE *f = fdopen(fd, "we");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

struct replay_args {
	const char *config, *medium, *dump, *path;
	long threads, timeout; /* -1: not given */
};

/* The command line into *a.  Returns 1 with *status when the command ends here (help, usage error), else 0. */
static int parse_args(int argc, char **argv, struct replay_args *a, int *status)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "medium", required_argument, NULL, 'm' },
		{ "threads", required_argument, NULL, 'j' }, { "timeout", required_argument, NULL, 't' },
		{ "dump-plan", required_argument, NULL, 'd' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*a = (struct replay_args){ .threads = -1, .timeout = -1 };
	*status = PF_EXIT_OK;
	int c;
	optind = 1;
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': a->config = optarg; break;
		case 'm': a->medium = optarg; break;
		case 'j':
			if (pf_parse_long(optarg, 1, 64, &a->threads))
				return *status = pf_usage_error("--threads: '%s' is not a number (1..64)", optarg), 1;
			break;
		case 't':
			if (pf_parse_long(optarg, 0, 86400, &a->timeout))
				return *status = pf_usage_error("--timeout: '%s' is not a number of seconds (0..86400)",
								optarg), 1;
			break;
		case 'd': a->dump = optarg; break;
		case 'h': usage(stdout); return 1;
		default: return *status = pf_usage_bad_option(c, argv), 1;
		}
	}
	if (optind != argc - 1)
		return *status = pf_usage_error(optind == argc ? "no LAYOUT given" : "want exactly one LAYOUT argument"), 1;
	a->path = argv[optind];
	return 0;
}

/* The replay's one-line summary. */
static void print_summary(const struct pf_replay_stats *st)
{
	printf("replay: %u files, %u skipped (%u missing, %u changed), %.1f MiB, %.2f s, medium %s, %u metadata blocks, "
	       "%u ranges placed now (%u moved since the layout, %u pieces cut), %u by the layout%s\n",
	       st->files, st->files_skipped, st->files_missing, st->files_changed, st->bytes / 1048576.0, st->seconds,
	       st->medium == PF_MEDIUM_UNKNOWN ? "none" : pf_medium_name(st->medium), st->metadata_blocks,
	       st->placed_now, st->placed_moved, st->placed_pieces, st->placed_layout,
	       st->timed_out ? ", timed out" : st->stopped ? ", stopped" : "");
	fflush(stdout);
}

int cmd_replay(int argc, char **argv)
{
	/* First thing: a stop request (systemctl stop) always ends in a clean exit. */
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	struct replay_args a;
	int status;
	if (parse_args(argc, argv, &a, &status))
		return status;

	struct pf_config cfg;
	int rc = pf_config_read(&cfg, a.config);
	if (rc && rc != -ENOENT)
		pf_warn("cannot read %s (%s); using defaults", a.config ? a.config : pf_config_default_path(),
			pf_strerror(rc));
	int override = cfg.medium;
	if (a.medium) {
		override = pf_medium_override_parse(a.medium);
		if (override < 0)
			return pf_usage_error("--medium: '%s' is not auto, rotational, slow-flash or fast-flash", a.medium);
	}

	struct pf_image *layout;
	rc = pf_image_load(a.path, PF_LOAD_REQUIRE_ROOT, PF_KIND_LAYOUT, &layout);
	if (rc == -ENOENT) {
		pf_notice("no layout yet at %s: nothing to prefetch", a.path);
		return PF_EXIT_OK;
	}
	if (rc) {
		pf_err("not prefetching: layout %s: %s", a.path, pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}

	struct pf_replay_opts o = {
		.medium_override = override,
		.threads = a.threads > 0 ? (int)a.threads : cfg.replay_threads,
		.idle_io_after_head = cfg.replay_idle_io,
		.timeout_s = a.timeout >= 0 ? (int)a.timeout : cfg.replay_timeout,
		.max_bytes = (uint64_t)cfg.max_prefetch_mb << 20,
		.stop = &stop_flag,
	};
	/* The timeout is checked between reads; a read or open stuck in the kernel (a dying disk, a hung network
	 * filesystem) gets a signal a little later, which interrupts it without SA_RESTART, and sets stop. */
	if (o.timeout_s > 0) {
		sigaction(SIGALRM, &sa, NULL);
		alarm((unsigned)o.timeout_s + 2);
	}
	if (a.dump && !(o.plan_dump = open_dump(a.dump))) {
		pf_err("--dump-plan %s: %s", a.dump, pf_strerror(-errno));
		pf_image_free(layout);
		return PF_EXIT_FAILURE;
	}
	struct pf_replay_stats st;
	rc = pf_replay(layout, &o, &st);
	alarm(0);
	if (o.plan_dump && fclose(o.plan_dump) && !rc)
		pf_warn("--dump-plan %s: %s", a.dump, pf_strerror(-errno));
	unsigned nfiles = layout->nfiles;
	pf_image_free(layout);
	if (rc) {
		pf_err("replay of %s failed: %s", a.path, pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	if (nfiles && !st.files && st.files_skipped == st.files_missing && st.files_missing == nfiles) {
		pf_notice("layout %s matches nothing on the mounted filesystems (stale): nothing prefetched", a.path);
		return PF_EXIT_OK;
	}
	print_summary(&st);
	return PF_EXIT_OK;
}
