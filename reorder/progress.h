/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Progress on a terminal: one line rewritten in place on stderr. */
#ifndef PREFETCH_REORDER_PROGRESS_H
#define PREFETCH_REORDER_PROGRESS_H

#include <stdint.h>

/* pf_reorder_opts.progress_cb; ctx unused. */
void pf_progress_show(void *ctx, uint64_t done_blocks, uint64_t total_blocks);
/* Clear the line if one was drawn. */
void pf_progress_done(void);

#endif
