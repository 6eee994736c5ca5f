/* Relocation of one unit at a time.  NOTHING LOST at a power cut: every write goes through fs->io (the
 * io_manager given, so a crash-injecting one sees them all) and the flush points below are the only places
 * where we count on durability (io_channel_flush = write back libext2fs' cache + fsync/cache flush).
 *
 * Write order:
 *   F0  s_state loses EXT2_VALID_FS, primary superblock written, flushed.  From here until F5 an interrupted
 *       run leaves a filesystem that the next boot's `e2fsck -p` checks fully; what it can find is harmless
 *       and fixed without questions: blocks marked in use that nothing references (leaked), free counts.
 *   F1  all destinations marked in use: block bitmaps, group descriptors (with their checksums), superblock
 *       free count written, flushed.  Nothing references them yet.
 *   per unit, in layout order:
 *   F2  data read from the old blocks and written to the new ones, flushed; read back and compared.
 *       Old pointers still in force: a cut here only leaks the new blocks.
 *       Each block's mapping is checked to still be the old one (else the unit is abandoned untouched).
 *   F3  block pointers switched (extent tree leaves and inode via ext2fs_bmap2(BMAP_SET), or the block map
 *       and indirect blocks of ext2/3 files), flushed, then re-read and checked.  The old blocks are still
 *       marked in use: a cut here leaks them, never frees live data.  Extent-tree blocks that libext2fs frees
 *       during a switch are never handed out again in this run (get_alloc_block hook), so an old tree that is
 *       still on disk is never overwritten.  If the switch needed a new tree block, the bitmaps are written
 *       before this flush too.
 *   F4  old blocks of the completed units and unused destinations released: bitmaps, descriptors, superblock
 *       written, flushed (still marked not clean).
 *   F5  EXT2_VALID_FS set again, superblock written, flushed.
 * The journal is bypassed (libext2fs writes in place), which is why the filesystem must be clean to start.
 * With metadata_csum, libext2fs recomputes every checksum it writes (inode, extent block, bitmaps, group
 * descriptors, superblock); moved data and directory blocks keep theirs (they depend on inode and
 * generation, not on the location). */
#include "relocate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct pf_reloc {
	ext2_filsys fs;
	char *buf, *vbuf;
	ext2fs_block_bitmap freed;  /* blocks libext2fs freed in this run: never reallocated before F4 */
	uint64_t nfreed;
	uint64_t tree_allocs;
	void *old_priv;
	errcode_t (*old_alloc)(ext2_filsys, blk64_t, blk64_t *);
	void (*old_stats)(ext2_filsys, blk64_t, int);
	void (*old_stats_range)(ext2_filsys, blk64_t, blk_t, int);
};

static void stats_cb(ext2_filsys fs, blk64_t blk, int inuse)
{
	struct pf_reloc *r = fs->priv_data;
	if (inuse < 0 && !ext2fs_fast_test_block_bitmap2(r->freed, blk)) {
		ext2fs_mark_block_bitmap2(r->freed, blk);
		r->nfreed++;
	}
}

static void stats_range_cb(ext2_filsys fs, blk64_t blk, blk_t num, int inuse)
{
	for (blk_t i = 0; inuse < 0 && i < num; i++)
		stats_cb(fs, blk + i, inuse);
}

/* Tree blocks for extent splits: any free block except one freed earlier in this run. */
static errcode_t alloc_cb(ext2_filsys fs, blk64_t goal, blk64_t *ret)
{
	struct pf_reloc *r = fs->priv_data;
	blk64_t b, g = goal;
	for (uint64_t tries = 0; tries <= r->nfreed; tries++) {
		errcode_t ec = ext2fs_new_block2(fs, g, NULL, &b);
		if (ec)
			return ec;
		if (!ext2fs_fast_test_block_bitmap2(r->freed, b)) {
			*ret = b;
			r->tree_allocs++;
			return 0;
		}
		g = b + 1 < ext2fs_blocks_count(fs->super) ? b + 1 : fs->super->s_first_data_block;
	}
	return EXT2_ET_BLOCK_ALLOC_FAIL;
}

static void unhook(struct pf_reloc *r)
{
	ext2_filsys fs = r->fs;
	ext2fs_set_alloc_block_callback(fs, r->old_alloc, NULL);
	ext2fs_set_block_alloc_stats_callback(fs, r->old_stats, NULL);
	ext2fs_set_block_alloc_stats_range_callback(fs, r->old_stats_range, NULL);
	fs->priv_data = r->old_priv;
}

static void reloc_free(struct pf_reloc *r)
{
	if (!r)
		return;
	unhook(r);
	if (r->freed)
		ext2fs_free_block_bitmap(r->freed);
	free(r->buf);
	free(r->vbuf);
	free(r);
}

