/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Chunking and fitting (see plan.h for the rules). */
#include "plan.h"

#include "check.h"
#include "disk_model.h"
#include "runs.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Room for element n of a growable array; *cap and n count elements. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	return pf_array_reserve(arr, cap, n + 1, elem, 64);
}

struct areas {
	struct pf_brange *a;
	size_t n;
};

/* The non-empty area starting exactly at blk: 1 with its index in *i, or 0 (areas stay sorted: they only shrink
 * from the front). */
static int area_at(const struct areas *ar, uint64_t blk, size_t *i)
{
	size_t lo = 0, hi = ar->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ar->a[mid].start < blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	*i = lo;
	return lo < ar->n && ar->a[lo].start == blk && ar->a[lo].count > 0;
}

/* Best fit: the smallest area holding need blocks; among areas nearly as good (at most need/8 more), the one
 * nearest the start of the disk, so earlier parts of the layout end up nearer the metadata.  1 with its index
 * in *a, or 0 if none. */
static int best_fit(const struct areas *ar, uint64_t need, size_t *a)
{
	uint64_t min = UINT64_MAX;
	for (size_t i = 0; i < ar->n; i++)
		if (ar->a[i].count >= need && ar->a[i].count < min)
			min = ar->a[i].count;
	uint64_t good = min + need / 8;
	for (size_t i = 0; i < ar->n && min != UINT64_MAX; i++)
		if (ar->a[i].count >= need && ar->a[i].count <= good) {
			*a = i;
			return 1;
		}
	return 0;
}

/* The largest non-empty area: 1 with its index in *a, or 0 if all are empty. */
static int largest(const struct areas *ar, size_t *a)
{
	int found = 0;
	for (size_t i = 0; i < ar->n; i++)
		if (ar->a[i].count > 0 && (!found || ar->a[i].count > ar->a[*a].count)) {
			*a = i;
			found = 1;
		}
	return found;
}

struct builder {
	struct pf_plan *p;
	size_t cap_segs, cap_moves, cap_units;
};

static int add_unit(struct builder *b, size_t chunk, uint64_t dst, uint64_t len)
{
	struct pf_plan *p = b->p;
	if (grow((void **)&p->units, &b->cap_units, p->nunits, sizeof(*p->units)))
		return -ENOMEM;
	p->units[p->nunits++] = (struct pf_unit){ .first = p->nmoves, .count = 0, .dst = dst, .len = len,
						  .chunk = chunk };
	return 0;
}

static int add_move(struct builder *b, const struct pf_move *m)
{
	struct pf_plan *p = b->p;
	if (grow((void **)&p->moves, &b->cap_moves, p->nmoves, sizeof(*p->moves)))
		return -ENOMEM;
	p->moves[p->nmoves++] = *m;
	p->units[p->nunits - 1].count++;
	return 0;
}

/* Cut the input at chunk boundaries and record the chunks. */
static int cut_chunks(struct builder *b, const struct pf_seg *segs, size_t nsegs, uint64_t chunk_blocks)
{
	struct pf_plan *p = b->p;
	size_t cap_chunks = 0;
	uint64_t pos = 0;
	for (size_t i = 0; i < nsegs; i++) {
		uint64_t off = 0;
		while (off < segs[i].len) {
			uint64_t in_chunk = pos % chunk_blocks;
			if (in_chunk == 0) {
				if (grow((void **)&p->chunks, &cap_chunks, p->nchunks, sizeof(*p->chunks)))
					return -ENOMEM;
				p->chunks[p->nchunks++] = (struct pf_chunk){ .first_seg = p->nsegs };
			}
			uint64_t n = segs[i].len - off;
			if (n > chunk_blocks - in_chunk)
				n = chunk_blocks - in_chunk;
			if (grow((void **)&p->segs, &b->cap_segs, p->nsegs, sizeof(*p->segs)))
				return -ENOMEM;
			p->segs[p->nsegs++] = (struct pf_seg){ .owner = segs[i].owner, .lblk = segs[i].lblk + off,
							       .pblk = segs[i].pblk + off, .len = n };
			struct pf_chunk *c = &p->chunks[p->nchunks - 1];
			c->nsegs++;
			c->blocks += n;
			off += n;
			pos += n;
		}
	}
	p->blocks_total = pos;
	return 0;
}

