/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stacked channel of journal_io.h: holds metadata writes, commits them through the journal at each flush,
 * and writes the superblock only in ways a tear cannot break. */
#include "journal_io.h"

#include "error.h"
#include "journal_txn.h"

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SB_OFF 1024
#define SB_SIZE 1024
/* superblock field offsets */
enum { SB_INCOMPAT = 0x60, SB_SNAP_INUM = 0x180, SB_SNAP_ID = 0x184, SB_CSUM = 0x3FC };

struct jio {
	io_channel inner;
	ext2_filsys fs;
	struct pf_jtxn *j;          /* NULL: no journal, writes pass through */
	uint64_t *blk;              /* held blocks, sorted */
	char **data;
	size_t n, cap, limit;       /* limit: a transaction's capacity */
	unsigned char sb_disk[SB_SIZE]; /* the superblock as on the disk */
	unsigned char sb_new[SB_SIZE];  /* the last one libext2fs wrote, held */
	int sb_held, recover_on;    /* recover_on: needs_recovery set on the disk by us */
	int csum;                   /* metadata_csum */
	unsigned long txns, jblocks, sb_writes;
};

static struct jio *jio_of(io_channel ch)
{
	return (struct jio *)ch->private_data;
}

static struct struct_io_manager jio_manager;

/* ---- the superblock ---- */

static uint32_t sb_crc(const unsigned char *sb)
{
	return ext2fs_crc32c_le(~0u, sb, SB_CSUM);
}

int pf_sb_keep_csum(unsigned char *sb, unsigned int csum)
{
	uint32_t z = 0, inum;
	memcpy(&inum, sb + SB_SNAP_INUM, 4);
	if (inum)
		return -EINVAL;
	/* crc32c over a fixed length is affine in the bits of the data: find the bits of s_snapshot_id whose
	 * effects on the checksum add up to the change needed (Gaussian elimination over GF(2)) */
	memcpy(sb + SB_SNAP_ID, &z, 4);
	uint32_t c0 = sb_crc(sb), basis[32] = { 0 }, comb[32] = { 0 };
	for (int b = 0; b < 32; b++) {
		uint32_t v = htole32(1u << b);
		memcpy(sb + SB_SNAP_ID, &v, 4);
		uint32_t col = sb_crc(sb) ^ c0, m = 1u << b;
		for (int p = 31; p >= 0 && col; p--) {
			if (!(col >> p & 1))
				continue;
			if (!basis[p]) {
				basis[p] = col;
				comb[p] = m;
				col = 0;
				break;
			}
			col ^= basis[p];
			m ^= comb[p];
		}
	}
	uint32_t want = c0 ^ csum, sol = 0;
	for (int p = 31; p >= 0; p--)
		if (want >> p & 1) {
			if (!basis[p])
				return -EINVAL;
			want ^= basis[p];
			sol ^= comb[p];
		}
	uint32_t v = htole32(sol), c = htole32(csum);
	memcpy(sb + SB_SNAP_ID, &v, 4);
	memcpy(sb + SB_CSUM, &c, 4);
	return sb_crc(sb) == csum ? 0 : -EINVAL;
}

/* Write img as the primary superblock so that a tear leaves the old or the new one: only its first 512 bytes
 * may differ from the disk's (else it is written as given: a field the reorder never changes changed). */
static errcode_t sb_write(struct jio *s, const unsigned char *img)
{
	unsigned char b[SB_SIZE];
	memcpy(b, img, SB_SIZE);
	if (!memcmp(b, s->sb_disk, SB_SIZE))
		return 0;
	if (s->csum && !memcmp(b + 512, s->sb_disk + 512, SB_CSUM - 512)) {
		uint32_t disk;
		memcpy(&disk, s->sb_disk + SB_CSUM, 4);
		if (pf_sb_keep_csum(b, le32toh(disk)))
			memcpy(b, img, SB_SIZE); /* cannot: as given */
	}
	int bs = s->inner->block_size;
	errcode_t ec = io_channel_set_blksize(s->inner, SB_OFF);
	if (!ec)
		ec = io_channel_write_blk64(s->inner, 1, -SB_SIZE, b);
	errcode_t ec2 = io_channel_set_blksize(s->inner, bs);
	if (!ec && !ec2) {
		memcpy(s->sb_disk, b, SB_SIZE);
		s->sb_writes++;
	}
	return ec ? ec : ec2;
}

