/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd report: the boot-time table of the recorded boots, per setup (none / prefetch / prefetch+reorder),
 * and optionally an SVG bar chart of it. */
#include "boot_log.h"
#include "commands.h"
#include "config.h"
#include "error.h"
#include "format.h"
#include "log.h"
#include "report_boots.h"
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
		"Usage: prefetchd report [--config FILE] [--log FILE] [--boots | --csv | --json] [--svg FILE]\n"
		"                        [--title TEXT]\n"
		"\n"
		"Print the boot time and the disk busy time of the recorded boots per setup: none (no layout\n"
		"replayed), prefetch, prefetch+reorder: boots, average, standard deviation, min and max; and how the\n"
		"replay boots compare with the self-check's control boots (medians, with the noise allowance).\n"
		"\n"
		"  --config FILE   configuration (default " PF_DEFAULT_CONFIG "), for PREFETCH_DIR\n"
		"  --log FILE      boot-time log (default $PREFETCH_DIR/boottime.log)\n"
		"  --boots         also every boot, one line each (what it replayed, used, read itself, stalled)\n"
		"  --csv           only the boots, as CSV with a header row\n"
		"  --json          only one JSON object: the boots, the setups' statistics, the comparison\n"
		"  --svg FILE      also write a chart: every boot as a point over time, coloured by setup, and\n"
		"                  per setup min/max, mean and standard deviation, change against none\n"
		"  --title TEXT    title of the chart\n"
		"\n"
		"Exit: 0, 1 when the log cannot be read, 2 on usage errors.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					       { "log", required_argument, NULL, 'l' },
					       { "svg", required_argument, NULL, 's' },
					       { "title", required_argument, NULL, 't' },
					       { "boots", no_argument, NULL, 'b' },
					       { "csv", no_argument, NULL, 'C' },
					       { "json", no_argument, NULL, 'J' },
					       { "help", no_argument, NULL, 'h' },
					       { NULL, 0, NULL, 0 } };
	const char *config = NULL, *log = NULL, *svg = NULL, *title = NULL;
	enum { TEXT, BOOTS, CSV, JSON } form = TEXT;
	int c;
	optind = 1;
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":c:l:s:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'l': log = optarg; break;
		case 's': svg = optarg; break;
		case 't': title = optarg; break;
		case 'b': form = BOOTS; break;
		case 'C': form = CSV; break;
		case 'J': form = JSON; break;
		case 'h': usage(stdout); return PF_EXIT_OK;
		default: return pf_usage_bad_option(c, argv);
		}
	}
	if (optind != argc)
		return pf_usage_error("unexpected argument '%s'", argv[optind]);

	struct pf_config cfg;
	pf_config_read_or_defaults(&cfg, config);

	char logpath[512];
	if (log)
		snprintf(logpath, sizeof(logpath), "%s", log);
	else
		snprintf(logpath, sizeof(logpath), "%s/boottime.log", cfg.state_dir);

	struct pf_boot_record *recs;
	size_t n, bad;
	int rc = pf_boottime_load(logpath, &recs, &n, &bad);
	if (rc == -ENOENT) {
		pf_err("%s does not exist: no traced boot has finished yet", logpath);
		return PF_EXIT_FAILURE;
	}
	if (rc == -EPROTO) {
		pf_err("%s: written in an unknown format version", logpath);
		return PF_EXIT_FAILURE;
	}
	if (rc) {
		pf_err("cannot read %s: %s", logpath, pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	if (bad)
		pf_warn("%s: %zu unreadable line%s skipped", logpath, bad, bad == 1 ? "" : "s");

	struct pf_report_row rows[PF_SETUP_COUNT];
	rc = pf_report_rows(recs, n, rows);
	if (rc) {
		free(recs);
		pf_err("%s", pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	/* The replay boots against the control boots, as the self-check compares them (selfcheck.h). */
	struct pf_selfcheck sc = { .policy = PF_POLICY_REPLAY };
	pf_selfcheck_decide(recs, n, &sc);
	struct pf_control_change cc = { .n_control = sc.n_control, .n_replay = sc.n_replay, .control_s = sc.control_s,
					.replay_s = sc.replay_s, .change = sc.change, .allowance_s = sc.allowance_s };
	if (form == CSV) {
		pf_report_boots_csv(stdout, recs, n);
	} else if (form == JSON) {
		pf_report_json(stdout, logpath, recs, n, rows, &cc);
	} else {
		int systemd_end = 0, other_end = 0;
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(recs[i].end_source, "systemd"))
				systemd_end++;
			else
				other_end++;
		}
		printf("%zu boot%s recorded in %s\n\n", n, n == 1 ? "" : "s", logpath);
		pf_report_table(stdout, rows);
		printf("\nboot time: uptime when the boot finished (%d from systemd's FinishTimestamp, %d from the stop\n"
		       "script or trace stop); disk busy time: /proc/diskstats I/O ticks of the traced disk at trace stop.\n",
		       systemd_end, other_end);
		if (cc.n_control && cc.n_replay)
			printf("against control boots: replay median %.2f s of %zu, control median %.2f s of %zu: %+.1f %%%s\n",
			       cc.replay_s, cc.n_replay, cc.control_s, cc.n_control, 100 * cc.change,
			       cc.allowance_s > 0 ? "" : " (fewer than 3 of either: no verdict yet)");
		else
			printf("against control boots: no %s yet (the self-check's control boots, SELF_CHECK_INTERVAL; or\n"
			       "ENABLE_REPLAY=0 for a few boots, or prefetch=noreplay on the kernel command line)\n",
			       cc.n_control ? "replay boots" : "control boots");
		if (cc.allowance_s > 0)
			printf("  a difference within %.2f s (3 %% of the boot time or twice the spread) is no clear difference\n",
			       cc.allowance_s);
		if (form == BOOTS) {
			putchar('\n');
			pf_report_boots_table(stdout, recs, n);
		}
	}

	if (svg) {
		char *doc = pf_report_svg(rows, recs, n, title);
		if (!doc) {
			free(recs);
			pf_err("out of memory");
			return PF_EXIT_FAILURE;
		}
		rc = pf_write_atomic(svg, doc, strlen(doc), 0644);
		free(doc);
		if (rc) {
			free(recs);
			pf_err("cannot write %s: %s", svg, pf_strerror(rc));
			return PF_EXIT_FAILURE;
		}
		if (form != CSV && form != JSON)
			printf("chart: %s\n", svg);
	}
	free(recs);
	return PF_EXIT_OK;
}
