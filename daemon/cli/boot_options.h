/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The command line of 'prefetchd boot', and what it says about where prefetchd was started from. */
#ifndef PREFETCH_BOOT_OPTIONS_H
#define PREFETCH_BOOT_OPTIONS_H

/* How long to wait for PREFETCH_DIR to become writable when tracing ended before it was (early-boot buffer). */
#define PF_BOOT_PENDING_WAIT_S 600

/* Where prefetchd was started from (initramfs/local-bottom/prefetch starts the two initramfs cases). */
enum pf_boot_start {
	/* prefetch.service or the rcS init script: the boot is under way, and / is the root. */
	PF_BOOT_FROM_SERVICE,
	/* --from-initramfs --root DIR: the initramfs's own copy, right after DIR was mounted.  DIR is the root;
	 * it becomes our working directory now (paths relative to it) and our root once it is complete. */
	PF_BOOT_FROM_INITRAMFS_COPY,
	/* --from-initramfs: the installed prefetchd, run chrooted into the root by the initramfs (or by a copy
	 * that is not the installed version); / is the root, not yet complete. */
	PF_BOOT_FROM_INITRAMFS_CHROOTED,
};

struct pf_boot_options {
	const char *config; /* --config FILE, or NULL for the default */
	const char *root;   /* --root DIR (PF_BOOT_FROM_INITRAMFS_COPY only) */
	enum pf_boot_start start;
};

/* Parse the command line (argv[0] is "boot").  Returns PF_EXIT_GO_ON (commands.h) when the boot is to run; else
 * the exit status, after printing the usage to stdout (--help) or saying what is wrong with the command line
 * (usage_error.h). */
int pf_boot_options_parse(int argc, char **argv, struct pf_boot_options *o);

#endif
