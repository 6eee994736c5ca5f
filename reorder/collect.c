/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Layout wishes -> segments in layout order. */
#include "collect.h"

#include "array.h"
#include "blockmap.h"
#include "extent_remap.h"
#include "inode_identity.h"
#include "reserved_inode.h"
#include "warm.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *pf_skip_reason(int r)
{
	static const char *const names[PF_SKIP_NR] = {
		[PF_SKIP_NONE] = "ok",
		[PF_SKIP_GONE] = "deleted since the layout",
		[PF_SKIP_REPLACED] = "replaced by another file since the layout",
		[PF_SKIP_CHANGED] = "changed since the layout (size or mtime)",
		[PF_SKIP_TYPE] = "not a regular file or directory",
		[PF_SKIP_INLINE] = "inline data (no blocks to move)",
		[PF_SKIP_PROTECTED] = "immutable or append-only",
		[PF_SKIP_ENCRYPTED] = "encrypted",
		[PF_SKIP_VERITY] = "fs-verity",
		[PF_SKIP_SPECIAL] = "EA inode or DAX",
		[PF_SKIP_ERROR] = "block map unreadable",
		[PF_SKIP_RESERVED] = "an inode the filesystem itself uses (journal, orphan file, quota...)",
		[PF_SKIP_WRITTEN] = "written by every boot (a log): left where it is",
	};
	return r >= 0 && r < PF_SKIP_NR ? names[r] : "?";
}

static int cmp_ino(const void *a, const void *b)
{
	const struct pf_cfile *x = a, *y = b;
	return (x->ino > y->ino) - (x->ino < y->ino);
}

