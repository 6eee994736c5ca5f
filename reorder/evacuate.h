/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Making room: on a nearly full, aged filesystem the free space is too scattered for the layout to go into one
 * run.  The other files' blocks inside a window (window.h) are moved out first, into the free space outside
 * it, by the same relocation as the layout's (relocate.h: copied, read back, switched, safe against a power
 * cut), as a plan of their own; then the layout is planned into the emptied window.  This module finds what
 * lies in the window: it reads every inode (a full inode scan; only done when the model says the window
 * would pay), and turns the regular files' and directories' blocks there into a layout-like list of wishes
 * that pf_collect() checks and maps like the layout's. */
#ifndef PREFETCH_REORDER_EVACUATE_H
#define PREFETCH_REORDER_EVACUATE_H

#include "collect.h"
#include "layout_load.h"
#include "plan.h"

#include <ext2fs/ext2fs.h>

struct pf_evac {
	struct pf_brange window;
	struct pf_file *files;       /* one record per inode with blocks in the window, as the inode is now */
	size_t nfiles;
	struct pf_layouts lay;       /* its wishes: the logical ranges lying in the window, by physical block */
	struct pf_collect col;       /* pf_collect() of lay: what the evacuation plan moves */
	uint64_t stuck_blocks;       /* used blocks in the window that nothing moves: metadata, symlinks, unwritten
	                              * extents, files pf_collect() skips */
};

/* Everything movable in window, the layout's own files included (the layout's plan brings their blocks back
 * into the window in order), from a scan of all inodes.  free_runs (normalized) counts the window's free
 * blocks for stuck_blocks.  Returns 0 or a negative pf error (lib/error.h). */
int pf_evac_collect(ext2_filsys fs, const struct pf_brange *free_runs, size_t nfree, struct pf_brange window,
		    struct pf_evac *out);
void pf_evac_free(struct pf_evac *e);

/* The window's free space once everything movable has left it: window ∩ (free_runs ∪ e->col's segments).
 * *out is malloc'd, sorted.  Returns 0 or -ENOMEM. */
int pf_evac_window_free(const struct pf_evac *e, const struct pf_brange *free_runs, size_t nfree,
			struct pf_brange **out, size_t *nout);

/* Pure helpers for predicting the two plans of a run that makes room (first `out`, the evacuation, then `in`,
 * the layout's plan made on the set as `out` leaves it), each plan taken as the copies it carries out
 * (pf_replay_plan_moves):
 * pf_evac_moved_segs: segs (physical runs of the layout now) as they lie after plan out (pieces split where a
 * move begins or ends); pf_evac_compose: where every block lies after both plans, as one list of moves with
 * disjoint sources (replay_predict.h).  *o is malloc'd.  Return 0 or -ENOMEM. */
int pf_evac_moved_segs(const struct pf_plan *out, const struct pf_seg *segs, size_t n, struct pf_seg **o,
		       size_t *no);
struct pf_cost_move;
int pf_evac_compose(const struct pf_plan *out, const struct pf_plan *in, struct pf_cost_move **o, size_t *no);

#endif
