/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The elevator of XFS's metadata steps (xfs_steps.h): a binary heap by round, address, kind, index. */
#include "xfs_steps.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>

static int before(const struct pf_xstep *a, const struct pf_xstep *b)
{
	if (a->round != b->round)
		return a->round < b->round;
	if (a->addr != b->addr)
		return a->addr < b->addr;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->idx < b->idx;
}

int pf_xsteps_add(struct pf_xsteps *q, struct pf_xstep s)
{
	if (PF_ARRAY_RESERVE(q->heap, q->cap, q->n + 1, 64))
		return -ENOMEM;
	s.round = s.addr >= q->head ? q->round : q->round + 1;
	size_t i = q->n++;
	while (i && before(&s, &q->heap[(i - 1) / 2])) {
		q->heap[i] = q->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->heap[i] = s;
	return 0;
}

void pf_xsteps_at(struct pf_xsteps *q, uint64_t pos)
{
	q->head = pos;
}

static void take(struct pf_xsteps *q, struct pf_xstep *s)
{
	*s = q->heap[0];
	struct pf_xstep last = q->heap[--q->n];
	size_t i = 0;
	for (size_t k; (k = 2 * i + 1) < q->n; i = k) {
		if (k + 1 < q->n && before(&q->heap[k + 1], &q->heap[k]))
			k++;
		if (!before(&q->heap[k], &last))
			break;
		q->heap[i] = q->heap[k];
	}
	if (q->n)
		q->heap[i] = last;
	q->round = s->round;
	q->head = s->addr + s->len;
}

int pf_xsteps_next_before(struct pf_xsteps *q, uint64_t limit, struct pf_xstep *s)
{
	if (!q->n || q->heap[0].round != q->round || q->heap[0].addr >= limit)
		return 0;
	take(q, s);
	return 1;
}

int pf_xsteps_next(struct pf_xsteps *q, struct pf_xstep *s)
{
	if (!q->n)
		return 0;
	take(q, s);
	return 1;
}

void pf_xsteps_free(struct pf_xsteps *q)
{
	free(q->heap);
	*q = (struct pf_xsteps){ 0 };
}
