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

/* The files' fds: each opened at its first item and kept until its last one (most files live within one bin),
 * within a budget that leaves the process (and a tracer sharing it) plenty of descriptors. */
struct fdset {
	size_t *last; /* [nfiles] index of the file's last item */
	int *fds;     /* [nfiles] -1: not open */
	int nopen;
};

/* Item i: a directory already read or a file without data is only checked (and its inode read, if it is not
 * in yet); the others are read on their file's fd. */
static void run_item(struct pf_rctx *c, const struct pf_ritem *items, size_t i, struct fdset *s)
{
	const struct pf_ritem *it = &items[i];
	uint32_t f = it->file;
	if (it->kind == PF_RITEM_META || (it->kind == PF_RITEM_DIR && c->dir_done[f])) {
		(void)pf_replay_open(c, f, 0);
		return;
	}
	int fd = s->fds[f];
	if (fd < 0) {
		struct pf_xfs_sweep *x = c->fs[it->fs].xfs;
		fd = x && it->kind == PF_RITEM_DATA ? pf_replay_xfs_open(c, x, f) : pf_replay_open(c, f, 1);
		if (fd < 0)
			return;
		if (s->last[f] > i && s->nopen < c->fd_budget) {
			s->fds[f] = fd;
			s->nopen++;
		}
	}
	(void)pf_replay_do_item(c, fd, it); /* a failed read only means less is cached */
	if (s->fds[f] != fd) {
		close(fd);
	} else if (s->last[f] == i) {
		close(fd);
		s->fds[f] = -1;
		s->nopen--;
	}
}

/* The items in their order.  On XFS with directory steps (replay_xfs.c), the steps lying before each data item
 * come first, the rest once the filesystem's items of the bin are read; the items without data wait until
 * then, when their directories are in (opening them by path earlier would read those one at a time). */
static void run_items(struct pf_rctx *c, const struct pf_ritem *items, size_t n, struct fdset *s)
{
	for (size_t i = 0; i < n && !pf_rctx_should_stop(c); i++) {
		const struct pf_ritem *it = &items[i];
		struct pf_xfs_sweep *x = c->fs[it->fs].xfs;
		if (x && (it->kind != PF_RITEM_DATA || (!it->phys_known && pf_replay_xfs_layout_places(x))))
			continue;
		if (x && it->phys_known)
			pf_replay_xfs_upto(c, x, it->physical, it->physical + it->length);
		run_item(c, items, i, s);
		if (x && (i + 1 == n || items[i + 1].fs != it->fs || items[i + 1].bin != it->bin))
			pf_replay_xfs_flush(c, x);
	}
	for (uint32_t f = 0; f < c->l->nfs; f++)
		if (c->fs[f].xfs) /* a filesystem with no data item */
			pf_replay_xfs_flush(c, c->fs[f].xfs);
	for (size_t i = 0; i < n && !pf_rctx_should_stop(c); i++)
		if (c->fs[items[i].fs].xfs && (items[i].kind != PF_RITEM_DATA ||
						(!items[i].phys_known && pf_replay_xfs_layout_places(c->fs[items[i].fs].xfs))))
			run_item(c, items, i, s);
}

/* On XFS, each bin's items of the filesystem in the order of its metadata steps (pf_replay_xfs_order); the ones
 * placed by the layout's record there counted as such. */
static void xfs_order(struct pf_rctx *c, struct pf_ritem *items, size_t n)
{
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && items[j].bin == items[i].bin && items[j].fs == items[i].fs; j++)
			;
		struct pf_xfs_sweep *x = c->fs[items[i].fs].xfs;
		if (!x)
			continue;
		(void)pf_replay_xfs_order(x, items + i, j - i);
		for (size_t k = i; k < j && pf_replay_xfs_layout_places(x); k++)
			c->map.layout += items[k].kind == PF_RITEM_DATA && items[k].phys_src == PF_RPHYS_LAYOUT;
	}
}

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
	xfs_order(c, items, n);
	if (c->o && c->o->plan_dump)
		pf_rplan_dump(c->o->plan_dump, c->l, items, n);

	uint32_t nfiles = c->l->nfiles;
	struct fdset s = { .last = malloc(nfiles * sizeof(*s.last)), .fds = malloc(nfiles * sizeof(*s.fds)) };
	if (!s.last || !s.fds) {
		free(s.last);
		free(s.fds);
		free(own);
		return -ENOMEM;
	}
	for (uint32_t f = 0; f < nfiles; f++)
		s.fds[f] = -1;
	for (size_t i = 0; i < n; i++)
		s.last[items[i].file] = i;
	run_items(c, items, n, &s);
	for (uint32_t f = 0; f < nfiles; f++)
		if (s.fds[f] >= 0)
			close(s.fds[f]);
	free(s.last);
	free(s.fds);
	free(own);
	return 0;
}
