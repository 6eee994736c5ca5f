/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetch-reorder: command line.
 *
 *   prefetch-reorder [--layout FILE]... [--chunk-blocks N] [--time-budget SEC] [--write-budget MB] [--dry-run]
 *                    [--config FILE] [--final-shutdown [--outcome FILE]] [--force-flash] [--no-discard] [-v|-q]
 *                    DEVICE|IMAGE
 *   prefetch-reorder --check [--layout FILE]... DEVICE|IMAGE
 *   prefetch-reorder --locate [--partition N] IMAGE
 *   prefetch-reorder --help | --version
 * IMAGE: a bare filesystem image, or a disk image whose root partition is found in its partition table
 * (image_root.h); an image file has no time budget unless --time-budget gives one (no shutdown to delay).
 *
 * Exit: 0 done (or nothing to do: fast flash, no gain), 1 error or refusal, 2 usage, 3 stopped by the time or
 * write budget (the next run continues). */
#include "config.h"
#include "disk_model.h"
#include "error.h"
#include "log.h"
#include "medium.h"
#include "note.h"
#include "format.h"
#include "number.h"
#include "progress.h"
#include "gain_report.h"
#include "image_root.h"
#include "outcome_note.h"
#include "reorder.h"
#include "usage_error.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE PF_USAGE_EXIT
#define EXIT_BUDGET 3
#define MAX_LAYOUTS 16

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: prefetch-reorder [OPTIONS] DEVICE|IMAGE\n"
		"       prefetch-reorder --check [--layout FILE]... DEVICE|IMAGE\n"
		"       prefetch-reorder --locate [--partition N] IMAGE\n"
		"Move the blocks a boot reads (the prefetch layout) so that they lie contiguous, in boot order, on an\n"
		"unmounted ext2/3/4 filesystem or image.  Interrupting it is safe: the filesystem is then checked by\n"
		"the next fsck; run again to continue.  IMAGE is a filesystem image or a disk image (GPT or MBR): its\n"
		"root partition is the one typed as root, else its only (else largest) ext2/3/4 partition.\n\n"
		"  -l, --layout FILE       layout to follow (repeatable, first has priority; default\n"
		"                          $PREFETCH_DIR/layout)\n"
		"  -c, --chunk-blocks N    blocks per chunk (CHUNK_SIZE_BLOCKS, 2000)\n"
		"  -t, --time-budget SEC   stop between chunks after SEC seconds (REORDER_TIME_BUDGET, 20; 0 = none;\n"
		"                          decimals allowed; at least one chunk is moved per run; on an image file\n"
		"                          none unless given here)\n"
		"  -p, --partition N       in a disk image, partition N (default: the root partition, found)\n"
		"      --locate            print where the root filesystem lies in IMAGE (partition, byte offset,\n"
		"                          size, type) and exit\n"
		"  -w, --write-budget MB   copy at most MB megabytes this run, stopping cleanly before the unit that\n"
		"                          would pass it (REORDER_WRITE_BUDGET_MB, 0 = none)\n"
		"  -n, --dry-run           plan and report, write nothing\n"
		"      --check             report how the layout lies now and after a reorder (read-only)\n"
		"      --config FILE       settings (default " PF_DEFAULT_CONFIG ")\n"
		"      --final-shutdown    allow a filesystem mounted read-only (only at the very end of shutdown)\n"
		"      --outcome FILE      write the outcome over the first block of FILE, a file prepared for it on\n"
		"                          the same filesystem (path from its root): the shutdown hook's record\n"
		"      --force-flash       reorder on fast flash (an SSD) too, where it saves no seeks and only wears\n"
		"                          the device\n"
		"      --no-discard        on flash, do not discard the blocks the run freed\n"
		"      --make-room, --no-make-room\n"
		"                          on a spinning disk whose free space is too scattered, move other files out\n"
		"                          of one stretch first when that pays (REORDER_MAKE_ROOM, 1)\n"
		"      --min-gain PERCENT  move only when the next replay is predicted faster by more than this\n"
		"                          (default 10; negative: even a slower one; off: no prediction decides)\n"
		"  -v, --verbose           name every skipped file\n"
		"  -q, --quiet             errors only\n"
		"  -h, --help              this help\n"
		"  -V, --version           print the version\n"
		"On slow flash (SD/eMMC/USB: PREFETCH_MEDIUM or sysfs) the replay is predicted on the SD card model and\n"
		"the copies are written as whole erase blocks (REORDER_ERASE_BLOCK_KB, 0 = found from sysfs or the\n"
		"filesystem's RAID stride).\n"
		"Exit status: 0 done, 1 error or refusal, 2 usage, 3 stopped by the time or write budget (continue next\n"
		"run).\n");
}