/* Already sequential enough: every physical run of the chunk is at least min(min_piece, chunk) long. */
static int in_place(const struct pf_plan *p, const struct pf_chunk *c, uint64_t min_piece)
{
	uint64_t need = min_piece < c->blocks ? min_piece : c->blocks;
	uint64_t run = 0, end = 0;
	for (size_t i = c->first_seg; i < c->first_seg + c->nsegs; i++) {
		const struct pf_seg *s = &p->segs[i];
		if (run && s->pblk != end) {
			if (run < need)
				return 0;
			run = 0;
		}
		run += s->len;
		end = s->pblk + s->len;
	}
	return run >= need;
}

/* The area holding need blocks whose start is nearest to blk: 1 with its index in *a, or 0 if none. */
static int nearest(const struct areas *ar, uint64_t blk, uint64_t need, size_t *a)
{
	int found = 0;
	uint64_t bd = UINT64_MAX;
	for (size_t i = 0; i < ar->n; i++) {
		if (ar->a[i].count < need)
			continue;
		uint64_t d = ar->a[i].start > blk ? ar->a[i].start - blk : blk - ar->a[i].start;
		if (!found || d < bd) {
			bd = d;
			*a = i;
			found = 1;
		}
	}
	return found;
}

/* Choose the next piece for need blocks: 1 with the area's index in *a and the blocks to take in *take, or 0
 * to retry relaxed.  near: an incremental run (most of the set stays): the area nearest the cursor (the end of
 * the previous chunk, in place) rather than the best fit — next to its neighbours, not off to a new area. */
static int next_piece(const struct areas *ar, uint64_t cursor, uint64_t need, uint64_t min_piece, int relaxed,
		      int near, size_t *a, uint64_t *take)
{
	uint64_t mp = relaxed ? 1 : min_piece;
	if (area_at(ar, cursor, a)) {
		uint64_t t = ar->a[*a].count < need ? ar->a[*a].count : need;
		if (t < need) {
			if (t < mp)
				t = 0;
			else if (need - t < mp)
				t = need - mp >= mp ? need - mp : 0;
		}
		if (t) {
			*take = t;
			return 1;
		}
	}
	if (near ? nearest(ar, cursor, need, a) : best_fit(ar, need, a)) {
		*take = need;
		return 1;
	}
	if (!largest(ar, a)) /* there is one: the caller checked that the usable space holds need */
		return 0;
	uint64_t t = ar->a[*a].count;
	if (!relaxed) {
		if (t < min_piece)
			return 0;
		if (need - t < min_piece) {
			if (need - min_piece < min_piece)
				return 0;
			t = need - min_piece;
		}
	}
	*take = t;
	return 1;
}

static int place_chunk(struct builder *b, struct areas *ar, size_t ci, uint64_t min_piece, int near,
		       uint64_t *cursor)
{
	struct pf_plan *p = b->p;
	struct pf_chunk *c = &p->chunks[ci];
	uint64_t need = c->blocks;
	int relaxed = 0;
	size_t seg = c->first_seg;
	uint64_t seg_off = 0;

	c->first_unit = p->nunits;
	while (need > 0) {
		uint64_t take = 0;
		uint64_t mp = min_piece < need ? min_piece : need;
		size_t a;
		if (!next_piece(ar, *cursor, need, mp, relaxed, near, &a, &take)) {
			if (relaxed)
				return -EINVAL; /* cannot happen: the caller checked the space */
			relaxed = 1;
			continue;
		}
		uint64_t dst = ar->a[a].start;
		ar->a[a].start += take;
		ar->a[a].count -= take;
		*cursor = dst + take;
		need -= take;
		if (add_unit(b, ci, dst, take))
			return -ENOMEM;
		/* fill the piece with the chunk's next blocks, in layout order */
		uint64_t filled = 0;
		while (filled < take) {
			const struct pf_seg *s = &p->segs[seg];
			uint64_t n = s->len - seg_off;
			if (n > take - filled)
				n = take - filled;
			struct pf_move m = { .owner = s->owner, .lblk = s->lblk + seg_off, .src = s->pblk + seg_off,
					     .dst = dst + filled, .len = n };
			if (add_move(b, &m))
				return -ENOMEM;
			filled += n;
			seg_off += n;
			if (seg_off == s->len) {
				seg++;
				seg_off = 0;
			}
		}
	}
	c->nunits = p->nunits - c->first_unit;
	c->state = c->nunits > 1 ? PF_CHUNK_SPLIT : PF_CHUNK_PLACED;
	return 0;
}

/* The "near enough" rule (plan.h, pf_plan_params.block_size): --check's seek model. */

enum kind { K_MOVE = 0, K_KEEP, K_NEAR, K_ALONE }; /* moved whole, in place, near enough, moved alone */

