/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd boot: the boot-time service.  Set up tracing first, then replay the current layout on a thread,
 * tell systemd we are ready (the boot never waits for the replay), trace until 'prefetchd stop' / SIGTERM /
 * TRACE_TIMEOUT, then store the trace, re-aggregate the layout for the next boot and append a boot-time record.
 * Started from the initramfs (boot_early.h), the replay comes before tracing, and earlier still from the
 * initramfs's own copy.  cmd_boot() lists the steps; each is a function below.
 *
 * Prefetch must never fail or slow a boot: every error is logged and the exit status is 0, except for a bad
 * command line (2).  Where fanotify is unavailable (containers, old kernels) one line says so. */
#include "boot_early.h"
#include "boot_end.h"
#include "boot_log.h"
#include "host.h"
#include "boot_measure.h"
#include "boot_options.h"
#include "boot_persist.h"
#include "boot_settings.h"
#include "boot_state.h"
#include "boot_store.h"
#include "clock.h"
#include "commands.h"
#include "config.h"
#include "error.h"
#include "format.h"
#include "fsid.h"
#include "incomplete.h"
#include "log.h"
#include "pidfile.h"
#include "privileges.h"
#include "replay.h"
#include "safe_file.h"
#include "selfcheck.h"
#include "state_dir.h"
#include "trace.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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
	_Atomic uint64_t *read_at_ns; /* [layout's nfiles]: when the replay first read each file (opts.read_at_ns) */
	int narrow; /* the self-check's narrow replay: the layout's head only */
	int rc;
	double cpu; /* the replay thread's CPU time */
};

/* Loading the layout is part of the replay: on the thread, so that READY=1 does not wait for its read. */
static void *replay_main(void *arg)
{
	struct replay_job *j = arg;
	j->load_rc = pf_image_load(j->path, PF_LOAD_REQUIRE_ROOT | PF_LOAD_STATE, PF_KIND_LAYOUT, &j->layout);
	if (j->load_rc == 0 && j->narrow) {
		uint64_t head = pf_image_bytes(j->layout) / SELFCHECK_NARROW_DIV;
		if (head < j->opts.max_bytes)
			j->opts.max_bytes = head;
	}
	if (j->load_rc == 0) {
		/* without memory for it, the record says the boot's lead over the replay is unknown */
		j->read_at_ns = calloc(j->layout->nfiles ? j->layout->nfiles : 1, sizeof(*j->read_at_ns));
		j->opts.read_at_ns = j->read_at_ns;
		j->rc = pf_replay(j->layout, &j->opts, &j->st);
	}
	j->cpu = cpu_seconds(RUSAGE_THREAD);
	return NULL;
}

/* Replay on a thread with the termination signals blocked, so that they reach the tracing thread.  relative:
 * the root is our working directory, not changed into yet (started from the initramfs with --root). */
