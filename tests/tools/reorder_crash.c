/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reorder_crash: run pf_reorder on an image through an I/O manager that simulates a power cut.
 *
 *   reorder_crash [--count] [--stop-after K [--drop-unflushed SEED]] [--layout FILE]... [--chunk-blocks N]
 *                 [--time-budget SEC] [--reserve-percent P] [--corrupt-write K [--corrupt-backing FILE]] IMAGE
 *
 * The manager stacks on unix_io_manager (forced write-through, so every write it passes down is in the
 * image file at once, in issue order) and numbers the writes (write_blk, write_blk64, write_byte, discard,
 * zeroout) from 1.  REORDER_CRASH_TRACE=1 in the environment logs every write and flush to stderr.
 *   --count             run to the end; print "writes W flushes F bytes B digest D" (D hashes the whole write
 *                       sequence, so two count runs show whether the reorder is deterministic)
 *   --stop-after K      write K and every later one never reach the disk: at write K the process _exits at
 *                       once, without flushing or closing anything (exit status 99)
 *   --drop-unflushed S  besides, a disk may lose what it was given since the last flush, in any order: at the
 *                       cut, every write since the last flush is undone and a random subset of them (seed S)
 *                       is written back in issue order
 *   --corrupt-write K   a disk that stores wrong bytes: write K goes down as given, and right after the next
 *                       flush its range is overwritten with its bytes inverted, behind the reorder's back
 *                       (our own descriptor, or FILE): the reorder must notice when it reads its copy back
 *   --corrupt-backing FILE  IMAGE is a loop device on FILE: the wrong bytes go into FILE, below the loop
 *                       device's page cache (which keeps the right ones: only a read from the disk sees them)
 * A run that finishes before write K exits 0 (or 1 if pf_reorder failed) after printing the counts.
 */
#include "reorder.h"
#include "array.h"
#include "shim/crash_model.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CRASH_EXIT 99


static struct {
	unsigned long long stop_after; /* 0 = never */
	int drop;
	uint64_t seed;
	unsigned long long writes, flushes, bytes;
	uint64_t digest;
	struct crash_pending *pend;
	size_t npend, cappend;
	int fd;  /* our own descriptor on the image: pre-images and the replay at the cut */
	int64_t offset; /* the "offset" channel option */
	int trace;      /* REORDER_CRASH_TRACE set: one stderr line per write and flush */
	unsigned long long byte_writes; /* write_byte calls: libext2fs updates the superblock field by field */
	unsigned long long corrupt_at;  /* --corrupt-write K (0 = never) */
	const char *corrupt_file;       /* --corrupt-backing */
	uint64_t corrupt_off;
	size_t corrupt_len;             /* > 0: to corrupt at the next flush */
} st = { .digest = CRASH_DIGEST_INIT, .fd = -1 };

struct crash_private {
	io_channel inner;
};

static void forget_pending(void)
{
	crash_pending_forget(st.pend, &st.npend);
}

/* The power cut.  Async-signal-safe enough: we only pwrite and _exit. */
static void cut(void)
{
	if (st.drop && st.npend) {
		/* back to the state at the last flush (undo in reverse), then a random subset in issue order */
		for (size_t i = st.npend; i-- > 0;)
			if (pwrite(st.fd, st.pend[i].old, st.pend[i].len, (off_t)st.pend[i].off) < 0)
				_exit(98);
		unsigned kept = 0;
		for (size_t i = 0; i < st.npend; i++) {
			if (crash_rnd(&st.seed) & 1) {
				if (pwrite(st.fd, st.pend[i].data, st.pend[i].len, (off_t)st.pend[i].off) < 0)
					_exit(98);
				kept++;
			}
		}
		fprintf(stderr, "reorder_crash: cut at write %llu, kept %u of %zu unflushed writes\n", st.writes, kept,
			st.npend);
	} else {
		fprintf(stderr, "reorder_crash: cut at write %llu\n", st.writes);
	}
	_exit(CRASH_EXIT);
}

