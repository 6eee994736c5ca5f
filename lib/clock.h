/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Clock readings: the monotonic clock (CLOCK_MONOTONIC: since boot, not set by anyone, stopped in suspend) and the
 * kernel's uptime. */
#ifndef PREFETCH_CLOCK_H
#define PREFETCH_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC now, in seconds. */
double pf_monotonic_s(void);

/* CLOCK_MONOTONIC now, in nanoseconds. */
uint64_t pf_monotonic_ns(void);

/* Seconds since boot (/proc/uptime) into *up.  Returns 0, -errno (no /proc), or PF_ECORRUPT (unreadable text). */
int pf_uptime(double *up);

#endif