static void replay_start(struct replay_job *j, const struct pf_boot_paths *p, const struct pf_config *cfg, int relative,
			 int narrow)
{
	const char *layout = relative ? pf_replay_relpath(p->layout) : p->layout;
	if (access(layout, F_OK) != 0) {
		pf_notice("no layout yet (%s): first traced boot, nothing to replay", p->layout);
		return;
	}
	j->path = layout;
	j->opts = (struct pf_replay_opts){ .medium_override = cfg->medium, .threads = cfg->replay_threads,
					   .nice_after_head = BOOT_NICE, .idle_io_after_head = cfg->replay_idle_io,
					   .timeout_s = cfg->replay_timeout, .relative_paths = relative,
					   .max_bytes = (uint64_t)cfg->max_prefetch_mb << 20, .stop = &replay_stop };
	j->narrow = narrow;
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int rc = pthread_create(&j->thread, NULL, replay_main, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pf_warn("cannot start the replay thread: %s", pf_strerror(-rc));
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
	return replayed; /* the layout stays loaded: the boot record measures how much of it the boot used */
}

/* The moment of the start-up at which the replay starts, by where we were started from. */
enum replay_moment {
	REPLAY_AT_ROOT_MOUNT,  /* the initramfs's copy: at once, ahead of the initramfs's last scripts and init */
	REPLAY_BEFORE_TRACING, /* chrooted from the initramfs: the root is complete, init is starting now */
	REPLAY_AFTER_TRACING,  /* the service: the boot is under way, tracing it comes first */
};

/* One boot, from the command line to the stored trace. */
struct boot {
	struct pf_boot_options opt;
	struct pf_config cfg;
	struct pf_boot_paths p;
	struct replay_job replay;
	double replay_began;    /* uptime (s) at which the initramfs's copy began the replay, else -1 */
	struct pf_pidfile pid;
	struct pf_tracer *tracer; /* set up: this boot is traced, and recorded at the end */
	int tracing_failed;       /* stopped early: the trace is incomplete */
	double cpu_setup;         /* this thread's CPU time to start up and set up tracing */
	double cpu_at_end;        /* ours when the boot ended: what the boot paid for prefetch */
	struct pf_boot_record rec;
	dev_t root_dev;           /* the device standing for the first mount's filesystem (0: not known) */
	int cut_replay;  /* the boot has ended, or another instance has it: stop the replay rather than wait */
	int ready_owed;  /* READY=1 still to send: a Type=notify start exiting without it counts as failed */
	int pending;     /* the trace and record wait in the runtime dir for PREFETCH_DIR */
	int recorded;    /* record_boot() ran: the pid file gets its outcome for 'prefetchd stop' */
	int off;         /* prefetch off by configuration (ENABLE_PREFETCH=0, prefetch=off): only recorded */
	struct pf_selfcheck sc;     /* the self-check's state as this boot found it */
	enum pf_boot_role role;     /* what the self-check made of this boot */
	char lost[3 * PF_BOOT_PATH]; /* why this boot's trace was not stored ("" when it was) */
	int exit;
};

static int relative_paths(const struct boot *b)
{
	return b->opt.start == PF_BOOT_FROM_INITRAMFS_COPY;
}

static enum replay_moment replay_moment(enum pf_boot_start start)
{
	switch (start) {
	case PF_BOOT_FROM_INITRAMFS_COPY: return REPLAY_AT_ROOT_MOUNT;
	case PF_BOOT_FROM_INITRAMFS_CHROOTED: return REPLAY_BEFORE_TRACING;
	case PF_BOOT_FROM_SERVICE: break;
	}
	return REPLAY_AFTER_TRACING;
}

/* The initramfs's copy: everything from here on (config, layout, traces, pid file) is the root's.  We start
 * right after the root is mounted, before the initramfs has moved /dev, /run, /sys and /proc into it: the root
 * is our working directory until then.  A copy that is not the installed version runs the installed one
 * instead, chrooted (which then starts as PF_BOOT_FROM_INITRAMFS_CHROOTED).  Returns 0 to go on, else the error
 * that stops this start (-errno, logged). */
static int enter_root(struct boot *b)
{
	if (b->opt.start != PF_BOOT_FROM_INITRAMFS_COPY)
		return 0;
	const char *root = b->opt.root, *config = b->opt.config;
	int current = pf_boot_copy_current(root);
	if (current ? chdir(root) != 0 : chroot(root) != 0 || chdir("/") != 0) {
		int rc = -errno;
		pf_err("cannot change %s to %s: %s", current ? "directory" : "root", root, pf_strerror(rc));
		return rc;
	}
	if (!current) { /* an initramfs not updated since prefetch was: run the installed version instead */
		char *args[] = { "prefetchd", "boot", "--from-initramfs", config ? "--config" : NULL, (char *)config, NULL };
		execv(PF_PREFETCHD_PATH, args);
		int rc = -errno;
		pf_err("cannot run " PF_PREFETCHD_PATH " in %s: %s", root, pf_strerror(rc));
		return rc;
	}
	/* The kernel log at once: udev's init-bottom script moves the initramfs's /dev into the root any moment
	 * now (it runs beside us), so /dev/kmsg is under / or under the root. */
	if (pf_log_to_kmsg() < 0)
		(void)pf_log_to_kmsg_at("dev/kmsg");
	return 0;
}

/* The configuration and the paths it names.  Unreadable: an explicit --config is a usage error (2; returns the
 * error, logged), the default one means the defaults (returns 0). */
static int read_config(struct boot *b)
{
	const char *config = b->opt.config;
	int relative = relative_paths(b);
	int rc = pf_config_read(&b->cfg, relative ? pf_replay_relpath(config ? config : pf_config_default_path()) : config);
	if (relative && !config && rc == -ENOENT)
		rc = 0; /* no /etc/default/prefetch: the defaults */
	if (rc && config) {
		pf_err("cannot read %s: %s", config, pf_strerror(rc));
		b->exit = PF_EXIT_USAGE;
		return rc;
	}
	if (rc)
		pf_warn("cannot read %s: %s; using defaults", pf_config_default_path(), pf_strerror(rc));
	pf_boot_paths_init(&b->p, &b->cfg);
	return 0;
}

/* ENABLE_PREFETCH and prefetch=off, and START_FROM_INITRAMFS for a start from there.  Either way READY=1 is owed
 * from now on.  Off, the service still records the boot (record_off_boot()); a start from the initramfs leaves
 * that to the service. */
static int wanted(struct boot *b)
{
	b->ready_owed = 1;
	char *cmdline = NULL;
	int off_here = pf_kernel_cmdline(&cmdline) == 0 && pf_cmdline_word(cmdline, "prefetch=off");
	free(cmdline);
	b->off = !b->cfg.enable_prefetch || off_here;
	if (b->off && b->opt.start == PF_BOOT_FROM_SERVICE)
		pf_notice("%s: recording this boot's time only (no tracing, no replay)",
			  off_here ? "prefetch=off" : "ENABLE_PREFETCH=0");
	return !b->off && (b->opt.start == PF_BOOT_FROM_SERVICE || b->cfg.start_from_initramfs);
}

/* The self-check's role for this boot, from its state file, the boot id and the kernel command line (read
 * before anything is replayed).  An unreadable state file means the default policy: keep replaying. */
static void choose_role(struct boot *b)
{
	char path[PF_BOOT_PATH + 16], id[40];
	snprintf(path, sizeof(path), "%s/selfcheck", b->p.state);
	int rc = pf_selfcheck_load(relative_paths(b) ? pf_replay_relpath(path) : path, &b->sc);
	if (rc)
		pf_warn("self-check state %s unreadable (%s): replaying as by default", path, pf_strerror(rc));
	char *cmdline = NULL;
	int noreplay = pf_kernel_cmdline(&cmdline) == 0 && pf_cmdline_word(cmdline, "prefetch=noreplay");
	free(cmdline);
	pf_boot_id(id, sizeof(id));
	enum pf_policy policy = b->cfg.self_check_interval ? b->sc.policy : PF_POLICY_REPLAY;
	b->role = pf_selfcheck_role(policy, b->cfg.self_check_interval, id, b->sc.boots, noreplay);
	snprintf(b->rec.policy, sizeof(b->rec.policy), "%s", pf_policy_name(policy));
	b->rec.control = b->role == PF_ROLE_CONTROL || !b->cfg.enable_replay;
	if (noreplay)
		pf_notice("prefetch=noreplay: a control boot, nothing replayed");
	else if (b->role != PF_ROLE_REPLAY && b->cfg.enable_replay)
		pf_notice("self-check: a %s (policy %s: %s)", pf_role_name(b->role), pf_policy_name(policy), b->sc.why);
}

static void leave_initramfs_session(const struct boot *b)
{
	if (b->opt.start != PF_BOOT_FROM_SERVICE)
		pf_boot_detach();
}

/* Start the replay if now is its moment (and ENABLE_REPLAY=1); after tracing is set up, a baseline boot says
 * that it is one.  What the replay reads the tracer ignores (same process).  From the initramfs the replay
 * comes first: every read it gets in before init's own reads saves one, and its opens cause no fanotify events
 * of our own yet.  (Its thread keeps the capabilities dropped later; it ends with the replay.) */
static void replay_if_due(struct boot *b, enum replay_moment now)
{
	if (now == REPLAY_AFTER_TRACING && !b->cfg.enable_replay)
		pf_notice("ENABLE_REPLAY=0: tracing and measuring only (a baseline boot)");
	if (now != replay_moment(b->opt.start) || !b->cfg.enable_replay || b->role == PF_ROLE_CONTROL)
		return;
	replay_start(&b->replay, &b->p, &b->cfg, relative_paths(b), b->role == PF_ROLE_NARROW);
	if (now == REPLAY_AT_ROOT_MOUNT)
		b->replay_began = pf_monotonic_s(); /* seconds since boot, as the kernel log says when */
}

/* From the initramfs: wait until the root is complete, change root into it (the copy) and log to the kernel
 * log.  Returns 0 to go on; else (-ETIMEDOUT: no complete root in time; -errno: chroot) this start gives up and
 * leaves the boot to prefetch.service. */
static int wait_for_root(struct boot *b)
{
	if (b->opt.start == PF_BOOT_FROM_SERVICE)
		return 0;
	int copy = b->opt.start == PF_BOOT_FROM_INITRAMFS_COPY;
	int waited = pf_boot_wait_root(copy, EARLY_WAIT_MS), rc = 0;
	if (waited < 0 && !copy)
		pf_log_to_kmsg();
	if (waited < 0) {
		pf_warn("started from the initramfs, but the root had no /proc after %d s: not tracing from "
			"there (prefetch.service or the init script starts prefetchd later)", EARLY_WAIT_MS / 1000);
		rc = -ETIMEDOUT;
	} else if (copy && (chroot(".") != 0 || chdir("/") != 0)) {
		rc = -errno;
		pf_err("cannot change root to %s: %s", b->opt.root, pf_strerror(rc));
	}
	if (rc) {
		b->ready_owed = 0; /* not prefetch.service: nobody waits for it */
		return rc;
	}
	if (!copy)
		pf_log_to_kmsg(); /* the root's /dev, which udev's init-bottom script has moved there by now */
	if (b->replay_began >= 0)
		pf_notice("started from the initramfs when the root was mounted (replay began at %.2f s of uptime; "
			  "the root was complete %d ms later)", b->replay_began, waited);
	else
		pf_notice("started from the initramfs (the root was complete after %d ms)", waited);
	return 0;
}

/* The pid file's lock first: when the initramfs started us already, this (prefetch.service) instance is done
 * before it sets up anything.  Our pid goes in once tracing is set up.  Returns 0 to go on, else the pid file's
 * error (-EBUSY: held by another instance; logged, b->exit set). */
static int claim_the_boot(struct boot *b)
{
	int rc = pf_mkdir(b->p.runtime, 0755);
	if (rc)
		pf_warn("cannot create %s: %s", b->p.runtime, pf_strerror(rc));
	pid_t holder = 0;
	rc = pf_pidfile_lock(b->p.pidfile, &b->pid, &holder);
	if (rc == 0)
		return 0;
	if (rc == -EBUSY && holder > 0 && b->opt.start == PF_BOOT_FROM_SERVICE &&
	    pf_notify_adopt(holder, "tracing (started from the initramfs)") > 0) {
		pf_notice("prefetchd is already running (pid %ld, %s: started from the initramfs): the unit adopts it",
			  (long)holder, b->p.pidfile);
		b->ready_owed = 0; /* READY=1 went with MAINPID= */
	} else if (rc == -EBUSY && holder > 0) {
		pf_notice("prefetchd is already running (pid %ld, %s; started from the initramfs?): nothing to do",
			  (long)holder, b->p.pidfile);
	} else if (rc == -EBUSY) {
		pf_err("another process holds %s but wrote no pid within 3 s: not starting a second tracer",
		       b->p.pidfile);
		b->exit = PF_EXIT_FAILURE;
	} else {
		char why[PF_BOOT_PATH + 96] = "";
		if (rc == PF_EUNSAFE)
			pf_state_dir_why(b->p.runtime, why, sizeof(why));
		pf_err("pid file %s: %s", b->p.pidfile, why[0] ? why : pf_strerror(rc));
		b->exit = PF_EXIT_FAILURE;
	}
	b->cut_replay = 1; /* begun from the initramfs: the instance holding the lock replays */
	return rc;
}

/* What a previous run in the same runtime dir left: its boot end (this boot has not ended) and its buffer. */
static void clear_previous_run(const struct boot *b)
{
	int rc;
	pf_state_unlink(b->p.boot_end);
	if (pf_boot_dir_writable(b->p.state) == 0 && (rc = pf_boot_flush_pending(&b->p)) > 0)
		pf_notice("moved %d buffered item(s) from %s to %s", rc, b->p.pending, b->p.state);
}

static void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: the tracer's poll returns at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
}

