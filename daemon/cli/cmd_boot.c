/* prefetchd boot: the boot-time service.  Set up tracing first, then replay the current layout on a thread,
 * tell systemd we are ready (the boot never waits for the replay), trace until 'prefetchd stop' / SIGTERM /
 * TRACE_TIMEOUT, then store the trace, re-aggregate the layout for the next boot and append a boot-time record.
 *
 * Prefetch must never fail or slow a boot: every error is logged and the exit status is 0, except for a bad
 * command line (2).  Where fanotify is unavailable (containers, old kernels) one line says so. */
#include "aggregate.h"
#include "boot_early.h"
#include "boot_end.h"
#include "boot_state.h"
#include "boot_log.h"
#include "commands.h"
#include "config.h"
#include "format.h"
#include "log.h"
#include "pidfile.h"
#include "privileges.h"
#include "replay.h"
#include "safe_file.h"
#include "trace.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* How long to wait for PREFETCH_DIR to become writable when tracing ended before it was (early-boot buffer). */
#define PENDING_WAIT_S 600
/* --from-initramfs: how long to wait for initramfs-tools to complete the new root (it takes milliseconds). */
#define EARLY_WAIT_MS 30000
/* Under a CPU-bound boot (one the disk no longer holds up) every CPU second of ours is one the boot waits for:
 * once init's files are read, tracing and the rest of the replay run at the lowest priority, on what the boot
 * leaves idle (it leaves a lot while it waits for the disk, which is when the replay's reads matter). */
#define BOOT_NICE 19

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t replay_stop;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd boot [--config FILE] [--from-initramfs [--root DIR]]\n"
		"\n"
		"Boot mode, run by prefetch.service or the 'prefetch' init script as early as possible:\n"
		"  1. set up tracing (fanotify) of the filesystems in TRACE_MOUNTS (default: every local one);\n"
		"  2. replay $PREFETCH_DIR/layout on a thread (none on the first boot), bounded by REPLAY_TIMEOUT;\n"
		"  3. notify systemd (READY=1) as soon as tracing runs: the boot never waits for the replay;\n"
		"  4. trace until 'prefetchd stop', SIGTERM or TRACE_TIMEOUT;\n"
		"  5. store the trace in $PREFETCH_DIR/traces, re-aggregate the last TRACE_AGGREGATION_COUNT traces\n"
		"     into $PREFETCH_DIR/layout and append a record to $PREFETCH_DIR/boottime.log.\n"
		"If PREFETCH_DIR is not writable yet then, the trace and record wait in $PREFETCH_RUNTIME_DIR/pending\n"
		"and are moved over as soon as it is (at most %d s later).\n"
		"\n"
		"  --config FILE      configuration (default " PF_DEFAULT_CONFIG "; missing = defaults)\n"
		"  --from-initramfs   started by the initramfs once the root is mounted, before init: detach,\n"
		"                     wait until the root has /proc, /sys and /run, log to the kernel log; exit at\n"
		"                     once if START_FROM_INITRAMFS=0.  prefetch.service then finds us running.\n"
		"                     The replay starts before tracing is set up: it runs ahead of init.\n"
		"  --root DIR         (with --from-initramfs) the root filesystem mounted at DIR, from the initramfs's\n"
		"                     own copy (starting costs no reads from the root's disk): the replay starts at\n"
		"                     once, with DIR as the root; we change root into DIR once it has /proc and /sys\n"
		"\n"
		"Exit status: 0, also when something failed (logged: a boot must go on), or when ENABLE_PREFETCH=0 or\n"
		"fanotify is unavailable; 2 on usage errors or an unreadable --config.\n",
		PENDING_WAIT_S);
}