static void print_figures(const struct pf_reorder_result *r, int planned_label)
{
	const struct pf_layout_figures *a = &r->before, *b = &r->after;
	printf("%-26s %14s %14s\n", "", "now", planned_label ? "after reorder" : "planned");
	printf("%-26s %14llu %14llu\n", "files", (unsigned long long)a->files, (unsigned long long)b->files);
	printf("%-26s %14llu %14llu\n", "blocks", (unsigned long long)a->blocks, (unsigned long long)b->blocks);
	printf("%-26s %14llu %14llu\n", "extents", (unsigned long long)a->extents, (unsigned long long)b->extents);
	printf("%-26s %14llu %14llu\n", "discontinuities", (unsigned long long)a->discontinuities,
	       (unsigned long long)b->discontinuities);
	printf("%-26s %14llu %14llu\n", "seeks (layout order)", (unsigned long long)a->seeks,
	       (unsigned long long)b->seeks);
	printf("%-26s %13.3fs %13.3fs\n", "read time (layout order)", a->read_s, b->read_s);
	printf("%-26s %14llu %14llu\n", "seeks (sorted sweep)", (unsigned long long)a->sweep_seeks,
	       (unsigned long long)b->sweep_seeks);
	printf("%-26s %13.3fs %13.3fs\n", "read time (sorted sweep)", a->sweep_s, b->sweep_s);
	printf("model: rotational disk, %g ms + %g ms*sqrt(distance/span) + %g ms per seek, %g MB/s\n",
	       PF_DISK_SETTLE_S * 1e3, PF_DISK_FULL_STROKE_S * 1e3, PF_DISK_HALF_TURN_S * 1e3, PF_DISK_RATE_BPS / 1e6);
	if (r->model[0])
		printf("replay model (the gain's): %s\n", r->model);
	if (r->erase_block_bytes)
		printf("erase block: %llu KiB (%s): destinations in whole erase blocks\n",
		       (unsigned long long)(r->erase_block_bytes >> 10), r->erase_block_why);
	printf("a reorder would write %.1f MB in %llu %s", r->plan_bytes / 1e6, (unsigned long long)r->plan_erase_blocks,
	       r->erase_block_bytes ? "erase blocks" : "blocks");
	if (r->run_units < r->units)
		printf("; this run's write budget: %llu of %llu units, %.1f MB in %llu %s", (unsigned long long)r->run_units,
		       (unsigned long long)r->units, r->run_bytes / 1e6, (unsigned long long)r->run_erase_blocks,
		       r->erase_block_bytes ? "erase blocks" : "blocks");
	printf("\n");
	printf("a reorder would move %llu of %llu blocks in %llu chunks (%llu split, %llu do not fit), "
	       "%llu blocks already in place (%llu of them near enough)\n",
	       (unsigned long long)r->planned_blocks, (unsigned long long)r->layout_blocks,
	       (unsigned long long)r->chunks, (unsigned long long)r->chunks_split,
	       (unsigned long long)r->chunks_failed, (unsigned long long)r->already_in_place_blocks,
	       (unsigned long long)r->near_blocks);
	if (r->compacted)
		printf("compacted: the set had spread, all of it goes into one run\n");
	if (r->not_fit[0])
		printf("not moved: %s\n", r->not_fit);
}

/* The medium a reorder of target would write to: a block device's own (PREFETCH_MEDIUM overriding sysfs); an
 * image's, or a loop device's (an image too), only when PREFETCH_MEDIUM says: the disk under the file is not
 * where the filesystem will end up. */
#define LOOP_MAJOR 7
static int target_medium(const char *target, int override, struct pf_note *why)
{
	struct stat st;
	if (stat(target, &st) == 0 && S_ISBLK(st.st_mode) && major(st.st_rdev) != LOOP_MAJOR)
		return pf_medium_explain(st.st_rdev, override, why);
	return override == PF_MEDIUM_AUTO ? PF_MEDIUM_UNKNOWN : pf_medium_explain(0, override, why);
}

