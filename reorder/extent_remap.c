/* SPDX-License-Identifier: GPL-2.0-or-later */
/* In-place remapping of extent leaves (see extent_remap.h).  Entries are rebuilt from the old ones with the
 * moved ranges substituted, adjacent entries merged, and written back only if they fit the leaf. */
#include "extent_remap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ext2fs/ext3_extents.h>

#define INIT_MAX 32768u
#define UNINIT_MAX 32767u

struct out {
	struct pf_xent *e;
	size_t n, cap;
};

static void emit(struct out *o, uint64_t l, uint64_t p, uint64_t len, int uninit)
{
	if (o->n) {
		struct pf_xent *pr = &o->e[o->n - 1];
		if (pr->lblk + pr->len == l && pr->pblk + pr->len == p && pr->uninit == uninit &&
		    pr->len + len <= (uninit ? UNINIT_MAX : INIT_MAX)) {
			pr->len += len;
			return;
		}
	}
	if (o->n < o->cap)
		o->e[o->n++] = (struct pf_xent){ l, p, len, uninit };
	else
		o->n = o->cap + 1; /* overflow marker */
}

size_t pf_extent_apply(const struct pf_xent *in, size_t n, const struct pf_remap *m, size_t nm,
		       struct pf_xent *out, size_t cap, int *changed)
{
	struct out o = { out, 0, cap };
	*changed = 0;
	for (size_t i = 0; i < n && o.n <= cap; i++) {
		uint64_t l0 = in[i].lblk, len = in[i].len, p0 = in[i].pblk;
		if (in[i].uninit) {
			emit(&o, l0, p0, len, 1);
			continue;
		}
		uint64_t pos = l0, end = l0 + len;
		while (pos < end) {
			uint64_t stop = end;
			const struct pf_remap *hit = NULL;
			for (size_t k = 0; k < nm; k++) {
				if (m[k].lblk <= pos && pos < m[k].lblk + m[k].len) {
					hit = &m[k];
					break;
				}
				if (m[k].lblk > pos && m[k].lblk < stop)
					stop = m[k].lblk;
			}
			uint64_t cur = p0 + (pos - l0);
			if (hit) {
				stop = hit->lblk + hit->len < end ? hit->lblk + hit->len : end;
				uint64_t off = pos - hit->lblk;
				if (cur == hit->src + off) {
					emit(&o, pos, hit->dst + off, stop - pos, 0);
					*changed = 1;
					pos = stop;
					continue;
				}
			}
			emit(&o, pos, cur, stop - pos, 0);
			pos = stop;
		}
	}
	return o.n;
}

/* n on-disk entries as struct pf_xent. */
static void load(const struct ext3_extent *x, size_t n, struct pf_xent *out)
{
	for (size_t i = 0; i < n; i++) {
		unsigned raw = ext2fs_le16_to_cpu(x[i].ee_len);
		out[i] = (struct pf_xent){
			.lblk = ext2fs_le32_to_cpu(x[i].ee_block),
			.pblk = ext2fs_le32_to_cpu(x[i].ee_start) | ((uint64_t)ext2fs_le16_to_cpu(x[i].ee_start_hi) << 32),
			.len = raw > INIT_MAX ? raw - INIT_MAX : raw,
			.uninit = raw > INIT_MAX,
		};
	}
}

/* Rebuild n leaf entries; returns the new count (> cap: does not fit) and whether anything changed, or 0
 * without memory. */
static size_t remap_entries(const struct ext3_extent *old, size_t n, const struct pf_remap *m, size_t nm,
			    struct pf_xent *out, size_t cap, int *changed)
{
	*changed = 0;
	struct pf_xent *in = malloc((n ? n : 1) * sizeof(*in));
	if (!in)
		return 0;
	load(old, n, in);
	size_t cnt = pf_extent_apply(in, n, m, nm, out, cap, changed);
	free(in);
	return cnt;
}