/* The held superblock (or the one on the disk) with needs_recovery set or cleared, checksum recomputed. */
static errcode_t sb_write_recover(struct jio *s, int on)
{
	unsigned char b[SB_SIZE];
	memcpy(b, s->sb_held ? s->sb_new : s->sb_disk, SB_SIZE);
	uint32_t inc;
	memcpy(&inc, b + SB_INCOMPAT, 4);
	inc = le32toh(inc);
	inc = on ? inc | EXT3_FEATURE_INCOMPAT_RECOVER : inc & ~(uint32_t)EXT3_FEATURE_INCOMPAT_RECOVER;
	inc = htole32(inc);
	memcpy(b + SB_INCOMPAT, &inc, 4);
	if (s->csum) {
		uint32_t c = htole32(sb_crc(b));
		memcpy(b + SB_CSUM, &c, 4);
	}
	return sb_write(s, b);
}

/* ---- held blocks ---- */

static size_t find(const struct jio *s, uint64_t b)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->blk[mid] < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void drop_held(struct jio *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->data[i]);
	s->n = 0;
}

/* The named steps of journal_io.h, for what is held. */
static errcode_t commit(struct jio *s)
{
	io_channel in = s->inner;
	ext2_filsys fs = s->fs;
	int bs = in->block_size;
	errcode_t ec = 0;
	int rc = 0;
	if (s->n) {
		/* 1. needs_recovery on the disk before anything is in the journal */
		if (!s->recover_on) {
			if ((ec = sb_write_recover(s, 1)) || (ec = io_channel_flush(in)))
				return ec;
			s->recover_on = 1;
		}
		if (bs != (int)fs->blocksize && (ec = io_channel_set_blksize(in, (int)fs->blocksize)))
			return ec;
		/* 2. the transaction, committed */
		rc = pf_jtxn_commit(s->j, s->blk, s->data, s->n);
		/* 3. in place */
		for (size_t i = 0; i < s->n && !rc; i++)
			rc = pf_err_from_ext2(io_channel_write_blk64(in, s->blk[i], 1, s->data[i]));
		if (!rc)
			rc = pf_err_from_ext2(io_channel_flush(in));
		/* 4. the journal empty */
		if (!rc)
			rc = pf_jtxn_empty(s->j);
		if (!rc) {
			s->txns++;
			s->jblocks += s->n;
			drop_held(s);
		}
		if (bs != (int)fs->blocksize)
			io_channel_set_blksize(in, bs);
		if (rc)
			return EXT2_ET_SHORT_WRITE; /* the channel's callers want an errcode */
	}
	if (s->sb_held) {
		/* needs_recovery stays on the disk while this run may write more transactions */
		if (s->recover_on)
			ec = sb_write_recover(s, 1);
		else
			ec = sb_write(s, s->sb_new);
		if (ec)
			return ec;
		s->sb_held = 0;
	}
	return io_channel_flush(in);
}

/* Hold fs block b (data): dropped when the disk has it already. */
static errcode_t hold(struct jio *s, uint64_t b, const char *data)
{
	size_t bs = s->fs->blocksize, i = find(s, b);
	if (i < s->n && s->blk[i] == b) {
		memcpy(s->data[i], data, bs);
		return 0;
	}
	char *d = malloc(bs);
	if (!d)
		return EXT2_ET_NO_MEMORY;
	errcode_t ec = io_channel_read_blk64(s->inner, b, 1, d);
	if (!ec && !memcmp(d, data, bs)) {
		free(d);
		return 0; /* the same: nothing to write (libext2fs rewrites descriptors and bitmaps whole) */
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint64_t *nb = realloc(s->blk, cap * sizeof(*nb));
		if (nb)
			s->blk = nb;
		char **nd = realloc(s->data, cap * sizeof(*nd));
		if (nd)
			s->data = nd;
		if (!nb || !nd) {
			free(d);
			return EXT2_ET_NO_MEMORY;
		}
		s->cap = cap;
	}
	memcpy(d, data, bs);
	memmove(&s->blk[i + 1], &s->blk[i], (s->n - i) * sizeof(*s->blk));
	memmove(&s->data[i + 1], &s->data[i], (s->n - i) * sizeof(*s->data));
	s->blk[i] = b;
	s->data[i] = d;
	s->n++;
	return s->n >= s->limit ? commit(s) : 0;
}

/* ---- the channel ---- */

static uint64_t byte_len(io_channel ch, int count)
{
	return count < 0 ? (uint64_t)-count : (uint64_t)count * (uint64_t)ch->block_size;
}