struct model {
	struct pf_disk_model disk; /* in blocks; unit 0: no seek model (block_size unset) */
	double short_seek;     /* a seek of one block backwards: the cheapest seek there is */
	/* The set as prefetchd's rotational replay reads it — sorted by block, one sweep — per segment: */
	double *waste;         /* read time lost before it (seek, or a gap read through) from the previous segment
	                        * in block order that is not an island */
	unsigned char *island; /* a small group reached and left by a seek in that sweep */
	struct pf_brange *main;   /* the segments that are not islands, sorted by block */
	size_t nmain;
};

static double gap(const struct model *m, uint64_t from, uint64_t to, int *is_seek)
{
	return pf_disk_move_s(&m->disk, from, to, is_seek);
}

static double transfer(const struct model *m, uint64_t blocks)
{
	return pf_disk_transfer_s(&m->disk, blocks);
}

/* The time a move must save — at least one seek, and a third of the chunk's read time (copying it costs twice
 * that at shutdown): otherwise copying blocks at every shutdown buys (almost) nothing at boot. */
static double allowance(const struct model *m, uint64_t blocks)
{
	double t = transfer(m, blocks) / 3;
	return t > m->short_seek ? t : m->short_seek;
}

/* The seek model for a set: the filesystem's span, else up to the set's last block. */
static struct model model_for(const struct pf_plan_params *prm, const struct pf_seg *segs, size_t n)
{
	struct model m = { .disk = pf_disk_7200rpm(prm->span, prm->block_size) };
	if (!m.disk.unit)
		return m;
	for (size_t i = 0; !prm->span && i < n; i++)
		if (segs[i].pblk + segs[i].len > m.disk.span)
			m.disk.span = segs[i].pblk + segs[i].len;
	int seek;
	m.short_seek = gap(&m, 1, 0, &seek);
	return m;
}

/* What visiting blocks [s, e) costs the sorted sweep of the set's main part: from the main segment before
 * them, and on to the one after, instead of straight on. */
