/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd report: the boot-time table of the recorded boots, per setup or per another setting (--by), each
 * group against a baseline with a verdict, and optionally an SVG chart. */
#include "boot_log.h"
#include "commands.h"
#include "config.h"
#include "error.h"
#include "format.h"
#include "log.h"
#include "report_boots.h"
#include "report_chunk_note.h"
#include "report_groups.h"
#include "report_stats.h"
#include "report_svg.h"
#include "selfcheck.h"
#include "safe_file.h"
#include "usage_error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd report [--config FILE] [--log FILE]... [--by KEY] [--setup SETUP]\n"
		"                        [--boots | --csv | --json] [--svg FILE] [--title TEXT]\n"
		"\n"
		"Print the boot times of the recorded boots per group (by default per setup: off, trace, replay,\n"
		"narrow, replay+reorder): boots, median, mean, standard deviation, min, max, disk busy time and I/O\n"
		"stall; and each group against a baseline: the difference of the medians with its 95 %% bootstrap\n"
		"interval, and whether it is clear or how many more boots would likely settle it.\n"
		"\n"
		"  --config FILE   configuration (default " PF_DEFAULT_CONFIG "), for PREFETCH_DIR and the\n"
		"                  chunk size --by chunk-size says a word on\n"
		"  --log FILE      boot-time log (default $PREFETCH_DIR/boottime.log); again for another machine's\n"
		"                  or disk copy's log, read together (a boot in several counts once)\n"
		"  --by KEY        group by setup (default), chunk-size, generation, kernel or medium\n"
		"  --setup SETUP   only the boots of this setup (e.g. replay+reorder with --by chunk-size)\n"
		"  --boots         also every boot, one line each (what it replayed, used, read itself, stalled)\n"
		"  --csv           only CSV with a header row: the groups and comparisons with --by, else the boots\n"
		"  --json          only one JSON object: the boots, the setups' statistics, the groups, the comparisons\n"
		"  --svg FILE      also write a chart: every boot as a point over time, coloured by setup, and\n"
		"                  per setup min/max, mean and standard deviation, change against the baseline\n"
		"  --title TEXT    title of the chart\n"
		"\n"
		"Exit: 0, 1 when the log cannot be read, 2 on usage errors.\n");
}

enum form { TEXT, BOOTS, CSV, JSON };
#define MAX_LOGS 8

struct report_opts {
	const char *config, *svg, *title;
	const char *log[MAX_LOGS];
	int n_log;
	enum form form;
	enum pf_report_key by;
	int by_given, only_given;
	enum pf_setup only;
};

/* Returns PF_EXIT_GO_ON, else the exit status. */
static int parse(int argc, char **argv, struct report_opts *o)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					       { "log", required_argument, NULL, 'l' },
					       { "svg", required_argument, NULL, 's' },
					       { "title", required_argument, NULL, 't' },
					       { "by", required_argument, NULL, 'y' },
					       { "setup", required_argument, NULL, 'S' },
					       { "boots", no_argument, NULL, 'b' },
					       { "csv", no_argument, NULL, 'C' },
					       { "json", no_argument, NULL, 'J' },
					       { "help", no_argument, NULL, 'h' },
					       { NULL, 0, NULL, 0 } };
	int c;
	optind = 1;
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":c:l:s:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'l':
			if (o->n_log == MAX_LOGS)
				return pf_usage_error("--log: at most %d logs", MAX_LOGS);
			o->log[o->n_log++] = optarg;
			break;
		case 's': o->svg = optarg; break;
		case 't': o->title = optarg; break;
		case 'y':
			if (pf_report_key_parse(optarg, &o->by))
				return pf_usage_error("--by: '%s' is none of setup, chunk-size, generation, kernel, medium",
						      optarg);
			o->by_given = 1;
			break;
		case 'S':
			if (pf_setup_parse(optarg, &o->only))
				return pf_usage_error("--setup: '%s' is none of off, trace, replay, narrow, replay+reorder",
						      optarg);
			o->only_given = 1;
			break;
		case 'b': o->form = BOOTS; break;
		case 'C': o->form = CSV; break;
		case 'J': o->form = JSON; break;
		case 'h': usage(stdout); return PF_EXIT_OK;
		default: return pf_usage_bad_option(c, argv);
		}
	}
	if (optind != argc)
		return pf_usage_error("unexpected argument '%s'", argv[optind]);
	return PF_EXIT_GO_ON;
}

