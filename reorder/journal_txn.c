/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The jbd2 on-disk format, written (journal_txn.h).  Everything in the journal is big-endian.  The format is the
 * kernel's (Documentation/filesystems/ext4/journal.rst); e2fsprogs' e2fsck/recovery.c is the reader these
 * transactions are tested against (tests/unit/test_journal_txn.c, tests/integration/60-reorder-crash.sh). */
#include "journal_txn.h"

#include "error.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JBD2_MAGIC 0xC03B3998u
enum { JT_DESCRIPTOR = 1, JT_COMMIT = 2, JT_SB_V1 = 3, JT_SB_V2 = 4 };
enum { JF_ESCAPE = 1, JF_SAME_UUID = 2, JF_LAST_TAG = 8 };
enum { JI_REVOKE = 0x1, JI_64BIT = 0x2, JI_ASYNC_COMMIT = 0x4, JI_CSUM_V2 = 0x8, JI_CSUM_V3 = 0x10, JI_FAST_COMMIT = 0x20 };
/* journal superblock field offsets */
enum { JS_BLOCKSIZE = 0x0C, JS_MAXLEN = 0x10, JS_FIRST = 0x14, JS_SEQUENCE = 0x18, JS_START = 0x1C, JS_ERRNO = 0x20,
       JS_COMPAT = 0x24, JS_INCOMPAT = 0x28, JS_ROCOMPAT = 0x2C, JS_UUID = 0x30, JS_CHECKSUM = 0xFC, JS_SIZE = 1024 };
/* commit block: header, h_chksum_type, h_chksum_size, padding, h_chksum[8], h_commit_sec, h_commit_nsec */
enum { JC_CHKSUM = 0x10 };

struct pf_jtxn {
	ext2_filsys fs;
	io_channel raw;
	uint32_t bs, first, last; /* journal blocks [first, last) hold transactions */
	uint32_t incompat;
	uint32_t seq;             /* the sequence the next transaction carries */
	uint32_t csum_seed;       /* crc32c of the journal's UUID (v2/v3) */
	size_t tag_bytes, tags_per_desc;
	blk64_t *pblk;            /* journal block -> filesystem block, [0, last) */
	char *jsb;                /* the journal superblock's block as on the disk */
	char *buf;                /* one block of scratch */
};

static uint32_t get32(const char *p, size_t off)
{
	uint32_t v;
	memcpy(&v, p + off, 4);
	return be32toh(v);
}

static void put32(char *p, size_t off, uint32_t v)
{
	v = htobe32(v);
	memcpy(p + off, &v, 4);
}

static void put16(char *p, size_t off, uint16_t v)
{
	v = htobe16(v);
	memcpy(p + off, &v, 2);
}

static int csum_v23(const struct pf_jtxn *j)
{
	return (j->incompat & (JI_CSUM_V2 | JI_CSUM_V3)) != 0;
}

static uint32_t crc(uint32_t seed, const void *p, size_t n)
{
	return ext2fs_crc32c_le(seed, (unsigned char const *)p, n);
}

static int jwrite(struct pf_jtxn *j, uint32_t jblk, const void *data)
{
	return pf_err_from_ext2(io_channel_write_blk64(j->raw, j->pblk[jblk], 1, data));
}

static int jflush(struct pf_jtxn *j)
{
	return pf_err_from_ext2(io_channel_flush(j->raw));
}

/* The journal superblock with s_sequence and s_start as given, its checksum set, written (not flushed). */
static int write_jsb(struct pf_jtxn *j, uint32_t seq, uint32_t start)
{
	put32(j->jsb, JS_SEQUENCE, seq);
	put32(j->jsb, JS_START, start);
	if (csum_v23(j)) {
		put32(j->jsb, JS_CHECKSUM, 0);
		put32(j->jsb, JS_CHECKSUM, crc(~0u, j->jsb, JS_SIZE));
	}
	return jwrite(j, 0, j->jsb);
}

static int refuse(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	return -ENOTSUP;
}

