/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Relocation of one unit at a time.  NOTHING LOST at a power cut: every write goes through fs->io (the
 * io_manager given, so a crash-injecting one sees them all) and the flush points below are the only places
 * where we count on durability (io_channel_flush = write back libext2fs' cache + fsync/cache flush).
 *
 * Write order:
 *   F0  s_state loses EXT2_VALID_FS, primary superblock written (whole, one write), flushed.  From here until F5 an interrupted
 *       run leaves a filesystem that the next boot's `e2fsck -p` checks fully; what it can find is harmless
 *       and fixed without questions: blocks marked in use that nothing references (leaked), free counts.
 *   F1  all destinations (and spare extent leaves, see F3) marked in use: block bitmaps, group descriptors
 *       (with their checksums), superblock free count written, flushed.  Nothing references them yet.
 *   per group of consecutive units (up to STAGE_BYTES; first each block's mapping is checked to still be the
 *   old one, else that unit is abandoned untouched):
 *   F2  data read from the old blocks (in block order, straight from the disk) and written to the new ones,
 *       flushed; each unit read back and compared.  Old pointers still in force: a cut here only leaks the
 *       new blocks.  The read-back is from the disk, not from a cache: through a separate read-only O_DIRECT
 *       descriptor on the device (or, where the file cannot be opened O_DIRECT, after dropping the range from
 *       the page cache); a mismatch abandons that unit before any of its pointers is switched, and the run
 *       stops there.
 *   then for the group's units (up to the first whose copy did not verify), inode by inode in inode order:
 *   F3  block pointers switched, flushed once, then re-read and checked.  Which units had their turn is kept
 *       (sw_end): if a switch fails, the destinations of all of them stay in use at F4 (some of their
 *       pointers may name them), leaked until e2fsck -p, never freed under a file.  Extent-mapped files:
 *       every leaf that maps moved blocks (the inode's i_block or a leaf block) is rewritten in place in ONE write
 *       (extent_remap.c): the tree never changes shape, no tree block is allocated or freed, no index
 *       changes, so whatever subset of these writes survives a cut, each block maps to its old or its new
 *       copy, both complete since F2.  Block-mapped (ext2/3) files: one pointer at a time through
 *       ext2fs_bmap2(BMAP_SET) (the inode or one indirect block per write; no allocation: the hook refuses
 *       any).  The old blocks stay marked in use: a cut here leaks them, never frees live data.  A leaf
 *       that would overflow (a move splitting an extent in a full leaf) is left alone: those blocks stay.
 *       Except an inode's own four slots: for an inode that could overflow them a spare leaf block was
 *       allocated at F1; the tree grows to depth 1 copy-on-write: leaf written to the spare block and
 *       flushed, then the inode switched to it in one write.
 *   F4  for the completed units, each block's old copy is freed if its pointer now names the new copy, else
 *       the new copy is released; unused destinations released: bitmaps, descriptors, superblock written,
 *       flushed (still marked not clean).
 *   F5  EXT2_VALID_FS set again, superblock written, flushed.
 * Every write here goes through journal_io.h's channel: on ext3/ext4 each flush point above commits the
 * metadata written since the last one through the filesystem's journal before it is written in place (a tear
 * of any of these blocks is replayed over by e2fsck -p or the mount), and the superblock is written so that
 * no tear breaks it; the file data copies (F2) go straight to the disk (pf_jio_raw), read back before any
 * pointer names them.  The filesystem must be clean, its journal empty, to start.
 * With metadata_csum, libext2fs recomputes every checksum it writes (inode, extent block, bitmaps, group
 * descriptors, superblock); moved data and directory blocks keep theirs (they depend on inode and
 * generation, not on the location). */
#include "relocate.h"

#include "clock.h"
#include "extent_remap.h"
#include "journal_io.h"
#include "reorder_open.h"

#include "array.h"

#include <ext2fs/ext3_extents.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pf_reloc {
	ext2_filsys fs;
	char *buf, *vbuf;           /* both aligned for O_DIRECT; buf holds the staged units' data */
	char *bounce;               /* aligned: one request over several sources and the gaps between them */
	uint64_t bounce_blocks;
	uint64_t buf_blocks;        /* its size */
	size_t st_first, st_end;    /* units [st_first, st_end) are staged in buf, one after the other, and
	                             * written to their destinations (F2) */
	size_t sw_end;              /* units [st_first, sw_end) have had their pointer switch (F3) */
	int *uerr;                  /* per unit: what F2 found (PF_EVERIFY), returned when the unit's turn comes */
	double deadline;            /* > 0: each group is sized (and trimmed) to end by then */
	double first_bps;           /* with a deadline: the pace the first group is sized at */
	double wv_s_per_block;      /* with a deadline: a block's write and read-back at the medium's rates */
	double setup_s;             /* what F0 and F1 took: the measure of this device's metadata writes */
	double s_per_block;         /* what the last group took per block (F2 and switches), 0 = not known yet */
	double group_t0;            /* when the current group started */
	int vfd;                    /* read-only descriptor on the device for the read-back, or -1 */
	int vdirect;                /* vfd is O_DIRECT */
	uint64_t *ubase;            /* first bit of each unit in switched */
	unsigned char *switched;    /* per destination block: its pointer names the new copy */
	struct pf_remap *remap;     /* scratch for one inode's moves */
	size_t *order;              /* scratch: a unit's moves sorted by owner */
	blk64_t *spare;             /* per owner: a leaf block reserved for growing its extent tree, or 0 */
	size_t nowners;
	errcode_t (*old_alloc)(ext2_filsys, blk64_t, blk64_t *);
};

