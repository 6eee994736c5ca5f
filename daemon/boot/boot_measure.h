/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a boot got from prefetch, for its boot record (boot_log.h's self-check columns): how much of the
 * replayed layout the boot then used, how much it read from the disk itself, and how long it stalled on I/O.
 * The parsers are pure (unit-tested on text); the readers return -1 where the kernel does not say. */
#ifndef PREFETCH_BOOT_MEASURE_H
#define PREFETCH_BOOT_MEASURE_H

#include "format.h"

#include <stdint.h>

/* The layout's bytes in files the trace holds (the boot opened them), by path; *files (if not NULL) gets how
 * many of the layout's files those are. */
uint64_t pf_layout_bytes_used(const struct pf_image *layout, const struct pf_image *trace, uint64_t *files);

/* "some ... total=US" of /proc/pressure/io text, in ms; -1 if absent. */
int64_t pf_psi_some_ms(const char *text);
/* The same, read from /proc/pressure/io: -1 on kernels without PSI (or with it off). */
int64_t pf_psi_io_ms(void);

/* "read_bytes: N" of /proc/PID/io text; -1 if absent. */
int64_t pf_proc_io_read_bytes(const char *text);
/* This process's bytes read from storage so far (/proc/self/io), -1 if unknown. */
int64_t pf_self_read_bytes(void);

#endif