/* Whether recs[0..n), the boots of the logs read before, hold r's boot already: a log copied with its disk
 * repeats the boots before the copy. */
static int seen(const struct pf_boot_record *recs, size_t n, const struct pf_boot_record *r)
{
	if (!strcmp(r->boot_id, "-"))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (recs[i].when == r->when && !strcmp(recs[i].boot_id, r->boot_id))
			return 1;
	return 0;
}

/* Append the boots of one log to *recs (those already there left out).  Returns 0 or the exit status. */
static int load_one(const char *path, struct pf_boot_record **recs, size_t *n)
{
	struct pf_boot_record *more, *all;
	size_t m, bad;
	int rc = pf_boottime_load(path, &more, &m, &bad);
	if (rc == -ENOENT)
		pf_err("%s does not exist: no boot has been recorded yet", path);
	else if (rc == -EPROTO)
		pf_err("%s: written in an unknown format version", path);
	else if (rc)
		pf_err("cannot read %s: %s", path, pf_strerror(rc));
	if (rc)
		return PF_EXIT_FAILURE;
	if (bad)
		pf_warn("%s: %zu unreadable line%s skipped", path, bad, bad == 1 ? "" : "s");
	if (!(all = realloc(*recs, (*n + m + 1) * sizeof(*all)))) {
		free(more);
		pf_err("out of memory");
		return PF_EXIT_FAILURE;
	}
	*recs = all;
	size_t before = *n; /* only the earlier logs' boots: one log may hold boots alike (scripted, or a clock reset) */
	for (size_t i = 0; i < m; i++)
		if (!seen(all, before, &more[i]))
			all[(*n)++] = more[i];
	free(more);
	return 0;
}

/* The logs' boots (only those of --setup), the logs' names joined into logpath, the note on the configured
 * chunk size noted to note (from all boots): PF_EXIT_GO_ON, or the exit status. */
static int load(const struct report_opts *o, char *logpath, size_t len, struct pf_boot_record **recs, size_t *n,
		struct pf_note *note)
{
	struct pf_config cfg;
	pf_config_read_or_defaults(&cfg, o->config);
	*recs = NULL;
	*n = 0;
	logpath[0] = '\0';
	for (int i = 0; i < (o->n_log ? o->n_log : 1); i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s%s", o->n_log ? o->log[i] : cfg.state_dir, o->n_log ? "" : "/boottime.log");
		size_t used = strlen(logpath);
		snprintf(logpath + used, len - used, "%s%s", i ? " and " : "", path);
		if (load_one(path, recs, n)) {
			free(*recs);
			*recs = NULL;
			return PF_EXIT_FAILURE;
		}
	}
	pf_report_chunk_note(*recs, *n, cfg.chunk_size_blocks, cfg.enable_reordering, note);
	if (o->only_given) {
		size_t k = 0;
		for (size_t i = 0; i < *n; i++)
			if (pf_boot_record_setup(&(*recs)[i]) == o->only)
				(*recs)[k++] = (*recs)[i];
		*n = k;
	}
	return PF_EXIT_GO_ON;
}