static errcode_t jio_read(io_channel ch, unsigned long long block, int count, void *data)
{
	struct jio *s = jio_of(ch);
	errcode_t ec = io_channel_read_blk64(s->inner, block, count, data);
	if (ec)
		return ec;
	uint64_t off = block * (uint64_t)ch->block_size, len = byte_len(ch, count), bs = s->fs->blocksize;
	for (size_t i = find(s, off / bs); i < s->n && s->blk[i] * bs < off + len; i++) {
		uint64_t a = s->blk[i] * bs, lo = a > off ? a : off, hi = a + bs < off + len ? a + bs : off + len;
		memcpy((char *)data + (lo - off), s->data[i] + (lo - a), hi - lo);
	}
	if (s->sb_held && off < SB_OFF + SB_SIZE && off + len > SB_OFF) {
		uint64_t lo = off > SB_OFF ? off : SB_OFF, hi = off + len < SB_OFF + SB_SIZE ? off + len : SB_OFF + SB_SIZE;
		memcpy((char *)data + (lo - off), s->sb_new + (lo - SB_OFF), hi - lo);
	}
	return 0;
}

static errcode_t jio_read32(io_channel ch, unsigned long block, int count, void *data)
{
	return jio_read(ch, block, count, data);
}

static errcode_t jio_write(io_channel ch, unsigned long long block, int count, const void *data)
{
	struct jio *s = jio_of(ch);
	uint64_t off = block * (uint64_t)ch->block_size, len = byte_len(ch, count), bs = s->fs->blocksize;
	if (off == SB_OFF && len == SB_SIZE) { /* the superblock: held until the flush */
		memcpy(s->sb_new, data, SB_SIZE);
		s->sb_held = 1;
		return 0;
	}
	if (off < SB_OFF + SB_SIZE && off + len > SB_OFF)
		return EXT2_ET_UNIMPLEMENTED; /* part of the superblock with something else: never done */
	if (!s->j)
		return io_channel_write_blk64(s->inner, block, count, data);
	if (off % bs || len % bs)
		return EXT2_ET_UNIMPLEMENTED;
	for (uint64_t k = 0; k < len / bs; k++) {
		errcode_t ec = hold(s, off / bs + k, (const char *)data + k * bs);
		if (ec)
			return ec;
	}
	return 0;
}

static errcode_t jio_write32(io_channel ch, unsigned long block, int count, const void *data)
{
	return jio_write(ch, block, count, data);
}

static errcode_t jio_write_byte(io_channel ch, unsigned long offset, int count, const void *data)
{
	struct jio *s = jio_of(ch);
	if (offset < SB_OFF || offset + (unsigned long)count > SB_OFF + SB_SIZE || count < 0)
		return EXT2_ET_UNIMPLEMENTED;
	if (!s->sb_held)
		memcpy(s->sb_new, s->sb_disk, SB_SIZE);
	memcpy(s->sb_new + (offset - SB_OFF), data, (size_t)count);
	s->sb_held = 1;
	return 0;
}

static errcode_t jio_flush(io_channel ch)
{
	return commit(jio_of(ch));
}

/* What is held committed; then, the journal empty, needs_recovery cleared. */
static errcode_t finish(struct jio *s)
{
	errcode_t ec = commit(s);
	if (!ec && s->recover_on) {
		ec = sb_write_recover(s, 0);
		if (!ec)
			ec = io_channel_flush(s->inner);
		if (!ec)
			s->recover_on = 0;
	}
	return ec;
}

static errcode_t jio_close(io_channel ch)
{
	struct jio *s = jio_of(ch);
	if (--ch->refcount > 0)
		return 0;
	errcode_t ec = finish(s);
	drop_held(s);
	free(s->blk);
	free(s->data);
	pf_jtxn_close(s->j);
	errcode_t ec2 = io_channel_close(s->inner);
	free(ch->name);
	free(s);
	free(ch);
	return ec ? ec : ec2;
}

static errcode_t jio_set_blksize(io_channel ch, int blksize)
{
	struct jio *s = jio_of(ch);
	errcode_t ec = io_channel_set_blksize(s->inner, blksize);
	if (!ec)
		ch->block_size = blksize;
	return ec;
}

static errcode_t jio_set_option(io_channel ch, const char *opt, const char *arg)
{
	io_channel in = jio_of(ch)->inner;
	return in->manager->set_option ? in->manager->set_option(in, opt, arg) : EXT2_ET_INVALID_ARGUMENT;
}

