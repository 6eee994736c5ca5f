/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pf_reorder: open read-only and refuse or plan; reopen read-write and relocate unit by unit within the time
 * budget; close. */
#include "reorder.h"

#include "journal_io.h"

#include "clock.h"
#include "collect.h"
#include "discard.h"
#include "erase_block.h"
#include "evacuate.h"
#include "format.h"
#include "error.h"
#include "freespace.h"
#include "layout_load.h"
#include "medium.h"
#include "plan.h"
#include "relocate.h"
#include "reorder_open.h"
#include "replay_predict.h"
#include "disk_model.h"
#include "warm.h"
#include "runs.h"
#include "window.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void summarize_skips(const struct pf_reorder_opts *o, const struct pf_collect *c, struct pf_reorder_result *res)
{
	size_t len = 0;
	for (int r = 1; r < PF_SKIP_NR; r++) {
		if (!c->skipped[r])
			continue;
		res->files_skipped += c->skipped[r];
		int k = snprintf(res->skipped + len, sizeof(res->skipped) - len, "%s%u %s", len ? ", " : "",
				 c->skipped[r], pf_skip_reason(r));
		if (k > 0 && (size_t)k < sizeof(res->skipped) - len)
			len += (size_t)k;
	}
	for (size_t i = 0; i < c->nfiles; i++)
		if (c->files[i].skip)
			pf_note(o->notes, "skipped %s (inode %u): %s", c->files[i].rec->path ? c->files[i].rec->path : "?",
				c->files[i].ino, pf_skip_reason(c->files[i].skip));
	if (c->full_leaf_blocks)
		pf_note(o->notes, "%llu blocks left in place: moving them would overflow a full extent leaf",
			(unsigned long long)c->full_leaf_blocks);
	if (c->uninit_blocks)
		pf_note(o->notes, "%llu blocks in unwritten extents left in place", (unsigned long long)c->uninit_blocks);
}

