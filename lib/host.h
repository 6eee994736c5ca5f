/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What prefetchd draws from the running host to decide a boot's role: the kernel's boot id and command line.
 * Each can be replaced from the environment, for tests only, so that a test's boots do not depend on the
 * machine it runs on:
 *   PREFETCH_BOOT_ID   the boot id (any word without spaces, at most 36 characters kept)
 *   PREFETCH_CMDLINE   the kernel command line (may be empty)
 */
#ifndef PF_HOST_H
#define PF_HOST_H

#include <stddef.h>

/* The boot id into buf (at least 37 bytes): $PREFETCH_BOOT_ID, else /proc/sys/kernel/random/boot_id, "-" if
 * unknown. */
void pf_boot_id(char *buf, size_t len);

/* The kernel command line as a new string (*text, the caller frees): $PREFETCH_CMDLINE, else /proc/cmdline.
 * Returns 0 or a negative errno (*text NULL). */
int pf_kernel_cmdline(char **text);

#endif