static double detour(const struct model *m, uint64_t s, uint64_t e)
{
	size_t lo = 0, hi = m->nmain;
	while (lo < hi) { /* lo: the first main segment starting after s */
		size_t mid = lo + (hi - lo) / 2;
		if (m->main[mid].start <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	int seek, has_pred = lo > 0, has_succ = lo < m->nmain;
	uint64_t pred_end = has_pred ? m->main[lo - 1].start + m->main[lo - 1].count : 0;
	uint64_t succ = has_succ ? m->main[lo].start : 0;
	double t = 0;
	if (has_pred)
		t += gap(m, pred_end, s, &seek);
	if (has_succ)
		t += gap(m, e, succ, &seek);
	if (has_pred && has_succ)
		t -= gap(m, pred_end, succ, &seek);
	return t;
}

/* Decide a chunk not already in place: K_MOVE, or K_NEAR with alone[i] set for its segments that are islands of
 * the sorted sweep (a file new in the layout, still where it was written), while they are less than half of
 * it.  Order within the set does not matter to the replay (it sorts): the rest stays when the time its
 * segments lose in the sweep is within the allowance. */
static int classify(const struct pf_plan *p, const struct pf_chunk *c, const struct model *m, unsigned char *alone)
{
	size_t f = c->first_seg, l = c->first_seg + c->nsegs; /* [f, l) */
	uint64_t isl = 0;
	for (size_t i = f; i < l; i++)
		isl += m->island[i] ? p->segs[i].len : 0;
	if (isl * 2 < c->blocks)
		for (size_t i = f; i < l; i++)
			alone[i] = m->island[i];
	double extra = 0;
	uint64_t rest = 0;
	for (size_t i = f; i < l; i++) {
		if (alone[i])
			continue;
		extra += m->waste[i];
		rest += p->segs[i].len;
	}
	if (rest > 0 && extra < allowance(m, rest))
		return K_NEAR;
	memset(alone + f, 0, c->nsegs);
	return K_MOVE;
}

/* Cut chunks of kind K_NEAR holding segments to move alone into chunks in place | alone | in place; kinds
 * gets one entry per resulting chunk.  Returns 0 or -ENOMEM. */
static int split_near(struct pf_plan *p, const unsigned char *alone, const unsigned char *kind_in,
		      unsigned char **kinds_out)
{
	size_t n = 0;
	for (size_t ci = 0; ci < p->nchunks; ci++) {
		const struct pf_chunk *c = &p->chunks[ci];
		n++;
		if (kind_in[ci] == K_NEAR)
			for (size_t i = c->first_seg + 1; i < c->first_seg + c->nsegs; i++)
				n += alone[i] != alone[i - 1];
	}
	struct pf_chunk *chunks = calloc(n ? n : 1, sizeof(*chunks));
	unsigned char *kinds = malloc(n ? n : 1);
	if (!chunks || !kinds) {
		free(chunks);
		free(kinds);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t ci = 0; ci < p->nchunks; ci++) {
		const struct pf_chunk *c = &p->chunks[ci];
		if (kind_in[ci] != K_NEAR) {
			chunks[k] = *c;
			kinds[k++] = kind_in[ci];
			continue;
		}
		for (size_t i = c->first_seg; i < c->first_seg + c->nsegs; i++) {
			if (i == c->first_seg || alone[i] != alone[i - 1]) {
				chunks[k] = (struct pf_chunk){ .first_seg = i };
				kinds[k++] = alone[i] ? K_ALONE : K_NEAR;
			}
			chunks[k - 1].nsegs++;
			chunks[k - 1].blocks += p->segs[i].len;
		}
	}
	free(p->chunks);
	p->chunks = chunks;
	p->nchunks = n;
	*kinds_out = kinds;
	return 0;
}

/* Move a chunk of kind K_ALONE into one free area next to its layout neighbours (right after the previous
 * segment, or right before the next one), else into the nearest area holding it — only when that saves at
 * least one short seek.  Returns 1 placed, 0 left where it is (near enough), -ENOMEM. */
static int place_alone(struct builder *b, struct areas *ar, size_t ci, const struct model *m, uint64_t *cursor)
{
	struct pf_plan *p = b->p;
	struct pf_chunk *c = &p->chunks[ci];
	size_t f = c->first_seg, l = c->first_seg + c->nsegs;
	uint64_t need = c->blocks, dst = 0;
	/* the free space where visiting it costs the sweep least: the head or the tail of an area (a hole in
	 * the set's run, or right before or after it) */
	long a = -1;
	int tail = 0;
	double then = 0;
	for (size_t i = 0; i < ar->n; i++) {
		if (ar->a[i].count < need)
			continue;
		for (int t = 0; t < 2; t++) {
			uint64_t d = t ? ar->a[i].start + ar->a[i].count - need : ar->a[i].start;
			double cost = detour(m, d, d + need);
			if (a < 0 || cost < then) {
				a = (long)i;
				tail = t;
				dst = d;
				then = cost;
			}
		}
	}
	if (a < 0)
		return 0;
	/* what visiting it costs the sweep where it is, against there */
	double now = 0;
	for (size_t i = f; i < l; i++)
		now += detour(m, p->segs[i].pblk, p->segs[i].pblk + p->segs[i].len);
	if (now - then < m->short_seek)
		return 0;
	if (tail)
		ar->a[a].count -= need;
	else {
		ar->a[a].start += need;
		ar->a[a].count -= need;
	}
	c->first_unit = p->nunits;
	if (add_unit(b, ci, dst, need))
		return -ENOMEM;
	uint64_t filled = 0;
	for (size_t i = f; i < l; i++) {
		struct pf_move mv = { .owner = p->segs[i].owner, .lblk = p->segs[i].lblk, .src = p->segs[i].pblk,
				      .dst = dst + filled, .len = p->segs[i].len };
		if (add_move(b, &mv))
			return -ENOMEM;
		filled += p->segs[i].len;
	}
	c->nunits = 1;
	c->state = PF_CHUNK_PLACED;
	*cursor = dst + need;
	return 1;
}

static int by_pblk(const void *a, const void *b, void *arg)
{
	const struct pf_seg *s = arg;
	uint64_t x = s[*(const size_t *)a].pblk, y = s[*(const size_t *)b].pblk;
	return (x > y) - (x < y);
}

/* The sorted-sweep view of the set (struct model): islands — groups of segments that follow each other
 * without a seek, smaller than a chunk (island_max), with a seek before and after them — each segment's
 * waste, and the rest (the main part) sorted. */
static int sweep_view(const struct pf_plan *p, struct model *m, uint64_t island_max)
{
	size_t n = p->nsegs;
	size_t *ord = malloc((n ? n : 1) * sizeof(*ord));
	m->waste = calloc(n ? n : 1, sizeof(*m->waste));
	m->island = calloc(n ? n : 1, 1);
	m->main = malloc((n ? n : 1) * sizeof(*m->main));
	if (!ord || !m->waste || !m->island || !m->main) {
		free(ord);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), by_pblk, p->segs);
	int seek;
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t blocks = p->segs[ord[i]].len;
		for (j = i + 1; j < n; j++) {
			const struct pf_seg *a = &p->segs[ord[j - 1]];
			gap(m, a->pblk + a->len, p->segs[ord[j]].pblk, &seek);
			if (seek)
				break;
			blocks += p->segs[ord[j]].len;
		}
		if (blocks < island_max && !(i == 0 && j == n))
			for (size_t k = i; k < j; k++)
				m->island[ord[k]] = 1;
	}
	/* an island's own cost from its predecessor; the rest's from the previous segment that is not one */
	uint64_t end_any = 0, end_main = 0;
	int have_any = 0, have_main = 0;
	for (size_t k = 0; k < n; k++) {
		const struct pf_seg *s = &p->segs[ord[k]];
		if (m->island[ord[k]]) {
			m->waste[ord[k]] = have_any ? gap(m, end_any, s->pblk, &seek) : 0;
		} else {
			m->waste[ord[k]] = have_main ? gap(m, end_main, s->pblk, &seek) : 0;
			end_main = s->pblk + s->len;
			have_main = 1;
			m->main[m->nmain++] = (struct pf_brange){ s->pblk, s->len };
		}
		end_any = s->pblk + s->len;
		have_any = 1;
	}
	free(ord);
	return 0;
}

