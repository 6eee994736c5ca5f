/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The gain gate in words (see gain_report.h). */
#include "gain_report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int pf_parse_min_gain(const char *s, double *pct)
{
	if (!strcmp(s, "off"))
		return 0;
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v > 100 || v < -1000)
		return -EINVAL;
	*pct = v;
	return 1;
}

const char *pf_gain_decision(const struct pf_reorder_result *r, int gate, double margin, char *buf, size_t len)
{
	const char *what = r->not_worth ? "not moving" : r->planned_blocks ? "moving" : "nothing to move";
	if (!r->predicted) { /* nothing to move: the replay was not predicted (it would have cost reads) */
		snprintf(buf, len, "%s: every chunk of the layout is in place (%llu blocks)", what,
			 (unsigned long long)r->already_in_place_blocks);
		return buf;
	}
	char m[48];
	if (gate)
		snprintf(m, sizeof(m), "margin %.0f %%", margin);
	else
		snprintf(m, sizeof(m), "no margin asked");
	/* on flash, the model's name (what the model line says before its ':'); the rotational line as it was */
	int mlen = strncmp(r->model, "rotational", 10) ? (int)strcspn(r->model, ":") : 0;
	snprintf(buf, len, "%s: predicted replay %.2f s now, %.2f s after the plan (gain %.0f %%, %s%s%.*s)", what,
		 r->replay_now.seconds, r->replay_after.seconds, r->gain_percent, m, mlen ? "; model: " : "", mlen,
		 r->model);
	return buf;
}

void pf_print_replay_prediction(FILE *f, const struct pf_reorder_result *r)
{
	if (!r->predicted)
		return;
	const struct pf_cost *a = &r->replay_now, *b = &r->replay_after;
	fprintf(f, "%-26s %13.3fs %13.3fs\n", "replay: metadata pass", a->meta_s, b->meta_s);
	fprintf(f, "%-26s %13.3fs %13.3fs\n", "replay: data sweep", a->data_s, b->data_s);
	fprintf(f, "%-26s %13.3fs %13.3fs\n", "replay: predicted", a->seconds, b->seconds);
	fprintf(f, "%-26s %14llu %14llu\n", "replay: metadata blocks", (unsigned long long)a->meta_blocks,
		(unsigned long long)b->meta_blocks);
	fprintf(f, "%-26s %14llu %14llu\n", "replay: seeks", (unsigned long long)a->seeks,
		(unsigned long long)b->seeks);
	fprintf(f, "%-26s %14llu %14llu\n", "replay: requests", (unsigned long long)a->requests,
		(unsigned long long)b->requests);
	fprintf(f, "predicted gain of the plan for the next replay: %.1f %%%s\n", r->gain_percent,
		r->not_worth ? ": not worth a move (a run would leave everything in place)" : "");
}

void pf_print_plan_line(FILE *f, const struct pf_reorder_result *r)
{
	const char *d = r->not_worth ? "not-worth" : r->planned_blocks ? "move" : "nothing";
	fprintf(f, "plan: decision=%s blocks=%llu", d, (unsigned long long)r->planned_blocks);
	if (r->predicted)
		fprintf(f, " replay_now=%.3f replay_after=%.3f gain=%.1f", r->replay_now.seconds,
			r->replay_after.seconds, r->gain_percent);
	else
		fprintf(f, " replay_now=- replay_after=- gain=-");
	/* what the plan writes: MB of copies, and on slow flash the erase blocks they touch */
	fprintf(f, " write_mb=%.1f", r->plan_bytes / 1e6);
	if (r->erase_block_bytes)
		fprintf(f, " erase_blocks=%llu erase_block_kb=%llu\n", (unsigned long long)r->plan_erase_blocks,
			(unsigned long long)(r->erase_block_bytes >> 10));
	else
		fprintf(f, " erase_blocks=- erase_block_kb=-");
	fprintf(f, " room_blocks=%llu\n", (unsigned long long)(r->room == 2 ? r->room_blocks : 0));
}

int pf_room_line(const struct pf_reorder_result *r, char *buf, size_t len)
{
	buf[0] = 0;
	if (r->room == 2) {
		char done[128] = "";
		if (r->room_moved || r->room_incomplete)
			snprintf(done, sizeof(done), "; moved %llu%s", (unsigned long long)r->room_moved,
				 r->room_incomplete ? ", stopped by the time budget before the layout: the next run continues"
						    : "");
		snprintf(buf, len, "making room: %llu blocks of %llu other files out of blocks %llu-%llu (%llu fixed "
			 "blocks stay), then the layout into them (predicted replay %.2f s, %.2f s without)%s",
			 (unsigned long long)r->room_blocks, (unsigned long long)r->room_files,
			 (unsigned long long)r->room_start, (unsigned long long)(r->room_start + r->room_len - 1),
			 (unsigned long long)r->room_stuck, r->replay_after.seconds, r->room_without_s, done);
	} else if (r->room == 1) {
		snprintf(buf, len, "not making room: %s", r->room_why);
	}
	return buf[0] != 0;
}

void pf_print_room(FILE *f, const struct pf_reorder_result *r)
{
	char line[320];
	if (pf_room_line(r, line, sizeof(line)))
		fprintf(f, "%s\n", line);
}

void pf_print_chunk_trials(FILE *f, const struct pf_reorder_result *r, long configured)
{
	if (!r->ntrials)
		return;
	fprintf(f, "chunk sizes (CHUNK_SIZE_BLOCKS) on the free space as it is now:\n");
	fprintf(f, "%12s %8s %8s %8s %10s %14s %14s %8s\n", "chunk blocks", "units", "chunks", "split", "not fit",
		"blocks to move", "replay after", "gain");
	for (int i = 0; i < r->ntrials; i++) {
		const struct pf_chunk_trial *t = &r->trials[i];
		fprintf(f, "%12ld %8llu %8llu %8llu %10llu %14llu %13.3fs %+7.1f%%%s%s\n", t->chunk_blocks,
			(unsigned long long)t->units, (unsigned long long)t->chunks, (unsigned long long)t->chunks_split,
			(unsigned long long)t->chunks_failed, (unsigned long long)t->blocks_to_move, t->replay_after_s,
			t->gain_percent, t->chunk_blocks == configured ? "  (configured)" : "",
			i == r->recommended ? "  <- recommended" : "");
	}
	const struct pf_chunk_trial *rec = &r->trials[r->recommended];
	fprintf(f, "recommended: CHUNK_SIZE_BLOCKS=%ld (the best predicted replay; of sizes within 1 %% of it, the one "
		   "moving fewest blocks)\n", rec->chunk_blocks);
}
