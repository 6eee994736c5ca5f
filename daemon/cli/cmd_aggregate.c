/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd aggregate: merge traces (oldest first) into a layout.
 *
 * A trace that cannot be read is skipped with a warning naming it and the reason: the other traces still make a
 * layout, and boot must go on.  Only when no usable trace is left does the command fail (exit 1). */
#include "aggregate.h"
#include "commands.h"
#include "config.h"
#include "format.h"
#include "log.h"
#include "number.h"
#include "usage_error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd aggregate --output LAYOUT [OPTIONS] TRACE...\n"
		"\n"
		"Merge traces, given oldest first, into a layout: files and pages seen in a majority of the traces,\n"
		"ordered by first touch across boots, without files that vanished or changed since, within the bounds.\n"
		"A trace that cannot be read is skipped with a warning.\n"
		"\n"
		"Options:\n"
		"  -o, --output LAYOUT  layout to write (replaced atomically)\n"
		"      --max-mb N       size bound in MiB (default MAX_PREFETCH_MB; 0 = none)\n"
		"      --max-files N    file count bound (default MAX_PREFETCH_FILES; 0 = none)\n"
		"      --config FILE    configuration (default " PF_DEFAULT_CONFIG "; missing = defaults)\n"
		"      --no-check       do not stat the files (for an image that is not mounted here)\n"
		"  -h, --help           this text\n"
		"\n"
		"Prints one summary line: files kept, unstable (not in enough traces), vanished, changed, cut by\n"
		"the bounds, and bytes kept and cut.  Exit: 0 written, 1 failure, 2 usage.\n");
}

static int parse_count(const char *s, unsigned long max, unsigned long *out)
{
	long v;
	int rc = pf_parse_long(s, 0, (long)max, &v);
	if (rc)
		return rc;
	*out = (unsigned long)v;
	return 0;
}

static double mib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

int cmd_aggregate(int argc, char **argv)
{
	enum { OPT_MAX_MB = 256, OPT_MAX_FILES, OPT_CONFIG, OPT_NO_CHECK };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "max-mb", required_argument, NULL, OPT_MAX_MB },
		{ "max-files", required_argument, NULL, OPT_MAX_FILES },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "no-check", no_argument, NULL, OPT_NO_CHECK },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *output = NULL, *config = NULL;
	unsigned long max_mb = 0, max_files = 0;
	int have_mb = 0, have_files = 0, check = 1, c;
	optind = 0; /* callable more than once (tests) */
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case OPT_MAX_MB:
			if (parse_count(optarg, 1ul << 30, &max_mb))
				return pf_usage_error("--max-mb: '%s' is not a number of MiB (0..%lu)", optarg, 1ul << 30);
			have_mb = 1;
			break;
		case OPT_MAX_FILES:
			if (parse_count(optarg, PF_MAX_FILES, &max_files))
				return pf_usage_error("--max-files: '%s' is not a number (0..%u)", optarg, PF_MAX_FILES);
			have_files = 1;
			break;
		case OPT_CONFIG: config = optarg; break;
		case OPT_NO_CHECK: check = 0; break;
		case 'h': usage(stdout); return PF_EXIT_OK;
		default: return pf_usage_bad_option(c, argv);
		}
	}
	if (!output || optind >= argc)
		return pf_usage_error("%s", !output ? "--output LAYOUT is required" : "no TRACE given");
	struct pf_config cfg;
	pf_config_read_or_defaults(&cfg, config);
	struct pf_aggregate_opts o = {
		.max_bytes = (uint64_t)(have_mb ? max_mb : (unsigned long)cfg.max_prefetch_mb) << 20,
		.max_files = (uint32_t)(have_files ? max_files : (unsigned long)cfg.max_prefetch_files),
		.check_files = check,
	};

	size_t given = (size_t)(argc - optind), first = optind;
	if (given > PF_AGGREGATE_MAX_TRACES) {
		pf_warn("%zu traces given, using the newest %u", given, PF_AGGREGATE_MAX_TRACES);
		first += given - PF_AGGREGATE_MAX_TRACES;
	}
	struct pf_image *traces[PF_AGGREGATE_MAX_TRACES];
	size_t n = 0;
	for (size_t i = first; i < (size_t)argc; i++) {
		int rc = pf_image_load(argv[i], 0, PF_KIND_TRACE, &traces[n]);
		if (rc) {
			pf_warn("skipping trace %s: %s", argv[i], pf_strerror(rc));
			continue;
		}
		n++;
	}
	size_t skipped = (size_t)argc - first - n;
	if (!n) {
		pf_err("no usable trace among the %zu given; %s not written", (size_t)argc - first, output);
		return PF_EXIT_FAILURE;
	}

	struct pf_image *layout = NULL;
	struct pf_aggregate_report rep;
	int rc = pf_aggregate(traces, n, &o, &layout, &rep);
	for (size_t i = 0; i < n; i++)
		pf_image_free(traces[i]);
	if (rc) {
		pf_err("%s", pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	rc = pf_image_save(output, layout);
	int incomplete = !!(layout->flags & PF_IMG_INCOMPLETE);
	pf_image_free(layout);
	if (rc) {
		pf_err("cannot write %s: %s", output, pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	char notes[64] = "";
	if (skipped)
		snprintf(notes, sizeof(notes), " (%zu unreadable skipped)", skipped);
	if (incomplete)
		snprintf(notes + strlen(notes), sizeof(notes) - strlen(notes), " (incomplete)");
	printf("%s: %u traces%s; files: %u kept, %u unstable, %u vanished, %u changed, %u cut; "
	       "bytes: %llu kept (%.1f MiB), %llu cut (%.1f MiB)\n",
	       output, rep.traces, notes, rep.files_kept, rep.files_unstable, rep.files_vanished, rep.files_changed,
	       rep.files_cut, (unsigned long long)rep.bytes_kept, mib(rep.bytes_kept), (unsigned long long)rep.bytes_cut,
	       mib(rep.bytes_cut));
	return PF_EXIT_OK;
}
