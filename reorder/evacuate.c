/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Making room: scan every inode for blocks in the window, collect them like a layout. */
#include "evacuate.h"

#include "array.h"
#include "blockmap.h"
#include "error.h"
#include "inode_identity.h"
#include "replay_cost.h"
#include "replay_predict.h"
#include "reserved_inode.h"
#include "runs.h"
#include "window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct wish {
	size_t file;
	uint64_t lblk, pblk, len;
};

static int by_pblk(const void *a, const void *b)
{
	const struct wish *x = a, *y = b;
	return (x->pblk > y->pblk) - (x->pblk < y->pblk);
}

/* Whether inode ino can own movable blocks (pf_collect checks the rest: flags, identity). */
static int candidate(ext2_filsys fs, ext2_ino_t ino, const struct ext2_inode_large *in)
{
	if (pf_inode_reserved(fs, ino))
		return 0; /* the journal, resize inode, orphan file, quota...: stuck */
	if (!in->i_links_count || in->i_dtime)
		return 0;
	if (!LINUX_S_ISREG(in->i_mode) && !LINUX_S_ISDIR(in->i_mode))
		return 0;
	return !(in->i_flags & EXT4_INLINE_DATA_FL);
}

/* Step 1: every inode; the runs of the candidates that lie in the window become wishes. */
static int scan_inodes(ext2_filsys fs, struct pf_brange win, struct pf_evac *e, struct wish **wishes, size_t *nwishes)
{
	ext2_inode_scan scan = NULL;
	int bpg = (int)(fs->inode_blocks_per_group < 512 ? fs->inode_blocks_per_group : 512);
	int rc = pf_err_from_ext2(ext2fs_open_inode_scan(fs, bpg > 0 ? bpg : 0, &scan));
	if (rc)
		return rc;
	size_t capf = 0, capw = 0;
	uint64_t end = win.start + win.count;
	struct ext2_inode_large in;
	for (;;) {
		ext2_ino_t ino = 0;
		errcode_t ec = ext2fs_get_next_inode_full(scan, &ino, (struct ext2_inode *)&in, sizeof(in));
		if (ec == EXT2_ET_BAD_BLOCK_IN_INODE_TABLE)
			continue;
		if (ec) {
			rc = pf_err_from_ext2(ec);
			break;
		}
		if (!ino)
			break;
		if (!candidate(fs, ino, &in) || !ext2fs_test_inode_bitmap2(fs->inode_map, ino))
			continue;
		struct pf_bmap_run *runs = NULL;
		size_t nruns = 0;
		if (pf_blockmap(fs, ino, (struct ext2_inode *)&in, &runs, &nruns))
			continue; /* unreadable map: its blocks stay (stuck) */
		size_t fi = e->nfiles;
		int added = 0;
		for (size_t i = 0; i < nruns && !rc; i++) {
			const struct pf_bmap_run *r = &runs[i];
			uint64_t a = r->pblk > win.start ? r->pblk : win.start;
			uint64_t b = r->pblk + r->len < end ? r->pblk + r->len : end;
			if (a >= b || r->uninit)
				continue;
			if (!added) {
				if ((rc = PF_ARRAY_RESERVE(e->files, capf, e->nfiles + 1, 256)))
					break;
				int has_ns;
				e->files[e->nfiles++] = (struct pf_file){
					.ino = ino, .generation = in.i_generation, .mode = in.i_mode, .size = EXT2_I_SIZE(&in),
					.mtime_ns = pf_inode_mtime_ns(fs, &in, &has_ns),
				};
				added = 1;
			}
			if ((rc = PF_ARRAY_RESERVE(*wishes, capw, *nwishes + 1, 1024)))
				break;
			(*wishes)[(*nwishes)++] = (struct wish){ fi, r->lblk + (a - r->pblk), a, b - a };
		}
		free(runs);
		if (rc)
			break;
	}
	ext2fs_close_inode_scan(scan);
	return rc;
}

/* Step 2: the wishes in physical order (the evacuation then reads the window in one forward pass), as a
 * layout that pf_collect() maps. */
static int wishes_to_layout(ext2_filsys fs, struct wish *w, size_t n, struct pf_evac *e)
{
	if (n)
		qsort(w, n, sizeof(*w), by_pblk);
	e->lay.want = malloc((n ? n : 1) * sizeof(*e->lay.want));
	if (!e->lay.want)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		e->lay.want[i] = (struct pf_want){ .file = &e->files[w[i].file], .offset = w[i].lblk * fs->blocksize,
						   .length = w[i].len * fs->blocksize };
	e->lay.nwant = n;
	return 0;
}

int pf_evac_collect(ext2_filsys fs, const struct pf_brange *free_runs, size_t nfree, struct pf_brange window,
		    struct pf_evac *out)
{
	memset(out, 0, sizeof(*out));
	out->window = window;
	struct wish *w = NULL;
	size_t nw = 0;
	int rc = scan_inodes(fs, window, out, &w, &nw);
	if (!rc)
		rc = wishes_to_layout(fs, w, nw, out);
	free(w);
	if (!rc)
		rc = pf_collect(fs, &out->lay, &out->col);
	if (rc) {
		pf_evac_free(out);
		return rc;
	}
	/* step 3: what stays in the window */
	uint64_t movable = 0;
	for (size_t i = 0; i < out->col.nsegs; i++)
		movable += out->col.segs[i].len; /* all inside the window (the wishes were cut to it) */
	uint64_t used = window.count - pf_runs_count_in(free_runs, nfree, window.start, window.count);
	out->stuck_blocks = used > movable ? used - movable : 0;
	return 0;
}