/* Cut a free area to the whole erase blocks it holds (slow flash, plan.h); 0 when it holds none. */
static int erase_align(struct pf_brange *a, uint64_t eb, uint64_t phase)
{
	uint64_t s = a->start + phase, e = s + a->count;
	uint64_t as = (s + eb - 1) / eb * eb, ae = e / eb * eb;
	if (ae <= as)
		return 0;
	a->start = as - phase;
	a->count = ae - as;
	return 1;
}

/* The free areas the plan may fill (ar: cut to whole erase blocks on slow flash), and what it may use of
 * them above the reserve (out->free_blocks, out->usable_blocks).  0 or -ENOMEM. */
static int free_areas(struct pf_plan *out, const struct pf_brange *free_runs, size_t nfree,
		      const struct pf_plan_params *prm, struct areas *ar)
{
	ar->a = malloc((nfree ? nfree : 1) * sizeof(*ar->a));
	if (!ar->a)
		return -ENOMEM;
	uint64_t aligned = 0;
	for (size_t i = 0; i < nfree; i++) {
		if (free_runs[i].count == 0)
			continue;
		out->free_blocks += free_runs[i].count;
		struct pf_brange a = free_runs[i];
		if (prm->erase_blocks > 1 && !erase_align(&a, prm->erase_blocks, prm->erase_phase))
			continue; /* holds no whole erase block */
		ar->a[ar->n++] = a;
		aligned += a.count;
	}
	out->usable_blocks = out->free_blocks > prm->reserve_blocks ? out->free_blocks - prm->reserve_blocks : 0;
	if (out->usable_blocks > aligned)
		out->usable_blocks = aligned; /* the reserve still counts all free blocks: never filled past it */
	return 0;
}

/* What each chunk is (*kinds, malloc'd, K_*): what stays, in place by the contiguity rule, or (block_size set)
 * near enough by the seek model; chunks near enough that hold a file to move alone cut (split_near).
 * 0 or -ENOMEM. */
static int chunk_kinds(struct pf_plan *out, const struct pf_plan_params *prm, int compact, const unsigned char *force,
		       const struct model *m, uint64_t min_piece, unsigned char **kinds)
{
	unsigned char *k = malloc(out->nchunks ? out->nchunks : 1), *alone = calloc(out->nsegs ? out->nsegs : 1, 1);
	int rc = k && alone ? 0 : -ENOMEM, any_alone = 0;
	for (size_t ci = 0; ci < out->nchunks && !rc; ci++) {
		const struct pf_chunk *c = &out->chunks[ci];
		k[ci] = compact || prm->move_all ? K_MOVE
			: in_place(out, c, min_piece) ? K_KEEP
			: force && force[ci]	     ? K_MOVE
			: m->disk.unit		     ? (unsigned char)classify(out, c, m, alone)
						     : K_MOVE;
		for (size_t i = c->first_seg; i < c->first_seg + c->nsegs && k[ci] == K_NEAR; i++)
			any_alone |= alone[i];
	}
	if (!rc && any_alone) {
		unsigned char *k2 = NULL;
		rc = split_near(out, alone, k, &k2);
		if (!rc) {
			free(k);
			k = k2;
		}
	}
	free(alone);
	if (rc) {
		free(k);
		return rc;
	}
	*kinds = k;
	return 0;
}

/* The chunks placed by their kinds.  One run for everything: when one free area holds all the chunks to move,
 * they go one after the other into the lowest such area (nearest the start of the disk, where the boot's
 * other reads — inode tables, with flex_bg all of them — are), so the data read is one forward sweep after
 * the metadata.  Incremental (seek model on, most of the set stays): what moves goes next to its neighbours
 * instead.  0 or -ENOMEM. */