static errcode_t jio_get_stats(io_channel ch, io_stats *st)
{
	io_channel in = jio_of(ch)->inner;
	return in->manager->get_stats ? in->manager->get_stats(in, st) : EXT2_ET_UNIMPLEMENTED;
}

static errcode_t jio_discard(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = jio_of(ch)->inner;
	return in->manager->discard ? in->manager->discard(in, block, count) : EXT2_ET_UNIMPLEMENTED;
}

static errcode_t jio_zeroout(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = jio_of(ch)->inner;
	return in->manager->zeroout ? in->manager->zeroout(in, block, count) : EXT2_ET_UNIMPLEMENTED;
}

static errcode_t jio_readahead(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = jio_of(ch)->inner;
	return in->manager->cache_readahead ? in->manager->cache_readahead(in, block, count) : EXT2_ET_OP_NOT_SUPPORTED;
}

static errcode_t jio_open(const char *name, int flags, io_channel *channel)
{
	(void)name;
	(void)flags;
	(void)channel;
	return EXT2_ET_UNIMPLEMENTED; /* only stacked by pf_jio_install */
}

static struct struct_io_manager jio_manager = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "prefetch-reorder journaling I/O manager",
	.open = jio_open,
	.close = jio_close,
	.set_blksize = jio_set_blksize,
	.read_blk = jio_read32,
	.write_blk = jio_write32,
	.flush = jio_flush,
	.write_byte = jio_write_byte,
	.set_option = jio_set_option,
	.get_stats = jio_get_stats,
	.read_blk64 = jio_read,
	.write_blk64 = jio_write,
	.discard = jio_discard,
	.cache_readahead = jio_readahead,
	.zeroout = jio_zeroout,
};

int pf_jio_install(ext2_filsys fs, char *err, size_t errlen)
{
	io_channel in = fs->io, ch = NULL;
	err[0] = 0;
	struct jio *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->inner = in;
	s->fs = fs;
	s->csum = ext2fs_has_feature_metadata_csum(fs->super);
	int bs = in->block_size;
	errcode_t ec = io_channel_set_blksize(in, SB_OFF);
	if (!ec)
		ec = io_channel_read_blk64(in, 1, -SB_SIZE, s->sb_disk);
	io_channel_set_blksize(in, bs);
	int rc = pf_err_from_ext2(ec);
	if (!rc && ext2fs_has_feature_journal(fs->super)) {
		char why[160];
		rc = pf_jtxn_open(fs, in, &s->j, why, sizeof(why));
		if (rc)
			snprintf(err, errlen, "%s: its journal cannot be written: %s", fs->device_name, why);
		else
			s->limit = pf_jtxn_capacity(s->j);
	}
	if (!rc && !(ch = calloc(1, sizeof(*ch))))
		rc = -ENOMEM;
	if (!rc) {
		ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
		ch->manager = &jio_manager;
		ch->block_size = in->block_size;
		ch->refcount = 1;
		ch->private_data = s;
		ch->align = in->align;
		if (!(ch->name = strdup(in->name))) {
			free(ch);
			rc = -ENOMEM;
		}
	}
	if (rc) {
		if (!*err)
			snprintf(err, errlen, "%s: %s", fs->device_name, pf_strerror(rc));
		pf_jtxn_close(s->j);
		free(s);
		return rc;
	}
	if (fs->image_io == fs->io)
		fs->image_io = ch;
	fs->io = ch;
	return 0;
}

int pf_jio_finish(ext2_filsys fs)
{
	if (fs->io->manager != &jio_manager)
		return 0;
	return pf_err_from_ext2(finish(jio_of(fs->io)));
}

io_channel pf_jio_raw(ext2_filsys fs)
{
	return fs->io->manager == &jio_manager ? jio_of(fs->io)->inner : fs->io;
}

int pf_jio_journaled(ext2_filsys fs)
{
	return fs->io->manager == &jio_manager && jio_of(fs->io)->j != NULL;
}

void pf_jio_stats(ext2_filsys fs, unsigned long *txns, unsigned long *blocks, unsigned long *sb_writes)
{
	*txns = *blocks = *sb_writes = 0;
	if (fs->io->manager != &jio_manager)
		return;
	struct jio *s = jio_of(fs->io);
	*txns = s->txns;
	*blocks = s->jblocks;
	*sb_writes = s->sb_writes;
}
