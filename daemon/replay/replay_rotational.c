/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rotational sweep: the plan's sweep (read_plan.h: every item placed where it is now, by FIEMAP), read bin by
 * bin in physical order, so the head crosses each bin's span about once instead of seeking per file. */
#include "replay_internal.h"

#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pf_replay_sweep(struct pf_rctx *c, struct pf_ritem *items, size_t n)
{
	if (!n)
		return 0;
	struct pf_ritem *own = NULL; /* the items and the pieces cut off them, when there are such pieces */
	struct pf_rplan_mapper m = pf_replay_mapper(c);
	int rc = pf_rplan_sweep(c->l, &m, &items, &n, &own, &c->map);
	c->map_at = pf_monotonic_s();
	if (rc)
		return rc;
	if (c->o && c->o->plan_dump)
		pf_rplan_dump(c->o->plan_dump, c->l, items, n);

	/* A file's fd stays open from its first item to its last one (most files live within one bin), within a
	 * budget that leaves the process (and a tracer sharing it) plenty of descriptors. */
	uint32_t nfiles = c->l->nfiles;
	size_t *last = malloc(nfiles * sizeof(*last));
	int *fds = malloc(nfiles * sizeof(*fds));
	if (!last || !fds) {
		free(last);
		free(fds);
		free(own);
		return -ENOMEM;
	}
	for (uint32_t f = 0; f < nfiles; f++)
		fds[f] = -1;
	for (size_t i = 0; i < n; i++)
		last[items[i].file] = i;
	int nopen = 0;
	for (size_t i = 0; i < n && !pf_rctx_should_stop(c); i++) {
		const struct pf_ritem *it = &items[i];
		uint32_t f = it->file;
		if (it->kind == PF_RITEM_META || (it->kind == PF_RITEM_DIR && c->dir_done[f])) {
			(void)pf_replay_open(c, f, 0); /* identity check (and the inode, if not cached yet) */
			continue;
		}
		int fd = fds[f];
		if (fd < 0) {
			fd = pf_replay_open(c, f, 1);
			if (fd < 0)
				continue;
			if (last[f] > i && nopen < c->fd_budget) {
				fds[f] = fd;
				nopen++;
			}
		}
		(void)pf_replay_do_item(c, fd, it); /* a failed read only means less is cached */
		if (fds[f] != fd) {
			close(fd);
		} else if (last[f] == i) {
			close(fd);
			fds[f] = -1;
			nopen--;
		}
	}
	for (uint32_t f = 0; f < nfiles; f++)
		if (fds[f] >= 0)
			close(fds[f]);
	free(last);
	free(fds);
	free(own);
	return 0;
}