static int place_chunks(struct builder *b, struct areas *ar, const struct pf_plan_params *prm, const struct model *m,
			const unsigned char *kinds, uint64_t min_piece)
{
	struct pf_plan *out = b->p;
	uint64_t to_move = 0, kept = 0;
	for (size_t ci = 0; ci < out->nchunks; ci++) {
		if (kinds[ci] == K_MOVE && to_move + out->chunks[ci].blocks <= out->usable_blocks)
			to_move += out->chunks[ci].blocks;
		if (kinds[ci] == K_KEEP || kinds[ci] == K_NEAR)
			kept += out->chunks[ci].blocks;
	}
	int near = m->disk.unit && kept > to_move, rc;
	uint64_t used = 0, cursor = prm->start, home = UINT64_MAX;
	for (size_t i = 0; i < ar->n && to_move && !near; i++)
		if (ar->a[i].count >= to_move && ar->a[i].start + ar->a[i].count > prm->start) {
			cursor = home = ar->a[i].start;
			break;
		}
	for (size_t ci = 0; ci < out->nchunks; ci++) {
		struct pf_chunk *c = &out->chunks[ci];
		size_t at;
		if (home != UINT64_MAX && !area_at(ar, cursor, &at))
			cursor = home; /* after a chunk in place: back to the common run */
		if (kinds[ci] == K_ALONE && used + c->blocks <= out->usable_blocks) {
			rc = place_alone(b, ar, ci, m, &cursor);
			if (rc < 0)
				return rc;
			if (rc == 1) {
				used += c->blocks;
				out->blocks_to_move += c->blocks;
				continue;
			}
		}
		if (kinds[ci] != K_MOVE) {
			c->state = PF_CHUNK_IN_PLACE;
			const struct pf_seg *last = &out->segs[c->first_seg + c->nsegs - 1];
			cursor = last->pblk + last->len;
			out->chunks_in_place++;
			out->blocks_in_place += c->blocks;
			if (kinds[ci] != K_KEEP)
				out->blocks_near += c->blocks;
			continue;
		}
		if (used + c->blocks > out->usable_blocks) {
			c->state = PF_CHUNK_FAILED;
			out->chunks_failed++;
			out->blocks_failed += c->blocks;
			continue;
		}
		if ((rc = place_chunk(b, ar, ci, min_piece, near, &cursor)))
			return rc;
		if (home != UINT64_MAX)
			home = cursor;
		used += c->blocks;
		out->blocks_to_move += c->blocks;
		if (c->state == PF_CHUNK_SPLIT)
			out->chunks_split++;
	}
	return 0;
}

/* force: per chunk (in cut order), 1 = move it even if it is near enough (see stable_plan), or NULL. */
static int plan_pass(const struct pf_seg *segs, size_t nsegs, const struct pf_brange *free_runs, size_t nfree,
		     const struct pf_plan_params *prm, int compact, const unsigned char *force, struct pf_plan *out)
{
	memset(out, 0, sizeof(*out));
	if (!prm || prm->chunk_blocks == 0 || (nsegs && !segs) || (nfree && !free_runs))
		return -EINVAL;
	for (size_t i = 1; i < nfree; i++)
		if (free_runs[i].start < free_runs[i - 1].start + free_runs[i - 1].count)
			return -EINVAL;

	uint64_t min_piece = prm->min_piece ? prm->min_piece : prm->chunk_blocks / 4;
	if (min_piece == 0)
		min_piece = 1;
	struct builder b = { .p = out };
	struct areas ar = { 0 };
	struct model m = { 0 };
	unsigned char *kinds = NULL;
	int rc = cut_chunks(&b, segs, nsegs, prm->chunk_blocks);
	if (!rc)
		rc = free_areas(out, free_runs, nfree, prm, &ar);
	if (!rc) {
		m = model_for(prm, segs, nsegs);
		if (m.disk.unit && !compact)
			rc = sweep_view(out, &m, prm->chunk_blocks);
	}
	if (!rc)
		rc = chunk_kinds(out, prm, compact, force, &m, min_piece, &kinds);
	if (!rc)
		rc = place_chunks(&b, &ar, prm, &m, kinds, min_piece);
	free(ar.a);
	free(kinds);
	free(m.waste);
	free(m.island);
	free(m.main);
	if (rc)
		pf_plan_free(out);
	return rc;
}