/* Called before every write reaches the inner channel.  Returns only if the write may go down. */
static void before_write(uint64_t off, size_t len, const void *data, char kind)
{
	st.writes++;
	if (st.trace)
		fprintf(stderr, "write %llu %c off %llu len %zu\n", st.writes, kind, (unsigned long long)off, len);
	if (st.stop_after && st.writes >= st.stop_after)
		cut();
	st.bytes += len;
	if (st.corrupt_at && st.writes == st.corrupt_at && data) {
		st.corrupt_off = off;
		st.corrupt_len = len;
	}
	/* Superblock writes carry timestamps and go out as a varying number of byte-range writes (only the
	 * 2-byte pieces that changed), so they are left out of the digest: it is about the reorder's own work. */
	if (kind == 'b')
		st.byte_writes++;
	else {
		crash_digest_add(&st.digest, &off, sizeof(off));
		if (data && !(off == 1024 && len == 1024))
			crash_digest_add(&st.digest, data, len);
	}
	if (!st.drop)
		return;
	if (PF_ARRAY_RESERVE(st.pend, st.cappend, st.npend + 1, 256))
		abort();
	struct crash_pending *p = &st.pend[st.npend++];
	crash_pending_set(p, off, len, data);
	ssize_t n = pread(st.fd, p->old, len, (off_t)off);
	if (n < 0)
		abort();
	if ((size_t)n < len)
		memset(p->old + n, 0, len - (size_t)n);
}

static io_channel inner_of(io_channel ch)
{
	return ((struct crash_private *)ch->private_data)->inner;
}

static uint64_t byte_off(io_channel ch, unsigned long long block)
{
	return (uint64_t)block * (uint64_t)ch->block_size + (uint64_t)st.offset;
}

static size_t byte_len(io_channel ch, int count)
{
	return count < 0 ? (size_t)-count : (size_t)count * (size_t)ch->block_size;
}

static struct struct_io_manager crash_manager;

static errcode_t crash_open(const char *name, int flags, io_channel *channel)
{
	io_channel inner = NULL, ch = NULL;
	struct crash_private *priv = NULL;
	errcode_t e = unix_io_manager->open(name, flags, &inner);
	if (e)
		return e;
	/* write-through: a write we let pass is in the file now, not in unix_io's little write-back cache */
	inner->flags |= CHANNEL_FLAGS_WRITETHROUGH;
	if (st.fd < 0 && (flags & IO_FLAG_RW)) {
		st.fd = open(name, O_RDWR);
		if (st.fd < 0) {
			e = errno;
			goto fail;
		}
	}
	e = ext2fs_get_memzero(sizeof(*ch), &ch);
	if (!e)
		e = ext2fs_get_memzero(sizeof(*priv), &priv);
	if (!e)
		e = ext2fs_get_mem(strlen(name) + 1, &ch->name);
	if (e)
		goto fail;
	strcpy(ch->name, name);
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = &crash_manager;
	ch->block_size = inner->block_size;
	ch->refcount = 1;
	ch->flags = inner->flags;
	ch->align = inner->align;
	priv->inner = inner;
	ch->private_data = priv;
	*channel = ch;
	return 0;
fail:
	if (ch)
		ext2fs_free_mem(&ch->name);
	ext2fs_free_mem(&ch);
	ext2fs_free_mem(&priv);
	io_channel_close(inner);
	return e;
}

static errcode_t crash_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	errcode_t e = io_channel_close(inner_of(ch));
	ext2fs_free_mem(&ch->private_data);
	ext2fs_free_mem(&ch->name);
	ext2fs_free_mem(&ch);
	return e;
}

static errcode_t crash_set_blksize(io_channel ch, int blksize)
{
	errcode_t e = io_channel_set_blksize(inner_of(ch), blksize);
	if (!e)
		ch->block_size = blksize;
	return e;
}