/* --outcome: the run's one line, "EPOCH WHAT: DETAILS", where the next boot finds it (outcome_note.h). */
struct outcome_record {
	const char *device, *path;
	int final;
};

/* Returns exit, after writing the outcome if one was asked for (a failure to write it is logged, not fatal). */
__attribute__((format(printf, 3, 4))) static int record(const struct outcome_record *o, int exit, const char *fmt,
							 ...)
{
	if (!o->path)
		return exit;
	char line[PF_OUTCOME_MAX + 1], err[512];
	int n = snprintf(line, sizeof(line), "%lld ", (long long)time(NULL));
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (pf_outcome_note(o->device, o->path, line, o->final, err, sizeof(err)))
		pf_warn("outcome not recorded in %s: %s", o->path, err);
	return exit;
}

/* The command line. */
struct args {
	const char *layouts[MAX_LAYOUTS];
	int nlayouts, check, dry, final, level, gate, gain_given, force_flash, discard, make_room, locate;
	double min_gain;
	long chunk, budget, wbudget; /* budget in ms, wbudget in MB; -1: not given */
	long partition;              /* --partition N; 0: the root partition, found */
	const char *config, *outcome, *device;
	int image_file;              /* device is a regular file (an image): no time budget unless given */
	struct pf_image_root root;   /* where the filesystem lies in device */
};

#define GO_ON (-1) /* not an exit status: the program goes on */

/* The root filesystem in the target (image_root.h), said in a line when it is a partition; with --locate,
 * printed.  Returns GO_ON, or the exit status (0 after --locate, 1 with the reason logged). */
static int find_root(struct args *a)
{
	char err[400];
	struct stat st;
	a->image_file = stat(a->device, &st) == 0 && S_ISREG(st.st_mode);
	if (pf_image_root_find(a->device, (int)a->partition, &a->root, err, sizeof(err))) {
		pf_err("%s", err);
		return 1;
	}
	const struct pf_image_root *r = &a->root;
	if (a->locate) {
		printf("partition=%d\noffset=%llu\nsize=%llu\ntable=%s\ntype=%s\nwhy=%s\n", r->partno,
		       (unsigned long long)r->offset, (unsigned long long)r->size, r->table, r->type, r->why);
		return 0;
	}
	if (r->partno)
		pf_notice("%s: %s filesystem at byte %llu (%s)", a->device, r->type, (unsigned long long)r->offset, r->why);
	return GO_ON;
}

/* One option (getopt_long's c, optarg).  Returns 1 with *status when the program ends here (help, version,
 * usage error), else 0. */
static int one_option(int c, char **argv, struct args *a, int *status)
{
	*status = 0;
	switch (c) {
	case 'l':
		if (a->nlayouts == MAX_LAYOUTS)
			return *status = pf_usage_error("at most %d --layout options", MAX_LAYOUTS), 1;
		a->layouts[a->nlayouts++] = optarg;
		return 0;
	case 'c':
		if (pf_parse_long(optarg, 1, 1L << 30, &a->chunk))
			return *status = pf_usage_error("--chunk-blocks: '%s' is not a number of blocks (1..%ld)", optarg,
						      1L << 30), 1;
		return 0;
	case 't': {
		char *end;
		double v = strtod(optarg, &end);
		if (end == optarg || *end || !(v >= 0) || v > 86400)
			return *status = pf_usage_error("--time-budget: '%s' is not a number of seconds (0..86400)", optarg), 1;
		a->budget = (long)(v * 1000 + 0.5);
		if (v > 0 && a->budget == 0)
			a->budget = 1;
		return 0;
	}
	case 'w':
		if (pf_parse_long(optarg, 0, 1L << 20, &a->wbudget))
			return *status = pf_usage_error("--write-budget: '%s' is not a number of megabytes (0..%ld)", optarg,
						      1L << 20), 1;
		return 0;
	case 'D': a->discard = 0; return 0;
	case 'p':
		if (pf_parse_long(optarg, 1, 4096, &a->partition))
			return *status = pf_usage_error("--partition: '%s' is not a partition number (1..4096)", optarg), 1;
		return 0;
	case 'L': a->locate = 1; return 0;
	case 'R': a->make_room = 1; return 0;
	case 'N': a->make_room = 0; return 0;
	case 'n': a->dry = 1; return 0;
	case 'C': a->check = 1; return 0;
	case 'F': a->config = optarg; return 0;
	case 'S': a->final = 1; return 0;
	case 'f': a->force_flash = 1; return 0;
	case 'O': a->outcome = optarg; return 0;
	case 'G':
		if ((a->gate = pf_parse_min_gain(optarg, &a->min_gain)) < 0)
			return *status = pf_usage_error("--min-gain: '%s' is not a percentage (-1000..100) or off", optarg), 1;
		a->gain_given = 1;
		return 0;
	case 'v': a->level = PF_LOG_INFO; return 0;
	case 'q': a->level = PF_LOG_ERR; return 0;
	case 'h': usage(stdout); return 1;
	case 'V': printf("prefetch-reorder %s\n", PREFETCH_VERSION); return 1;
	default: return *status = pf_usage_bad_option(c, argv), 1;
	}
}

