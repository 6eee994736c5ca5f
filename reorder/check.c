/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Seek-model figures of a block sequence. */
#include "check.h"

#include "disk_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

double pf_seek_time(uint64_t from, uint64_t to, uint32_t bsize, uint64_t span, int *is_seek)
{
	struct pf_disk_model d = pf_disk_7200rpm(span, bsize);
	return pf_disk_move_s(&d, from, to, is_seek);
}

static int cmp_pblk(const void *a, const void *b)
{
	const struct pf_seg *x = a, *y = b;
	return (x->pblk > y->pblk) - (x->pblk < y->pblk);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Time and seeks to read segs in the given order, head starting at block 0. */
static double read_time(const struct pf_seg *s, size_t n, const struct pf_disk_model *d, uint64_t *seeks)
{
	double t = 0;
	uint64_t head = 0;
	*seeks = 0;
	for (size_t i = 0; i < n; i++) {
		int is_seek;
		t += pf_disk_move_s(d, head, s[i].pblk, &is_seek);
		*seeks += is_seek;
		t += pf_disk_transfer_s(d, s[i].len);
		head = s[i].pblk + s[i].len;
	}
	return t;
}

void pf_figures(const struct pf_seg *segs, size_t n, uint32_t bsize, uint64_t span, struct pf_layout_figures *f)
{
	memset(f, 0, sizeof(*f));
	struct pf_disk_model d = pf_disk_7200rpm(span, bsize);
	uint64_t end = 0;
	for (size_t i = 0; i < n; i++) {
		f->blocks += segs[i].len;
		if (i == 0 || segs[i].pblk != end)
			f->extents++;
		end = segs[i].pblk + segs[i].len;
	}
	f->discontinuities = f->extents ? f->extents - 1 : 0;
	f->read_s = read_time(segs, n, &d, &f->seeks);

	struct pf_seg *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	uint32_t *owners = malloc((n ? n : 1) * sizeof(*owners));
	if (sorted && owners) {
		memcpy(sorted, segs, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_pblk);
		f->sweep_s = read_time(sorted, n, &d, &f->sweep_seeks);
		for (size_t i = 0; i < n; i++)
			owners[i] = segs[i].owner;
		qsort(owners, n, sizeof(*owners), cmp_u32);
		for (size_t i = 0; i < n; i++)
			f->files += i == 0 || owners[i] != owners[i - 1];
	}
	free(sorted);
	free(owners);
}

