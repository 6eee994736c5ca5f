/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The order of XFS's metadata steps within the data sweep (replay_xfs.c): an elevator going one way.  Each step
 * has a disk address; the head moves up as the sweep reads; a step added behind the head waits for the next
 * round, which starts over from the low end once the sweep is done (what the steps still to come find there
 * is what the ones before them discovered).  Pure: no I/O. */
#ifndef PREFETCH_XFS_STEPS_H
#define PREFETCH_XFS_STEPS_H

#include <stddef.h>
#include <stdint.h>

struct pf_xstep {
	uint64_t addr, len; /* where the step lies in the elevator's order and how far it moves the head */
	uint64_t place;     /* the caller's: where on the device (addr may be a sort key of it) */
	uint32_t kind;      /* the caller's */
	uint32_t idx;       /* the caller's */
	uint32_t round;     /* set by pf_xsteps_add */
};

struct pf_xsteps {
	struct pf_xstep *heap;
	size_t n, cap;
	uint32_t round;     /* the round the head is in */
	uint64_t head;      /* where the head is, bytes */
};

/* Add a step: this round when it lies at or past the head, else the next.  0 or -ENOMEM. */
int pf_xsteps_add(struct pf_xsteps *q, struct pf_xstep s);

/* The head reached pos (the sweep read up to there). */
void pf_xsteps_at(struct pf_xsteps *q, uint64_t pos);

/* Take the next step of this round lying before limit (bytes) into *s: 1, or 0 when there is none.  The head
 * moves to the step's end. */
int pf_xsteps_next_before(struct pf_xsteps *q, uint64_t limit, struct pf_xstep *s);

/* Take the next step in elevator order into *s, whatever its round (a later round starts over from the low
 * end): 1, or 0 when none is left.  The head moves to the step's end. */
int pf_xsteps_next(struct pf_xsteps *q, struct pf_xstep *s);

void pf_xsteps_free(struct pf_xsteps *q);

#endif