/* The sorted sweep of the set as a plan leaves it (what the rotational replay reads), in *sweep_s.  0 or -ENOMEM. */
static int sweep_after(const struct pf_plan *p, uint32_t bsize, uint64_t span, double *sweep_s)
{
	struct pf_seg *after = NULL;
	size_t n = 0;
	int rc = pf_plan_result(p, &after, &n);
	if (rc)
		return rc;
	struct pf_layout_figures f;
	pf_figures(after, n, bsize, span, &f);
	free(after);
	*sweep_s = f.sweep_s;
	return 0;
}

/* The free space as plan p leaves it: free_runs less the units' destinations, plus the moved blocks' old
 * places; sorted, merged.  *out is malloc'd.  Returns 0 or -ENOMEM. */
static int free_after(const struct pf_brange *free_runs, size_t nfree, const struct pf_plan *p, struct pf_brange **out,
		      size_t *nout)
{
	size_t cap = nfree + p->nunits + p->nmoves + 1, n = 0;
	struct pf_brange *r = malloc(cap * sizeof(*r)), *d = malloc((p->nunits + 1) * sizeof(*d));
	if (!r || !d) {
		free(r);
		free(d);
		return -ENOMEM;
	}
	for (size_t u = 0; u < p->nunits; u++)
		d[u] = (struct pf_brange){ p->units[u].dst, p->units[u].len };
	size_t nd = pf_branges_normalize(d, p->nunits, 0), k = 0;
	for (size_t i = 0; i < nfree; i++) { /* each free run less the destinations inside it */
		uint64_t s = free_runs[i].start, e = s + free_runs[i].count;
		while (k < nd && d[k].start + d[k].count <= s)
			k++;
		for (size_t j = k; j < nd && d[j].start < e; j++) {
			if (d[j].start > s)
				r[n++] = (struct pf_brange){ s, d[j].start - s };
			if (d[j].start + d[j].count > s)
				s = d[j].start + d[j].count;
		}
		if (s < e)
			r[n++] = (struct pf_brange){ s, e - s };
	}
	for (size_t m = 0; m < p->nmoves; m++)
		r[n++] = (struct pf_brange){ p->moves[m].src, p->moves[m].len };
	free(d);
	*out = r;
	*nout = pf_branges_normalize(r, n, 0);
	return 0;
}

/* The chunks (by index in cut order) that plan p keeps in place, wholly or in part, and that the next run —
 * planning on the set and the free space as p leaves them — would move: set in force; returns how many were
 * newly set, or -ENOMEM.  "Near enough" weighs a chunk against the rest of the set, and the rest moves under
 * it. */
static long moves_next_time(const struct pf_plan *p, const struct pf_brange *free_runs, size_t nfree,
			    const struct pf_plan_params *prm, unsigned char *force, size_t nforce)
{
	struct pf_seg *after = NULL;
	struct pf_brange *fr = NULL;
	unsigned char *kept = calloc(nforce ? nforce : 1, 1);
	size_t n = 0, nfr = 0;
	struct pf_plan next = { 0 };
	long added = -ENOMEM;
	if (!kept || pf_plan_result(p, &after, &n))
		goto out;
	/* the segments as the next run collects them: adjacent pieces of a file merged */
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		struct pf_seg *l = w ? &after[w - 1] : NULL;
		if (l && l->owner == after[i].owner && l->lblk + l->len == after[i].lblk &&
		    l->pblk + l->len == after[i].pblk)
			l->len += after[i].len;
		else
			after[w++] = after[i];
	}
	if (free_after(free_runs, nfree, p, &fr, &nfr) || plan_pass(after, w, fr, nfr, prm, 0, NULL, &next))
		goto out;
	/* chunk boundaries depend on the block sequence only: chunk k is the same blocks in both plans */
	uint64_t pos = 0;
	for (size_t ci = 0; ci < p->nchunks; ci++) {
		size_t k = (size_t)(pos / prm->chunk_blocks);
		pos += p->chunks[ci].blocks;
		if (k < nforce && p->chunks[ci].state == PF_CHUNK_IN_PLACE)
			kept[k] = 1;
	}
	added = 0;
	pos = 0;
	for (size_t ci = 0; ci < next.nchunks; ci++) {
		size_t k = (size_t)(pos / prm->chunk_blocks);
		pos += next.chunks[ci].blocks;
		if (k < nforce && next.chunks[ci].nunits && kept[k] && !force[k]) {
			force[k] = 1;
			added++;
		}
	}
out:
	free(kept);
	free(after);
	free(fr);
	pf_plan_free(&next);
	return added;
}