/* CPU time (user + system) of the process (RUSAGE_SELF) or of the calling thread (RUSAGE_THREAD). */
static double cpu_seconds(int who)
{
	struct rusage ru;
	if (getrusage(who, &ru) < 0)
		return -1.0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct replay_job {
	pthread_t thread;
	int started;
	const char *path;
	struct pf_image *layout;
	int load_rc;
	struct pf_replay_opts opts;
	struct pf_replay_stats st;
	int rc;
	double cpu; /* the replay thread's CPU time */
};

/* Loading the layout is part of the replay: on the thread, so that READY=1 does not wait for its read. */
static void *replay_main(void *arg)
{
	struct replay_job *j = arg;
	j->load_rc = pf_image_load(j->path, PF_LOAD_REQUIRE_ROOT, PF_KIND_LAYOUT, &j->layout);
	if (j->load_rc == 0)
		j->rc = pf_replay(j->layout, &j->opts, &j->st);
	j->cpu = cpu_seconds(RUSAGE_THREAD);
	return NULL;
}

/* Replay on a thread with the termination signals blocked, so that they reach the tracing thread.  relative:
 * the root is our working directory, not changed into yet (started from the initramfs with --root). */
static void replay_start(struct replay_job *j, const struct pf_boot_paths *p, const struct pf_config *cfg, int relative)
{
	const char *layout = relative ? pf_replay_relpath(p->layout) : p->layout;
	if (access(layout, F_OK) != 0) {
		pf_notice("no layout yet (%s): first traced boot, nothing to replay", p->layout);
		return;
	}
	j->path = layout;
	j->opts = (struct pf_replay_opts){ .medium_override = cfg->medium, .threads = cfg->replay_threads,
					   .nice_after_head = BOOT_NICE,
					   .timeout_s = cfg->replay_timeout, .relative_paths = relative,
					   .max_bytes = (uint64_t)cfg->max_prefetch_mb << 20, .stop = &replay_stop };
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int rc = pthread_create(&j->thread, NULL, replay_main, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pf_warn("cannot start the replay thread: %s", strerror(rc));
		return;
	}
	j->started = 1;
}

/* Returns 1 when a layout was replayed (something was read).  cut: stop a replay still running (the boot
 * has ended) rather than wait for it. */
static int replay_finish(struct replay_job *j, int cut)
{
	int replayed = 0;
	if (j->started) {
		if (cut)
			replay_stop = 1;
		pthread_join(j->thread, NULL);
		if (j->load_rc)
			pf_warn("layout %s not replayed: %s", j->path, pf_strerror(j->load_rc));
		else if (j->rc)
			pf_warn("replay failed: %s", pf_strerror(j->rc));
		else {
			pf_notice("replay: %u files (%u skipped), %.1f MiB in %.2f s (CPU %.2f s; %u metadata blocks, metadata pass "
				  "done at %.2f s, placed at %.2f s, done at %.2f s of uptime)%s%s", j->st.files, j->st.files_skipped,
				  (double)j->st.bytes / (1024.0 * 1024.0), j->st.seconds, j->cpu, j->st.metadata_blocks, j->st.at_metadata,
				  j->st.at_placed, j->st.at_end,
				  j->st.timed_out ? ", stopped by REPLAY_TIMEOUT" : "",
				  j->st.stopped ? ", cut short by the end of tracing" : "");
			replayed = j->st.files > 0;
		}
	}
	pf_image_free(j->layout);
	j->layout = NULL;
	return replayed;
}

/* Merge the newest TRACE_AGGREGATION_COUNT traces into the layout the next boot replays. */
static void aggregate_layout(const struct pf_boot_paths *p, const struct pf_config *cfg)
{
	char **names;
	size_t n;
	int rc = pf_traces_list(p->traces, &names, &n);
	if (rc) {
		pf_warn("cannot list %s: %s", p->traces, strerror(-rc));
		return;
	}
	size_t first = n > (size_t)cfg->aggregation_count ? n - (size_t)cfg->aggregation_count : 0;
	struct pf_image *traces[PF_AGGREGATE_MAX_TRACES];
	size_t nt = 0;
	for (size_t i = first; i < n && nt < PF_AGGREGATE_MAX_TRACES; i++) {
		char path[PF_BOOT_PATH + 256];
		snprintf(path, sizeof(path), "%s/%s", p->traces, names[i]);
		rc = pf_image_load(path, PF_LOAD_REQUIRE_ROOT, PF_KIND_TRACE, &traces[nt]);
		if (rc)
			pf_warn("trace %s left out of the layout: %s", path, pf_strerror(rc));
		else
			nt++;
	}
	pf_trace_names_free(names, n);
	if (nt == 0) {
		pf_warn("no usable trace: layout %s not updated", p->layout);
		return;
	}
	struct pf_aggregate_opts o = { .max_bytes = (uint64_t)cfg->max_prefetch_mb << 20,
				       .max_files = (uint32_t)cfg->max_prefetch_files, .check_files = 1 };
	struct pf_image *layout = NULL;
	struct pf_aggregate_report rep = { 0 };
	rc = pf_aggregate(traces, nt, &o, &layout, &rep);
	for (size_t i = 0; i < nt; i++)
		pf_image_free(traces[i]);
	if (rc) {
		pf_warn("aggregation failed: %s; layout %s not updated", pf_strerror(rc), p->layout);
		return;
	}
	rc = pf_image_save(p->layout, layout);
	if (rc)
		pf_warn("cannot write %s: %s", p->layout, pf_strerror(rc));
	else
		pf_notice("layout: %u traces, %u files kept (%u unstable, %u vanished, %u changed, %u cut), %.1f MiB -> %s",
			  rep.traces, rep.files_kept, rep.files_unstable, rep.files_vanished, rep.files_changed,
			  rep.files_cut, (double)rep.bytes_kept / (1024.0 * 1024.0), p->layout);
	pf_image_free(layout);
}

/* Was a reorder armed at the last shutdown?  The marker is consumed into reorder.log once this boot is
 * recorded, so that it counts for one boot only. */
static int reorder_was_armed(const struct pf_boot_paths *p)
{
	return access(p->reorder_armed, F_OK) == 0;
}

static void reorder_consume(const struct pf_boot_paths *p, const struct pf_boot_record *r)
{
	char armed[256] = "";
	FILE *f = fopen(p->reorder_armed, "re");
	if (!f)
		return;
	if (!fgets(armed, sizeof(armed), f))
		armed[0] = '\0';
	fclose(f);
	armed[strcspn(armed, "\n")] = '\0';
	FILE *log = fopen(p->reorder_log, "ae");
	if (log) {
		fprintf(log, "%lld boot %s recorded after reorder armed: %s\n", (long long)r->when, r->boot_id, armed);
		fclose(log);
	}
	if (unlink(p->reorder_armed) < 0)
		pf_warn("cannot remove %s: %s", p->reorder_armed, strerror(errno));
}

static int trace_name_taken(const struct pf_boot_paths *p, const char *name)
{
	char a[PF_BOOT_PATH + 256], b[PF_BOOT_PATH + 256];
	snprintf(a, sizeof(a), "%s/%s", p->traces, name);
	snprintf(b, sizeof(b), "%s/%s", p->pending_traces, name);
	return access(a, F_OK) == 0 || access(b, F_OK) == 0;
}

/* Everything that needs the state dir writable. */
static void persist(const struct pf_boot_paths *p, const struct pf_config *cfg, const struct pf_image *trace,
		    const char *trace_name, const struct pf_boot_record *rec, int append_rec)
{
	int rc = pf_boot_flush_pending(p);
	if (rc > 0)
		pf_notice("moved %d buffered item(s) from %s to %s", rc, p->pending, p->state);
	else if (rc < 0)
		pf_warn("could not move the buffer %s: %s", p->pending, strerror(-rc));
	if (trace) {
		char path[PF_BOOT_PATH + 256];
		snprintf(path, sizeof(path), "%s/%s", p->traces, trace_name);
		if ((rc = pf_mkdir_p(p->traces, 0755)) || (rc = pf_image_save(path, trace)))
			pf_warn("cannot store the trace %s: %s", path, pf_strerror(rc));
		else
			pf_notice("trace: %u files -> %s", trace->nfiles, path);
	}
	/* a few more than are merged: a bad newest trace can be left out without shrinking the vote */
	rc = pf_traces_rotate(p->traces, (size_t)cfg->aggregation_count + 2);
	if (rc < 0)
		pf_warn("cannot rotate %s: %s", p->traces, strerror(-rc));
	aggregate_layout(p, cfg);
	if (append_rec && (rc = pf_boottime_append(p->boottime, rec)))
		pf_warn("cannot append to %s: %s", p->boottime, strerror(-rc));
	if (reorder_was_armed(p))
		reorder_consume(p, rec);
}

/* State dir not writable yet: buffer in the runtime dir. */
static int buffer_pending(const struct pf_boot_paths *p, const struct pf_image *trace, const char *trace_name,
			  const struct pf_boot_record *rec)
{
	int rc = pf_mkdir_p(p->pending_traces, 0755);
	if (rc == 0 && trace) {
		char path[PF_BOOT_PATH + 256];
		snprintf(path, sizeof(path), "%s/%s", p->pending_traces, trace_name);
		rc = pf_image_save(path, trace);
	}
	if (rc == 0)
		rc = pf_boottime_append(p->pending_boottime, rec);
	return rc;
}

int cmd_boot(int argc, char **argv)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					       { "from-initramfs", no_argument, NULL, 'I' },
					       { "root", required_argument, NULL, 'R' },
					       { "help", no_argument, NULL, 'h' },
					       { NULL, 0, NULL, 0 } };
	const char *config = NULL, *root = NULL;
	int early = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'I': early = 1; break;
		case 'R': root = optarg; break;
		case 'h': usage(stdout); return PF_EXIT_OK;
		default: usage(stderr); return PF_EXIT_USAGE;
		}
	}
	if (optind != argc || (root && !early)) {
		usage(stderr);
		return PF_EXIT_USAGE;
	}
	/* The initramfs's copy of us: everything from here on (config, layout, traces, pid file) is the root's.  We
	 * start right after the root is mounted, before the initramfs has moved /dev, /run, /sys and /proc into it:
	 * the root is our working directory until then (its paths relative to it), and the replay starts at once. */
	int rooted = 0;
	if (root) {
		struct stat self, installed;
		char bin[PATH_MAX];
		snprintf(bin, sizeof(bin), "%s/usr/sbin/prefetchd", root);
		int same = stat("/proc/self/exe", &self) == 0 && stat(bin, &installed) == 0 &&
			   self.st_size == installed.st_size;
		if (same ? chdir(root) != 0 : chroot(root) != 0 || chdir("/") != 0) {
			pf_err("cannot change %s to %s: %s", same ? "directory" : "root", root, strerror(errno));
			return PF_EXIT_OK;
		}
		rooted = same;
		/* The kernel log at once: udev's init-bottom script moves the initramfs's /dev into the root any
		 * moment now (it runs beside us), so /dev/kmsg is under / or under the root. */
		if (rooted && pf_log_to_kmsg() < 0)
			(void)pf_log_to_kmsg_at("dev/kmsg");
		if (!same) { /* an initramfs not updated since prefetch was: run the installed version instead */
			char *args[] = { "prefetchd", "boot", "--from-initramfs", config ? "--config" : NULL,
					 (char *)config, NULL };
			execv("/usr/sbin/prefetchd", args);
			pf_err("cannot run /usr/sbin/prefetchd in %s: %s", root, strerror(errno));
			return PF_EXIT_OK;
		}
	}
	struct pf_config cfg;
	int crc = pf_config_read(&cfg, rooted ? pf_replay_relpath(config ? config : PF_DEFAULT_CONFIG) : config);
	if (rooted && !config && crc == -ENOENT)
		crc = 0; /* no /etc/default/prefetch: the defaults */
	if (crc && config) {
		pf_err("cannot read %s: %s", config, pf_strerror(crc));
		return PF_EXIT_USAGE;
	}
	if (crc)
		pf_warn("cannot read %s: %s; using defaults", PF_DEFAULT_CONFIG, pf_strerror(crc));
	if (!cfg.enable_prefetch || (early && !cfg.start_from_initramfs)) {
		pf_notify_ready(); /* Type=notify: exiting without READY=1 would count as a failed start */
		return PF_EXIT_OK;
	}
	struct pf_boot_paths p;
	pf_boot_paths_init(&p, &cfg);
	struct replay_job rj = { 0 };
	if (early) {
		pf_boot_detach();
		double began = -1.0;
		if (rooted && cfg.enable_replay) {
			replay_start(&rj, &p, &cfg, 1);
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			began = (double)now.tv_sec + now.tv_nsec / 1e9;
		}
		int waited = pf_boot_wait_root(rooted, EARLY_WAIT_MS);
		if (waited < 0 && !rooted)
			pf_log_to_kmsg();
		if (waited < 0)
			pf_warn("started from the initramfs, but the root had no /proc after %d s: not tracing from "
				"there (prefetch.service or the init script starts prefetchd later)", EARLY_WAIT_MS / 1000);
		else if (rooted && (chroot(".") != 0 || chdir("/") != 0)) {
			pf_err("cannot change root to %s: %s", root, strerror(errno));
			waited = -1;
		}
		if (waited < 0) {
			replay_finish(&rj, 0); /* begun: still worth its reads to the boot */
			return PF_EXIT_OK;
		}
		if (!rooted)
			pf_log_to_kmsg(); /* the root's /dev, which udev's init-bottom script has moved there by now */
		if (began >= 0)
			pf_notice("started from the initramfs when the root was mounted (replay began at %.2f s of uptime; "
				  "the root was complete %d ms later)", began, waited);
		else
			pf_notice("started from the initramfs (the root was complete after %d ms)", waited);
	}

	int rc = pf_mkdir_p(p.runtime, 0755);
	if (rc)
		pf_warn("cannot create %s: %s", p.runtime, strerror(-rc));
	/* The pid file's lock first: when the initramfs started us already, this (prefetch.service) instance is
	 * done before it sets up anything.  Our pid goes in once tracing is set up. */
	struct pf_pidfile pid = { .fd = -1 };
	pid_t holder = 0;
	rc = pf_pidfile_lock(p.pidfile, &pid, &holder);
	if (rc) {
		if (rc == -EBUSY)
			pf_notice("prefetchd is already running (pid %ld, %s; started from the initramfs?): nothing to do",
				  (long)holder, p.pidfile);
		else
			pf_err("pid file %s: %s", p.pidfile, strerror(-rc));
		replay_finish(&rj, 1); /* begun from the initramfs: the instance holding the lock replays */
		pf_notify_ready();
		return PF_EXIT_OK;
	}

	unlink(p.boot_end); /* from a previous run in the same runtime dir: this boot has not ended */
	if (pf_boot_dir_writable(p.state) == 0 && (rc = pf_boot_flush_pending(&p)) > 0)
		pf_notice("moved %d buffered item(s) from %s to %s", rc, p.pending, p.state);

	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: the tracer's poll returns at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	/* From the initramfs the replay comes first: init is starting now, and every read the replay gets in
	 * before init's own reads saves one; its opens cause no fanotify events of our own yet.  (Its thread
	 * keeps the capabilities we drop below; it ends with the replay.)  From prefetch.service tracing comes
	 * first, as the boot is already under way.  What the replay reads the tracer ignores (same process). */
	if (early && !rooted && cfg.enable_replay)
		replay_start(&rj, &p, &cfg, 0);
	if (early) /* init is loading now: setting up tracing can wait for idle CPU (the replay's thread has its own) */
		(void)setpriority(PRIO_PROCESS, 0, BOOT_NICE);
	const char *mounts[PF_CONFIG_MAX_MOUNTS];
	for (int i = 0; i < cfg.nmounts; i++)
		mounts[i] = cfg.mounts[i];
	char err[512] = "";
	struct pf_trace_opts to = { .mounts = mounts, .nmounts = cfg.nmounts, .timeout_s = cfg.trace_timeout,
				    .medium_override = cfg.medium, .err = err, .errlen = sizeof(err) };
	struct pf_tracer *t;
	rc = pf_tracer_open(&to, &t);
	if (rc) {
		pf_notice("boot tracing unavailable (%s): prefetch skipped this boot", err[0] ? err : strerror(-rc));
		replay_finish(&rj, 0); /* begun from the initramfs: still worth its reads to the boot */
		pf_pidfile_release(&pid);
		pf_notify_ready();
		return PF_EXIT_OK;
	}
	if ((rc = pf_pidfile_publish(&pid)))
		pf_warn("cannot write our pid to %s: %s ('prefetchd stop' cannot reach us)", p.pidfile, strerror(-rc));
	double cpu_setup = cpu_seconds(RUSAGE_THREAD); /* start-up and fanotify marks (the replay has its own thread) */
	static const cap_value_t keep[] = PF_TRACER_CAPS;
	if ((rc = pf_privileges_drop(keep, (int)(sizeof(keep) / sizeof(keep[0])))))
		pf_warn("could not drop capabilities: %s", strerror(-rc));

	if (!cfg.enable_replay)
		pf_notice("ENABLE_REPLAY=0: tracing and measuring only (a baseline boot)");
	else if (!early)
		replay_start(&rj, &p, &cfg, 0);
	pf_notify_ready();
	pf_notify_status(rj.started ? "tracing, replaying the layout" : "tracing");
	(void)setpriority(PRIO_PROCESS, 0, BOOT_NICE); /* this thread only (Linux); the replay's is its own */

	rc = pf_tracer_run(t, &stop_requested);
	if (rc)
		pf_warn("tracing stopped early: %s", strerror(-rc));
	int failed_run = rc != 0;

	/* The boot has ended: measure before the residency pass and the aggregation add I/O of their own. */
	struct pf_boot_record rec = { .when = 0 };
	pf_boot_id(rec.boot_id, sizeof(rec.boot_id));
	rec.boot_s = pf_boot_end(p.boot_end, rec.end_source, sizeof(rec.end_source));
	double cpu_at_end = cpu_seconds(RUSAGE_SELF); /* what the boot paid for prefetch; the work below is after its end */
	pf_boot_record_disk(cfg.nmounts ? cfg.mounts[0] : "/", &rec);
	pf_notify_stopping();
	rec.prefetch = replay_finish(&rj, 1);
	rec.reorder = cfg.enable_reordering && reorder_was_armed(&p);

	struct pf_image *trace = NULL;
	struct pf_trace_stats st = { 0 };
	rc = pf_tracer_finish(t, &trace, &st);
	pf_tracer_close(t);
	static const cap_value_t done[] = PF_TRACER_CAPS_DONE;
	(void)pf_privileges_drop(done, (int)(sizeof(done) / sizeof(done[0]))); /* fewer than before: cannot fail */
	if (rc) {
		pf_warn("building the trace failed: %s", pf_strerror(rc));
		trace = NULL;
	} else if (failed_run) {
		trace->flags |= PF_IMG_INCOMPLETE;
	}
	rec.when = (int64_t)time(NULL);
	char name[128];
	pf_trace_name(name, sizeof(name), rec.when, rec.boot_id);
	for (int i = 2; i < 100 && trace_name_taken(&p, name); i++) { /* two runs within one second (tests) */
		char id[64];
		snprintf(id, sizeof(id), "%s-%d", rec.boot_id, i);
		pf_trace_name(name, sizeof(name), rec.when, id);
	}
	pf_notice("boot finished at %.2f s (%s); disk %s busy %.2f s; %lu events (%lu own), %lu overflows; prefetchd "
		  "CPU %.2f s by then (%.2f s to set up tracing)", rec.boot_s, rec.end_source, rec.disk,
		  rec.io_ms >= 0 ? (double)rec.io_ms / 1000.0 : -1.0, st.events, st.own_events, st.overflows, cpu_at_end,
		  cpu_setup);

	int pending = 0;
	if (pf_boot_dir_writable(p.state) == 0) {
		persist(&p, &cfg, trace, name, &rec, 1);
	} else if ((rc = buffer_pending(&p, trace, name, &rec))) {
		pf_warn("%s is not writable and buffering in %s failed (%s): this boot's trace is lost", p.state,
			p.pending, strerror(-rc));
	} else {
		pf_notice("%s is not writable yet: trace and boot record wait in %s", p.state, p.pending);
		pending = 1;
	}
	pf_image_free(trace);
	pf_pidfile_release(&pid); /* 'prefetchd stop' returns now: the trace is written (or buffered) */

	if (pending) {
		/* The next chance: as soon as PREFETCH_DIR is writable (the runtime dir is gone after a reboot). */
		stop_requested = 0;
		for (int waited = 0; waited < PENDING_WAIT_S && !stop_requested; waited += 2) {
			sleep(2);
			if (pf_boot_dir_writable(p.state) == 0) {
				persist(&p, &cfg, NULL, NULL, &rec, 0); /* the record went with the buffer */
				return PF_EXIT_OK;
			}
		}
		pf_warn("%s stayed unwritable: the buffered trace stays in %s (moved by the next 'prefetchd boot' if "
			"that directory survives)", p.state, p.pending);
	}
	return PF_EXIT_OK;
}