int pf_evac_window_free(const struct pf_evac *e, const struct pf_brange *free_runs, size_t nfree,
			struct pf_brange **out, size_t *nout)
{
	struct pf_brange *fm = NULL;
	size_t n = 0;
	int rc = pf_runs_with_segs(free_runs, nfree, e->col.segs, e->col.nsegs, &fm, &n);
	if (rc)
		return rc;
	rc = pf_runs_clip(fm, n, e->window.start, e->window.count, 1, out, nout);
	free(fm);
	return rc;
}

/* The copies p carries out as the cost model's moves, sorted by source (*m malloc'd, NULL on -ENOMEM). */
static int cost_moves(const struct pf_plan *p, struct pf_cost_move **m, size_t *n)
{
	*m = NULL;
	*n = 0;
	int rc = pf_replay_plan_moves(p, m, n);
	if (!rc)
		pf_cost_moves_sort(*m, *n);
	return rc;
}

int pf_evac_moved_segs(const struct pf_plan *out, const struct pf_seg *segs, size_t n, struct pf_seg **o,
		       size_t *no)
{
	struct pf_cost_move *m;
	size_t nm;
	struct pf_bvec v = { 0 };
	size_t k = 0, cap = 0;
	struct pf_seg *r = NULL;
	int rc = cost_moves(out, &m, &nm);
	for (size_t i = 0; i < n && !rc; i++) {
		v.n = 0;
		if ((rc = pf_cost_relocate_run(m, nm, segs[i].pblk, segs[i].len, &v)))
			break;
		if ((rc = PF_ARRAY_RESERVE(r, cap, k + v.n, 64)))
			break;
		uint64_t lblk = segs[i].lblk; /* the pieces come in the segment's order */
		for (size_t j = 0; j < v.n; j++) {
			/* pieces that end up one after the other are one segment, as pf_collect() finds them then */
			if (j && r[k - 1].pblk + r[k - 1].len == v.r[j].start)
				r[k - 1].len += v.r[j].count;
			else
				r[k++] = (struct pf_seg){ .owner = segs[i].owner, .lblk = lblk, .pblk = v.r[j].start,
							  .len = v.r[j].count };
			lblk += v.r[j].count;
		}
	}
	free(m);
	free(v.r);
	if (rc) {
		free(r);
		return rc;
	}
	*o = r;
	*no = k;
	return 0;
}

/* Append a move to a growable list. */
static int push_move(struct pf_cost_move **r, size_t *n, size_t *cap, uint64_t src, uint64_t dst, uint64_t len)
{
	if (PF_ARRAY_RESERVE(*r, *cap, *n + 1, 256))
		return -ENOMEM;
	(*r)[(*n)++] = (struct pf_cost_move){ src, dst, len };
	return 0;
}

int pf_evac_compose(const struct pf_plan *out, const struct pf_plan *in, struct pf_cost_move **o, size_t *no)
{
	struct pf_cost_move *p1 = NULL, *p2 = NULL, *r = NULL;
	size_t n1 = 0, n2 = 0;
	int rc = cost_moves(out, &p1, &n1);
	if (!rc)
		rc = cost_moves(in, &p2, &n2);
	struct pf_brange *edst = malloc((n1 + 1) * sizeof(*edst));
	struct pf_bvec v = { 0 };
	size_t k = 0, cap = 0;
	if (!rc && !edst)
		rc = -ENOMEM;
	/* each evacuated piece: where the second plan takes it from there, or where the first left it */
	for (size_t i = 0; i < n1 && !rc; i++) {
		const struct pf_cost_move *e = &p1[i];
		edst[i] = (struct pf_brange){ e->dst, e->len };
		v.n = 0;
		rc = pf_cost_relocate_run(p2, n2, e->dst, e->len, &v);
		uint64_t src = e->src;
		for (size_t j = 0; j < v.n && !rc; j++) {
			rc = push_move(&r, &k, &cap, src, v.r[j].start, v.r[j].count);
			src += v.r[j].count;
		}
	}
	/* the second plan's moves from places the first did not fill */
	size_t ne = rc ? 0 : pf_branges_normalize(edst, n1, 0);
	for (size_t i = 0; i < n2 && !rc; i++) {
		struct pf_brange *parts = NULL;
		size_t np = 0;
		rc = pf_runs_complement(edst, ne, p2[i].src, p2[i].len, &parts, &np);
		for (size_t f = 0; f < np && !rc; f++)
			rc = push_move(&r, &k, &cap, parts[f].start, p2[i].dst + (parts[f].start - p2[i].src), parts[f].count);
		free(parts);
	}
	free(p1);
	free(p2);
	free(edst);
	free(v.r);
	if (rc) {
		free(r);
		return rc;
	}
	*o = r;
	*no = k;
	return 0;
}

void pf_evac_free(struct pf_evac *e)
{
	if (!e)
		return;
	pf_collect_free(&e->col);
	free(e->lay.want);
	free(e->files);
	memset(e, 0, sizeof(*e));
}