/* An incremental plan that the next run leaves alone: a chunk kept as near enough whose neighbours this plan
 * moves away would be moved by the next run (a second run right after a complete one would not be a no-op);
 * move it now instead.  Each pass only adds chunks to move, so this ends (at the latest when every near chunk
 * moves). */
static int stable_plan(const struct pf_seg *segs, size_t nsegs, const struct pf_brange *free_runs, size_t nfree,
		       const struct pf_plan_params *prm, struct pf_plan *out)
{
	uint64_t total = 0;
	for (size_t i = 0; i < nsegs; i++)
		total += segs[i].len;
	size_t nchunks = (size_t)((total + prm->chunk_blocks - 1) / (prm->chunk_blocks ? prm->chunk_blocks : 1));
	unsigned char *force = calloc(nchunks ? nchunks : 1, 1);
	if (!force)
		return -ENOMEM;
	int rc;
	for (;;) {
		rc = plan_pass(segs, nsegs, free_runs, nfree, prm, 0, force, out);
		if (rc || !prm->block_size || out->blocks_near == 0)
			break;
		long added = moves_next_time(out, free_runs, nfree, prm, force, nchunks);
		if (added <= 0) {
			if (added < 0) {
				pf_plan_free(out);
				rc = (int)added;
			}
			break;
		}
		pf_plan_free(out);
	}
	free(force);
	return rc;
}

int pf_plan_make(const struct pf_seg *segs, size_t nsegs, const struct pf_brange *free_runs, size_t nfree,
		 const struct pf_plan_params *prm, struct pf_plan *out)
{
	int rc = stable_plan(segs, nsegs, free_runs, nfree, prm, out);
	if (rc || !prm->block_size || out->blocks_in_place == 0)
		return rc;
	/* Incremental runs keep what reads well where it is and move the rest next to it; over many shutdowns
	 * the set can still spread (holes where files left, pieces placed apart).  When moving the whole set
	 * into one run would read faster by more than a move must save (allowance), do that instead. */
	struct model m = model_for(prm, segs, nsegs);
	double now, whole;
	if ((rc = sweep_after(out, m.disk.unit, m.disk.span, &now))) {
		pf_plan_free(out);
		return rc;
	}
	/* Once compact, a new order moves nothing: one copy of the set buys every later boot its gain, so the
	 * bar is lower than a chunk's allowance (which it must save at every shutdown it moves): a tenth of the
	 * set's transfer time, and at least four seeks (more than where the sweep starts can make up). */
	double bar = transfer(&m, out->blocks_total) / 10;
	if (bar < 4 * m.short_seek)
		bar = 4 * m.short_seek;
	/* one run reads at best in the transfer time: when even that is not worth it, no second plan */
	if (now - transfer(&m, out->blocks_total) <= bar)
		return 0;
	struct pf_plan c;
	rc = plan_pass(segs, nsegs, free_runs, nfree, prm, 1, NULL, &c);
	if (rc) {
		pf_plan_free(out);
		return rc;
	}
	if ((rc = sweep_after(&c, m.disk.unit, m.disk.span, &whole))) {
		pf_plan_free(&c);
		pf_plan_free(out);
		return rc;
	}
	if (c.blocks_failed == 0 && c.chunks_split == 0 && now - whole > bar) {
		pf_plan_free(out);
		*out = c;
		out->compacted = 1;
	} else {
		pf_plan_free(&c);
	}
	return 0;
}

void pf_plan_free(struct pf_plan *p)
{
	if (!p)
		return;
	free(p->segs);
	free(p->chunks);
	free(p->moves);
	free(p->units);
	memset(p, 0, sizeof(*p));
}

int pf_plan_result(const struct pf_plan *p, struct pf_seg **out, size_t *n)
{
	*out = malloc((p->nsegs + p->nmoves + 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	size_t k = 0;
	for (size_t c = 0; c < p->nchunks; c++) {
		const struct pf_chunk *ch = &p->chunks[c];
		if (ch->state == PF_CHUNK_IN_PLACE || ch->state == PF_CHUNK_FAILED) {
			for (size_t i = ch->first_seg; i < ch->first_seg + ch->nsegs; i++)
				(*out)[k++] = p->segs[i];
			continue;
		}
		for (size_t u = ch->first_unit; u < ch->first_unit + ch->nunits; u++)
			for (size_t m = p->units[u].first; m < p->units[u].first + p->units[u].count; m++)
				(*out)[k++] = (struct pf_seg){ .owner = p->moves[m].owner, .lblk = p->moves[m].lblk,
							       .pblk = p->moves[m].dst, .len = p->moves[m].len };
	}
	*n = k;
	return 0;
}
