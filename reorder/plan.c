/* Chunking and fitting (see plan.h for the rules). */
#include "plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A growable array; *cap and *n count elements. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 64;
	void *p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

struct areas {
	struct pf_run *a;
	size_t n;
};

/* Index of the non-empty area starting exactly at blk, or -1 (areas stay sorted: they only shrink from the
 * front). */
static long area_at(const struct areas *ar, uint64_t blk)
{
	size_t lo = 0, hi = ar->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ar->a[mid].start < blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ar->n && ar->a[lo].start == blk && ar->a[lo].len > 0)
		return (long)lo;
	return -1;
}

/* Best fit: the smallest area holding need blocks; among areas nearly as good (at most need/8 more), the one
 * nearest the start of the disk, so earlier parts of the layout end up nearer the metadata.  -1 if none. */
static long best_fit(const struct areas *ar, uint64_t need)
{
	uint64_t min = UINT64_MAX;
	for (size_t i = 0; i < ar->n; i++)
		if (ar->a[i].len >= need && ar->a[i].len < min)
			min = ar->a[i].len;
	if (min == UINT64_MAX)
		return -1;
	uint64_t good = min + need / 8;
	for (size_t i = 0; i < ar->n; i++)
		if (ar->a[i].len >= need && ar->a[i].len <= good)
			return (long)i;
	return -1;
}

static long largest(const struct areas *ar)
{
	long best = -1;
	for (size_t i = 0; i < ar->n; i++)
		if (ar->a[i].len > 0 && (best < 0 || ar->a[i].len > ar->a[best].len))
			best = (long)i;
	return best;
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

/* Choose the next piece for need blocks: returns the area index and sets *take, or -1 to retry relaxed. */
static long next_piece(const struct areas *ar, uint64_t cursor, uint64_t need, uint64_t min_piece, int relaxed,
		       uint64_t *take)
{
	uint64_t mp = relaxed ? 1 : min_piece;
	long a = area_at(ar, cursor);
	if (a >= 0) {
		uint64_t t = ar->a[a].len < need ? ar->a[a].len : need;
		if (t < need) {
			if (t < mp)
				t = 0;
			else if (need - t < mp)
				t = need - mp >= mp ? need - mp : 0;
		}
		if (t) {
			*take = t;
			return a;
		}
	}
	a = best_fit(ar, need);
	if (a >= 0) {
		*take = need;
		return a;
	}
	a = largest(ar); /* exists: the caller checked that the usable space holds need */
	if (a < 0)
		return -1;
	uint64_t t = ar->a[a].len;
	if (!relaxed) {
		if (t < min_piece)
			return -1;
		if (need - t < min_piece) {
			if (need - min_piece < min_piece)
				return -1;
			t = need - min_piece;
		}
	}
	*take = t;
	return a;
}

static int place_chunk(struct builder *b, struct areas *ar, size_t ci, uint64_t min_piece, uint64_t *cursor)
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
		long a = next_piece(ar, *cursor, need, mp, relaxed, &take);
		if (a < 0) {
			if (relaxed)
				return -EINVAL; /* cannot happen: the caller checked the space */
			relaxed = 1;
			continue;
		}
		uint64_t dst = ar->a[a].start;
		ar->a[a].start += take;
		ar->a[a].len -= take;
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

int pf_plan_make(const struct pf_seg *segs, size_t nsegs, const struct pf_run *free_runs, size_t nfree,
		 const struct pf_plan_params *prm, struct pf_plan *out)
{
	memset(out, 0, sizeof(*out));
	if (!prm || prm->chunk_blocks == 0 || (nsegs && !segs) || (nfree && !free_runs))
		return -EINVAL;
	for (size_t i = 1; i < nfree; i++)
		if (free_runs[i].start < free_runs[i - 1].start + free_runs[i - 1].len)
			return -EINVAL;

	uint64_t min_piece = prm->min_piece ? prm->min_piece : prm->chunk_blocks / 4;
	if (min_piece == 0)
		min_piece = 1;
	struct builder b = { .p = out };
	struct areas ar = { 0 };
	int rc = cut_chunks(&b, segs, nsegs, prm->chunk_blocks);
	if (rc)
		goto fail;

	ar.a = malloc((nfree ? nfree : 1) * sizeof(*ar.a));
	if (!ar.a) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < nfree; i++) {
		if (free_runs[i].len == 0)
			continue;
		ar.a[ar.n++] = free_runs[i];
		out->free_blocks += free_runs[i].len;
	}
	out->usable_blocks = out->free_blocks > prm->reserve_blocks ? out->free_blocks - prm->reserve_blocks : 0;

	/* One run for everything: when one free area holds all the chunks to move, they go one after the other
	 * into the lowest such area (nearest the start of the disk, where the boot's other reads — inode tables,
	 * with flex_bg all of them — are), so the data read is one forward sweep after the metadata. */
	uint64_t to_move = 0;
	for (size_t ci = 0; ci < out->nchunks; ci++)
		if (!in_place(out, &out->chunks[ci], min_piece) && to_move + out->chunks[ci].blocks <= out->usable_blocks)
			to_move += out->chunks[ci].blocks;
	uint64_t used = 0, cursor = prm->start, home = UINT64_MAX;
	for (size_t i = 0; i < ar.n && to_move; i++)
		if (ar.a[i].len >= to_move && ar.a[i].start + ar.a[i].len > prm->start) {
			cursor = home = ar.a[i].start;
			break;
		}
	for (size_t ci = 0; ci < out->nchunks; ci++) {
		struct pf_chunk *c = &out->chunks[ci];
		if (home != UINT64_MAX && area_at(&ar, cursor) < 0)
			cursor = home; /* after a chunk in place: back to the common run */
		if (in_place(out, c, min_piece)) {
			c->state = PF_CHUNK_IN_PLACE;
			const struct pf_seg *last = &out->segs[c->first_seg + c->nsegs - 1];
			cursor = last->pblk + last->len;
			out->chunks_in_place++;
			out->blocks_in_place += c->blocks;
			continue;
		}
		if (used + c->blocks > out->usable_blocks) {
			c->state = PF_CHUNK_FAILED;
			out->chunks_failed++;
			out->blocks_failed += c->blocks;
			continue;
		}
		rc = place_chunk(&b, &ar, ci, min_piece, &cursor);
		if (rc)
			goto fail;
		if (home != UINT64_MAX)
			home = cursor;
		used += c->blocks;
		out->blocks_to_move += c->blocks;
		if (c->state == PF_CHUNK_SPLIT)
			out->chunks_split++;
	}
	free(ar.a);
	return 0;
fail:
	free(ar.a);
	pf_plan_free(out);
	return rc;
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