/* fanotify marks on TRACE_MOUNTS, then our pid in the pid file (drop_privileges then keeps only the
 * capabilities tracing needs).  Returns 0, or the tracer's error (logged). */
static int set_up_tracing(struct boot *b)
{
	if (b->opt.start != PF_BOOT_FROM_SERVICE) /* init is loading now: this can wait for idle CPU (the replay's
						   * thread has its own priority) */
		(void)setpriority(PRIO_PROCESS, 0, BOOT_NICE);
	const char *mounts[PF_CONFIG_MAX_MOUNTS];
	for (int i = 0; i < b->cfg.nmounts; i++)
		mounts[i] = b->cfg.mounts[i];
	char err[512] = "";
	struct pf_trace_opts to = { .mounts = mounts, .nmounts = b->cfg.nmounts, .timeout_s = b->cfg.trace_timeout,
				    .medium_override = b->cfg.medium, .err = err, .errlen = sizeof(err) };
	int rc = pf_tracer_open(&to, &b->tracer);
	if (rc) {
		pf_notice("boot tracing unavailable (%s): prefetch skipped this boot", err[0] ? err : pf_strerror(rc));
		b->tracer = NULL;
		return rc; /* a replay begun from the initramfs is still worth its reads to the boot */
	}
	if ((rc = pf_pidfile_publish(&b->pid)))
		pf_warn("cannot write our pid to %s: %s ('prefetchd stop' cannot reach us)", b->p.pidfile,
			pf_strerror(rc));
	b->cpu_setup = cpu_seconds(RUSAGE_THREAD); /* start-up and fanotify marks (the replay has its own thread) */
	return 0;
}