/* The command line into *a.  Returns 1 with *status when the program ends here, else 0. */
static int parse_args(int argc, char **argv, struct args *a, int *status)
{
	static const struct option longopts[] = {
		{ "layout", required_argument, NULL, 'l' },     { "chunk-blocks", required_argument, NULL, 'c' },
		{ "time-budget", required_argument, NULL, 't' }, { "dry-run", no_argument, NULL, 'n' },
		{ "check", no_argument, NULL, 'C' },             { "config", required_argument, NULL, 'F' },
		{ "final-shutdown", no_argument, NULL, 'S' },    { "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },             { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },           { "min-gain", required_argument, NULL, 'G' },
		{ "force-flash", no_argument, NULL, 'f' },       { "outcome", required_argument, NULL, 'O' },
		{ "write-budget", required_argument, NULL, 'w' }, { "no-discard", no_argument, NULL, 'D' },
		{ "make-room", no_argument, NULL, 'R' },        { "no-make-room", no_argument, NULL, 'N' },
		{ "partition", required_argument, NULL, 'p' },  { "locate", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	*a = (struct args){ .level = PF_LOG_NOTICE, .gate = 1, .min_gain = PF_REORDER_MIN_GAIN_PERCENT, .chunk = -1,
			    .budget = -1, .wbudget = -1, .discard = 1, .make_room = -1 };
	int c;
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":l:c:t:w:p:nvqhV", longopts, NULL)) != -1)
		if (one_option(c, argv, a, status))
			return 1;
	if (optind != argc - 1)
		return *status = pf_usage_error(optind == argc ? "no DEVICE or IMAGE given" : "want exactly one DEVICE or IMAGE"), 1;
	a->device = argv[optind];
	if (a->outcome && (a->check || a->dry))
		return *status = pf_usage_error("--outcome records a run: not with --check or --dry-run"), 1;
	return 0;
}

/* The reorder's options from the command line and the configuration (deflayout: room for the default
 * layout's path). */
static struct pf_reorder_opts reorder_opts(struct args *a, const struct pf_config *cfg, int medium, char *deflayout,
					   size_t deflen)
{
	int state_layout = a->nlayouts == 0;
	if (a->nlayouts == 0) {
		snprintf(deflayout, deflen, "%s/layout", cfg->state_dir);
		a->layouts[a->nlayouts++] = deflayout;
	}
	if (!a->gain_given) /* REORDER_MIN_GAIN_PERCENT; --min-gain overrides it */
		a->min_gain = cfg->reorder_min_gain_percent;
	return (struct pf_reorder_opts){
		.layouts = a->layouts,
		.nlayouts = a->nlayouts,
		.chunk_blocks = a->chunk > 0 ? a->chunk : cfg->chunk_size_blocks,
		.time_budget_s = a->budget == 0 || (a->budget < 0 && a->image_file) ? 0 : cfg->reorder_time_budget,
		.time_budget_ms = a->budget > 0 ? (int)a->budget : 0,
		.reserve_percent = cfg->reorder_reserve_percent,
		.dry_run = a->dry,
		.check_only = a->check,
		.progress = !a->check && !a->dry && isatty(STDERR_FILENO) && a->level >= PF_LOG_NOTICE,
		.allow_any_owner = 0, /* never from the command line: a layout anyone could write decides what moves */
		.layouts_are_state = state_layout,
		.allow_ro_mount = a->final,
		.progress_cb = pf_progress_show,
		.gain_gate = a->gate,
		.min_gain_percent = a->min_gain,
		.chunk_sweep = a->check,
		.medium = medium,
		.erase_block_bytes = (uint64_t)cfg->reorder_erase_block_kb << 10,
		.write_budget_bytes = (uint64_t)(a->wbudget >= 0 ? a->wbudget : cfg->reorder_write_budget_mb) * 1000000,
		.discard = a->discard,
		.make_room = a->make_room >= 0 ? a->make_room : cfg->reorder_make_room,
		.offset = a->root.offset,
		.size = a->root.size,
	};
}

