/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Solid-state media: no seeks to save, but open() and block mapping wait for metadata reads one at a time;
 * several readers pulling items in first-touch order keep the device's queue full. */
#include "replay_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

struct pf_rpar {
	struct pf_rctx *c;
	const struct pf_ritem *items;
	size_t n;
	atomic_size_t next;
	struct pf_rthreads readers;
};

static void *reader(void *arg)
{
	struct pf_rpar *p = arg;
	uint32_t cur_file = UINT32_MAX;
	int cur_fd = -1;
	for (;;) {
		if (pf_rctx_should_stop(p->c))
			break;
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			break;
		const struct pf_ritem *it = &p->items[i];
		if (it->kind == PF_RITEM_META) {
			(void)pf_replay_open(p->c, it->file, 0);
			continue;
		}
		/* Consecutive pieces of one file often come to the same reader: keep its fd. */
		if (it->file != cur_file) {
			if (cur_fd >= 0)
				close(cur_fd);
			cur_fd = pf_replay_open(p->c, it->file, 1);
			cur_file = it->file;
		}
		if (cur_fd >= 0)
			(void)pf_replay_do_item(p->c, cur_fd, it);
	}
	if (cur_fd >= 0)
		close(cur_fd);
	return NULL;
}

int pf_replay_parallel_start(struct pf_rctx *c, const struct pf_ritem *items, size_t n, int threads,
			     struct pf_rpar **out)
{
	struct pf_rpar *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->c = c;
	p->items = items;
	p->n = n;
	atomic_init(&p->next, 0);
	pf_rthreads_start(&p->readers, threads, reader, p);
	*out = p;
	return 0;
}

void pf_replay_parallel_join(struct pf_rpar *p)
{
	if (!p)
		return;
	pf_rthreads_join(&p->readers);
	free(p);
}
