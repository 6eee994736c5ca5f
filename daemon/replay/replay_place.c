/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placing a replay's data items where their blocks are now (FIEMAP; the layout's record only when that fails),
 * for the rotational sweep (physical order) and the slow-flash reads (merging what is adjacent). */
#include "replay_internal.h"

#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* By inode number, then file, then offset: opening files in inode order reads the inode tables (ext4: the
 * metadata pass did already; xfs: the number encodes the place) about in disk order. */
static int by_inode_offset(const void *a, const void *b, void *arg)
{
	const struct pf_image *l = arg;
	const struct pf_ritem *x = *(struct pf_ritem *const *)a, *y = *(struct pf_ritem *const *)b;
	uint64_t xi = l->files[x->file].ino, yi = l->files[y->file].ino;
	if (xi != yi)
		return xi < yi ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Place every data item where its blocks are now (FIEMAP), file by file in inode order.  The metadata pass has
 * pulled the inodes and extent-tree blocks in, so on ext4 the ioctls cost no seeks; the layout's block numbers
 * (stale after a reorder) remain only for files FIEMAP cannot map (no FIEMAP: tmpfs, some network and FUSE
 * filesystems). */
static int map_places(struct pf_rctx *c, struct pf_ritem *items, size_t n, struct pf_rvec *more)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		m += items[i].kind == PF_RITEM_DATA;
	if (!m)
		return 0;
	struct pf_ritem **p = malloc(m * sizeof(*p));
	if (!p)
		return -ENOMEM;
	m = 0;
	for (size_t i = 0; i < n; i++)
		if (items[i].kind == PF_RITEM_DATA)
			p[m++] = &items[i];
	qsort_r(p, m, sizeof(*p), by_inode_offset, (void *)c->l);
	for (size_t i = 0, j; i < m && !pf_rctx_should_stop(c); i = j) {
		for (j = i + 1; j < m && p[j]->file == p[i]->file;)
			j++;
		int fd = pf_replay_open(c, p[i]->file, 1);
		if (fd < 0)
			continue; /* recorded; the sweep skips it */
		c->map.files++;
		int rc = pf_replay_fiemap(fd, p + i, j - i, more);
		close(fd);
		if (rc == -ENOMEM) {
			free(p);
			return rc;
		}
		c->map.failed += rc < 0;
		for (size_t k = i; k < j; k++) {
			c->map.now += p[k]->phys_src == PF_RPHYS_NOW;
			c->map.layout += p[k]->phys_src == PF_RPHYS_LAYOUT;
			c->map.moved += p[k]->moved;
		}
	}
	for (size_t k = 0; k < more->n; k++) /* the further pieces of cut ranges */
		c->map.now += more->v[k].phys_src == PF_RPHYS_NOW;
	c->map.pieces += (unsigned)more->n;
	free(p);
	return 0;
}

int pf_replay_place(struct pf_rctx *c, struct pf_ritem **items, size_t *n, struct pf_ritem **own)
{
	*own = NULL;
	struct pf_rvec more = { 0 };
	int rc = map_places(c, *items, *n, &more);
	if (rc) {
		free(more.v);
		return rc;
	}
	if (more.n) {
		struct pf_ritem *all = malloc((*n + more.n) * sizeof(*all));
		if (!all) {
			free(more.v);
			return -ENOMEM;
		}
		memcpy(all, *items, *n * sizeof(*all));
		memcpy(all + *n, more.v, more.n * sizeof(*all));
		*items = *own = all;
		*n += more.n;
	}
	free(more.v);
	c->map.at = pf_monotonic_s();
	return 0;
}

void pf_replay_dump_plan(const struct pf_rctx *c, const struct pf_ritem *items, size_t n)
{
	if (!c->o || !c->o->plan_dump)
		return;
	static const char *const kind[] = { "data", "dir", "meta" }, *const src[] = { "none", "layout", "now" };
	FILE *f = c->o->plan_dump;
	for (size_t i = 0; i < n; i++) {
		const struct pf_ritem *it = &items[i];
		fprintf(f, "%u %u %s %s %llu %llu %llu %s\n", it->bin, it->fs, kind[it->kind <= 2 ? it->kind : 0],
			src[it->phys_src <= 2 ? it->phys_src : 0], (unsigned long long)it->physical,
			(unsigned long long)it->offset, (unsigned long long)it->length, c->l->files[it->file].path);
	}
	fflush(f);
}

