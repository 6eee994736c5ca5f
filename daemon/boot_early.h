/* Starting 'prefetchd boot' from the initramfs (initramfs-tools' init-bottom script, see
 * initramfs/init-bottom/prefetch): the root filesystem is mounted, but systemd has not started yet and has read
 * nothing.  That is where most of a boot's disk time goes before prefetch.service could start (the boot lab
 * measured ~600 of ~1100 requests), so the replay and the trace start here.
 *
 * The init-bottom script runs us chrooted into the new root before initramfs-tools moves /run, /sys and /proc
 * there; we detach from the initramfs' session and wait (bounded) until they appear. */
#ifndef PREFETCH_BOOT_EARLY_H
#define PREFETCH_BOOT_EARLY_H

/* Detach (new session, SIGHUP ignored, stdio on /dev/null), wait at most timeout_ms for /proc, /sys and /run
 * of the new root, then log to the kernel log (/dev/kmsg: no journal yet) and set the OOM score adjustment
 * prefetch.service would have set (OOMScoreAdjust=).
 * Logs nothing itself.  Returns the milliseconds waited, or -ETIMEDOUT when the root never got its /proc (not an
 * initramfs-tools boot?). */
int pf_boot_early_setup(int timeout_ms);

#endif