/* --check and --dry-run: the figures, the room, the prediction; --check's chunk trials, --dry-run's plan. */
static int print_report(const struct args *a, const struct pf_config *cfg, const struct pf_reorder_result *r,
			const char *skipped)
{
	printf("%s: %llu blocks of the layout in %u files%s\n", a->device, (unsigned long long)r->layout_blocks,
	       r->files, skipped);
	print_figures(r, a->check);
	pf_print_room(stdout, r);
	pf_print_replay_prediction(stdout, r);
	if (a->check)
		pf_print_chunk_trials(stdout, r, a->chunk > 0 ? a->chunk : cfg->chunk_size_blocks);
	if (a->dry) {
		printf("dry run: nothing written\n");
		pf_print_plan_line(stdout, r);
	}
	return 0;
}

/* What the run wrote and discarded, and where it stopped, for its one line. */
static void run_words(const struct pf_reorder_result *r, const struct pf_reorder_opts *o, char *wrote, size_t wlen,
		      char *stopped, size_t slen)
{
	stopped[0] = 0;
	if (!r->complete && r->stopped_by_write_budget && !r->units_done)
		snprintf(stopped, slen, "; the write budget (%.1f MB) holds not even the first unit: nothing "
			 "moved (raise REORDER_WRITE_BUDGET_MB)", o->write_budget_bytes / 1e6);
	else if (!r->complete)
		snprintf(stopped, slen, "; stopped by the %s budget after %llu of %llu blocks: the next run "
			 "continues", r->stopped_by_write_budget ? "write" : "time", (unsigned long long)r->moved_blocks,
			 (unsigned long long)r->planned_blocks);
	snprintf(wrote, wlen, "; wrote %.1f MB in %llu %s", r->written_bytes / 1e6,
		 (unsigned long long)r->written_erase_blocks, r->erase_block_bytes ? "erase blocks" : "blocks");
	if (r->erase_block_bytes)
		snprintf(wrote + strlen(wrote), wlen - strlen(wrote), " of %llu KiB (%llu whole)",
			 (unsigned long long)(r->erase_block_bytes >> 10), (unsigned long long)r->written_whole_erase_blocks);
	if (r->discard_state > 0)
		snprintf(wrote + strlen(wrote), wlen - strlen(wrote), "; discarded %llu freed blocks",
			 (unsigned long long)r->discarded_blocks);
	else if (r->discard_state == -1)
		snprintf(wrote + strlen(wrote), wlen - strlen(wrote), "; no discard (not supported)");
	else if (r->discard_state == -2)
		snprintf(wrote + strlen(wrote), wlen - strlen(wrote), "; no discard (mounted)");
}