/* After the replay's thread has started, whenever it starts: it keeps what it had (the XFS and btrfs metadata
 * passes ask the filesystem with bulkstat and tree searches, which need CAP_SYS_ADMIN), as it does when it
 * starts from the initramfs. */
static void drop_privileges(void)
{
	static const cap_value_t keep[] = PF_TRACER_CAPS;
	int rc = pf_privileges_drop(keep, (int)(sizeof(keep) / sizeof(keep[0])));
	if (rc)
		pf_warn("could not drop capabilities: %s", pf_strerror(rc));
}

static void notify_ready(struct boot *b)
{
	pf_notify_ready();
	pf_notify_status(b->replay.started ? "tracing, replaying the layout" : "tracing");
	b->ready_owed = 0;
}

static void trace_until_stop(struct boot *b)
{
	(void)setpriority(PRIO_PROCESS, 0, BOOT_NICE); /* this thread only (Linux); the replay's is its own */
	int rc = pf_tracer_run(b->tracer, &stop_requested);
	if (rc)
		pf_warn("tracing stopped early: %s", pf_strerror(rc));
	b->tracing_failed = rc != 0;
}

/* The boot has ended: measure before the residency pass and the aggregation add I/O of their own. */
static void measure_boot_end(struct boot *b)
{
	pf_boot_id(b->rec.boot_id, sizeof(b->rec.boot_id));
	b->rec.boot_s = pf_boot_end(b->p.boot_end, b->rec.end_source, sizeof(b->rec.end_source));
	b->cpu_at_end = cpu_seconds(RUSAGE_SELF); /* the work below is after the boot's end */
	/* a btrfs subvolume's st_dev names no device: its filesystem's device then (what the tracer records too) */
	unsigned ndevices;
	(void)pf_fsid_block_device(b->cfg.nmounts ? b->cfg.mounts[0] : "/", &b->root_dev, &ndevices); /* else st_dev */
	pf_boot_record_disk(b->root_dev, ndevices, &b->rec);
	if (pf_psi_io_ms(&b->rec.psi_io_ms)) {
		b->rec.psi_io_ms = -1; /* the record's "not known" */
		pf_notice("no /proc/pressure/io (a kernel without PSI, or psi=0): this boot's I/O stall is not recorded");
	}
	int64_t own;
	if (pf_self_read_bytes(&own) == 0 && b->rec.sectors >= 0) /* what the boot read itself: the disk's reads less ours */
		b->rec.uncovered_mib = (double)(b->rec.sectors * 512 > own ? b->rec.sectors * 512 - own : 0) / 1048576.0;
	pf_notify_stopping();
	b->cut_replay = 1;
}

