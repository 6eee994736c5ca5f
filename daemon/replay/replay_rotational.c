/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rotational sweep: every item placed on the disk where it is now (replay_place.c), then read bin by bin in
 * physical order, so the head crosses each bin's span about once instead of seeking per file. */
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
	int rc = pf_replay_place(c, &items, &n, &own);
	if (rc)
		return rc;
	pf_rplan_sort_physical(items, n);
	n = pf_rplan_coalesce(items, n);
	pf_replay_dump_plan(c, items, n);

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
