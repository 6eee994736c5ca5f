/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --check figures: how a sequence of blocks lies on disk and what reading it would cost on a 7200 rpm disk
 * (lib/disk_model.h, in blocks over the filesystem's span: the simulated disk charges the same).  Pure
 * functions. */
#ifndef PREFETCH_REORDER_CHECK_H
#define PREFETCH_REORDER_CHECK_H

#include "run.h"

#include <stddef.h>
#include <stdint.h>

struct pf_layout_figures {
	uint64_t files;            /* distinct owners */
	uint64_t blocks;
	uint64_t extents;          /* physically contiguous runs, in layout order */
	uint64_t discontinuities;  /* extents - 1 */
	uint64_t seeks;            /* head movements the model charges a seek for (layout order) */
	double read_s;             /* estimated read time in layout order (as the boot asks for it) */
	double sweep_s;            /* estimated read time sorted by block (a rotational-disk replay) */
	uint64_t sweep_seeks;
};

/* Figures for segs (pblk/len; owner distinguishes files) on a filesystem of span blocks of bsize bytes. */
void pf_figures(const struct pf_seg *segs, size_t n, uint32_t bsize, uint64_t span, struct pf_layout_figures *f);


/* Model time in seconds of moving the head from block `from` to block `to` (pf_disk_move_s in blocks). */
double pf_seek_time(uint64_t from, uint64_t to, uint32_t bsize, uint64_t span, int *is_seek);

#endif