static void store(struct ext3_extent_header *eh, const struct pf_xent *e, size_t n)
{
	struct ext3_extent *x = (struct ext3_extent *)(eh + 1);
	for (size_t i = 0; i < n; i++) {
		x[i].ee_block = ext2fs_cpu_to_le32((uint32_t)e[i].lblk);
		x[i].ee_len = ext2fs_cpu_to_le16((uint16_t)(e[i].len + (e[i].uninit ? INIT_MAX : 0)));
		x[i].ee_start = ext2fs_cpu_to_le32((uint32_t)e[i].pblk);
		x[i].ee_start_hi = ext2fs_cpu_to_le16((uint16_t)(e[i].pblk >> 32));
	}
	eh->eh_entries = ext2fs_cpu_to_le16((uint16_t)n);
}

/* New entries of a leaf header, or 0 when nothing changes / it does not fit. */
static size_t rebuild(const struct ext3_extent_header *eh, const struct pf_remap *m, size_t nm, struct pf_xent **tmp)
{
	size_t n = ext2fs_le16_to_cpu(eh->eh_entries), max = ext2fs_le16_to_cpu(eh->eh_max);
	if (n > max)
		return 0;
	*tmp = malloc((max + 1) * sizeof(**tmp));
	if (!*tmp)
		return 0;
	int changed;
	size_t cnt = remap_entries((const struct ext3_extent *)(eh + 1), n, m, nm, *tmp, max, &changed);
	return changed && cnt <= max ? cnt : 0;
}

static errcode_t walk(ext2_filsys fs, ext2_ino_t ino, const struct ext3_extent_header *node, int depth,
		      const struct pf_remap *m, size_t nm)
{
	const struct ext3_extent_idx *ix = (const struct ext3_extent_idx *)(node + 1);
	size_t n = ext2fs_le16_to_cpu(node->eh_entries);
	char *buf = malloc(fs->blocksize);
	if (!buf)
		return EXT2_ET_NO_MEMORY;
	errcode_t ec = 0;
	for (size_t i = 0; i < n && !ec; i++) {
		blk64_t child = ext2fs_le32_to_cpu(ix[i].ei_leaf) | ((blk64_t)ext2fs_le16_to_cpu(ix[i].ei_leaf_hi) << 32);
		if (child < fs->super->s_first_data_block || child >= ext2fs_blocks_count(fs->super)) {
			ec = EXT2_ET_EXTENT_INDEX_BAD;
			break;
		}
		ec = io_channel_read_blk64(fs->io, child, 1, buf);
		if (ec)
			break;
		struct ext3_extent_header *eh = (struct ext3_extent_header *)buf;
		if (ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC ||
		    ext2fs_le16_to_cpu(eh->eh_depth) != depth - 1) {
			ec = EXT2_ET_EXTENT_HEADER_BAD;
			break;
		}
		if (depth - 1 > 0) {
			ec = walk(fs, ino, eh, depth - 1, m, nm);
			continue;
		}
		struct pf_xent *tmp = NULL;
		size_t cnt = rebuild(eh, m, nm, &tmp);
		if (cnt) {
			store(eh, tmp, cnt);
			ec = ext2fs_extent_block_csum_set(fs, ino, eh);
			if (!ec)
				ec = io_channel_write_blk64(fs->io, child, 1, buf); /* the one write of this leaf */
		}
		free(tmp);
	}
	free(buf);
	return ec;
}

/* Depth 0 -> 1: new leaf at spare (written and flushed first), then the inode points at it (one write). */
static errcode_t grow(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode_large *in, const struct pf_xent *e, size_t cnt,
		      blk64_t spare)
{
	size_t max = (fs->blocksize - sizeof(struct ext3_extent_header)) / sizeof(struct ext3_extent);
	if (cnt > max)
		return 0;
	char *buf = calloc(1, fs->blocksize);
	if (!buf)
		return EXT2_ET_NO_MEMORY;
	struct ext3_extent_header *leaf = (struct ext3_extent_header *)buf;
	leaf->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);
	leaf->eh_max = ext2fs_cpu_to_le16((uint16_t)max);
	leaf->eh_depth = 0;
	store(leaf, e, cnt);
	errcode_t ec = ext2fs_extent_block_csum_set(fs, ino, leaf);
	if (!ec)
		ec = io_channel_write_blk64(fs->io, spare, 1, buf);
	if (!ec)
		ec = io_channel_flush(fs->io); /* the leaf is durable before anything points at it */
	free(buf);
	if (ec)
		return ec;
	struct ext3_extent_header *root = (struct ext3_extent_header *)in->i_block;
	struct ext3_extent_idx *ix = (struct ext3_extent_idx *)(root + 1);
	memset(ix, 0, sizeof(in->i_block) - sizeof(*root));
	ix[0].ei_block = ext2fs_cpu_to_le32((uint32_t)e[0].lblk);
	ix[0].ei_leaf = ext2fs_cpu_to_le32((uint32_t)spare);
	ix[0].ei_leaf_hi = ext2fs_cpu_to_le16((uint16_t)(spare >> 32));
	root->eh_entries = ext2fs_cpu_to_le16(1);
	root->eh_depth = ext2fs_cpu_to_le16(1);
	ec = ext2fs_iblk_add_blocks(fs, (struct ext2_inode *)in, 1);
	if (!ec)
		ec = ext2fs_write_inode_full(fs, ino, (struct ext2_inode *)in, sizeof(*in)); /* the switch */
	return ec ? ec : 1;
}