/* O_DIRECT needs the buffer, offset and length aligned to the device's logical block size: 4096 covers
 * every common one for the buffer; offsets and lengths are multiples of the fs block size, and where that
 * is not enough (1 KiB blocks on a 4 KiB-sector disk) the read fails with EINVAL and we fall back. */
#define VERIFY_ALIGN 4096

/* How much source data is read ahead of the units that write it: the sources of consecutive units in one
 * sorted sweep instead of one sweep across the disk per unit.  Up to STAGE_BYTES, and at most an eighth of
 * the memory free now (a shutdown on a small machine); at least one unit.  The seeks between scattered
 * sources are most of what a move costs beyond its transfers, and each group sweeps the whole area they lie
 * in: on the bench's scale-8 set (292 MB moved) 128 MiB gave 14.78 s of disk time, 256 MiB 13.26 s, 512 MiB
 * (the set in one group) 12.69 s.  Boot sets are rarely larger, and an eighth of the free memory bounds it. */
#define STAGE_BYTES ((uint64_t)512 << 20)
/* With a time budget, the first group's size assumes this pace (bytes moved per second: a rotational disk's,
 * seeks between the sources included), or a slower medium's (an SD card writes at 10 MB/s); later groups use
 * the pace measured.  Every group is trimmed once its sources are read (keep_units_in_time). */
#define STAGE_FIRST_PACE_BPS 20e6
/* The metadata writes after a group's copies — its switch (inode tables, extent leaves), the final bitmaps,
 * descriptors and superblock (F3-F5) — are taken to cost this many times what F0 and F1 took: on the cheap SD
 * card's model, where each such write read-modify-writes an erase block, 19-23 such writes came after a group
 * against the 6 of F0 and F1 that were charged so; on a disk they are a few seeks either way. */
#define META_AFTER_SETUP 4.0
/* Sources this close are read in one request, the gap read through (a rotational disk passes over it anyway,
 * in less than a seek; the requests saved each cost a command); such a request is at most BOUNCE_BYTES. */
#define SOURCE_GAP_BYTES (256u << 10)
#define BOUNCE_BYTES (4u << 20)

/* A second descriptor on the device, only for reading back what F2 wrote: unix_io reads through the page
 * cache, which holds what we wrote, not necessarily what the disk stored. */
