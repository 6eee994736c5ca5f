/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replaying a layout: pull its ranges into the page cache before the boot asks for them.
 * Rotational media: a metadata pass, then one sweep sorted by physical block, in time bins.
 * Solid-state media: several threads in first-touch order. */
#ifndef PREFETCH_REPLAY_H
#define PREFETCH_REPLAY_H

#include "format.h"
#include "replay_opts.h"
#include "replay_path.h"

/* Returns 0 (also when some files were skipped, or when stopped or timed out: see st) or a negative pf error
 * (lib/error.h: PF_EKIND for a trace, -ENOMEM).  Logs nothing; thread-safe with respect to other threads of the
 * process (it starts up to opts->threads readers of its own and joins them before returning).  Memory is bounded
 * by the layout's size; a changed or missing file is skipped, never read. */
int pf_replay(const struct pf_image *layout, const struct pf_replay_opts *o, struct pf_replay_stats *st);

#endif