static errcode_t remap(ext2_filsys fs, ext2_ino_t ino, const struct pf_remap *m, size_t n, blk64_t spare_leaf,
		       int *used_spare)
{
	struct ext2_inode_large in;
	memset(&in, 0, sizeof(in));
	*used_spare = 0;
	errcode_t ec = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)&in, sizeof(in));
	if (ec)
		return ec;
	if (!(in.i_flags & EXT4_EXTENTS_FL))
		return EXT2_ET_INODE_NOT_EXTENT;
	struct ext3_extent_header *eh = (struct ext3_extent_header *)in.i_block;
	if (ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC)
		return EXT2_ET_EXTENT_HEADER_BAD;
	int depth = ext2fs_le16_to_cpu(eh->eh_depth);
	if (depth > 0)
		return walk(fs, ino, eh, depth, m, n);
	size_t nent = ext2fs_le16_to_cpu(eh->eh_entries), max = ext2fs_le16_to_cpu(eh->eh_max);
	if (nent > max)
		return EXT2_ET_EXTENT_HEADER_BAD;
	size_t cap = nent + 2 * n + 1;
	struct pf_xent *tmp = malloc(cap * sizeof(*tmp));
	if (!tmp)
		return EXT2_ET_NO_MEMORY;
	int changed;
	size_t cnt = remap_entries((const struct ext3_extent *)(eh + 1), nent, m, n, tmp, cap, &changed);
	if (changed && cnt <= max) {
		store(eh, tmp, cnt);
		ec = ext2fs_write_inode_full(fs, ino, (struct ext2_inode *)&in, sizeof(in)); /* one write */
	} else if (changed && cnt <= cap && spare_leaf) {
		ec = grow(fs, ino, &in, tmp, cnt, spare_leaf);
		if (ec == 1) {
			*used_spare = 1;
			ec = 0;
		}
	}
	free(tmp);
	return ec;
}

int pf_extent_remap(ext2_filsys fs, ext2_ino_t ino, const struct pf_remap *m, size_t n, blk64_t spare_leaf,
		    int *used_spare)
{
	return pf_err_from_ext2(remap(fs, ino, m, n, spare_leaf, used_spare));
}

int pf_extent_root(ext2_filsys fs, ext2_ino_t ino, struct pf_xent *out, size_t *n, size_t *max)
{
	struct ext2_inode in;
	*n = *max = 0;
	if (ext2fs_read_inode(fs, ino, &in) || !(in.i_flags & EXT4_EXTENTS_FL))
		return 0;
	const struct ext3_extent_header *eh = (const struct ext3_extent_header *)in.i_block;
	size_t nent = ext2fs_le16_to_cpu(eh->eh_entries), emax = ext2fs_le16_to_cpu(eh->eh_max);
	if (ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC || ext2fs_le16_to_cpu(eh->eh_depth) != 0 ||
	    emax > PF_EXTENT_ROOT_MAX || nent > emax)
		return 0;
	load((const struct ext3_extent *)(eh + 1), nent, out);
	*n = nent;
	*max = emax;
	return 1;
}