/* The trace from the tracer, which is closed; the capabilities only storing it needs.  NULL if it failed. */
static struct pf_image *finish_tracing(struct boot *b, struct pf_trace_stats *st)
{
	struct pf_image *trace = NULL;
	int rc = pf_tracer_finish(b->tracer, &trace, st);
	pf_tracer_close(b->tracer);
	b->tracer = NULL;
	static const cap_value_t done[] = PF_TRACER_CAPS_DONE;
	(void)pf_privileges_drop(done, (int)(sizeof(done) / sizeof(done[0]))); /* fewer than before: cannot fail */
	if (rc) {
		snprintf(b->lost, sizeof(b->lost), "building the trace failed: %s", pf_strerror(rc));
		pf_warn("%s", b->lost);
		return NULL;
	}
	if (b->tracing_failed)
		trace->flags |= PF_IMG_INCOMPLETE;
	return trace;
}

/* Into PREFETCH_DIR, or buffered in the runtime dir while that is not writable yet. */
static void store_trace(struct boot *b, const struct pf_image *trace, const char *name)
{
	int rc = pf_boot_dir_writable(b->p.state);
	if (rc == 0 || rc == PF_EUNSAFE) { /* an unsafe one is refused in one line there, not buffered for */
		if ((rc = pf_boot_persist(&b->p, &b->cfg, trace, name, &b->rec, 1)) && trace)
			snprintf(b->lost, sizeof(b->lost), "cannot store it in %s: %s", b->p.traces, pf_strerror(rc));
	} else if ((rc = pf_boot_buffer_pending(&b->p, trace, name, &b->rec))) {
		snprintf(b->lost, sizeof(b->lost), "%s is not writable and buffering in %s failed (%s)", b->p.state,
			 b->p.pending, pf_strerror(rc));
		pf_warn("%s: this boot's trace is lost", b->lost);
	} else {
		pf_notice("%s is not writable yet: trace and boot record wait in %s", b->p.state, b->p.pending);
		pf_warn_if_incomplete(trace, name);
		b->pending = 1;
	}
}