/* Each file's inode, by owner (*out malloc'd).  Returns 0 or -ENOMEM. */
static int inos_of(const struct pf_collect *col, ext2_ino_t **out)
{
	*out = malloc((col->nfiles ? col->nfiles : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < col->nfiles; i++)
		(*out)[i] = col->files[i].ino;
	return 0;
}

/* Plan, leaving free (besides the reserve) the spare extent leaves the plan will need (pf_reloc_begin
 * allocates them from what the plan left): a plan that took every free block could not start.  Planning
 * again with a bigger reserve needs no more spares than before (fewer moves), so this ends quickly.  sim:
 * the inodes as earlier runs will leave them (NULL: as they are). */
static int plan_with_spares(ext2_filsys fs, const struct pf_collect *col, const struct pf_brange *free_runs,
			    size_t nfree, const struct pf_reloc_sim *sim, struct pf_plan_params *prm, struct pf_plan *plan)
{
	ext2_ino_t *inos = malloc((col->nfiles ? col->nfiles : 1) * sizeof(*inos));
	if (!inos)
		return -ENOMEM;
	for (size_t i = 0; i < col->nfiles; i++)
		inos[i] = col->files[i].ino;
	int rc = 0;
	for (int round = 0; round < 8; round++) {
		rc = pf_plan_make(col->segs, col->nsegs, free_runs, nfree, prm, plan);
		uint64_t need = 0;
		if (!rc)
			rc = pf_reloc_spares_needed(fs, plan, inos, col->nfiles, sim, &need);
		if (rc || plan->free_blocks - plan->blocks_to_move >= need)
			break;
		prm->reserve_blocks += need;
		pf_plan_free(plan);
	}
	free(inos);
	return rc;
}

/* n rounded up to whole erase blocks (eb <= 1: n). */
static uint64_t erase_round(uint64_t n, uint64_t eb)
{
	return eb > 1 ? (n + eb - 1) / eb * eb : n;
}

static int run_cmp(const void *a, const void *b)
{
	const struct pf_brange *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

/* What units [0, n) copy: bytes, and the erase blocks their destinations touch (each counted once), of them
 * those covered whole. */
static void unit_writes(const struct pf_plan *p, size_t n, uint32_t bsize, const struct pf_erase_block *eb,
			uint64_t *bytes, uint64_t *ebs, uint64_t *whole)
{
	*bytes = *ebs = 0;
	if (whole)
		*whole = 0;
	struct pf_brange *r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return; /* figures only */
	for (size_t u = 0; u < n; u++) {
		r[u] = (struct pf_brange){ p->units[u].dst, p->units[u].len };
		*bytes += p->units[u].len * bsize;
	}
	/* in block order, adjacent units joined: two units sharing an erase block count it once */
	qsort(r, n, sizeof(*r), run_cmp);
	uint64_t last = UINT64_MAX; /* the last erase block counted */
	for (size_t i = 0; i < n;) {
		uint64_t s = r[i].start, e = s + r[i].count;
		for (i++; i < n && r[i].start <= e; i++)
			if (r[i].start + r[i].count > e)
				e = r[i].start + r[i].count;
		uint64_t w = 0, t = pf_erase_blocks_touched(eb, s, e - s, &w);
		uint64_t first = eb->blocks > 1 ? (s + eb->phase) / eb->blocks : s;
		if (first == last)
			t--;
		last = eb->blocks > 1 ? (e - 1 + eb->phase) / eb->blocks : e - 1;
		*ebs += t;
		if (whole)
			*whole += w;
	}
	free(r);
}

_Static_assert(sizeof((long[])PF_CHUNK_TRIALS) / sizeof(long) < PF_MAX_CHUNK_TRIALS, "room for the configured size");

/* --check: the plan and the predicted replay for each size of PF_CHUNK_TRIALS and the configured one (as
 * configured: on slow flash each is rounded up to erase blocks when planned). */
static int sweep_chunk_sizes(ext2_filsys fs, const struct pf_layouts *lay, const struct pf_collect *col,
			     const struct pf_brange *free_runs, size_t nfree, const struct pf_plan_params *base,
			     int medium, long configured, struct pf_reorder_result *res)
{
	static const long sizes[] = PF_CHUNK_TRIALS;
	long list[PF_MAX_CHUNK_TRIALS];
	int n = 0, have = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		list[n++] = sizes[i];
		have |= sizes[i] == configured;
	}
	if (!have) { /* the configured size too, in its place (insertion: the list is sorted) */
		int k = n++;
		for (; k > 0 && list[k - 1] > configured; k--)
			list[k] = list[k - 1];
		list[k] = configured;
	}
	res->ntrials = 0;
	for (int i = 0; i < n; i++) {
		struct pf_plan_params prm = *base;
		prm.chunk_blocks = erase_round((uint64_t)list[i], base->erase_blocks);
		if (base->erase_blocks > 1) /* slow flash: pieces in whole erase blocks too */
			prm.min_piece = erase_round(prm.chunk_blocks / 4 ? prm.chunk_blocks / 4 : 1, base->erase_blocks);
		struct pf_plan plan = { 0 };
		struct pf_replay_prediction pred;
		int rc = plan_with_spares(fs, col, free_runs, nfree, NULL, &prm, &plan);
		if (!rc)
			rc = pf_replay_predict(fs, lay, col, &plan, medium, &pred);
		if (rc) {
			pf_plan_free(&plan);
			return rc;
		}
		res->trials[res->ntrials++] = (struct pf_chunk_trial){
			.chunk_blocks = list[i], .units = plan.nunits, .chunks = plan.nchunks, .chunks_split = plan.chunks_split,
			.chunks_failed = plan.chunks_failed, .blocks_to_move = plan.blocks_to_move,
			.replay_after_s = pred.after.seconds, .gain_percent = pred.gain_percent,
		};
		pf_plan_free(&plan);
	}
	int best = 0;
	for (int i = 1; i < res->ntrials; i++)
		if (res->trials[i].replay_after_s < res->trials[best].replay_after_s)
			best = i;
	int rec = best;
	for (int i = 0; i < res->ntrials; i++) {
		const struct pf_chunk_trial *t = &res->trials[i], *r = &res->trials[rec];
		if (t->replay_after_s > res->trials[best].replay_after_s * 1.01)
			continue;
		if (t->blocks_to_move < r->blocks_to_move || (t->blocks_to_move == r->blocks_to_move && t->units < r->units))
			rec = i;
	}
	res->recommended = rec;
	return 0;
}

/* The run's time budget in seconds (0: none); --time-budget-ms, for tests, wins. */
static double time_budget_s(const struct pf_reorder_opts *o)
{
	return o->time_budget_ms > 0 ? o->time_budget_ms / 1000.0 : o->time_budget_s;
}

/* plan: the units this run may do (the write budget's prefix of the plan: units past it are not even
 * allocated); budget_cut: the plan had more; avoid: where no spare extent leaf goes (pf_reloc_begin). */
static int do_relocate(ext2_filsys fs, const struct pf_reorder_opts *o, const struct pf_plan *plan,
		       const struct pf_collect *col, const struct pf_brange *avoid, double t0, int budget_cut,
		       const struct pf_erase_block *eb, struct pf_reorder_result *res, char *err, size_t errlen)
{
	ext2_ino_t *inos = malloc((col->nfiles ? col->nfiles : 1) * sizeof(*inos));
	if (!inos)
		return -ENOMEM;
	for (size_t i = 0; i < col->nfiles; i++)
		inos[i] = col->files[i].ino;

	struct pf_reloc *r = NULL;
	int rc = pf_reloc_begin(fs, plan, inos, col->nfiles, avoid, &r);
	if (rc) {
		snprintf(err, errlen, "cannot start the reorder: %s", pf_strerror(rc));
		res->fsck_needed = !(fs->super->s_state & EXT2_VALID_FS);
		free(inos);
		return rc;
	}
	size_t done = 0;
	int partial = 0;
	uint64_t moved = 0, kept = 0;
	res->complete = 1;
	double budget = time_budget_s(o);
	if (budget > 0) {
		struct pf_disk_model model = pf_replay_model(fs, o->medium);
		pf_reloc_set_deadline(r, t0 + budget, &model);
	}
	for (; done < plan->nunits; done++) {
		/* a unit whose data is already copied and verified only needs its switch: let it finish */
		if (done > 0 && pf_reloc_out_of_time(r) && !pf_reloc_staged(r, done)) {
			res->complete = 0;
			break;
		}
		rc = pf_reloc_unit(r, plan, done, inos, &partial);
		if (rc == PF_EVERIFY) {
			/* a disk that stores other bytes than it was given: stop, touch nothing more */
			snprintf(err, errlen, "moving %llu blocks to %llu: the copy read back from the disk differs from "
				 "what was written; that unit was abandoned (files untouched), stopping",
				 (unsigned long long)plan->units[done].len, (unsigned long long)plan->units[done].dst);
			res->complete = 0;
			break;
		}
		if (rc) {
			snprintf(err, errlen, "moving %llu blocks to %llu failed: %s",
				 (unsigned long long)plan->units[done].len, (unsigned long long)plan->units[done].dst,
				 pf_strerror(rc));
			res->complete = 0;
			break;
		}
		uint64_t sw = pf_reloc_switched(r, plan, done);
		moved += sw;
		kept += plan->units[done].len - sw;
		if (o->progress && o->progress_cb)
			o->progress_cb(o->ctx, moved, plan->blocks_to_move);
	}
	if (res->complete && budget_cut) { /* all the write budget holds: the next run continues */
		res->complete = 0;
		res->stopped_by_write_budget = 1;
	}
	res->units_done = done;
	if (kept)
		pf_note(o->notes, "%llu blocks stayed where they were (their extent leaf had no room for the split)",
			(unsigned long long)kept);
	res->moved_blocks = moved;
	int rc2 = pf_reloc_end(r, plan, done, partial, !partial);
	if (partial || rc2)
		res->fsck_needed = 1;
	if (!rc && rc2) {
		rc = rc2;
		snprintf(err, errlen, "writing the final bitmaps failed: %s", pf_strerror(rc));
	}
	unit_writes(plan, done, fs->blocksize, eb, &res->written_bytes, &res->written_erase_blocks,
		    &res->written_whole_erase_blocks);
	/* after F5, on the final bitmap: only what this run freed and is free now */
	int flash = pf_medium_is_flash(o->medium);
	int mflags = 0;
	/* Mounted read-only (--final-shutdown): the kernel's caches may still map files to their old copies and
	 * read them until the reboot (the shutdown's last programs); those reads must keep finding the data. */
	if (!rc && !partial && o->discard && flash && done &&
	    (ext2fs_check_mount_point(fs->device_name, &mflags, NULL, 0) || (mflags & EXT2_MF_MOUNTED))) {
		res->discard_state = -2;
		pf_note(o->notes, "not discarding the freed blocks: %s is mounted (read-only), the kernel may still read the "
			"old copies until it is unmounted", fs->device_name);
	} else if (!rc && !partial && o->discard && flash && done) {
		int d = pf_discard_freed(fs, plan, done, &res->discarded_blocks, &res->discard_requests);
		if (d < 0) /* the reorder itself is done and clean: a remark, not a failure */
			pf_note(o->notes, "discarding the freed blocks failed after %llu blocks: %s",
				(unsigned long long)res->discarded_blocks, pf_strerror(d));
		res->discard_state = d == 1 ? -1 : 1;
	}
	free(inos);
	return rc;
}

/* The plan's figures in the result (before/after the plan, chunks, blocks). */
static int record_plan(const struct pf_collect *col, const struct pf_plan *plan, uint32_t bsize, uint64_t nblocks,
		       struct pf_reorder_result *res)
{
	struct pf_seg *after = NULL;
	size_t nafter = 0;
	int rc = pf_plan_result(plan, &after, &nafter);
	if (rc)
		return rc;
	pf_figures(col->segs, col->nsegs, bsize, nblocks, &res->before);
	pf_figures(after, nafter, bsize, nblocks, &res->after);
	free(after);
	res->layout_blocks = plan->blocks_total;
	res->planned_blocks = plan->blocks_to_move;
	res->failed_blocks = plan->blocks_failed;
	res->already_in_place_blocks = plan->blocks_in_place;
	res->near_blocks = plan->blocks_near;
	res->compacted = plan->compacted;
	res->chunks = plan->nchunks;
	res->chunks_split = plan->chunks_split;
	res->chunks_in_place = plan->chunks_in_place;
	res->chunks_failed = plan->chunks_failed;
	res->units = plan->nunits;
	res->complete = 1;
	return 0;
}

/* Making room (evacuate.h): chosen = the plan replaced by the layout's plan into the window. */
struct pf_room {
	int chosen;
	struct pf_evac ev;         /* what lies in the window */
	struct pf_plan out;        /* the moves out of it */
	struct pf_plan_params prm; /* for the layout's plan into the window */
};

static void room_free(struct pf_room *r)
{
	pf_evac_free(&r->ev);
	pf_plan_free(&r->out);
}

/* The layout planned into the window's free space wfree: the run's reserve still holds (what the plan takes
 * comes out of all the free space, free_total).  sim: the evacuation simulated (NULL: it is done). */
static int plan_in_window(ext2_filsys fs, const struct pf_collect *col, const struct pf_brange *wfree, size_t nw,
			  uint64_t free_total, const struct pf_reloc_sim *sim, struct pf_plan_params *prm,
			  struct pf_plan *out)
{
	uint64_t w = pf_runs_total(wfree, nw);
	uint64_t usable = free_total > prm->reserve_blocks ? free_total - prm->reserve_blocks : 0;
	prm->reserve_blocks = w > usable ? w - usable : 0;
	return plan_with_spares(fs, col, wfree, nw, sim, prm, out);
}

/* Steps 1 and 2 of consider_room: the window, and whether making room could pay at all.  Returns 1 (win set),
 * or 0 with res->room_why saying why not. */
static int room_window(ext2_filsys fs, const struct pf_reorder_opts *o, const struct pf_brange *free_runs, size_t nfree,
		       const struct pf_plan_params *prm, const struct pf_plan *plan,
		       const struct pf_replay_prediction *pred, double bar, struct pf_reorder_result *res,
		       struct pf_window *win)
{
	uint64_t nblocks = ext2fs_blocks_count(fs->super), total = plan->blocks_total;
	res->room = 1;
	res->room_without_s = pred->after.seconds;
	if (plan->chunks_split == 0 && plan->chunks_failed == 0 && !plan->chunks_in_place) {
		snprintf(res->room_why, sizeof(res->room_why), "not needed: the plan places the set in whole chunks");
		return 0;
	}

	/* 1. the window */
	if (pf_window_pick(free_runs, nfree, NULL, 0, total + total / 16 + 1, prm->start, nblocks, win)) {
		snprintf(res->room_why, sizeof(res->room_why), "the filesystem is smaller than the set");
		return 0;
	}
	res->room_start = win->start;
	res->room_len = win->len;
	uint64_t free_all = pf_runs_total(free_runs, nfree), in_way = win->len - win->good;
	if (free_all - win->good < prm->reserve_blocks + in_way) {
		snprintf(res->room_why, sizeof(res->room_why),
			 "no room: %llu blocks in the window, %llu free outside it above the reserve",
			 (unsigned long long)in_way,
			 (unsigned long long)(free_all - win->good > prm->reserve_blocks ? free_all - win->good - prm->reserve_blocks
										   : 0));
		return 0;
	}

	/* 2. at best: the metadata as the plain plan leaves it, the set in one sweep */
	struct pf_disk_model model = pf_replay_model(fs, o->medium);
	double best = pred->after.meta_s + (double)total * fs->blocksize / model.rate + PF_DISK_SETTLE_S +
		      PF_DISK_HALF_TURN_S;
	if (!(best < bar)) {
		snprintf(res->room_why, sizeof(res->room_why), "would not pay: at best %.2f s predicted, %.2f s without it",
			 best, pred->after.seconds);
		return 0;
	}
	return 1;
}

/* Whether making room pays, decided in steps, each cheaper than the next and each able to say no (room_why):
 * the window (the set and a sixteenth more where the most blocks are free); the best the set could read
 * from there (no I/O); the full inode scan for what is in it; the plan of its moves out, into the rest of
 * the free space (the layout's own blocks there go too: a window read in one sweep must hold the set alone,
 * in order); the layout's plan into the emptied window made on the set as those moves leave it, and the
 * replay after both plans predicted against the plain plan's.  When it pays by the margin, the plan and
 * the prediction are replaced and room->chosen is set. */
static int consider_room(ext2_filsys fs, const struct pf_reorder_opts *o, const struct pf_layouts *lay,
			 const struct pf_collect *col, const struct pf_brange *free_runs, size_t nfree,
			 const struct pf_plan_params *prm, struct pf_plan *plan, struct pf_replay_prediction *pred,
			 struct pf_room *room, struct pf_reorder_result *res)
{
	double margin = o->gain_gate && o->min_gain_percent > PF_REORDER_MIN_GAIN_PERCENT ? o->min_gain_percent
											: PF_REORDER_MIN_GAIN_PERCENT;
	double bar = pred->after.seconds * (1 - margin / 100);
	uint64_t nblocks = ext2fs_blocks_count(fs->super), free_all = pf_runs_total(free_runs, nfree);
	struct pf_window win;
	if (!room_window(fs, o, free_runs, nfree, prm, plan, pred, bar, res, &win))
		return 0;

	/* 3. what is in the way (reads every inode) */
	struct pf_brange *outside = NULL, *wfree = NULL;
	struct pf_seg *moved = NULL;
	struct pf_cost_move *both = NULL;
	size_t nout = 0, nw = 0, nmoved = 0, nboth = 0;
	struct pf_plan in = { 0 };
	struct pf_replay_prediction p2;
	struct pf_reloc_sim *trees = NULL;
	ext2_ino_t *einos = NULL, *linos = NULL;
	int rc = pf_evac_collect(fs, free_runs, nfree, (struct pf_brange){ win.start, win.len }, &room->ev);
	if (rc)
		goto out;
	res->room_stuck = room->ev.stuck_blocks;
	res->room_files = room->ev.col.files_used;

	/* 4. its moves: out of the window, into the rest of the free space */
	if ((rc = pf_runs_clip(free_runs, nfree, win.start, win.len, 0, &outside, &nout)))
		goto out;
	struct pf_plan_params ep = {
		.chunk_blocks = prm->chunk_blocks, .reserve_blocks = prm->reserve_blocks, .start = prm->start,
		.span = nblocks, .move_all = 1,
	};
	if ((rc = plan_with_spares(fs, &room->ev.col, outside, nout, NULL, &ep, &room->out)))
		goto out;
	res->room_blocks = room->out.blocks_to_move;
	if (room->out.chunks_failed) {
		snprintf(res->room_why, sizeof(res->room_why),
			 "no room: %llu of the %llu blocks in the window do not fit outside it above the reserve",
			 (unsigned long long)room->out.blocks_failed, (unsigned long long)room->out.blocks_total);
		goto out;
	}

	/* 5. the layout into the emptied window, planned on the set as step 4 leaves it; both plans predicted, with
	 * the extent trees as the two runs leave them (simulated: the evacuation's run first) */
	if ((rc = pf_evac_window_free(&room->ev, free_runs, nfree, &wfree, &nw)) ||
	    (rc = pf_evac_moved_segs(&room->out, col->segs, col->nsegs, &moved, &nmoved)) ||
	    (rc = inos_of(&room->ev.col, &einos)) || (rc = inos_of(col, &linos)) ||
	    (rc = pf_reloc_sim_new(fs, &trees)) ||
	    (rc = pf_reloc_sim_run(trees, &room->out, einos, room->ev.col.nfiles, &room->ev.window)))
		goto out;
	struct pf_collect sim = *col; /* the same files, their segments where step 4 leaves them */
	sim.segs = moved;
	sim.nsegs = nmoved;
	room->prm = *prm;
	room->prm.start = win.start;
	struct pf_plan_params wp = room->prm;
	if ((rc = plan_in_window(fs, &sim, wfree, nw, free_all, trees, &wp, &in)) ||
	    (rc = pf_reloc_sim_run(trees, &in, linos, col->nfiles, NULL)) ||
	    (rc = pf_evac_compose(&room->out, &in, &both, &nboth)) ||
	    (rc = pf_replay_predict_moves(fs, lay, both, nboth, trees, o->medium, &p2)))
		goto out;
	if (in.chunks_failed || !(p2.after.seconds < bar)) {
		snprintf(res->room_why, sizeof(res->room_why),
			 in.chunks_failed ? "the window is too small once its fixed blocks are counted (%.2f s predicted, "
					    "%.2f s without it)"
					  : "would not pay: %.2f s predicted, %.2f s without it",
			 p2.after.seconds, pred->after.seconds);
		goto out;
	}
	pf_plan_free(plan);
	*plan = in;
	in = (struct pf_plan){ 0 };
	*pred = p2;
	room->chosen = 1;
	res->room = 2;
	res->room_why[0] = 0;
out:
	free(outside);
	free(wfree);
	free(moved);
	free(both);
	pf_reloc_sim_free(trees);
	free(einos);
	free(linos);
	pf_plan_free(&in);
	if (!room->chosen)
		room_free(room);
	return rc;
}

/* The run when making room was chosen: the moves out of the window (a relocation of its own, clean at its
 * end); then the layout collected again (its blocks in the window have moved) and planned on the free space
 * as it now is, into the window (*col and *plan replaced; a move that left blocks in the window just makes
 * less room).  *go = 0 when the first part did not finish (the time budget): the layout waits for the next
 * run, which finds the window partly emptied. */
static int make_room(ext2_filsys fs, const struct pf_reorder_opts *o, struct pf_room *room,
		     const struct pf_layouts *lay, struct pf_collect *col, struct pf_plan *plan, double t0,
		     const struct pf_erase_block *eb, struct pf_reorder_result *res, int *go, char *err, size_t errlen)
{
	*go = 0;
	/* no spare leaf in the window: it would stay in the layout's way, where the dry run saw free space */
	int rc = do_relocate(fs, o, &room->out, &room->ev.col, &room->ev.window, t0, 0, eb, res, err, errlen);
	res->room_moved = res->moved_blocks;
	res->moved_blocks = 0;
	if (rc || !res->complete) {
		res->room_incomplete = 1;
		return rc;
	}
	double budget = time_budget_s(o);
	if (budget > 0 && pf_monotonic_s() - t0 >= budget) {
		res->complete = 0;
		res->room_incomplete = 1;
		return 0;
	}
	struct pf_collect again = { 0 };
	struct pf_brange *fr = NULL, *wfree = NULL;
	size_t nfr = 0, nw = 0;
	uint64_t free_all = 0;
	struct pf_plan in = { 0 };
	struct pf_plan_params wp = room->prm;
	rc = pf_collect(fs, lay, &again);
	if (!rc)
		rc = pf_freespace(fs, &fr, &nfr);
	if (!rc)
		free_all = pf_runs_total(fr, nfr);
	if (!rc)
		rc = pf_runs_clip(fr, nfr, room->ev.window.start, room->ev.window.count, 1, &wfree, &nw);
	if (!rc)
		rc = plan_in_window(fs, &again, wfree, nw, free_all, NULL, &wp, &in);
	free(fr);
	free(wfree);
	if (rc) {
		pf_collect_free(&again);
		snprintf(err, errlen, "planning the layout into the room made failed: %s", pf_strerror(rc));
		return rc;
	}
	pf_collect_free(col);
	*col = again;
	pf_plan_free(plan);
	*plan = in;
	res->planned_blocks = plan->blocks_to_move;
	res->units = plan->nunits;
	*go = 1;
	return 0;
}

/* One run's state, step by step (pf_reorder). */
struct run {
	const char *device;
	const struct pf_reorder_opts *o;
	struct pf_reorder_result *res;
	char *err;
	size_t errlen;
	double t0;
	int write;                 /* neither --check nor --dry-run */
	struct pf_open_opts oo;
	ext2_filsys fs;
	struct pf_layouts lay;
	struct pf_collect col;
	struct pf_plan plan;
	struct pf_brange *free_runs;
	size_t nfree;
	struct pf_room room;
	uint64_t nblocks;
	int pct;                   /* the reserve, percent */
	struct pf_plan_params prm;
	struct pf_erase_block eb;
	struct pf_replay_prediction pred;
	size_t max_units;          /* the prefix of units the write budget allows */
};

/* Step 1: the filesystem opened read-only, the layouts for it loaded, their files collected, the free space. */
static int open_and_collect(struct run *r)
{
	const struct pf_reorder_opts *o = r->o;
	int rc = pf_reorder_open(r->device, &r->oo, &r->fs, r->err, r->errlen);
	if (rc)
		return rc;
	unsigned load = (o->allow_any_owner ? 0 : PF_LOAD_REQUIRE_ROOT) | (o->layouts_are_state ? PF_LOAD_STATE : 0);
	rc = pf_layouts_load(o->layouts, o->nlayouts, load, r->fs->super->s_uuid, &r->lay, r->err, r->errlen);
	if (rc)
		return rc;
	if (r->lay.matched < o->nlayouts)
		pf_note(o->notes, "%d of %d layouts are for other filesystems", o->nlayouts - r->lay.matched, o->nlayouts);
	rc = pf_collect(r->fs, &r->lay, &r->col);
	if (!rc)
		rc = pf_freespace(r->fs, &r->free_runs, &r->nfree);
	if (rc) {
		snprintf(r->err, r->errlen, "%s", pf_strerror(rc));
		return rc;
	}
	summarize_skips(o, &r->col, r->res);
	r->res->files = r->col.files_used;
	r->res->block_size = r->fs->blocksize;
	return 0;
}

/* Step 2: the planner's parameters: chunk size, reserve, the seek model; on slow flash whole erase blocks
 * (chunks and pieces rounded up to them) and no seek model (no head). */
static void set_params(struct run *r)
{
	const struct pf_reorder_opts *o = r->o;
	ext2_filsys fs = r->fs;
	r->nblocks = ext2fs_blocks_count(fs->super);
	r->pct = o->reserve_percent < 0 ? 0 : o->reserve_percent > 100 ? 100 : o->reserve_percent;
	r->prm = (struct pf_plan_params){
		.chunk_blocks = o->chunk_blocks > 0 ? (uint64_t)o->chunk_blocks : 2000,
		.reserve_blocks = r->nblocks / 100 * (uint64_t)r->pct + r->nblocks % 100 * (uint64_t)r->pct / 100,
		.start = fs->super->s_first_data_block,
		.block_size = fs->blocksize, /* near enough stays: a re-aggregated layout moves only what pays */
		.span = r->nblocks,
	};
	pf_erase_block_find(fs, r->device, o->medium == PF_MEDIUM_SLOW_FLASH ? o->erase_block_bytes : 0,
			    o->medium == PF_MEDIUM_SLOW_FLASH, &r->eb);
	if (o->medium == PF_MEDIUM_SLOW_FLASH) {
		r->prm.block_size = 0;
		r->prm.erase_blocks = r->eb.blocks;
		r->prm.erase_phase = r->eb.phase;
		r->prm.chunk_blocks = erase_round(r->prm.chunk_blocks, r->eb.blocks);
		r->prm.min_piece = erase_round(r->prm.chunk_blocks / 4 ? r->prm.chunk_blocks / 4 : 1, r->eb.blocks);
		r->res->erase_block_bytes = r->eb.bytes;
		snprintf(r->res->erase_block_why, sizeof(r->res->erase_block_why), "%s", r->eb.why);
	} else {
		r->eb = (struct pf_erase_block){ .blocks = 1 }; /* counted per block: no erase blocks to speak of */
	}
}

/* What the chunks that do not fit leave out, in words (res->not_fit).  The planner splits a chunk over as many
 * free areas as it takes: a chunk fails only when the space above the reserve, less what earlier chunks
 * took, is smaller than the chunk (a chunk is moved whole or not at all, so that a later run does not move a
 * half-moved chunk again). */
static void explain_not_fit(struct run *r)
{
	const struct pf_plan *plan = &r->plan;
	uint64_t smallest = UINT64_MAX;
	for (size_t i = 0; i < plan->nchunks; i++)
		if (plan->chunks[i].state == PF_CHUNK_FAILED && plan->chunks[i].blocks < smallest)
			smallest = plan->chunks[i].blocks;
	char taken[64] = "";
	if (plan->blocks_to_move)
		snprintf(taken, sizeof(taken), ", %llu of them used by earlier chunks",
			 (unsigned long long)plan->blocks_to_move);
	snprintf(r->res->not_fit, sizeof(r->res->not_fit),
		 "reserve: only %llu free blocks above the %d %% reserve of %llu, %llu free%s; a chunk moves "
		 "whole, the smallest left out has %llu",
		 (unsigned long long)plan->usable_blocks, r->pct, (unsigned long long)r->prm.reserve_blocks,
		 (unsigned long long)plan->free_blocks, taken, (unsigned long long)smallest);
	pf_note(r->o->notes, "%llu chunk(s), %llu blocks, not moved: %s", (unsigned long long)plan->chunks_failed,
		(unsigned long long)plan->blocks_failed, r->res->not_fit);
}

/* Step 3: the plan, its figures recorded. */
static int plan_layout(struct run *r)
{
	int rc = plan_with_spares(r->fs, &r->col, r->free_runs, r->nfree, NULL, &r->prm, &r->plan);
	if (!rc)
		rc = record_plan(&r->col, &r->plan, r->fs->blocksize, r->nblocks, r->res);
	if (rc) {
		snprintf(r->err, r->errlen, "planning failed: %s", pf_strerror(rc));
		return rc;
	}
	r->res->free_blocks = r->plan.free_blocks;
	r->res->reserve_blocks = r->prm.reserve_blocks;
	if (r->plan.chunks_failed)
		explain_not_fit(r);
	return 0;
}

/* Step 4: the next replay predicted now and after the plan; on a disk, making room considered (the plan then
 * replaced by the better one).  The gate needs it: a plan moves only when the next replay is predicted to
 * gain more than the margin (a compaction can spread what the replay reads: directory blocks among the
 * data, the metadata pass's records stale). */
static int predict(struct run *r)
{
	const struct pf_reorder_opts *o = r->o;
	int rc = pf_collect_warm_directories(r->fs, &r->col); /* one sweep for the prediction's path lookups */
	if (!rc)
		rc = pf_replay_predict(r->fs, &r->lay, &r->col, &r->plan, o->medium, &r->pred);
	if (!rc && r->plan.nunits > 0 && o->make_room && !pf_medium_is_flash(o->medium) && !o->write_budget_bytes)
		rc = consider_room(r->fs, o, &r->lay, &r->col, r->free_runs, r->nfree, &r->prm, &r->plan, &r->pred,
				   &r->room, r->res);
	if (rc) {
		snprintf(r->err, r->errlen, "predicting the replay failed: %s", pf_strerror(rc));
		return rc;
	}
	if (r->room.chosen && (rc = record_plan(&r->col, &r->plan, r->fs->blocksize, r->nblocks, r->res))) {
		snprintf(r->err, r->errlen, "planning failed: %s", pf_strerror(rc));
		return rc;
	}
	r->res->replay_now = r->pred.now;
	r->res->replay_after = r->pred.after;
	r->res->gain_percent = r->pred.gain_percent;
	r->res->predicted = 1;
	struct pf_disk_model model = pf_replay_model(r->fs, o->medium);
	pf_disk_describe(&model, r->res->model, sizeof(r->res->model));
	return 0;
}

/* Step 5: what the plan writes, the prefix of units this run's write budget allows, and the gate. */
static void budget_and_gate(struct run *r)
{
	const struct pf_plan *plan = &r->plan;
	uint64_t bs = r->fs->blocksize, nb = 0;
	unit_writes(plan, plan->nunits, r->fs->blocksize, &r->eb, &r->res->plan_bytes, &r->res->plan_erase_blocks,
		    NULL);
	r->max_units = plan->nunits;
	if (r->o->write_budget_bytes)
		for (r->max_units = 0; r->max_units < plan->nunits; r->max_units++) {
			if ((nb + plan->units[r->max_units].len) * bs > r->o->write_budget_bytes)
				break;
			nb += plan->units[r->max_units].len;
		}
	r->res->run_units = r->max_units;
	unit_writes(plan, r->max_units, r->fs->blocksize, &r->eb, &r->res->run_bytes, &r->res->run_erase_blocks,
		    NULL);
	if (r->o->gain_gate && plan->nunits > 0 && !(r->pred.gain_percent > r->o->min_gain_percent))
		r->res->not_worth = 1;
}

/* Step 6 (--check): the plan and prediction for other chunk sizes. */
static int chunk_trials(struct run *r)
{
	const struct pf_reorder_opts *o = r->o;
	if (!o->check_only || !o->chunk_sweep)
		return 0;
	int rc = sweep_chunk_sizes(r->fs, &r->lay, &r->col, r->free_runs, r->nfree, &r->prm, o->medium,
				   o->chunk_blocks > 0 ? o->chunk_blocks : 2000, r->res);
	if (rc)
		snprintf(r->err, r->errlen, "trying chunk sizes failed: %s", pf_strerror(rc));
	return rc;
}

/* Step 7: only now, with something to write, read-write: every refusal was decided on the read-only handle,
 * so a refused run, a dry run and a run with nothing to move never open the filesystem for writing. */
static int write_plan(struct run *r)
{
	if (!r->write || r->plan.nunits == 0 || r->res->not_worth)
		return 0;
	if (r->max_units == 0) {
		r->res->complete = 0; /* the budget holds not even the first unit: nothing to open read-write for */
		r->res->stopped_by_write_budget = 1;
		return 0;
	}
	int rc = pf_reorder_reopen_rw(r->device, &r->oo, &r->fs, r->err, r->errlen);
	if (!rc) /* before the first write: metadata through the journal, a superblock no tear breaks */
		rc = pf_jio_install(r->fs, r->err, r->errlen);
	int go = 1;
	if (!rc && r->room.chosen) /* the other files out of the window first, then the layout re-planned */
		rc = make_room(r->fs, r->o, &r->room, &r->lay, &r->col, &r->plan, r->t0, &r->eb, r->res, &go, r->err,
			       r->errlen);
	struct pf_plan run = r->plan; /* the units the write budget holds */
	run.nunits = r->room.chosen ? r->plan.nunits : r->max_units;
	if (!rc && go)
		rc = do_relocate(r->fs, r->o, &run, &r->col, NULL, r->t0, run.nunits < r->plan.nunits, &r->eb, r->res,
				 r->err, r->errlen);
	return rc;
}

/* Last step, on every path: freed, the filesystem closed (the journal empty, needs_recovery cleared: here,
 * where a failed write is still reported). */
static int finish(struct run *r, int rc)
{
	room_free(&r->room);
	free(r->free_runs);
	pf_plan_free(&r->plan);
	pf_collect_free(&r->col);
	pf_layouts_free(&r->lay);
	if (r->fs) {
		int rc_j = pf_jio_finish(r->fs);
		errcode_t ec = ext2fs_close_free(&r->fs);
		if (!ec && rc_j)
			ec = EXT2_ET_SHORT_WRITE;
		if (ec && !rc) {
			rc = pf_err_from_ext2(ec);
			snprintf(r->err, r->errlen, "closing %s: %s", r->device, pf_strerror(rc));
			r->res->fsck_needed = r->write;
		}
	}
	r->res->seconds = pf_monotonic_s() - r->t0;
	return rc;
}

int pf_reorder(const char *device, const struct pf_reorder_opts *o, struct pf_reorder_result *res, char *err,
	       size_t errlen)
{
	double t0 = pf_monotonic_s();
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = 0;
	memset(res, 0, sizeof(*res));
	if (!device || !o || o->nlayouts <= 0 || !o->layouts) {
		snprintf(err, errlen, "no device or no layout given");
		return -EINVAL;
	}
	struct run r = { .device = device, .o = o, .res = res, .err = err, .errlen = errlen, .t0 = t0,
			 .write = !o->check_only && !o->dry_run };
	r.oo = (struct pf_open_opts){ .write = r.write, .allow_ro_mount = o->allow_ro_mount, .io = o->io,
				       .offset = o->offset, .size = o->size };
	int rc = open_and_collect(&r);
	if (rc && !r.fs)
		return rc; /* not opened: nothing to close, no time to report */
	if (!rc) {
		set_params(&r);
		rc = plan_layout(&r);
	}
	/* A run with nothing to move needs no prediction (it would read every directory of the layout): it ends
	 * here, having read only the bitmaps, the inodes and their extent trees. */
	if (!rc && (!r.write || r.plan.nunits > 0)) {
		rc = predict(&r);
		if (!rc)
			budget_and_gate(&r);
		if (!rc)
			rc = chunk_trials(&r);
		if (!rc)
			rc = write_plan(&r);
	}
	return finish(&r, rc);
}