long pf_extent_worst_of(const struct pf_xent *x, size_t n, const struct pf_remap *m, size_t nm)
{
	long count = (long)n;
	/* each moved range adds at most one entry per end that falls inside an extent */
	for (size_t k = 0; k < nm; k++)
		for (size_t i = 0; i < n; i++) {
			if (m[k].lblk + m[k].len <= x[i].lblk || m[k].lblk >= x[i].lblk + x[i].len)
				continue;
			count += m[k].lblk > x[i].lblk;
			count += m[k].lblk + m[k].len < x[i].lblk + x[i].len;
		}
	return count;
}

/* Entries a seg adds to a leaf when moved: one per end that falls inside one of its extents. */
static unsigned seg_delta(const struct ext3_extent *x, size_t n, const struct pf_seg *s, int *touches)
{
	unsigned d = 0;
	*touches = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t l0 = ext2fs_le32_to_cpu(x[i].ee_block);
		unsigned raw = ext2fs_le16_to_cpu(x[i].ee_len);
		uint64_t len = raw > INIT_MAX ? raw - INIT_MAX : raw;
		if (s->lblk + s->len <= l0 || s->lblk >= l0 + len)
			continue;
		*touches = 1;
		d += s->lblk > l0;
		d += s->lblk + s->len < l0 + len;
	}
	return d;
}

static errcode_t check_leaves(ext2_filsys fs, const struct ext3_extent_header *node, int depth,
			      const struct pf_seg *segs, size_t n, unsigned char *drop)
{
	const struct ext3_extent_idx *ix = (const struct ext3_extent_idx *)(node + 1);
	size_t cnt = ext2fs_le16_to_cpu(node->eh_entries);
	char *buf = malloc(fs->blocksize);
	if (!buf)
		return EXT2_ET_NO_MEMORY;
	errcode_t ec = 0;
	for (size_t i = 0; i < cnt && !ec; i++) {
		blk64_t child = ext2fs_le32_to_cpu(ix[i].ei_leaf) | ((blk64_t)ext2fs_le16_to_cpu(ix[i].ei_leaf_hi) << 32);
		if (child < fs->super->s_first_data_block || child >= ext2fs_blocks_count(fs->super)) {
			ec = EXT2_ET_EXTENT_INDEX_BAD;
			break;
		}
		if ((ec = io_channel_read_blk64(fs->io, child, 1, buf)))
			break;
		const struct ext3_extent_header *eh = (const struct ext3_extent_header *)buf;
		if (ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC || ext2fs_le16_to_cpu(eh->eh_depth) != depth - 1) {
			ec = EXT2_ET_EXTENT_HEADER_BAD;
			break;
		}
		if (depth - 1 > 0) {
			ec = check_leaves(fs, eh, depth - 1, segs, n, drop);
			continue;
		}
		const struct ext3_extent *x = (const struct ext3_extent *)(eh + 1);
		size_t ne = ext2fs_le16_to_cpu(eh->eh_entries), max = ext2fs_le16_to_cpu(eh->eh_max);
		uint64_t total = ne;
		int touches;
		for (size_t k = 0; k < n; k++)
			total += seg_delta(x, ne, &segs[k], &touches);
		if (total <= max)
			continue;
		for (size_t k = 0; k < n; k++)
			if (seg_delta(x, ne, &segs[k], &touches) > 0)
				drop[k] = 1;
	}
	free(buf);
	return ec;
}

static errcode_t full_leaves(ext2_filsys fs, ext2_ino_t ino, const struct pf_seg *segs, size_t n, unsigned char *drop)
{
	struct ext2_inode in;
	errcode_t ec = ext2fs_read_inode(fs, ino, &in);
	if (ec || !(in.i_flags & EXT4_EXTENTS_FL))
		return ec;
	const struct ext3_extent_header *eh = (const struct ext3_extent_header *)in.i_block;
	if (ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC)
		return EXT2_ET_EXTENT_HEADER_BAD;
	int depth = ext2fs_le16_to_cpu(eh->eh_depth);
	if (depth == 0)
		return 0; /* the inode's own slots grow copy-on-write (relocate.c) */
	return check_leaves(fs, eh, depth, segs, n, drop);
}

int pf_extent_full_leaves(ext2_filsys fs, ext2_ino_t ino, const struct pf_seg *segs, size_t n, unsigned char *drop)
{
	return pf_err_from_ext2(full_leaves(fs, ino, segs, n, drop));
}
