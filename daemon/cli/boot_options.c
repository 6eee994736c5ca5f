/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_options.h"

#include "commands.h"
#include "config.h"
#include "usage_error.h"

#include <getopt.h>
#include <stdio.h>

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
		PF_BOOT_PENDING_WAIT_S);
}

int pf_boot_options_parse(int argc, char **argv, struct pf_boot_options *o)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					       { "from-initramfs", no_argument, NULL, 'I' },
					       { "root", required_argument, NULL, 'R' },
					       { "help", no_argument, NULL, 'h' },
					       { NULL, 0, NULL, 0 } };
	*o = (struct pf_boot_options){ .config = NULL };
	int from_initramfs = 0;
	int c;
	optind = 1;
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'I': from_initramfs = 1; break;
		case 'R': o->root = optarg; break;
		case 'h': usage(stdout); return PF_EXIT_OK;
		default: return pf_usage_bad_option(c, argv);
		}
	}
	if (optind != argc)
		return pf_usage_error("unexpected argument '%s'", argv[optind]);
	if (o->root && !from_initramfs)
		return pf_usage_error("--root needs --from-initramfs");
	o->start = !from_initramfs ? PF_BOOT_FROM_SERVICE
		 : o->root	   ? PF_BOOT_FROM_INITRAMFS_COPY
				   : PF_BOOT_FROM_INITRAMFS_CHROOTED;
	return PF_EXIT_GO_ON;
}