/* A run: the gate's decision, and what it did in one line (what a boot log or the hook's output file keeps). */
static int report_run(const struct args *a, const struct pf_reorder_opts *o, const struct pf_reorder_result *r,
		      const char *skipped, const struct outcome_record *rec)
{
	char decision[256], room[320];
	pf_notice("%s", pf_gain_decision(r, a->gate, a->min_gain, decision, sizeof(decision)));
	if (pf_room_line(r, room, sizeof(room))) { /* why not: only with -v (a refusal stays one line) */
		if (r->room == 2)
			pf_notice("%s", room);
		else
			pf_info("%s", room);
	}
	if (r->not_worth)
		return record(rec, 0, "not moved: %s", decision); /* a decision, not an error */
	char stopped[200], wrote[160];
	run_words(r, o, wrote, sizeof(wrote), stopped, sizeof(stopped));
	char why[sizeof(r->not_fit) + 4] = "";
	if (r->not_fit[0])
		snprintf(why, sizeof(why), " (%s)", r->not_fit);
	char summary[PF_OUTCOME_MAX];
	snprintf(summary, sizeof(summary), "moved %llu blocks (%.1f MB) in %llu units%s; %llu chunks: %llu already in "
		 "place (%llu blocks, %llu near enough), %llu split, %llu did not fit%s%s%s%s; %.2f s",
		 (unsigned long long)r->moved_blocks, r->moved_blocks * (double)r->block_size / 1e6,
		 (unsigned long long)r->units_done, r->compacted ? " (compacted: the set had spread)" : "",
		 (unsigned long long)r->chunks, (unsigned long long)r->chunks_in_place,
		 (unsigned long long)r->already_in_place_blocks, (unsigned long long)r->near_blocks,
		 (unsigned long long)r->chunks_split, (unsigned long long)r->chunks_failed, why, skipped, wrote, stopped,
		 r->seconds);
	pf_notice("%s", summary);
	return record(rec, r->complete ? 0 : EXIT_BUDGET, "%s: %s",
		      r->complete ? "done" : r->stopped_by_write_budget ? "write budget spent" : "time budget spent", summary);
}

int main(int argc, char **argv)
{
	struct args a;
	int status;
	pf_log_init("prefetch-reorder", PF_LOG_NOTICE); /* -v/-q set the level below */
	if (parse_args(argc, argv, &a, &status))
		return status;
	pf_log_init("prefetch-reorder", a.level);
	struct outcome_record rec = { .device = a.device, .path = a.outcome, .final = a.final };
	int rc = find_root(&a);
	if (rc != GO_ON)
		return record(&rec, rc, "failed: no root filesystem found in %s", a.device);
	if (a.outcome && a.root.offset)
		return pf_usage_error("--outcome is for a filesystem of its own, not a partition in an image");

	struct pf_config cfg;
	rc = pf_config_read(&cfg, a.config);
	if (rc) {
		pf_err("cannot read %s: %s", a.config ? a.config : pf_config_default_path(), pf_strerror(rc));
		return record(&rec, 1, "failed: cannot read %s: %s", a.config ? a.config : pf_config_default_path(),
			      pf_strerror(rc));
	}
	char medium_why[160];
	struct pf_note why = pf_note_into(medium_why, sizeof(medium_why));
	int medium = target_medium(a.device, cfg.medium, &why);
	if (!a.check && !a.dry && !a.force_flash && medium == PF_MEDIUM_FAST_FLASH) {
		/* a decision, not an error: what a boot log keeps, in one line */
		pf_notice("%s: fast flash (%s): no seeks to save, a reorder would only wear it; not reordering "
			  "(--force-flash to do it anyway)", a.device, medium_why);
		return record(&rec, 0, "not moved: fast flash (%s)", medium_why);
	}
	char deflayout[300];
	struct pf_reorder_opts o = reorder_opts(&a, &cfg, medium, deflayout, sizeof(deflayout));
	struct pf_note notes = pf_note_to_log(PF_LOG_INFO); /* what was skipped or left in place: with -v */
	o.notes = &notes;
	if (medium != PF_MEDIUM_UNKNOWN)
		pf_info("%s: %s (%s)", a.device, pf_medium_name(medium), medium_why);
	struct pf_reorder_result r;
	char err[512];
	rc = pf_reorder(a.device, &o, &r, err, sizeof(err));
	pf_progress_done();
	if (rc) {
		pf_err("%s", err[0] ? err : pf_strerror(rc));
		if (r.fsck_needed)
			pf_err("%s is left marked for checking: run e2fsck -p on it", a.device);
		return record(&rec, 1, "failed: %s%s", err[0] ? err : pf_strerror(rc),
			      r.fsck_needed ? " (left marked for checking)" : "");
	}
	char skipped[320] = "";
	if (r.files_skipped)
		snprintf(skipped, sizeof(skipped), "; skipped %u file%s: %s", r.files_skipped,
			 r.files_skipped == 1 ? "" : "s", r.skipped);
	return a.check || a.dry ? print_report(&a, &cfg, &r, skipped) : report_run(&a, &o, &r, skipped, &rec);
}