int pf_collect_find(const struct pf_collect *c, ext2_ino_t ino, size_t *i)
{
	size_t lo = 0, hi = c->nfiles;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->files[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	*i = lo;
	return lo < c->nfiles && c->files[lo].ino == ino;
}

/* May the reorder move file f?  Its record against the inode now (lib/file_identity.h): a directory by its size
 * and mtime too (PF_ID_DIR_CONTENT), since its recorded blocks are what is moved; then what the reorder cannot or
 * must not move. */
static int check_identity(ext2_filsys fs, struct pf_cfile *f, struct ext2_inode_large *in)
{
	const struct pf_file *r = f->rec;
	if (f->ino < 1 || f->ino > fs->super->s_inodes_count)
		return PF_SKIP_GONE;
	if (pf_inode_reserved(fs, f->ino))
		return PF_SKIP_RESERVED;
	struct pf_file_now now;
	int rc = pf_inode_now(fs, f->ino, in, &now);
	if (rc <= 0)
		return rc ? PF_SKIP_ERROR : PF_SKIP_GONE;
	enum pf_identity v = pf_file_identity(r, &now, PF_ID_DIR_CONTENT);
	if (pf_identity_replaced(v))
		return PF_SKIP_REPLACED;
	if (!LINUX_S_ISREG(in->i_mode) && !LINUX_S_ISDIR(in->i_mode))
		return PF_SKIP_TYPE;
	if (r->flags & PF_FILE_WRITTEN) /* the same file, but what the next boot writes lands elsewhere anyway */
		return PF_SKIP_WRITTEN;
	if (v != PF_ID_SAME)
		return PF_SKIP_CHANGED;
	if (in->i_flags & EXT4_INLINE_DATA_FL)
		return PF_SKIP_INLINE;
	if (in->i_flags & (EXT2_IMMUTABLE_FL | EXT2_APPEND_FL))
		return PF_SKIP_PROTECTED;
	if (in->i_flags & EXT4_ENCRYPT_FL)
		return PF_SKIP_ENCRYPTED;
	if (in->i_flags & EXT4_VERITY_FL)
		return PF_SKIP_VERITY;
	if (in->i_flags & (EXT4_EA_INODE_FL | 0x02000000 /* EXT4_DAX_FL */))
		return PF_SKIP_SPECIAL;
	return PF_SKIP_NONE;
}

static int push_seg(struct pf_collect *c, size_t *cap, uint32_t owner, uint64_t lblk, uint64_t pblk, uint64_t len)
{
	if (c->nsegs) {
		struct pf_seg *l = &c->segs[c->nsegs - 1];
		if (l->owner == owner && l->lblk + l->len == lblk && l->pblk + l->len == pblk) {
			l->len += len;
			return 0;
		}
	}
	if (PF_ARRAY_RESERVE(c->segs, *cap, c->nsegs + 1, 1024))
		return -ENOMEM;
	c->segs[c->nsegs++] = (struct pf_seg){ .owner = owner, .lblk = lblk, .pblk = pblk, .len = len };
	return 0;
}

/* Emit the mapped, initialised blocks of [a, b) for file fi. */
static int emit_mapped(struct pf_collect *c, size_t *cap, uint32_t fi, uint64_t a, uint64_t b)
{
	struct pf_cfile *f = &c->files[fi];
	for (size_t i = 0; i < f->nruns && a < b; i++) {
		const struct pf_bmap_run *r = &f->runs[i];
		uint64_t s = r->lblk > a ? r->lblk : a, e = r->lblk + r->len < b ? r->lblk + r->len : b;
		if (s >= e)
			continue;
		if (r->uninit) {
			c->uninit_blocks += e - s;
			continue;
		}
		int rc = push_seg(c, cap, fi, s, r->pblk + (s - r->lblk), e - s);
		if (rc)
			return rc;
	}
	return 0;
}

/* Emit the parts of [a, b) not taken before, and mark them taken.  covered stays sorted and disjoint. */
static int take_range(struct pf_collect *c, size_t *cap, uint32_t fi, uint64_t a, uint64_t b)
{
	struct pf_cfile *f = &c->files[fi];
	uint64_t pos = a;
	for (size_t i = 0; i < f->ncov && pos < b; i++) {
		const struct pf_brange *cv = &f->covered[i];
		if (cv->start + cv->count <= pos)
			continue;
		if (cv->start >= b)
			break;
		if (cv->start > pos) {
			int rc = emit_mapped(c, cap, fi, pos, cv->start);
			if (rc)
				return rc;
		}
		pos = cv->start + cv->count;
	}
	if (pos < b) {
		int rc = emit_mapped(c, cap, fi, pos, b);
		if (rc)
			return rc;
	}
	/* insert [a, b) merging with what it overlaps or touches */
	if (PF_ARRAY_RESERVE(f->covered, f->capcov, f->ncov + 1, 4))
		return -ENOMEM;
	size_t i = 0;
	while (i < f->ncov && f->covered[i].start + f->covered[i].count < a)
		i++;
	size_t j = i;
	uint64_t s = a, e = b;
	while (j < f->ncov && f->covered[j].start <= b) {
		if (f->covered[j].start < s)
			s = f->covered[j].start;
		if (f->covered[j].start + f->covered[j].count > e)
			e = f->covered[j].start + f->covered[j].count;
		j++;
	}
	if (j == i) {
		memmove(&f->covered[i + 1], &f->covered[i], (f->ncov - i) * sizeof(*f->covered));
		f->ncov++;
	} else if (j > i + 1) {
		memmove(&f->covered[i + 1], &f->covered[j], (f->ncov - j) * sizeof(*f->covered));
		f->ncov -= j - i - 1;
	}
	f->covered[i] = (struct pf_brange){ .start = s, .count = e - s };
	return 0;
}

/* Leave out the segments whose move could overflow a full leaf of a deep extent tree: relocate.c rewrites
 * leaves in place only, so they would stay behind at every run (and their chunk move again and again). */
static int drop_full_leaves(ext2_filsys fs, struct pf_collect *c)
{
	if (!c->nsegs)
		return 0;
	size_t *start = calloc(c->nfiles + 1, sizeof(*start)), *idx = malloc(c->nsegs * sizeof(*idx));
	size_t *fill = calloc(c->nfiles + 1, sizeof(*fill));
	struct pf_seg *tmp = malloc(c->nsegs * sizeof(*tmp));
	unsigned char *drop = calloc(c->nsegs, 1), *d = calloc(c->nsegs, 1);
	int rc = 0;
	if (!start || !idx || !fill || !tmp || !drop || !d) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->nsegs; i++)
		start[c->segs[i].owner + 1]++;
	for (size_t f = 0; f < c->nfiles; f++)
		start[f + 1] += start[f];
	for (size_t i = 0; i < c->nsegs; i++) {
		uint32_t o = c->segs[i].owner;
		idx[start[o] + fill[o]++] = i;
	}
	for (size_t f = 0; f < c->nfiles; f++) {
		size_t n = start[f + 1] - start[f];
		if (!n)
			continue;
		for (size_t k = 0; k < n; k++)
			tmp[k] = c->segs[idx[start[f] + k]];
		memset(d, 0, n);
		if (pf_extent_full_leaves(fs, c->files[f].ino, tmp, n, d))
			continue; /* unreadable tree: relocate.c will find the same and leave the blocks */
		for (size_t k = 0; k < n; k++)
			if (d[k])
				drop[idx[start[f] + k]] = 1;
	}
	size_t w = 0;
	for (size_t i = 0; i < c->nsegs; i++) {
		if (drop[i])
			c->full_leaf_blocks += c->segs[i].len;
		else
			c->segs[w++] = c->segs[i];
	}
	c->nsegs = w;
out:
	free(start);
	free(idx);
	free(fill);
	free(tmp);
	free(drop);
	free(d);
	return rc;
}

