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

static void note_cb(void *ctx, const char *msg)
{
	(void)ctx;
	pf_info("%s", msg);
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
static int target_medium(const char *target, int override, char *why, size_t len)
{
	struct stat st;
	if (stat(target, &st) == 0 && S_ISBLK(st.st_mode) && major(st.st_rdev) != LOOP_MAJOR)
		return pf_medium_explain(st.st_rdev, override, why, len);
	return override == PF_MEDIUM_AUTO ? PF_MEDIUM_UNKNOWN : pf_medium_explain(0, override, why, len);
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

/* The root filesystem in target (image_root.h), said in a line when it is a partition; with locate, printed.
 * Returns -1 to go on, or the exit status (0 after --locate, 1 with the reason logged). */
static int find_root(const char *target, int partition, int locate, struct pf_image_root *root, int *image_file)
{
	char err[400];
	struct stat st;
	*image_file = stat(target, &st) == 0 && S_ISREG(st.st_mode);
	if (pf_image_root_find(target, partition, root, err, sizeof(err))) {
		pf_err("%s", err);
		return 1;
	}
	if (locate) {
		printf("partition=%d\noffset=%llu\nsize=%llu\ntable=%s\ntype=%s\nwhy=%s\n", root->partno,
		       (unsigned long long)root->offset, (unsigned long long)root->size, root->table, root->type, root->why);
		return 0;
	}
	if (root->partno)
		pf_notice("%s: %s filesystem at byte %llu (%s)", target, root->type, (unsigned long long)root->offset,
			  root->why);
	return -1;
}

int main(int argc, char **argv)
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
	const char *layouts[MAX_LAYOUTS];
	int nlayouts = 0, check = 0, dry = 0, final = 0, level = PF_LOG_NOTICE, gate = 1, gain_given = 0, force_flash = 0;
	double min_gain = PF_REORDER_MIN_GAIN_PERCENT;
	long chunk = -1, budget = -1; /* budget in ms */
	long wbudget = -1;            /* MB */
	int discard = 1, make_room = -1, locate = 0;
	long partition = 0;
	const char *config = NULL, *outcome = NULL;
	int c, rc;
	pf_log_init("prefetch-reorder", PF_LOG_NOTICE); /* -v/-q set the level below */
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":l:c:t:w:p:nvqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (nlayouts == MAX_LAYOUTS)
				return pf_usage_error("at most %d --layout options", MAX_LAYOUTS);
			layouts[nlayouts++] = optarg;
			break;
		case 'c':
			if (pf_parse_long(optarg, 1, 1L << 30, &chunk))
				return pf_usage_error("--chunk-blocks: '%s' is not a number of blocks (1..%ld)", optarg,
						      1L << 30);
			break;
		case 't': {
			char *end;
			double v = strtod(optarg, &end);
			if (end == optarg || *end || !(v >= 0) || v > 86400)
				return pf_usage_error("--time-budget: '%s' is not a number of seconds (0..86400)", optarg);
			budget = (long)(v * 1000 + 0.5);
			if (v > 0 && budget == 0)
				budget = 1;
			break;
		}
		case 'w':
			if (pf_parse_long(optarg, 0, 1L << 20, &wbudget))
				return pf_usage_error("--write-budget: '%s' is not a number of megabytes (0..%ld)", optarg,
						      1L << 20);
			break;
		case 'D': discard = 0; break;
		case 'p':
			if (pf_parse_long(optarg, 1, 4096, &partition))
				return pf_usage_error("--partition: '%s' is not a partition number (1..4096)", optarg);
			break;
		case 'L': locate = 1; break;
		case 'R': make_room = 1; break;
		case 'N': make_room = 0; break;
		case 'n': dry = 1; break;
		case 'C': check = 1; break;
		case 'F': config = optarg; break;
		case 'S': final = 1; break;
		case 'f': force_flash = 1; break;
		case 'O': outcome = optarg; break;
		case 'G':
			if ((gate = pf_parse_min_gain(optarg, &min_gain)) < 0)
				return pf_usage_error("--min-gain: '%s' is not a percentage (-1000..100) or off", optarg);
			gain_given = 1;
			break;
		case 'v': level = PF_LOG_INFO; break;
		case 'q': level = PF_LOG_ERR; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("prefetch-reorder %s\n", PREFETCH_VERSION); return 0;
		default: return pf_usage_bad_option(c, argv);
		}
	}
	if (optind != argc - 1)
		return pf_usage_error(optind == argc ? "no DEVICE or IMAGE given" : "want exactly one DEVICE or IMAGE");
	const char *device = argv[optind];
	if (outcome && (check || dry))
		return pf_usage_error("--outcome records a run: not with --check or --dry-run");
	pf_log_init("prefetch-reorder", level);
	struct outcome_record rec = { .device = device, .path = outcome, .final = final };
	struct pf_image_root root;
	int image_file = 0;
	rc = find_root(device, (int)partition, locate, &root, &image_file);
	if (rc >= 0)
		return record(&rec, rc, "failed: no root filesystem found in %s", device);
	if (outcome && root.offset)
		return pf_usage_error("--outcome is for a filesystem of its own, not a partition in an image");

	struct pf_config cfg;
	rc = pf_config_read(&cfg, config);
	if (rc) {
		pf_err("cannot read %s: %s", config ? config : pf_config_default_path(), pf_strerror(rc));
		return record(&rec, 1, "failed: cannot read %s: %s", config ? config : pf_config_default_path(),
			      pf_strerror(rc));
	}
	char medium_why[160];
	int medium = target_medium(device, cfg.medium, medium_why, sizeof(medium_why));
	if (!check && !dry && !force_flash && medium == PF_MEDIUM_FAST_FLASH) {
		/* a decision, not an error: what a boot log keeps, in one line */
		pf_notice("%s: fast flash (%s): no seeks to save, a reorder would only wear it; not reordering "
			  "(--force-flash to do it anyway)", device, medium_why);
		return record(&rec, 0, "not moved: fast flash (%s)", medium_why);
	}
	if (!gain_given) /* REORDER_MIN_GAIN_PERCENT; --min-gain overrides it */
		min_gain = cfg.reorder_min_gain_percent;
	char deflayout[300];
	int state_layout = nlayouts == 0;
	if (nlayouts == 0) {
		snprintf(deflayout, sizeof(deflayout), "%s/layout", cfg.state_dir);
		layouts[nlayouts++] = deflayout;
	}

	struct pf_reorder_opts o = {
		.layouts = layouts,
		.nlayouts = nlayouts,
		.chunk_blocks = chunk > 0 ? chunk : cfg.chunk_size_blocks,
		.time_budget_s = budget == 0 || (budget < 0 && image_file) ? 0 : cfg.reorder_time_budget,
		.time_budget_ms = budget > 0 ? (int)budget : 0,
		.reserve_percent = cfg.reorder_reserve_percent,
		.dry_run = dry,
		.check_only = check,
		.progress = !check && !dry && isatty(STDERR_FILENO) && level >= PF_LOG_NOTICE,
		.allow_any_owner = 0, /* never from the command line: a layout anyone could write decides what moves */
		.layouts_are_state = state_layout,
		.allow_ro_mount = final,
		.progress_cb = pf_progress_show,
		.note = note_cb,
		.gain_gate = gate,
		.min_gain_percent = min_gain,
		.chunk_sweep = check,
		.medium = medium,
		.erase_block_bytes = (uint64_t)cfg.reorder_erase_block_kb << 10,
		.write_budget_bytes = (uint64_t)(wbudget >= 0 ? wbudget : cfg.reorder_write_budget_mb) * 1000000,
		.discard = discard,
		.make_room = make_room >= 0 ? make_room : cfg.reorder_make_room,
		.offset = root.offset,
		.size = root.size,
	};
	if (medium != PF_MEDIUM_UNKNOWN)
		pf_info("%s: %s (%s)", device, pf_medium_name(medium), medium_why);
	struct pf_reorder_result r;
	char err[512];
	rc = pf_reorder(device, &o, &r, err, sizeof(err));
	pf_progress_done();
	if (rc) {
		pf_err("%s", err[0] ? err : pf_strerror(rc));
		if (r.fsck_needed)
			pf_err("%s is left marked for checking: run e2fsck -p on it", device);
		return record(&rec, 1, "failed: %s%s", err[0] ? err : pf_strerror(rc),
			      r.fsck_needed ? " (left marked for checking)" : "");
	}
	char skipped[320] = "";
	if (r.files_skipped)
		snprintf(skipped, sizeof(skipped), "; skipped %u file%s: %s", r.files_skipped,
			 r.files_skipped == 1 ? "" : "s", r.skipped);
	if (check || dry) {
		printf("%s: %llu blocks of the layout in %u files%s\n", device, (unsigned long long)r.layout_blocks,
		       r.files, skipped);
		print_figures(&r, check);
		pf_print_room(stdout, &r);
		pf_print_replay_prediction(stdout, &r);
		if (check)
			pf_print_chunk_trials(stdout, &r, chunk > 0 ? chunk : cfg.chunk_size_blocks);
		if (dry) {
			printf("dry run: nothing written\n");
			pf_print_plan_line(stdout, &r);
		}
		return 0;
	}
	char decision[256], room[320];
	pf_notice("%s", pf_gain_decision(&r, gate, min_gain, decision, sizeof(decision)));
	if (pf_room_line(&r, room, sizeof(room))) { /* why not: only with -v (a refusal stays one line) */
		if (r.room == 2)
			pf_notice("%s", room);
		else
			pf_info("%s", room);
	}
	if (r.not_worth)
		return record(&rec, 0, "not moved: %s", decision); /* a decision, not an error */
	char stopped[200] = "";
	if (!r.complete && r.stopped_by_write_budget && !r.units_done)
		snprintf(stopped, sizeof(stopped), "; the write budget (%.1f MB) holds not even the first unit: nothing "
			 "moved (raise REORDER_WRITE_BUDGET_MB)", o.write_budget_bytes / 1e6);
	else if (!r.complete)
		snprintf(stopped, sizeof(stopped), "; stopped by the %s budget after %llu of %llu blocks: the next run "
			 "continues", r.stopped_by_write_budget ? "write" : "time", (unsigned long long)r.moved_blocks,
			 (unsigned long long)r.planned_blocks);
	char wrote[160];
	snprintf(wrote, sizeof(wrote), "; wrote %.1f MB in %llu %s", r.written_bytes / 1e6,
		 (unsigned long long)r.written_erase_blocks, r.erase_block_bytes ? "erase blocks" : "blocks");
	if (r.erase_block_bytes)
		snprintf(wrote + strlen(wrote), sizeof(wrote) - strlen(wrote), " of %llu KiB (%llu whole)",
			 (unsigned long long)(r.erase_block_bytes >> 10), (unsigned long long)r.written_whole_erase_blocks);
	if (r.discard_state > 0)
		snprintf(wrote + strlen(wrote), sizeof(wrote) - strlen(wrote), "; discarded %llu freed blocks",
			 (unsigned long long)r.discarded_blocks);
	else if (r.discard_state == -1)
		snprintf(wrote + strlen(wrote), sizeof(wrote) - strlen(wrote), "; no discard (not supported)");
	else if (r.discard_state == -2)
		snprintf(wrote + strlen(wrote), sizeof(wrote) - strlen(wrote), "; no discard (mounted)");
	/* one line: what a boot log or the hook's output file keeps */
	char why[sizeof(r.not_fit) + 4] = "";
	if (r.not_fit[0])
		snprintf(why, sizeof(why), " (%s)", r.not_fit);
	char summary[PF_OUTCOME_MAX];
	snprintf(summary, sizeof(summary), "moved %llu blocks (%.1f MB) in %llu units%s; %llu chunks: %llu already in "
		 "place (%llu blocks, %llu near enough), %llu split, %llu did not fit%s%s%s%s; %.2f s",
		 (unsigned long long)r.moved_blocks, r.moved_blocks * (double)r.block_size / 1e6,
		 (unsigned long long)r.units_done, r.compacted ? " (compacted: the set had spread)" : "",
		 (unsigned long long)r.chunks, (unsigned long long)r.chunks_in_place, (unsigned long long)r.already_in_place_blocks,
		 (unsigned long long)r.near_blocks, (unsigned long long)r.chunks_split,
		 (unsigned long long)r.chunks_failed, why, skipped, wrote, stopped, r.seconds);
	pf_notice("%s", summary);
	return record(&rec, r.complete ? 0 : EXIT_BUDGET, "%s: %s",
		      r.complete ? "done" : r.stopped_by_write_budget ? "write budget spent" : "time budget spent", summary);
}
