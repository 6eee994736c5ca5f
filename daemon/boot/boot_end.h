/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When did the boot finish?  The boot time 'prefetchd report' compares is the uptime at that moment, not when
 * tracing stopped (that is LOGIN_TRACING_DELAY later).  Sources, best first:
 *   "file"        $PREFETCH_RUNTIME_DIR/boot-end: the stop init script writes the uptime at which it started
 *                 (end of the default runlevel); tests write it too;
 *   "systemd"     the manager's FinishTimestampMonotonic over sd-bus (what systemd-analyze reports as
 *                 "Startup finished ... = total"), when systemd is PID 1 and has finished booting;
 *   "default.target"  else when default.target became active (ActiveEnterTimestampMonotonic), if it has;
 *   "trace-stop"  the uptime now (nothing better known, e.g. TRACE_TIMEOUT came before the boot finished). */
#ifndef PREFETCH_BOOT_END_H
#define PREFETCH_BOOT_END_H

#include <stddef.h>

/* Returns the uptime in seconds at boot end and names the source in source (at least 16 bytes). */
double pf_boot_end(const char *boot_end_file, char *source, size_t len);

/* Parse the first number of a boot-end file's text ("53.40" or "53.40 12.00").  Returns 0 or -EINVAL. */
int pf_boot_end_parse(const char *text, double *uptime);

#endif