/* A traced boot: its trace, the layout for the next boot, and its record. */
static void record_boot(struct boot *b)
{
	/* a run that moved nothing leaves the disk as it was: the boot is judged as one without a reorder */
	b->rec.reorder = b->cfg.enable_reordering && pf_boot_reorder_armed(&b->p) && pf_boot_reorder_moved(&b->p);
	pf_boot_settings(&b->p, &b->cfg, b->root_dev, b->rec.reorder, &b->rec);
	struct pf_trace_stats st = { 0 };
	struct pf_image *trace = finish_tracing(b, &st);
	b->rec.when = (int64_t)time(NULL);
	const struct replay_job *j = &b->replay;
	if (j->started && j->load_rc == 0) {
		b->rec.replay_mib = (double)j->st.bytes / 1048576.0;
		b->rec.replay_s = j->st.seconds;
		b->rec.replay_cpu_s = j->cpu;
		uint64_t files, used = pf_layout_bytes_used(j->layout, trace, &files); /* the replay may have read less */
		b->rec.used_mib = (double)(used < j->st.bytes ? used : j->st.bytes) / 1048576.0;
		b->rec.replay_files = j->st.files;
		b->rec.used_files = (int64_t)(files < j->st.files ? files : j->st.files);
		if (j->read_at_ns && trace) {
			uint64_t late = pf_layout_bytes_late(j->layout, trace, st.start_ns, (const uint64_t *)j->read_at_ns,
							     &files);
			b->rec.late_files = (int64_t)files;
			b->rec.late_mib = (double)late / 1048576.0;
			pf_notice("of the layout's files the boot opened, %llu (%.1f MiB) before the replay had read them",
				  (unsigned long long)files, b->rec.late_mib);
		}
	} else {
		b->rec.replay_mib = 0;
		b->rec.replay_files = 0;
	}
	char name[128];
	pf_boot_trace_name_free(&b->p, name, sizeof(name), b->rec.when, b->rec.boot_id);
	pf_notice("boot finished at %.2f s (%s); disk %s busy %.2f s; %lu events (%lu own), %lu overflows; prefetchd "
		  "CPU %.2f s by then (%.2f s to set up tracing)", b->rec.boot_s, b->rec.end_source, b->rec.disk,
		  b->rec.io_ms >= 0 ? (double)b->rec.io_ms / 1000.0 : -1.0, st.events, st.own_events, st.overflows,
		  b->cpu_at_end, b->cpu_setup);
	store_trace(b, trace, name);
	pf_image_free(trace);
	b->recorded = 1;
}