static void text_report(const struct report_opts *o, const char *logpath, const struct pf_boot_record *recs, size_t n,
			const struct pf_grouping *groups, const struct pf_control_change *cc)
{
	int systemd_end = 0, other_end = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(recs[i].end_source, "systemd"))
			systemd_end++;
		else
			other_end++;
	}
	printf("%zu boot%s recorded in %s%s%s\n\n", n, n == 1 ? "" : "s", logpath, o->only_given ? ", setup " : "",
	       o->only_given ? pf_setup_name(o->only) : "");
	pf_report_groups_table(stdout, groups);
	printf("\nboot time: uptime when the boot finished (%d from systemd's FinishTimestamp, %d from the stop\n"
	       "script or trace stop); disk s: /proc/diskstats I/O ticks of the traced disk at boot end (mean);\n"
	       "stall s: /proc/pressure/io \"some\" at boot end (mean).\n",
	       systemd_end, other_end);
	char words[256];
	if (cc->n_control && cc->n_replay)
		printf("self-check, replay against control boots: median %.2f s of %zu against %.2f s of %zu: %+.1f %%; %s\n",
		       cc->replay_s, cc->n_replay, cc->control_s, cc->n_control, 100 * cc->change,
		       pf_comparison_words(&cc->cmp, "control", "replay", "faster", "slower", "s", words, sizeof(words)));
	else
		printf("self-check, replay against control boots: no %s yet (SELF_CHECK_INTERVAL; or ENABLE_REPLAY=0\n"
		       "for a few boots, or prefetch=noreplay on the kernel command line)\n",
		       cc->n_control ? "replay boots" : "control boots");
	if (o->form == BOOTS) {
		putchar('\n');
		pf_report_boots_table(stdout, recs, n);
	}
}

static int write_svg(const struct report_opts *o, const struct pf_report_row rows[PF_SETUP_COUNT],
		     const struct pf_boot_record *recs, size_t n)
{
	char *doc = pf_report_svg(rows, recs, n, o->title);
	if (!doc) {
		pf_err("out of memory");
		return PF_EXIT_FAILURE;
	}
	int rc = pf_write_atomic(o->svg, doc, strlen(doc), 0644);
	free(doc);
	if (rc) {
		pf_err("cannot write %s: %s", o->svg, pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	if (o->form != CSV && o->form != JSON)
		printf("chart: %s\n", o->svg);
	return PF_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { .form = TEXT, .by = PF_BY_SETUP };
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	char logpath[1024], note[256];
	struct pf_note chunk_note = pf_note_into(note, sizeof(note));
	struct pf_boot_record *recs = NULL;
	size_t n = 0;
	if ((rc = load(&o, logpath, sizeof(logpath), &recs, &n, &chunk_note)) >= 0)
		return rc;

	struct pf_report_row rows[PF_SETUP_COUNT];
	struct pf_grouping groups;
	if (pf_report_rows(recs, n, rows) || pf_report_group(recs, n, o.by, &groups)) {
		free(recs);
		pf_err("out of memory");
		return PF_EXIT_FAILURE;
	}
	if (o.by == PF_BY_CHUNK)
		snprintf(groups.note, sizeof(groups.note), "%s", note);
	/* The replay boots against the control boots, as the self-check compares them (selfcheck.h). */
	struct pf_selfcheck sc = { .policy = PF_POLICY_REPLAY };
	pf_selfcheck_decide(recs, n, &sc);
	struct pf_control_change cc = { .n_control = sc.n_control, .n_replay = sc.n_replay, .control_s = sc.control_s,
					.replay_s = sc.replay_s, .change = sc.change, .allowance_s = sc.allowance_s,
					.cmp = sc.boot_cmp };
	if (o.form == CSV && o.by_given)
		pf_report_groups_csv(stdout, &groups);
	else if (o.form == CSV)
		pf_report_boots_csv(stdout, recs, n);
	else if (o.form == JSON)
		pf_report_json(stdout, logpath, recs, n, rows, &groups, &cc);
	else
		text_report(&o, logpath, recs, n, &groups, &cc);
	rc = o.svg ? write_svg(&o, rows, recs, n) : PF_EXIT_OK;
	pf_grouping_free(&groups);
	free(recs);
	return rc;
}
