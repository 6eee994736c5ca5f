/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The gain gate in words, for the command line: its option, the one-line decision, the --check lines. */
#ifndef PREFETCH_REORDER_GAIN_REPORT_H
#define PREFETCH_REORDER_GAIN_REPORT_H

#include "reorder.h"

#include <stddef.h>
#include <stdio.h>

/* --min-gain's value: "off" (returns 0: no gate) or a percentage, negative allowed (returns 1, *pct set).
 * Returns -EINVAL when it is neither. */
int pf_parse_min_gain(const char *s, double *pct);

/* The decision in one line, e.g. "not moving: predicted replay 0.68 s now, 0.71 s after the plan (gain -4 %,
 * margin 10 %)", or "moving: ..." or "nothing to move: ...".  Returns buf. */
const char *pf_gain_decision(const struct pf_reorder_result *r, int gate, double margin, char *buf, size_t len);

/* --check / --dry-run: both predictions, metadata and data apart. */
void pf_print_replay_prediction(FILE *f, const struct pf_reorder_result *r);

/* --dry-run's last line, for scripts (the shutdown hook): "plan: decision=D blocks=N replay_now=S replay_after=S
 * gain=P write_mb=M erase_blocks=E erase_block_kb=K room_blocks=R", D one of move, not-worth, nothing; seconds
 * and percent with 3 and 1 decimals, "-" when the replay was not predicted; M the plan's copies in MB (1
 * decimal, the layout's), E and K on slow flash the erase blocks they touch and their size ("-" elsewhere); R
 * the other files' blocks the plan moves out of the way first (0: none).  Later versions may append
 * key=value fields. */
void pf_print_plan_line(FILE *f, const struct pf_reorder_result *r);

/* Making room (reorder.h's room fields) in one line, e.g. "making room: 6100 blocks of 212 other files out of
 * blocks 65536-77400, then the layout into them (predicted replay 0.61 s, 0.98 s without)" or "not making room:
 * would not pay: ..."; returns 0 (buf empty) when it was not considered. */
int pf_room_line(const struct pf_reorder_result *r, char *buf, size_t len);

/* --check / --dry-run: pf_room_line's line, when there is one. */
void pf_print_room(FILE *f, const struct pf_reorder_result *r);

/* --check's table of chunk sizes (reorder.h's trials): units, chunks split and not fitting, blocks to move and
 * the predicted replay for each, the configured size marked, and the recommendation. */
void pf_print_chunk_trials(FILE *f, const struct pf_reorder_result *r, long configured);

#endif