/* Off: until 'prefetchd stop' (or a signal) says the boot has ended, or TRACE_TIMEOUT; asleep meanwhile. */
static void wait_for_boot_end(const struct boot *b)
{
	struct timespec left = { .tv_sec = b->cfg.trace_timeout > 0 ? b->cfg.trace_timeout : 1 };
	while (!stop_requested && nanosleep(&left, &left) != 0 && errno == EINTR)
		;
}

/* A boot with prefetch off by configuration: the same record as any boot's (boot time, disk busy time, I/O
 * stall, the settings), read from a few counters at boot end; nothing traced, replayed or aggregated.  The pid
 * file is held as by a tracer, so that 'prefetchd stop' (prefetch-stop.service, the stop script) ends it. */
static void record_off_boot(struct boot *b)
{
	if (claim_the_boot(b))
		return;
	clear_previous_run(b);
	catch_stop_signals();
	int rc = pf_pidfile_publish(&b->pid);
	if (rc)
		pf_warn("cannot write our pid to %s: %s ('prefetchd stop' cannot reach us)", b->p.pidfile, pf_strerror(rc));
	static const cap_value_t done[] = PF_TRACER_CAPS_DONE;
	(void)pf_privileges_drop(done, (int)(sizeof(done) / sizeof(done[0])));
	pf_notify_ready();
	pf_notify_status("prefetch off: waiting for the boot's end to record its time");
	b->ready_owed = 0;
	wait_for_boot_end(b);
	measure_boot_end(b);
	b->rec.off = 1;
	b->rec.reorder = b->cfg.enable_reordering && pf_boot_reorder_armed(&b->p) && pf_boot_reorder_moved(&b->p);
	pf_boot_settings(&b->p, &b->cfg, b->root_dev, b->rec.reorder, &b->rec);
	b->rec.when = (int64_t)time(NULL);
	b->rec.replay_mib = 0;
	b->rec.replay_files = 0;
	pf_notice("boot finished at %.2f s (%s); disk %s busy %.2f s; prefetch off (recorded only)", b->rec.boot_s,
		  b->rec.end_source, b->rec.disk, b->rec.io_ms >= 0 ? (double)b->rec.io_ms / 1000.0 : -1.0);
	if (pf_boot_dir_writable(b->p.state) == 0)
		pf_boot_persist_record(&b->p, &b->rec, 1);
	else if ((rc = pf_boot_buffer_pending(&b->p, NULL, NULL, &b->rec)))
		pf_warn("%s is not writable and buffering in %s failed (%s): this boot's record is lost", b->p.state,
			b->p.pending, pf_strerror(rc));
	else
		b->pending = 1;
	b->recorded = 1;
}