long pf_reloc_begin(ext2_filsys fs, const struct pf_plan *p, struct pf_reloc **out)
{
	*out = NULL;
	uint64_t maxlen = 1;
	for (size_t u = 0; u < p->nunits; u++)
		if (p->units[u].len > maxlen)
			maxlen = p->units[u].len;
	/* a unit is at most one chunk; bound the buffer anyway */
	if (maxlen > (256u << 20) / fs->blocksize)
		return -E2BIG;
	struct pf_reloc *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fs = fs;
	r->buf = malloc(maxlen * fs->blocksize);
	r->vbuf = malloc(maxlen * fs->blocksize);
	long rc = (!r->buf || !r->vbuf) ? -ENOMEM : 0;
	if (!rc)
		rc = ext2fs_allocate_block_bitmap(fs, "blocks freed by the reorder", &r->freed);
	if (rc) {
		free(r->buf);
		free(r->vbuf);
		free(r);
		return rc;
	}
	r->old_priv = fs->priv_data;
	fs->priv_data = r;
	ext2fs_set_alloc_block_callback(fs, alloc_cb, &r->old_alloc);
	ext2fs_set_block_alloc_stats_callback(fs, stats_cb, &r->old_stats);
	ext2fs_set_block_alloc_stats_range_callback(fs, stats_range_cb, &r->old_stats_range);

	/* F0: not clean until we are done */
	fs->super->s_state &= (__u16)~EXT2_VALID_FS;
	ext2fs_mark_super_dirty(fs);
	rc = ext2fs_flush(fs);
	if (rc)
		goto fail;
	/* F1: destinations in use */
	for (size_t u = 0; u < p->nunits; u++) {
		const struct pf_unit *un = &p->units[u];
		if (!ext2fs_test_block_bitmap_range2(fs->block_map, un->dst, (unsigned)un->len)) {
			rc = -EEXIST; /* the plan is stale: cannot happen on an unmounted filesystem */
			goto fail;
		}
		ext2fs_block_alloc_stats_range(fs, un->dst, (blk_t)un->len, +1);
	}
	rc = ext2fs_flush(fs);
	if (rc)
		goto fail;
	*out = r;
	return 0;
fail:
	reloc_free(r);
	return rc;
}

static long mapping_is(ext2_filsys fs, ext2_ino_t ino, uint64_t lblk, uint64_t want)
{
	blk64_t cur = 0;
	int rf = 0;
	errcode_t ec = ext2fs_bmap2(fs, ino, NULL, NULL, 0, lblk, &rf, &cur);
	if (ec)
		return ec;
	return cur == want && !(rf & BMAP_RET_UNINIT) ? 0 : -ESTALE;
}

long pf_reloc_unit(struct pf_reloc *r, const struct pf_plan *p, size_t u, const ext2_ino_t *inos, int *partial)
{
	ext2_filsys fs = r->fs;
	const struct pf_unit *un = &p->units[u];
	uint64_t bs = fs->blocksize;
	long rc;
	*partial = 0;

	/* F2: copy and make it durable */
	for (size_t i = un->first; i < un->first + un->count; i++) {
		const struct pf_move *m = &p->moves[i];
		rc = io_channel_read_blk64(fs->io, m->src, (int)m->len, r->buf + (m->dst - un->dst) * bs);
		if (rc)
			return rc;
	}
	rc = io_channel_write_blk64(fs->io, un->dst, (int)un->len, r->buf);
	if (!rc)
		rc = io_channel_flush(fs->io);
	if (!rc)
		rc = io_channel_read_blk64(fs->io, un->dst, (int)un->len, r->vbuf);
	if (rc)
		return rc;
	if (memcmp(r->buf, r->vbuf, un->len * bs))
		return -EIO;
	for (size_t i = un->first; i < un->first + un->count; i++) {
		const struct pf_move *m = &p->moves[i];
		for (uint64_t b = 0; b < m->len; b++)
			if ((rc = mapping_is(fs, inos[m->owner], m->lblk + b, m->src + b)))
				return rc;
	}

	/* F3: switch, make durable, check */
	uint64_t tree_allocs = r->tree_allocs;
	*partial = 1;
	for (size_t i = un->first; i < un->first + un->count; i++) {
		const struct pf_move *m = &p->moves[i];
		for (uint64_t b = 0; b < m->len; b++) {
			blk64_t phys = m->dst + b;
			rc = ext2fs_bmap2(fs, inos[m->owner], NULL, NULL, BMAP_SET, m->lblk + b, NULL, &phys);
			if (rc)
				return rc;
		}
	}
	if (r->tree_allocs != tree_allocs && (rc = ext2fs_write_bitmaps(fs)))
		return rc;
	rc = io_channel_flush(fs->io);
	if (rc)
		return rc;
	for (size_t i = un->first; i < un->first + un->count; i++) {
		const struct pf_move *m = &p->moves[i];
		for (uint64_t b = 0; b < m->len; b++)
			if ((rc = mapping_is(fs, inos[m->owner], m->lblk + b, m->dst + b)))
				return rc;
	}
	*partial = 0;
	return 0;
}

long pf_reloc_end(struct pf_reloc *r, const struct pf_plan *p, size_t done, int partial_unit, int mark_clean)
{
	ext2_filsys fs = r->fs;
	/* F4 */
	for (size_t u = 0; u < p->nunits; u++) {
		const struct pf_unit *un = &p->units[u];
		if (u < done) {
			for (size_t i = un->first; i < un->first + un->count; i++)
				ext2fs_block_alloc_stats_range(fs, p->moves[i].src, (blk_t)p->moves[i].len, -1);
		} else if (!(partial_unit && u == done)) {
			ext2fs_block_alloc_stats_range(fs, un->dst, (blk_t)un->len, -1);
		}
	}
	unhook(r);
	long rc = ext2fs_flush(fs);
	/* F5 */
	if (!rc && mark_clean) {
		fs->super->s_state |= EXT2_VALID_FS;
		ext2fs_mark_super_dirty(fs);
		rc = ext2fs_flush(fs);
	}
	reloc_free(r);
	return rc;
}