static errcode_t crash_read_blk64(io_channel ch, unsigned long long block, int count, void *data)
{
	return io_channel_read_blk64(inner_of(ch), block, count, data);
}

static errcode_t crash_read_blk(io_channel ch, unsigned long block, int count, void *data)
{
	return crash_read_blk64(ch, block, count, data);
}

static errcode_t crash_write_blk64(io_channel ch, unsigned long long block, int count, const void *data)
{
	before_write(byte_off(ch, block), byte_len(ch, count), data, 'w');
	inner_of(ch)->flags |= CHANNEL_FLAGS_WRITETHROUGH;
	return io_channel_write_blk64(inner_of(ch), block, count, data);
}

static errcode_t crash_write_blk(io_channel ch, unsigned long block, int count, const void *data)
{
	return crash_write_blk64(ch, block, count, data);
}

static errcode_t crash_write_byte(io_channel ch, unsigned long offset, int count, const void *data)
{
	io_channel in = inner_of(ch);
	if (!in->manager->write_byte)
		return EXT2_ET_UNIMPLEMENTED;
	before_write((uint64_t)offset + (uint64_t)st.offset, (size_t)count, data, 'b');
	return in->manager->write_byte(in, offset, count, data);
}

/* --corrupt-write: after the write is on the disk, the disk's copy goes bad (inverted bytes). */
static void corrupt_now(void)
{
	int fd = st.corrupt_file ? open(st.corrupt_file, O_RDWR) : st.fd;
	unsigned char *b = malloc(st.corrupt_len);
	if (fd < 0 || !b || pread(fd, b, st.corrupt_len, (off_t)st.corrupt_off) != (ssize_t)st.corrupt_len)
		abort();
	for (size_t i = 0; i < st.corrupt_len; i++)
		b[i] = (unsigned char)~b[i];
	if (pwrite(fd, b, st.corrupt_len, (off_t)st.corrupt_off) != (ssize_t)st.corrupt_len || fdatasync(fd))
		abort();
	fprintf(stderr, "reorder_crash: write %llu (%zu bytes at %llu) corrupted on the disk\n", st.corrupt_at,
		st.corrupt_len, (unsigned long long)st.corrupt_off);
	free(b);
	if (fd != st.fd)
		close(fd);
	st.corrupt_len = 0;
}

static errcode_t crash_flush(io_channel ch)
{
	errcode_t e = io_channel_flush(inner_of(ch));
	if (!e && st.corrupt_len)
		corrupt_now();
	if (!e) {
		st.flushes++;
		if (st.trace)
			fprintf(stderr, "flush %llu after write %llu\n", st.flushes, st.writes);
		forget_pending(); /* on stable storage now */
	}
	return e;
}

static errcode_t crash_set_option(io_channel ch, const char *option, const char *arg)
{
	io_channel in = inner_of(ch);
	errcode_t e = in->manager->set_option ? in->manager->set_option(in, option, arg) : EXT2_ET_INVALID_ARGUMENT;
	if (!e && !strcmp(option, "offset") && arg)
		st.offset = strtoll(arg, NULL, 0);
	return e;
}

static errcode_t crash_get_stats(io_channel ch, io_stats *stats)
{
	io_channel in = inner_of(ch);
	if (!in->manager->get_stats)
		return EXT2_ET_UNIMPLEMENTED;
	return in->manager->get_stats(in, stats);
}

static errcode_t crash_discard(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = inner_of(ch);
	if (!in->manager->discard)
		return EXT2_ET_UNIMPLEMENTED;
	before_write(byte_off(ch, block), (size_t)count * (size_t)ch->block_size, NULL, 'd');
	return in->manager->discard(in, block, count);
}

static errcode_t crash_zeroout(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = inner_of(ch);
	if (!in->manager->zeroout)
		return EXT2_ET_UNIMPLEMENTED;
	before_write(byte_off(ch, block), (size_t)count * (size_t)ch->block_size, NULL, 'z');
	return in->manager->zeroout(in, block, count);
}