static int verify_open(struct pf_reloc *r)
{
	const char *dev = r->fs->device_name;
	r->vfd = open(dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	r->vdirect = r->vfd >= 0;
	if (r->vfd < 0) /* e.g. an image on a filesystem without direct I/O */
		r->vfd = open(dev, O_RDONLY | O_CLOEXEC);
	return r->vfd >= 0 ? 0 : -errno;
}

static int pread_all(int fd, char *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t k = pread(fd, buf, len, off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO; /* short: the device ends before the range */
		buf += k;
		len -= (size_t)k;
		off += k;
	}
	return 0;
}

/* Read blocks [blk, blk+n) as the disk has them (after io_channel_flush: nothing dirty remains). */
static int verify_read(struct pf_reloc *r, uint64_t blk, uint64_t n, char *buf)
{
	off_t off = (off_t)(blk * r->fs->blocksize + pf_reorder_fs_offset(r->fs));
	size_t len = (size_t)(n * r->fs->blocksize);
	if (r->vdirect) {
		int rc = pread_all(r->vfd, buf, len, off);
		if (rc != -EINVAL)
			return rc;
		/* alignment not accepted: buffered from now on, dropping the range from the cache first */
		int fd = open(r->fs->device_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		close(r->vfd);
		r->vfd = fd;
		r->vdirect = 0;
	}
	/* clean pages (flushed) are dropped, so the read goes to the disk */
	posix_fadvise(r->vfd, off, (off_t)len, POSIX_FADV_DONTNEED);
	return pread_all(r->vfd, buf, len, off);
}

/* Read source blocks [blk, blk+n): straight from the disk, each range in one request (the page cache's
 * readahead around small files read more than twice as much); through libext2fs where direct I/O is refused.
 * The sources are file data this run never writes, so the disk holds what the files hold. */
static int source_read(struct pf_reloc *r, uint64_t blk, uint64_t n, char *buf)
{
	if (r->vdirect) {
		int rc = pread_all(r->vfd, buf, (size_t)(n * r->fs->blocksize),
				   (off_t)(blk * r->fs->blocksize + pf_reorder_fs_offset(r->fs)));
		if (rc != -EINVAL)
			return rc;
	}
	return pf_err_from_ext2(io_channel_read_blk64(r->fs->io, blk, (int)n, buf));
}

/* Nothing in a run may allocate a block behind our back (the plan owns every allocation). */
static errcode_t refuse_alloc(ext2_filsys fs, blk64_t goal, blk64_t *ret)
{
	(void)fs;
	(void)goal;
	(void)ret;
	return EXT2_ET_BLOCK_ALLOC_FAIL;
}

static void reloc_free(struct pf_reloc *r)
{
	if (!r)
		return;
	ext2fs_set_alloc_block_callback(r->fs, r->old_alloc, NULL);
	if (r->vfd >= 0)
		close(r->vfd);
	free(r->buf);
	free(r->vbuf);
	free(r->bounce);
	free(r->uerr);
	free(r->ubase);
	free(r->switched);
	free(r->remap);
	free(r->order);
	free(r->spare);
	free(r);
}

static int bit(const struct pf_reloc *r, uint64_t i)
{
	return (r->switched[i / 8] >> (i % 8)) & 1;
}

static void set_bit(struct pf_reloc *r, uint64_t i, int v)
{
	if (v)
		r->switched[i / 8] |= (unsigned char)(1u << (i % 8));
	else
		r->switched[i / 8] &= (unsigned char)~(1u << (i % 8));
}

static const struct pf_plan *sort_plan; /* qsort has no context argument */
static int by_owner(const void *a, const void *b)
{
	const struct pf_move *x = &sort_plan->moves[*(const size_t *)a], *y = &sort_plan->moves[*(const size_t *)b];
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	return x->lblk < y->lblk ? -1 : x->lblk > y->lblk;
}

static int by_src(const void *a, const void *b)
{
	const struct pf_move *x = &sort_plan->moves[*(const size_t *)a], *y = &sort_plan->moves[*(const size_t *)b];
	return (x->src > y->src) - (x->src < y->src);
}

/* The first free block of map at or after goal, else from the first data block on (ext2fs_new_block2's
 * rule), outside avoid while there is such a block.  Returns 0 or a negative pf error (lib/error.h). */
static int first_free(ext2_filsys fs, ext2fs_block_bitmap map, blk64_t goal, const struct pf_brange *avoid,
		      blk64_t *out)
{
	blk64_t first = fs->super->s_first_data_block, last = ext2fs_blocks_count(fs->super) - 1;
	if (goal < first || goal > last)
		goal = first;
	for (int keep_out = avoid && avoid->count; keep_out >= 0; keep_out--)
		for (int wrap = 0; wrap <= (goal > first); wrap++) {
			blk64_t s = wrap ? first : goal, to = wrap ? goal - 1 : last, b;
			while (s <= to && !ext2fs_find_first_zero_block_bitmap2(map, s, to, &b)) {
				if (keep_out && b >= avoid->start && b - avoid->start < avoid->count) {
					s = avoid->start + avoid->count;
					continue;
				}
				*out = b;
				return 0;
			}
		}
	return pf_err_from_ext2(EXT2_ET_BLOCK_ALLOC_FAIL);
}

/* ino's in-inode extents as a run would find them: in the simulation when it has followed ino, else on the
 * disk.  Returns 1 (depth 0: x[0..*n), the root holds *max) or 0. */
static int root_of(ext2_filsys fs, const struct pf_reloc_sim *sim, ext2_ino_t ino, struct pf_xent *x, size_t *n,
		   size_t *max);

/* The moves order[i..] of one owner (order sorted by owner, count entries) as remaps into out (*n of them);
 * returns the index past them. */
static size_t owner_remaps(const struct pf_plan *p, const size_t *order, size_t i, size_t count,
			   struct pf_remap *out, size_t *n)
{
	uint32_t owner = p->moves[order[i]].owner;
	*n = 0;
	for (; i < count && p->moves[order[i]].owner == owner; i++) {
		const struct pf_move *m = &p->moves[order[i]];
		out[(*n)++] = (struct pf_remap){ .lblk = m->lblk, .src = m->src, .dst = m->dst, .len = m->len };
	}
	return i;
}

/* Inodes whose four in-inode extents could overflow get a leaf block now, allocated with the destinations
 * (durable at F1), so that growing their tree later is copy-on-write.  Each at the first free block after
 * the owner's first destination, outside avoid when possible.  With spare == NULL only counted.  sim: the
 * inodes as a simulation (pf_reloc_sim) has them; map: fs->block_map for a run (allocated), else the
 * simulation's copy (marked). */
static int spares(ext2_filsys fs, const struct pf_plan *p, const ext2_ino_t *inos, size_t nowners, size_t *order,
		  const struct pf_reloc_sim *sim, ext2fs_block_bitmap map, const struct pf_brange *avoid, blk64_t *spare,
		  uint64_t *count)
{
	*count = 0;
	for (size_t i = 0; i < p->nmoves; i++)
		order[i] = i;
	sort_plan = p;
	qsort(order, p->nmoves, sizeof(*order), by_owner);
	struct pf_remap *all = malloc((p->nmoves ? p->nmoves : 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < p->nmoves && !rc;) {
		uint32_t owner = p->moves[order[i]].owner;
		size_t n, j = owner_remaps(p, order, i, p->nmoves, all, &n);
		struct pf_xent x[PF_EXTENT_ROOT_MAX];
		size_t nx, mx;
		if (owner < nowners && root_of(fs, sim, inos[owner], x, &nx, &mx) &&
		    pf_extent_worst_of(x, nx, all, n) > PF_EXTENT_ROOT_MAX) {
			(*count)++;
			blk64_t b = 0;
			if (spare && !(rc = first_free(fs, map, all[0].dst, avoid, &b))) {
				if (map == fs->block_map)
					ext2fs_block_alloc_stats2(fs, b, +1);
				else
					ext2fs_mark_block_bitmap2(map, b);
				spare[owner] = b;
			}
		}
		i = j;
	}
	free(all);
	return rc;
}

static int reserve_spares(struct pf_reloc *r, const struct pf_plan *p, const ext2_ino_t *inos,
			  const struct pf_brange *avoid)
{
	uint64_t n;
	return spares(r->fs, p, inos, r->nowners, r->order, NULL, r->fs->block_map, avoid, r->spare, &n);
}

int pf_reloc_spares_needed(ext2_filsys fs, const struct pf_plan *p, const ext2_ino_t *inos, size_t nowners,
			   const struct pf_reloc_sim *sim, uint64_t *count)
{
	size_t *order = malloc((p->nmoves ? p->nmoves : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	int rc = spares(fs, p, inos, nowners, order, sim, NULL, NULL, NULL, count);
	free(order);
	return rc;
}

/* The copy's buffers (NULL where there is no memory): the stage, where the sources of several units are read
 * in one sweep, up to STAGE_BYTES of them (at least one unit, the largest maxlen blocks), less when memory is
 * short; the read-back buffer of one unit; the bounce buffer. */
static void alloc_io_buffers(struct pf_reloc *r, uint64_t maxlen, uint64_t total)
{
	ext2_filsys fs = r->fs;
	uint64_t stage = STAGE_BYTES;
	long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psize > 0 && (uint64_t)pages * (uint64_t)psize / 8 < stage)
		stage = (uint64_t)pages * (uint64_t)psize / 8;
	r->buf_blocks = stage / fs->blocksize;
	if (r->buf_blocks > total)
		r->buf_blocks = total;
	if (r->buf_blocks < maxlen)
		r->buf_blocks = maxlen;
	while (posix_memalign((void **)&r->buf, VERIFY_ALIGN, r->buf_blocks * fs->blocksize)) {
		r->buf = NULL;
		if (r->buf_blocks == maxlen)
			break;
		r->buf_blocks = r->buf_blocks / 2 > maxlen ? r->buf_blocks / 2 : maxlen; /* less then */
	}
	if (posix_memalign((void **)&r->vbuf, VERIFY_ALIGN, maxlen * fs->blocksize))
		r->vbuf = NULL;
	r->bounce_blocks = BOUNCE_BYTES / fs->blocksize;
	if (posix_memalign((void **)&r->bounce, VERIFY_ALIGN, r->bounce_blocks * fs->blocksize))
		r->bounce = NULL;
}

int pf_reloc_begin(ext2_filsys fs, const struct pf_plan *p, const ext2_ino_t *inos, size_t nowners,
		   const struct pf_brange *avoid, struct pf_reloc **out)
{
	*out = NULL;
	uint64_t maxlen = 1, total = 0;
	for (size_t u = 0; u < p->nunits; u++) {
		if (p->units[u].len > maxlen)
			maxlen = p->units[u].len;
		total += p->units[u].len;
	}
	/* a unit is at most one chunk; bound the buffer anyway */
	if (maxlen > (256u << 20) / fs->blocksize)
		return -E2BIG;
	struct pf_reloc *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fs = fs;
	r->vfd = -1;
	alloc_io_buffers(r, maxlen, total);
	r->ubase = malloc((p->nunits + 1) * sizeof(*r->ubase));
	r->uerr = calloc(p->nunits + 1, sizeof(*r->uerr));
	r->switched = calloc(total / 8 + 1, 1);
	/* a group's moves at once (F3), or all of the plan's (spares) */
	r->remap = malloc((p->nmoves ? p->nmoves : 1) * sizeof(*r->remap));
	r->order = malloc((p->nmoves ? p->nmoves : 1) * sizeof(*r->order));
	r->spare = calloc(nowners ? nowners : 1, sizeof(*r->spare));
	r->nowners = nowners;
	ext2fs_set_alloc_block_callback(fs, refuse_alloc, &r->old_alloc);
	int rc = 0;
	if (!r->buf || !r->vbuf || !r->bounce || !r->ubase || !r->uerr || !r->switched || !r->remap || !r->order || !r->spare) {
		rc = -ENOMEM;
		goto fail;
	}
	if ((rc = verify_open(r)))
		goto fail;
	uint64_t base = 0;
	for (size_t u = 0; u < p->nunits; u++) {
		r->ubase[u] = base;
		base += p->units[u].len;
	}

	for (size_t u = 0; u < p->nunits; u++)
		if (!ext2fs_test_block_bitmap_range2(fs->block_map, p->units[u].dst, (unsigned)p->units[u].len)) {
			rc = -EEXIST; /* the plan is stale: cannot happen on an unmounted filesystem */
			goto fail;
		}
	/* F0: not clean until we are done */
	double t_setup = pf_monotonic_s();
	fs->super->s_state &= (__u16)~EXT2_VALID_FS;
	ext2fs_mark_super_dirty(fs);
	rc = pf_err_from_ext2(ext2fs_flush(fs));
	if (rc)
		goto fail;
	/* F1: destinations in use */
	size_t marked = 0;
	for (; marked < p->nunits; marked++)
		ext2fs_block_alloc_stats_range(fs, p->units[marked].dst, (blk_t)p->units[marked].len, +1);
	rc = reserve_spares(r, p, inos, avoid);
	if (!rc)
		rc = pf_err_from_ext2(ext2fs_flush(fs));
	if (rc) {
		/* nothing references them yet: give everything back and, if that can be written, be clean again */
		for (size_t u = 0; u < marked; u++)
			ext2fs_block_alloc_stats_range(fs, p->units[u].dst, (blk_t)p->units[u].len, -1);
		for (size_t o = 0; o < r->nowners; o++)
			if (r->spare[o])
				ext2fs_block_alloc_stats2(fs, r->spare[o], -1);
		if (ext2fs_flush(fs) == 0) {
			fs->super->s_state |= EXT2_VALID_FS;
			ext2fs_mark_super_dirty(fs);
			ext2fs_flush(fs);
		}
		goto fail;
	}
	r->setup_s = pf_monotonic_s() - t_setup;
	*out = r;
	return 0;
fail:
	reloc_free(r);
	return rc;
}

static int mapping_of(ext2_filsys fs, ext2_ino_t ino, uint64_t lblk, blk64_t *cur)
{
	int rf = 0;
	*cur = 0;
	errcode_t ec = ext2fs_bmap2(fs, ino, NULL, NULL, 0, lblk, &rf, cur);
	if (!ec && (rf & BMAP_RET_UNINIT))
		*cur = 0;
	return pf_err_from_ext2(ec);
}

/* Switch the pointers of units [u, end), inode by inode in inode order: one pass over the inode tables for
 * the whole group, and each inode's leaves rewritten once for all of its moves in the group (on a 1 KiB-block
 * filesystem a unit is 2 MB: switching unit by unit wrote the same inode-table blocks again and again). */
static int switch_units(struct pf_reloc *r, const struct pf_plan *p, size_t u, size_t end, const ext2_ino_t *inos)
{
	ext2_filsys fs = r->fs;
	size_t count = 0;
	for (size_t v = u; v < end; v++)
		for (size_t i = 0; i < p->units[v].count; i++)
			r->order[count++] = p->units[v].first + i;
	sort_plan = p;
	qsort(r->order, count, sizeof(*r->order), by_owner);
	for (size_t i = 0; i < count;) {
		uint32_t owner = p->moves[r->order[i]].owner;
		ext2_ino_t ino = inos[owner];
		size_t n, j = owner_remaps(p, r->order, i, count, r->remap, &n);
		struct ext2_inode in;
		int rc = pf_err_from_ext2(ext2fs_read_inode(fs, ino, &in));
		if (rc)
			return rc;
		if (in.i_flags & EXT4_EXTENTS_FL) {
			int used = 0;
			rc = pf_extent_remap(fs, ino, r->remap, n, owner < r->nowners ? r->spare[owner] : 0, &used);
			if (used)
				r->spare[owner] = 0; /* now part of the file */
		} else {
			for (size_t k = 0; k < n && !rc; k++)
				for (uint64_t b = 0; b < r->remap[k].len && !rc; b++) {
					blk64_t phys = r->remap[k].dst + b;
					rc = pf_err_from_ext2(ext2fs_bmap2(fs, ino, NULL, NULL, BMAP_SET,
									   r->remap[k].lblk + b, NULL, &phys));
				}
		}
		if (rc)
			return rc;
		i = j;
	}
	return 0;
}

/* Where each block of unit u points.  Before its switch (after == 0): every block must still name its source
 * (the plan still describes the files).  After F3: each names its source or its copy, and the switched bits
 * record which.  Returns 0, -ESTALE (a block names something else), or a negative pf error. */
static int check_mappings(struct pf_reloc *r, const struct pf_plan *p, size_t u, const ext2_ino_t *inos, int after)
{
	const struct pf_unit *un = &p->units[u];
	for (size_t i = un->first; i < un->first + un->count; i++) {
		const struct pf_move *m = &p->moves[i];
		for (uint64_t b = 0; b < m->len; b++) {
			blk64_t cur;
			int rc = mapping_of(r->fs, inos[m->owner], m->lblk + b, &cur);
			if (rc)
				return rc;
			if (cur != m->src + b && (!after || cur != m->dst + b))
				return -ESTALE;
			if (after)
				set_bit(r, r->ubase[u] + (m->dst + b - un->dst), cur == m->dst + b);
		}
	}
	return 0;
}

/* Seconds the time budget must keep for the metadata writes after a group (see META_AFTER_SETUP). */
static double meta_reserve_s(const struct pf_reloc *r)
{
	return META_AFTER_SETUP * r->setup_s;
}

/* With a deadline, the units of a staged group [u, end) whose writes and read-back end by then, with the
 * metadata writes after them: two sequential passes, taken to cost together what the sweep over the group's
 * scattered sources just cost per block (on the bench's disk sets they cost 0.8-0.9 of it: the sweep also
 * seeks and reads through gaps), or the medium's write and read rates where those are slower (flash writes
 * slower than it reads).  The sources of the units left out are read again by the next group or run.  At
 * least one unit. */
static size_t keep_units_in_time(const struct pf_reloc *r, const struct pf_plan *p, size_t u, size_t end,
				 uint64_t blocks)
{
	if (r->deadline <= 0 || end - u < 2 || !blocks)
		return end;
	double now = pf_monotonic_s(), per_block = (now - r->group_t0) / (double)blocks;
	double left = r->deadline - now - meta_reserve_s(r);
	if (per_block < r->wv_s_per_block)
		per_block = r->wv_s_per_block;
	uint64_t fit = left > 0 ? (uint64_t)(left / per_block) : 0, kept = p->units[u].len;
	size_t keep = u + 1;
	for (; keep < end && kept + p->units[keep].len <= fit; keep++)
		kept += p->units[keep].len;
	return keep;
}

/* F2 for units u, u+1, ... (as many as buf holds and a deadline leaves time for, stopping before one the plan
 * no longer describes): their old copies read in one sweep in block order (buf holds the units one after the
 * other, each unit's data where its write takes it from), all written to their destinations, flushed once,
 * read back from the disk and compared unit by unit (a mismatch is kept in uerr for that unit's turn).  No
 * pointer changes here: a cut leaves only new blocks nothing references.  The destinations of consecutive
 * units follow each other, so the writes and the read-back are each one sequential pass instead of a trip per
 * unit between the data and the inode tables. */
static int stage(struct pf_reloc *r, const struct pf_plan *p, size_t u, const ext2_ino_t *inos)
{
	ext2_filsys fs = r->fs;
	uint64_t bs = fs->blocksize, blocks = 0, cap = r->buf_blocks;
	size_t end = u, n = 0;
	double now = pf_monotonic_s();
	if (r->st_end > r->st_first && r->st_end == u) { /* the last group is done: its pace */
		uint64_t last = r->ubase[r->st_end - 1] + p->units[r->st_end - 1].len - r->ubase[r->st_first];
		if (last)
			r->s_per_block = (now - r->group_t0) / (double)last;
	}
	if (r->deadline > 0) { /* a group the time left can finish, and the metadata writes after it */
		double left = r->deadline - now - meta_reserve_s(r);
		/* before any measure, first_bps: the group read, written and read back, seeks between the sources
		 * included */
		double pace = r->s_per_block > 0 ? r->s_per_block : (double)bs / r->first_bps;
		uint64_t fit = left > 0 ? (uint64_t)(left / pace) : 0;
		if (fit < cap)
			cap = fit;
	}
	r->group_t0 = now;
	for (; end < p->nunits && (end == u || blocks + p->units[end].len <= cap); end++) {
		int rc = check_mappings(r, p, end, inos, 0);
		if (rc && end == u)
			return rc;
		if (rc)
			break; /* its own turn reports it */
		for (size_t i = 0; i < p->units[end].count; i++)
			r->order[n++] = p->units[end].first + i;
		blocks += p->units[end].len;
	}
	sort_plan = p;
	qsort(r->order, n, sizeof(*r->order), by_src);
	uint64_t gap = SOURCE_GAP_BYTES / bs, span_max = r->bounce_blocks;
	for (size_t i = 0, j; i < n; i = j) {
		/* moves[i..j): sources close enough to read in one request, the gaps read through */
		const struct pf_move *a = &p->moves[r->order[i]];
		uint64_t s = a->src, e = a->src + a->len;
		for (j = i + 1; j < n; j++) {
			const struct pf_move *b = &p->moves[r->order[j]];
			if (b->src > e + gap || b->src + b->len - s > span_max)
				break;
			if (b->src + b->len > e)
				e = b->src + b->len;
		}
		int direct = j - i == 1; /* a single move: straight into its place */
		if (!direct) {
			int rc = source_read(r, s, e - s, r->bounce);
			if (rc)
				return rc;
		}
		for (size_t k = i; k < j; k++) {
			const struct pf_move *m = &p->moves[r->order[k]];
			size_t lo = u, hi = end; /* the unit holding this move: units hold consecutive moves, in order */
			while (hi - lo > 1) {
				size_t mid = lo + (hi - lo) / 2;
				if (p->units[mid].first <= r->order[k])
					lo = mid;
				else
					hi = mid;
			}
			char *at = r->buf + (r->ubase[lo] - r->ubase[u] + (m->dst - p->units[lo].dst)) * bs;
			if (direct) {
				int rc = source_read(r, m->src, m->len, at);
				if (rc)
					return rc;
			} else {
				memcpy(at, r->bounce + (m->src - s) * bs, m->len * bs);
			}
		}
	}
	end = keep_units_in_time(r, p, u, end, blocks);
	for (size_t v = u; v < end; v++) {
		const char *data = r->buf + (r->ubase[v] - r->ubase[u]) * bs;
		int rc = pf_err_from_ext2(io_channel_write_blk64(pf_jio_raw(fs), p->units[v].dst, (int)p->units[v].len, data));
		if (rc)
			return rc;
	}
	int rc = pf_err_from_ext2(io_channel_flush(pf_jio_raw(fs)));
	if (rc)
		return rc;
	for (size_t v = u; v < end; v++) {
		const char *data = r->buf + (r->ubase[v] - r->ubase[u]) * bs;
		if ((rc = verify_read(r, p->units[v].dst, p->units[v].len, r->vbuf)))
			return rc;
		r->uerr[v] = memcmp(data, r->vbuf, p->units[v].len * bs) ? PF_EVERIFY : 0;
	}
	r->st_first = u;
	r->st_end = end;
	return 0;
}

int pf_reloc_unit(struct pf_reloc *r, const struct pf_plan *p, size_t u, const ext2_ino_t *inos, int *partial)
{
	int rc;
	*partial = 0;

	/* F2 (with the next units: stage), unless done already */
	if (u < r->st_first || u >= r->st_end) {
		if ((rc = stage(r, p, u, inos))) {
			r->st_end = r->st_first = r->sw_end = u; /* nothing staged */
			return rc;
		}
		r->sw_end = u;
	}
	if (r->uerr[u]) {
		*partial = u < r->sw_end; /* a check after a group switch failed */
		return r->uerr[u];
	}
	if (u < r->sw_end)
		return 0; /* switched and checked with its group */

	/* F3 for the group from u: switch, make durable, check each block */
	size_t end = u;
	while (end < r->st_end && !r->uerr[end])
		end++;
	r->sw_end = end;
	*partial = 1;
	rc = switch_units(r, p, u, end, inos);
	if (!rc)
		rc = pf_err_from_ext2(io_channel_flush(r->fs->io));
	if (rc)
		return rc;
	for (size_t v = u; v < end; v++)
		if ((rc = check_mappings(r, p, v, inos, 1))) {
			if (v == u)
				return rc;
			r->uerr[v] = rc; /* its turn reports it */
			break;
		}
	*partial = 0;
	return 0;
}

void pf_reloc_set_deadline(struct pf_reloc *r, double deadline, const struct pf_disk_model *m)
{
	double copy_bps = pf_disk_copy_bps(m);
	r->deadline = deadline;
	r->first_bps = copy_bps > 0 && copy_bps < STAGE_FIRST_PACE_BPS ? copy_bps : STAGE_FIRST_PACE_BPS;
	r->wv_s_per_block = (double)r->fs->blocksize * (1.0 / pf_disk_write_bps(m) + 1.0 / m->rate);
}

int pf_reloc_out_of_time(const struct pf_reloc *r)
{
	return r->deadline > 0 && pf_monotonic_s() + meta_reserve_s(r) >= r->deadline;
}

int pf_reloc_staged(const struct pf_reloc *r, size_t u)
{
	return u >= r->st_first && u < r->st_end;
}

uint64_t pf_reloc_switched(const struct pf_reloc *r, const struct pf_plan *p, size_t u)
{
	uint64_t n = 0;
	for (uint64_t b = 0; b < p->units[u].len; b++)
		n += bit(r, r->ubase[u] + b);
	return n;
}

int pf_reloc_end(struct pf_reloc *r, const struct pf_plan *p, size_t done, int partial_unit, int mark_clean)
{
	ext2_filsys fs = r->fs;
	/* F4 */
	for (size_t u = 0; u < p->nunits; u++) {
		const struct pf_unit *un = &p->units[u];
		if (u < done) {
			for (size_t i = un->first; i < un->first + un->count; i++) {
				const struct pf_move *m = &p->moves[i];
				for (uint64_t b = 0; b < m->len; b++) {
					int sw = bit(r, r->ubase[u] + (m->dst + b - un->dst));
					ext2fs_block_alloc_stats2(fs, sw ? m->src + b : m->dst + b, -1);
				}
			}
		} else if (!(partial_unit && u >= done && (u == done || u < r->sw_end))) {
			/* not a unit whose pointers may have been switched (with its group) */
			ext2fs_block_alloc_stats_range(fs, un->dst, (blk_t)un->len, -1);
		}
	}
	for (size_t o = 0; o < r->nowners; o++)
		if (r->spare[o] && !(partial_unit && done < p->nunits))
			ext2fs_block_alloc_stats2(fs, r->spare[o], -1);
	int rc = pf_err_from_ext2(ext2fs_flush(fs));
	/* F5 */
	if (!rc && mark_clean) {
		fs->super->s_state |= EXT2_VALID_FS;
		ext2fs_mark_super_dirty(fs);
		rc = pf_err_from_ext2(ext2fs_flush(fs));
	}
	reloc_free(r);
	return rc;
}

/* ---- the simulation (relocate.h): what complete runs leave, with the rules above, nothing written ---- */

struct sim_inode {
	ext2_ino_t ino;
	uint64_t leaf;           /* the leaf its tree grew into (spare), or 0: still all in the inode */
	struct pf_xent *e;       /* its extents as the runs leave them */
	size_t n, max;           /* max: what holds them (the inode's root, or the leaf) */
};

struct pf_reloc_sim {
	ext2_filsys fs;
	ext2fs_block_bitmap map; /* fs's block bitmap as the runs leave it; NULL until a spare is placed */
	struct pf_brange *ops;      /* till then, the changes to make to it: runs marked (set[i]) or freed */
	unsigned char *set;
	size_t nops, capops, capset;
	struct sim_inode *in;    /* sorted by inode: those the runs moved blocks of while depth 0 */
	size_t nin, capin;
};

int pf_reloc_sim_new(ext2_filsys fs, struct pf_reloc_sim **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->fs = fs;
	return 0;
}

void pf_reloc_sim_free(struct pf_reloc_sim *s)
{
	if (!s)
		return;
	if (s->map)
		ext2fs_free_block_bitmap(s->map);
	for (size_t i = 0; i < s->nin; i++)
		free(s->in[i].e);
	free(s->in);
	free(s->ops);
	free(s->set);
	free(s);
}

static void map_range(ext2fs_block_bitmap map, uint64_t start, uint64_t len, int set)
{
	if (set)
		ext2fs_mark_block_bitmap_range2(map, start, (unsigned)len);
	else
		ext2fs_unmark_block_bitmap_range2(map, start, (unsigned)len);
}

static int sim_op(struct pf_reloc_sim *s, uint64_t start, uint64_t len, int set)
{
	if (s->map) {
		map_range(s->map, start, len, set);
		return 0;
	}
	if (PF_ARRAY_RESERVE(s->ops, s->capops, s->nops + 1, 256) ||
	    PF_ARRAY_RESERVE(s->set, s->capset, s->nops + 1, 256))
		return -ENOMEM;
	s->ops[s->nops] = (struct pf_brange){ start, len };
	s->set[s->nops++] = (unsigned char)set;
	return 0;
}

/* The bitmap, for placing spares: a copy of the filesystem's with the changes so far. */
static int sim_map(struct pf_reloc_sim *s)
{
	if (s->map)
		return 0;
	int rc = pf_err_from_ext2(ext2fs_copy_bitmap(s->fs->block_map, &s->map));
	if (rc) {
		s->map = NULL;
		return rc;
	}
	for (size_t i = 0; i < s->nops; i++)
		map_range(s->map, s->ops[i].start, s->ops[i].count, s->set[i]);
	s->nops = 0;
	return 0;
}

static struct sim_inode *sim_find(const struct pf_reloc_sim *s, ext2_ino_t ino)
{
	size_t lo = 0, hi = s->nin;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->in[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nin && s->in[lo].ino == ino ? &s->in[lo] : NULL;
}

/* ino followed from now on: its in-inode extents from the disk.  NULL when its tree is not all in the inode
 * (deeper trees keep their shape: their leaves are rewritten in place) or on -ENOMEM (*rc). */
static struct sim_inode *sim_follow(struct pf_reloc_sim *s, ext2_ino_t ino, int *rc)
{
	struct sim_inode *f = sim_find(s, ino);
	*rc = 0;
	if (f)
		return f;
	struct pf_xent x[PF_EXTENT_ROOT_MAX];
	size_t n, max;
	if (!pf_extent_root(s->fs, ino, x, &n, &max))
		return NULL;
	struct pf_xent *e = malloc(PF_EXTENT_ROOT_MAX * sizeof(*e));
	if (!e || PF_ARRAY_RESERVE(s->in, s->capin, s->nin + 1, 64)) {
		free(e);
		*rc = -ENOMEM;
		return NULL;
	}
	memcpy(e, x, n * sizeof(*e));
	size_t at = 0;
	while (at < s->nin && s->in[at].ino < ino)
		at++;
	memmove(&s->in[at + 1], &s->in[at], (s->nin - at) * sizeof(*s->in));
	s->in[at] = (struct sim_inode){ .ino = ino, .e = e, .n = n, .max = max };
	s->nin++;
	return &s->in[at];
}

static int root_of(ext2_filsys fs, const struct pf_reloc_sim *sim, ext2_ino_t ino, struct pf_xent *x, size_t *n,
		   size_t *max)
{
	const struct sim_inode *f = sim ? sim_find(sim, ino) : NULL;
	if (!f)
		return pf_extent_root(fs, ino, x, n, max);
	if (f->leaf)
		return 0;
	memcpy(x, f->e, f->n * sizeof(*x));
	*n = f->n;
	*max = f->max;
	return 1;
}

int pf_reloc_sim_run(struct pf_reloc_sim *s, const struct pf_plan *p, const ext2_ino_t *inos, size_t nowners,
		     const struct pf_brange *avoid)
{
	ext2_filsys fs = s->fs;
	size_t leaf_max = (fs->blocksize - sizeof(struct ext3_extent_header)) / sizeof(struct ext3_extent);
	size_t *order = malloc((p->nmoves ? p->nmoves : 1) * sizeof(*order));
	blk64_t *spare = calloc(nowners ? nowners : 1, sizeof(*spare));
	unsigned char *moved = calloc(nowners ? nowners : 1, 1); /* per owner: its pointers switched */
	struct pf_remap *all = malloc((p->nmoves ? p->nmoves : 1) * sizeof(*all));
	uint64_t need = 0;
	int rc = order && spare && moved && all ? 0 : -ENOMEM;
	/* F1: the destinations, then the spares */
	for (size_t u = 0; u < p->nunits && !rc; u++)
		rc = sim_op(s, p->units[u].dst, p->units[u].len, 1);
	if (!rc)
		rc = spares(fs, p, inos, nowners, order, s, NULL, NULL, NULL, &need);
	if (!rc && need && !(rc = sim_map(s)))
		rc = spares(fs, p, inos, nowners, order, s, s->map, avoid, spare, &need);
	/* F3, each inode's moves at once (one group: a plan the staging buffer holds whole) */
	for (size_t i = 0; i < p->nmoves && !rc;) {
		uint32_t owner = p->moves[order[i]].owner;
		size_t n, j = owner_remaps(p, order, i, p->nmoves, all, &n);
		i = j;
		if (owner >= nowners)
			continue;
		struct sim_inode *f = sim_follow(s, inos[owner], &rc);
		if (!f) { /* a deeper tree (rewritten in place) or a block-mapped file */
			moved[owner] = !rc;
			continue;
		}
		size_t cap = f->n + 2 * n + 1;
		struct pf_xent *t = malloc(cap * sizeof(*t));
		if (!t) {
			rc = -ENOMEM;
			break;
		}
		int changed;
		size_t cnt = pf_extent_apply(f->e, f->n, all, n, t, cap, &changed);
		int grow = !f->leaf && cnt > f->max && spare[owner] && cnt <= leaf_max;
		if (changed && (cnt <= f->max || grow)) {
			free(f->e);
			f->e = t;
			f->n = cnt;
			moved[owner] = 1;
			if (grow) {
				f->leaf = spare[owner];
				f->max = leaf_max;
				spare[owner] = 0;
			}
		} else {
			free(t); /* too many entries for what holds them: those blocks stay */
		}
	}
	/* F4: each moved block's old copy freed, else its new one; the spares not used */
	for (size_t k = 0; k < p->nmoves && !rc; k++) {
		const struct pf_move *m = &p->moves[k];
		int sw = m->owner < nowners && moved[m->owner];
		rc = sim_op(s, sw ? m->src : m->dst, m->len, 0);
	}
	for (size_t o = 0; o < nowners && !rc; o++)
		if (spare[o])
			rc = sim_op(s, spare[o], 1, 0);
	free(order);
	free(spare);
	free(moved);
	free(all);
	return rc;
}

uint64_t pf_reloc_sim_leaf(const struct pf_reloc_sim *s, ext2_ino_t ino)
{
	const struct sim_inode *f = s ? sim_find(s, ino) : NULL;
	return f ? f->leaf : 0;
}
