/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Starting 'prefetchd boot' from the initramfs (initramfs-tools' local-bottom script, see
 * initramfs/local-bottom/prefetch): the root filesystem is mounted, but systemd has not started yet and has read
 * nothing.  That is where most of a boot's disk time goes before prefetch.service could start (the boot lab
 * measured ~600 of ~1100 requests), so the replay and the trace start here.
 *
 * The initramfs's own copy of prefetchd starts right after the root is mounted, with the root as its working
 * directory: the replay begins there (paths relative to the root), while the initramfs's remaining scripts run
 * (~0.4 s of CPU in the boot lab, with the disk idle); once initramfs-tools has moved /run, /sys and /proc into
 * the root we change root into it and set up tracing.  (An installed prefetchd run through chroot, the fallback,
 * waits for the same moves.) */
#ifndef PREFETCH_BOOT_EARLY_H
#define PREFETCH_BOOT_EARLY_H

#ifndef SBINDIR
#define SBINDIR "/usr/sbin"
#endif
/* Where the installed prefetchd is, inside the root (the Makefile's SBINDIR). */
#define PF_PREFETCHD_PATH SBINDIR "/prefetchd"

/* Is the running prefetchd (the initramfs's copy) the version installed in the root mounted at root, i.e. its
 * PF_PREFETCHD_PATH the same size?  An initramfs not updated since prefetch was holds an older copy. */
int pf_boot_copy_current(const char *root);

/* Detach from the initramfs's session: new session, SIGHUP ignored, stdio on /dev/null. */
void pf_boot_detach(void);

/* Wait at most timeout_ms for /proc and /sys of the new root (relative: in the working directory, a root not
 * changed into yet; else under /), then set the OOM score adjustment prefetch.service would have set
 * (OOMScoreAdjust=).  Logs nothing itself.  Returns the milliseconds waited, or -ETIMEDOUT when the root never
 * got its /proc (not an initramfs-tools boot?). */
int pf_boot_wait_root(int relative, int timeout_ms);

#endif