static errcode_t crash_cache_readahead(io_channel ch, unsigned long long block, unsigned long long count)
{
	io_channel in = inner_of(ch);
	if (!in->manager->cache_readahead)
		return EXT2_ET_OP_NOT_SUPPORTED;
	return in->manager->cache_readahead(in, block, count);
}

static struct struct_io_manager crash_manager = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "Power-cut simulating I/O manager (tests)",
	.open = crash_open,
	.close = crash_close,
	.set_blksize = crash_set_blksize,
	.read_blk = crash_read_blk,
	.write_blk = crash_write_blk,
	.flush = crash_flush,
	.write_byte = crash_write_byte,
	.set_option = crash_set_option,
	.get_stats = crash_get_stats,
	.read_blk64 = crash_read_blk64,
	.write_blk64 = crash_write_blk64,
	.discard = crash_discard,
	.cache_readahead = crash_cache_readahead,
	.zeroout = crash_zeroout,
};

static void usage(FILE *out)
{
	fprintf(out, "usage: reorder_crash [--count] [--stop-after K [--drop-unflushed SEED]] [--layout FILE]...\n"
		     "                     [--chunk-blocks N] [--time-budget SEC] [--reserve-percent P]\n"
		     "                     [--corrupt-write K [--corrupt-backing FILE]] IMAGE\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", no_argument, 0, 'c' },
		{ "stop-after", required_argument, 0, 'k' },
		{ "drop-unflushed", required_argument, 0, 'd' },
		{ "layout", required_argument, 0, 'l' },
		{ "chunk-blocks", required_argument, 0, 'b' },
		{ "time-budget", required_argument, 0, 't' },
		{ "reserve-percent", required_argument, 0, 'r' },
		{ "corrupt-write", required_argument, 0, 'x' },
		{ "corrupt-backing", required_argument, 0, 'B' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *layouts[16];
	int nlayouts = 0, c;
	struct pf_reorder_opts o = { .chunk_blocks = 2000, .time_budget_s = 3600, .reserve_percent = 5,
				     .allow_any_owner = 1, .io = &crash_manager };
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': break; /* counting is always on; --stop-after decides whether we cut */
		case 'k': st.stop_after = strtoull(optarg, NULL, 0); break;
		case 'd':
			st.drop = 1;
			st.seed = strtoull(optarg, NULL, 0) * 0x9E3779B97F4A7C15ULL + 1;
			break;
		case 'l':
			if (nlayouts == 16) {
				usage(stderr);
				return 2;
			}
			layouts[nlayouts++] = optarg;
			break;
		case 'b': o.chunk_blocks = strtol(optarg, NULL, 0); break;
		case 't': o.time_budget_s = atoi(optarg); break;
		case 'r': o.reserve_percent = atoi(optarg); break;
		case 'x': st.corrupt_at = strtoull(optarg, NULL, 0); break;
		case 'B': st.corrupt_file = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1 || nlayouts == 0 || (st.drop && !st.stop_after) || (st.corrupt_file && !st.corrupt_at)) {
		usage(stderr);
		return 2;
	}
	st.trace = getenv("REORDER_CRASH_TRACE") != NULL;
	o.layouts = layouts;
	o.nlayouts = nlayouts;
	struct pf_reorder_result res;
	memset(&res, 0, sizeof(res));
	char err[512] = "";
	int rc = pf_reorder(argv[optind], &o, &res, err, sizeof(err));
	forget_pending();
	free(st.pend);
	if (st.fd >= 0)
		close(st.fd);
	printf("writes %llu flushes %llu bytes %llu byte_writes %llu digest %016llx moved %llu complete %d\n", st.writes,
	       st.flushes, st.bytes, st.byte_writes, (unsigned long long)st.digest, (unsigned long long)res.moved_blocks, res.complete);
	if (rc < 0) {
		fprintf(stderr, "reorder_crash: %s (%d)\n", err[0] ? err : "pf_reorder failed", rc);
		return 1;
	}
	return 0;
}