/* The buffered trace's next chance: as soon as PREFETCH_DIR is writable (the runtime dir is gone after a
 * reboot). */
static void wait_for_state_dir(struct boot *b)
{
	stop_requested = 0;
	for (int waited = 0; waited < PF_BOOT_PENDING_WAIT_S && !stop_requested; waited += 2) {
		sleep(2);
		if (pf_boot_dir_writable(b->p.state) == 0) {
			if (b->off) /* the record went with the buffer */
				pf_boot_persist_record(&b->p, &b->rec, 0);
			else
				pf_boot_persist(&b->p, &b->cfg, NULL, NULL, &b->rec, 0);
			return;
		}
	}
	pf_warn("%s stayed unwritable: the buffered trace stays in %s (moved by the next 'prefetchd boot' if "
		"that directory survives)", b->p.state, b->p.pending);
}

int cmd_boot(int argc, char **argv)
{
	struct boot b = { .replay_began = -1.0, .pid = { .fd = -1 }, .exit = PF_EXIT_OK };
	pf_boot_record_init(&b.rec);
	int rc = pf_boot_options_parse(argc, argv, &b.opt);
	if (rc >= 0)
		return rc;

	if (enter_root(&b))
		goto out;
	if (read_config(&b))
		goto out;
	if (!wanted(&b)) {
		if (b.off && b.opt.start == PF_BOOT_FROM_SERVICE)
			record_off_boot(&b);
		goto out;
	}
	choose_role(&b);
	leave_initramfs_session(&b);
	replay_if_due(&b, REPLAY_AT_ROOT_MOUNT);
	if (wait_for_root(&b))
		goto out;
	if (claim_the_boot(&b))
		goto out;
	clear_previous_run(&b);
	catch_stop_signals();
	replay_if_due(&b, REPLAY_BEFORE_TRACING);
	if (set_up_tracing(&b))
		goto out;
	replay_if_due(&b, REPLAY_AFTER_TRACING);
	drop_privileges();
	notify_ready(&b);
	trace_until_stop(&b);
	measure_boot_end(&b);
out:
	b.rec.prefetch = replay_finish(&b.replay, b.cut_replay);
	if (b.tracer)
		record_boot(&b);
	pf_image_free(b.replay.layout);
	free((void *)b.replay.read_at_ns);
	if (b.recorded && (rc = pf_pidfile_outcome(&b.pid, b.lost[0] ? b.lost : NULL)))
		pf_warn("cannot record the outcome in %s: %s", b.p.pidfile, pf_strerror(rc));
	pf_pidfile_release(&b.pid); /* 'prefetchd stop' returns now: the trace is written (or buffered) */
	if (b.ready_owed)
		pf_notify_ready();
	if (b.pending)
		wait_for_state_dir(&b);
	return b.exit;
}