/* The journal inode's blocks, looked up once: the journal never moves (the reorder never moves it). */
static int map_journal(struct pf_jtxn *j, ext2_ino_t ino, uint32_t n)
{
	struct ext2_inode in;
	errcode_t ec = ext2fs_read_inode(j->fs, ino, &in);
	if (ec)
		return pf_err_from_ext2(ec);
	if (EXT2_I_SIZE(&in) / j->bs < n)
		return -EINVAL;
	j->pblk = calloc(n, sizeof(*j->pblk));
	if (!j->pblk)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		ec = ext2fs_bmap2(j->fs, ino, &in, NULL, 0, i, NULL, &j->pblk[i]);
		if (ec)
			return pf_err_from_ext2(ec);
		if (!j->pblk[i])
			return -EINVAL; /* a hole in the journal */
	}
	return 0;
}

static int check_jsb(struct pf_jtxn *j, char *err, size_t errlen)
{
	const char *s = j->jsb;
	uint32_t type = get32(s, 4);
	if (get32(s, 0) != JBD2_MAGIC || (type != JT_SB_V1 && type != JT_SB_V2))
		return refuse(err, errlen, "the journal superblock is not a jbd2 superblock");
	if (get32(s, JS_BLOCKSIZE) != j->bs)
		return refuse(err, errlen, "the journal's block size is not the filesystem's");
	j->incompat = type == JT_SB_V2 ? get32(s, JS_INCOMPAT) : 0;
	if (j->incompat & ~(uint32_t)(JI_REVOKE | JI_64BIT | JI_ASYNC_COMMIT | JI_CSUM_V2 | JI_CSUM_V3))
		return refuse(err, errlen, "the journal has incompatible features this writer does not know (fast commit?)");
	if (type == JT_SB_V2 && get32(s, JS_ROCOMPAT))
		return refuse(err, errlen, "the journal has read-only-compatible features this writer does not know");
	if (get32(s, JS_START) != 0)
		return refuse(err, errlen, "the journal is not empty: run fsck first");
	if (get32(s, JS_ERRNO) != 0)
		return refuse(err, errlen, "the journal records an error: run fsck first");
	j->first = get32(s, JS_FIRST);
	j->last = get32(s, JS_MAXLEN);
	j->seq = get32(s, JS_SEQUENCE);
	if (j->first < 1 || j->last <= j->first + 3)
		return refuse(err, errlen, "the journal is too small");
	if (j->incompat & JI_CSUM_V3)
		j->tag_bytes = 16;
	else
		j->tag_bytes = 12 + (j->incompat & JI_CSUM_V2 ? 2 : 0) - (j->incompat & JI_64BIT ? 0 : 4);
	size_t room = j->bs - 12 - 16 - (csum_v23(j) ? 4 : 0); /* header, the first tag's UUID, the tail */
	j->tags_per_desc = room / j->tag_bytes;
	j->csum_seed = crc(~0u, s + JS_UUID, 16);
	return 0;
}

int pf_jtxn_open(ext2_filsys fs, io_channel raw, struct pf_jtxn **out, char *err, size_t errlen)
{
	*out = NULL;
	snprintf(err, errlen, "%s", "");
	ext2_ino_t ino = fs->super->s_journal_inum;
	if (!ext2fs_has_feature_journal(fs->super) || !ino)
		return refuse(err, errlen, "no internal journal");
	struct pf_jtxn *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->fs = fs;
	j->raw = raw;
	j->bs = fs->blocksize;
	j->jsb = malloc(j->bs);
	j->buf = malloc(j->bs);
	int rc = j->jsb && j->buf ? 0 : -ENOMEM;
	if (!rc)
		rc = map_journal(j, ino, 1);
	if (!rc)
		rc = pf_err_from_ext2(io_channel_read_blk64(raw, j->pblk[0], 1, j->jsb));
	if (!rc)
		rc = check_jsb(j, err, errlen);
	if (!rc) {
		free(j->pblk);
		j->pblk = NULL;
		rc = map_journal(j, ino, j->last);
	}
	if (rc) {
		if (!*err)
			snprintf(err, errlen, "reading the journal: %s", pf_strerror(rc));
		pf_jtxn_close(j);
		return rc;
	}
	*out = j;
	return 0;
}

size_t pf_jtxn_capacity(const struct pf_jtxn *j)
{
	size_t usable = j->last - j->first - 1; /* the commit block */
	return usable * j->tags_per_desc / (j->tags_per_desc + 1);
}

