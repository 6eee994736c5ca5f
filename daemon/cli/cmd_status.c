/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd status: is prefetch on, what the last boot got from it, the self-check's decision and why, the last
 * reorder's outcome, and where the files are.  Reads only; every missing piece is said, never an error. */
#include "boot_log.h"
#include "boot_settings.h"
#include "boot_state.h"
#include "commands.h"
#include "config.h"
#include "error.h"
#include "format.h"
#include "layout_origin.h"
#include "log.h"
#include "pidfile.h"
#include "safe_file.h"
#include "selfcheck.h"
#include "status_fs.h"
#include "usage_error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd status [--config FILE]\n"
		"\n"
		"Show whether prefetch is on and tracing now, what the last recorded boot got from it (MiB replayed\n"
		"and used, what the boot read itself, I/O stall, boot time), the self-check's decision and why, the\n"
		"reorder (on or off, whether this shutdown arms it, what its last run did, which run placed the\n"
		"layout's files) and where the files are.\n"
		"\n"
		"  --config FILE   configuration (default " PF_DEFAULT_CONFIG ")\n"
		"\n"
		"Exit: 0, 2 on usage errors.\n");
}

static const char *on_off(int v)
{
	return v ? "on" : "off";
}

/* A measurement or "unknown". */
static const char *fig(double v, const char *unit, char *buf, size_t len)
{
	if (v < 0)
		return "unknown";
	snprintf(buf, len, "%.1f %s", v, unit);
	return buf;
}

