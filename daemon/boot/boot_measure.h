/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a boot got from prefetch, for its boot record (boot_log.h's self-check columns): how much of the
 * replayed layout the boot then used, how much it read from the disk itself, and how long it stalled on I/O.
 * The parsers are pure (unit-tested on text).  Each returns 0 with its figure, or a negative pf error:
 * PF_ECORRUPT when the text does not say, the reading's error (-ENOENT: a kernel without it) otherwise. */
#ifndef PREFETCH_BOOT_MEASURE_H
#define PREFETCH_BOOT_MEASURE_H

#include "format.h"
#include "proc_io.h" /* pf_self_read_bytes: what the boot read itself */

#include <stdint.h>

/* The layout's bytes in files the trace holds (the boot opened them), by path; *files (if not NULL) gets how
 * many of the layout's files those are. */
uint64_t pf_layout_bytes_used(const struct pf_image *layout, const struct pf_image *trace, uint64_t *files);

/* Of the layout's files the trace holds, those the boot opened before the replay read them: their first touch
 * (trace_start_ns + first_ns, CLOCK_MONOTONIC) came before read_at_ns[i], when the replay submitted its first
 * read of layout file i (pf_replay_opts), or the replay never read them (skipped as changed, or not reached).
 * Returns their layout bytes; *files gets how many.  A file opened before tracing began counts as opened then
 * (first_ns 0), so a replay that began earlier can look ahead of the boot where it was not. */
uint64_t pf_layout_bytes_late(const struct pf_image *layout, const struct pf_image *trace, uint64_t trace_start_ns,
			      const uint64_t *read_at_ns, uint64_t *files);

/* "some ... total=US" of /proc/pressure/io text, in ms. */
int pf_psi_some_ms(const char *text, int64_t *ms);
/* The same, read from /proc/pressure/io (an error on kernels without PSI, or with it off). */
int pf_psi_io_ms(int64_t *ms);

#endif