/* Tag i of a descriptor at p: block b, flags, the checksum of the block as stored in the journal. */
static void put_tag(const struct pf_jtxn *j, char *p, uint64_t b, uint32_t flags, uint32_t csum)
{
	put32(p, 0, (uint32_t)b);
	if (j->incompat & JI_CSUM_V3) {
		put32(p, 4, flags);
		put32(p, 8, (uint32_t)(b >> 32));
		put32(p, 12, csum);
		return;
	}
	put16(p, 4, (uint16_t)(j->incompat & JI_CSUM_V2 ? csum : 0));
	put16(p, 6, (uint16_t)flags);
	if (j->incompat & JI_64BIT)
		put32(p, 8, (uint32_t)(b >> 32));
}

static void header(char *p, uint32_t type, uint32_t seq)
{
	put32(p, 0, JBD2_MAGIC);
	put32(p, 4, type);
	put32(p, 8, seq);
}

/* Blocks [i, i + count) of the transaction: one descriptor at journal block *at, the blocks after it. */
static int write_descriptor(struct pf_jtxn *j, const uint64_t *blk, char *const *data, size_t i, size_t count,
			    uint32_t *at)
{
	char *d = j->buf;
	memset(d, 0, j->bs);
	header(d, JT_DESCRIPTOR, j->seq);
	char *p = d + 12;
	uint32_t desc_at = (*at)++;
	for (size_t k = i; k < i + count; k++) {
		const char *src = data[k];
		uint32_t flags = k == i ? 0 : JF_SAME_UUID, magic;
		memcpy(&magic, src, 4);
		if (be32toh(magic) == JBD2_MAGIC) {
			/* escaped: replay puts the magic back */
			flags |= JF_ESCAPE;
			char *esc = malloc(j->bs);
			if (!esc)
				return -ENOMEM;
			memcpy(esc, src, j->bs);
			memset(esc, 0, 4);
			uint32_t seq = htobe32(j->seq);
			put_tag(j, p, blk[k], flags | (k + 1 == i + count ? JF_LAST_TAG : 0),
				crc(crc(j->csum_seed, &seq, 4), esc, j->bs));
			int rc = jwrite(j, (*at)++, esc);
			free(esc);
			if (rc)
				return rc;
		} else {
			uint32_t seq = htobe32(j->seq);
			put_tag(j, p, blk[k], flags | (k + 1 == i + count ? JF_LAST_TAG : 0),
				crc(crc(j->csum_seed, &seq, 4), src, j->bs));
			int rc = jwrite(j, (*at)++, src);
			if (rc)
				return rc;
		}
		p += j->tag_bytes;
		if (k == i) {
			memcpy(p, j->jsb + JS_UUID, 16);
			p += 16;
		}
	}
	if (csum_v23(j))
		put32(d, j->bs - 4, crc(j->csum_seed, d, j->bs));
	return jwrite(j, desc_at, d);
}

int pf_jtxn_commit(struct pf_jtxn *j, const uint64_t *blk, char *const *data, size_t n)
{
	if (!n || n > pf_jtxn_capacity(j))
		return -EINVAL;
	uint32_t at = j->first;
	for (size_t i = 0; i < n; i += j->tags_per_desc) {
		size_t count = n - i < j->tags_per_desc ? n - i : j->tags_per_desc;
		int rc = write_descriptor(j, blk, data, i, count, &at);
		if (rc)
			return rc;
	}
	/* the blocks on the disk before the commit block that makes them count */
	int rc = jflush(j);
	if (rc)
		return rc;
	char *c = j->buf;
	memset(c, 0, j->bs);
	header(c, JT_COMMIT, j->seq);
	/* h_commit_sec stays 0: the reorder's writes are deterministic, and replay needs no time */
	if (csum_v23(j))
		put32(c, JC_CHKSUM, crc(j->csum_seed, c, j->bs));
	if ((rc = jwrite(j, at, c)) || (rc = write_jsb(j, j->seq, j->first)))
		return rc;
	return jflush(j);
}

int pf_jtxn_empty(struct pf_jtxn *j)
{
	j->seq++;
	int rc = write_jsb(j, j->seq, 0);
	return rc ? rc : jflush(j);
}

void pf_jtxn_close(struct pf_jtxn *j)
{
	if (!j)
		return;
	free(j->pblk);
	free(j->jsb);
	free(j->buf);
	free(j);
}