static int tracing_now(const char *pidfile)
{
	int fd = open(pidfile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	int busy = flock(fd, LOCK_SH | LOCK_NB) < 0;
	close(fd);
	return busy;
}

static void last_boot(const struct pf_boot_paths *p)
{
	struct pf_boot_record *recs;
	size_t n, bad;
	int rc = pf_boottime_load(p->boottime, &recs, &n, &bad);
	if (rc || !n) {
		printf("last boot:      none recorded (%s: %s)\n", p->boottime, rc ? pf_strerror(rc) : "empty");
		free(recs);
		return;
	}
	const struct pf_boot_record *r = &recs[n - 1];
	char a[32], b[32], c[32], d[32];
	printf("last boot:      %.2f s (%s), %s%s; %zu boots recorded\n", r->boot_s, r->end_source,
	       r->control ? "a control boot (nothing replayed)" : r->prefetch ? "replayed" : "nothing replayed",
	       r->reorder ? ", after a reorder" : "", n);
	if (r->prefetch) {
		printf("  replay:       %s", fig(r->replay_mib, "MiB", a, sizeof(a)));
		if (r->replay_files >= 0)
			printf(" in %lld files", (long long)r->replay_files);
		printf(" read in %s (CPU %s); the boot then opened %s of it", fig(r->replay_s, "s", b, sizeof(b)),
		       fig(r->replay_cpu_s, "s", c, sizeof(c)), fig(r->used_mib, "MiB", d, sizeof(d)));
		if (r->used_files >= 0)
			printf(" (%lld files)", (long long)r->used_files);
		if (r->replay_mib >= 0 && r->used_mib >= 0)
			printf(", %.1f MiB not used", r->replay_mib > r->used_mib ? r->replay_mib - r->used_mib : 0.0);
		putchar('\n');
		if (r->late_files >= 0)
			printf("  late:         the boot opened %lld of the layout's files (%s) before the replay had read "
			       "them\n", (long long)r->late_files, fig(r->late_mib, "MiB", a, sizeof(a)));
	}
	printf("  the boot:     read %s from the disk itself; disk busy %s; I/O stall (PSI some) %s\n",
	       fig(r->uncovered_mib, "MiB", a, sizeof(a)), fig(r->io_ms >= 0 ? r->io_ms / 1000.0 : -1, "s", b, sizeof(b)),
	       r->psi_io_ms >= 0 ? fig(r->psi_io_ms / 1000.0, "s", c, sizeof(c)) : "unknown (no /proc/pressure/io)");
	free(recs);
}

static void last_reorder(const struct pf_boot_paths *p)
{
	char *text;
	size_t len;
	if (pf_read_text(p->reorder_log, 1 << 20, 0, &text, &len)) {
		printf("  last run:     none recorded (%s)\n", p->reorder_log);
		return;
	}
	char *last = NULL;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		last = line;
	printf("  last run:     %s\n", last ? last : "none recorded");
	free(text);
}

/* The reorder in one place: whether it is on, whether this shutdown arms it (the same conditions as the arm
 * step of the shutdown hook), what the last run did, and which run placed the layout's files. */
static void reorder_state(const struct pf_config *cfg, const struct pf_boot_paths *p, const struct pf_selfcheck *sc,
			  int sc_ok)
{
	struct stat st;
	int layout = stat(p->layout, &st) == 0 && st.st_size > 0;
	if (!cfg->enable_reordering)
		printf("reorder:        off (ENABLE_FILE_REORDERING=0): nothing is moved at shutdown\n");
	else if (cfg->self_check_interval && sc_ok && sc->reorder_disarmed)
		printf("reorder:        on, but disarmed by the self-check: not armed at shutdown (remove %s/selfcheck "
		       "to re-arm)\n", p->state);
	else if (cfg->self_check_interval && sc_ok && sc->policy == PF_POLICY_OFF)
		printf("reorder:        on, but not armed at shutdown while the self-check's policy is off\n");
	else if (!layout)
		printf("reorder:        on, but nothing to arm at this shutdown: no layout yet (no traced boot)\n");
	else
		printf("reorder:        on: armed at this shutdown if its plan finds blocks worth moving\n");
	if (access(p->reorder_armed, F_OK) == 0)
		printf("  pending:      armed at the last shutdown; this boot's record will count it\n");
	last_reorder(p);
	int64_t gen, chunk;
	if (pf_reorder_placed_load(p->reorder_placed, &gen, &chunk))
		printf("  placed:       %s unreadable\n", p->reorder_placed);
	else if (gen == 0)
		printf("  placed:       the layout's files were never moved by a reorder\n");
	else
		printf("  placed:       the layout's files by reorder generation %lld (CHUNK_SIZE_BLOCKS %lld)\n", (long long)gen,
		       (long long)chunk);
}

/* Where the layout came from, when prefetch-image installed it (layout_origin.h); nothing otherwise. */
static void layout_origin(const char *layout)
{
	struct pf_layout_origin o;
	int rc = pf_layout_origin_load(layout, &o);
	if (rc == -ENOENT)
		return;
	if (rc) {
		printf("layout origin:  %s.origin unreadable (%s)\n", layout, pf_strerror(rc));
		return;
	}
	struct pf_image *img;
	char line[400];
	if (pf_image_load(layout, 0, PF_KIND_LAYOUT, &img) == 0) {
		pf_layout_origin_line(&o, img->created, line, sizeof(line));
		pf_image_free(img);
	} else {
		pf_layout_origin_line(&o, 0, line, sizeof(line)); /* no layout now: not the one installed */
	}
	printf("layout origin:  %s\n", line);
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					       { "help", no_argument, NULL, 'h' },
					       { NULL, 0, NULL, 0 } };
	const char *config = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'h': usage(stdout); return PF_EXIT_OK;
		default: return pf_usage_bad_option(c, argv);
		}
	}
	if (optind != argc)
		return pf_usage_error("unexpected argument '%s'", argv[optind]);
	struct pf_config cfg;
	pf_config_read_or_defaults(&cfg, config);
	struct pf_boot_paths p;
	pf_boot_paths_init(&p, &cfg);

	if (cfg.enable_prefetch)
		printf("prefetch:       on (replay %s, start from the initramfs %s)\n", on_off(cfg.enable_replay),
		       on_off(cfg.start_from_initramfs));
	else
		printf("prefetch:       off (ENABLE_PREFETCH=0): each boot's time is recorded, nothing traced or replayed\n");
	printf("tracing now:    %s\n", tracing_now(p.pidfile) ? "yes" : "no");
	last_boot(&p);

	char path[PF_BOOT_PATH + 16];
	snprintf(path, sizeof(path), "%s/selfcheck", p.state);
	struct pf_selfcheck sc;
	int rc = pf_selfcheck_load(path, &sc);
	if (!cfg.self_check_interval)
		printf("self-check:     off (SELF_CHECK_INTERVAL=0): every boot replays\n");
	else if (rc)
		printf("self-check:     %s unreadable (%s): the next boot replays as by default\n", path, pf_strerror(rc));
	else
		printf("self-check:     policy %s; one boot in %d is a %s boot\n  why:          %s\n",
		       pf_policy_name(sc.policy), cfg.self_check_interval, sc.policy == PF_POLICY_OFF ? "probe" : "control",
		       sc.why[0] ? sc.why : "no boot judged yet");
	reorder_state(&cfg, &p, &sc, rc == 0);
	layout_origin(p.layout);
	pf_status_filesystems(stdout, p.layout);
	printf("files:          config %s, state %s (layout, traces/, boottime.log, selfcheck, reorder.log), "
	       "runtime %s\n",
	       config ? config : pf_config_default_path(), p.state, p.runtime);
	return PF_EXIT_OK;
}