int pf_collect(ext2_filsys fs, const struct pf_layouts *l, struct pf_collect *out)
{
	memset(out, 0, sizeof(*out));
	size_t cap = 0;
	int rc = 0;
	uint64_t bs = fs->blocksize;

	/* distinct inodes, the first record of each kept */
	out->files = calloc(l->nwant ? l->nwant : 1, sizeof(*out->files));
	if (!out->files)
		return -ENOMEM;
	for (size_t i = 0; i < l->nwant; i++)
		out->files[i] = (struct pf_cfile){ .ino = (ext2_ino_t)l->want[i].file->ino, .rec = l->want[i].file };
	/* stable: keep the first record of an inode (qsort is not stable, so order by (ino, position)) */
	for (size_t i = 0; i < l->nwant; i++)
		out->files[i].checked = (int)i; /* temporary: position */
	qsort(out->files, l->nwant, sizeof(*out->files), cmp_ino);
	size_t n = 0;
	for (size_t i = 0; i < l->nwant; i++) {
		if (n && out->files[n - 1].ino == out->files[i].ino) {
			if (out->files[i].checked < out->files[n - 1].checked)
				out->files[n - 1] = out->files[i];
			continue;
		}
		out->files[n++] = out->files[i];
	}
	out->nfiles = n;
	for (size_t i = 0; i < n; i++)
		out->files[i].checked = 0;
	/* the files' inodes and extent trees in one sweep, not a seek per file (sorted by inode already) */
	ext2_ino_t *inos = malloc((n ? n : 1) * sizeof(*inos));
	if (!inos) {
		pf_collect_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		inos[i] = out->files[i].ino;
	rc = pf_warm_inodes(fs, inos, n);
	free(inos);
	if (rc) {
		pf_collect_free(out);
		return rc;
	}

	for (size_t w = 0; w < l->nwant; w++) {
		const struct pf_want *wt = &l->want[w];
		size_t fi = 0;
		(void)pf_collect_find(out, (ext2_ino_t)wt->file->ino, &fi); /* there: the files are the wants' inodes */
		struct pf_cfile *f = &out->files[fi];
		if (!f->checked) {
			struct ext2_inode_large in;
			f->checked = 1;
			f->skip = check_identity(fs, f, &in);
			if (f->skip == PF_SKIP_NONE &&
			    pf_blockmap(fs, f->ino, (struct ext2_inode *)&in, &f->runs, &f->nruns))
				f->skip = PF_SKIP_ERROR;
			if (f->skip)
				out->skipped[f->skip]++;
			else
				out->files_used++;
		}
		if (f->skip)
			continue;
		uint64_t nblocks = (f->rec->size + bs - 1) / bs;
		uint64_t a = wt->offset / bs, b = wt->length ? (wt->offset + wt->length + bs - 1) / bs : nblocks;
		if (b > nblocks)
			b = nblocks;
		if (a >= b)
			continue;
		rc = take_range(out, &cap, (uint32_t)fi, a, b);
		if (rc)
			break;
	}
	if (!rc)
		rc = drop_full_leaves(fs, out);
	if (rc)
		pf_collect_free(out);
	return rc;
}

void pf_collect_free(struct pf_collect *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nfiles; i++) {
		free(c->files[i].runs);
		free(c->files[i].covered);
	}
	free(c->files);
	free(c->segs);
	memset(c, 0, sizeof(*c));
}

int pf_collect_warm_directories(ext2_filsys fs, const struct pf_collect *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nfiles; i++)
		if (!c->files[i].skip && S_ISDIR(c->files[i].rec->mode))
			for (size_t r = 0; r < c->files[i].nruns; r++)
				n += c->files[i].runs[r].len;
	if (!n || n > (64u << 20) / fs->blocksize) /* more directory than a cheap sweep: leave it */
		return 0;
	uint64_t *b = malloc(n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < c->nfiles; i++)
		if (!c->files[i].skip && S_ISDIR(c->files[i].rec->mode))
			for (size_t r = 0; r < c->files[i].nruns; r++)
				for (uint64_t j = 0; j < c->files[i].runs[r].len; j++)
					b[k++] = c->files[i].runs[r].pblk + j;
	int rc = pf_warm_blocks(fs, b, k);
	free(b);
	return rc;
}
