/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass on an ext2/3/4 filesystem (rotational media, slow flash): the steps lib/ext_meta_pass.h
 * finds, each read ahead on the block device as soon as it is found, sorted and merged (PF_META_GAP_BLOCKS),
 * so that the next step's lookups, and later the opens of the data sweep, find those blocks cached.  Before
 * init's own files are read (replay.c), its head pass does the same for them and the directories above them
 * alone. */
#include "replay_internal.h"

#include "ext_meta_pass.h"
#include "fiemap.h"

#include <errno.h>
#include <ext2fs/ext2fs.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct meta {
	struct pf_rctx *c;
	uint32_t fsi;
	ext2_filsys fs;
	int bdev;
	uint32_t chunk;  /* bytes per readahead call */
	struct pf_bvec all; /* everything requested, to count distinct blocks */
	struct pf_bvec v;   /* the step being read */
};

/* Readahead of the device's blocks [b, end), in calls of at most the device's chunk. */
static int read_ahead(struct meta *m, uint64_t b, uint64_t end)
{
	uint64_t bs = m->fs->blocksize, chunk = m->chunk;
	while (b < end) {
		if (pf_rctx_should_stop(m->c))
			return -EINTR;
		uint64_t cnt = end - b;
		if (cnt * bs > chunk)
			cnt = chunk / bs > 0 ? chunk / bs : 1;
		(void)readahead(m->bdev, (off64_t)(b * bs), (size_t)(cnt * bs));
		b += cnt;
	}
	return 0;
}

/* The sink: one step read ahead on the device, sorted and merged (libext2fs's own reads are not the pass's to
 * make). */
static int sweep(void *arg, const struct pf_meta_step *s)
{
	struct meta *m = arg;
	if (s->cost_only)
		return 0;
	FILE *dump = m->c->o ? m->c->o->plan_dump : NULL;
	int rc = dump ? pf_meta_step_dump(dump, m->fsi, m->fs->blocksize, s, &m->v) : 0;
	m->v.n = 0;
	for (size_t i = 0; i < s->n && !rc; i++)
		rc = pf_bvec_push(&m->v, s->r[i].start, s->r[i].count);
	for (size_t i = 0; i < s->n && !rc; i++)
		rc = pf_bvec_push(&m->all, s->r[i].start, s->r[i].count);
	if (rc)
		return rc;
	size_t n = pf_branges_normalize(m->v.r, m->v.n, PF_META_GAP_BLOCKS);
	uint64_t max = ext2fs_blocks_count(m->fs->super);
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t b = m->v.r[i].start, end = b + m->v.r[i].count;
		rc = read_ahead(m, b, end > max ? max : end);
	}
	return rc;
}

/* The blocks of the directory at the mount point, from the kernel's in-core inode (FIEMAP): the mount's root is
 * always cached there, while reading its inode with libext2fs could wait for the disk. */
static int root_dir_blocks(void *arg, struct pf_bvec *v)
{
	struct meta *m = arg;
	int fd = open(pf_rpath(m->c, m->c->l->fs[m->fsi].mountpoint), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* only a hint */
	struct pf_fiemap w;
	int rc = pf_fiemap_open(&w, fd, 0, FIEMAP_MAX_OFFSET, 16); /* the first batch only: a directory has few */
	if (!rc && pf_fiemap_next(&w) > 0) {
		uint64_t bs = m->fs->blocksize;
		for (uint32_t i = 0; i < w.n && !rc; i++) {
			const struct fiemap_extent *e = &w.ext[i];
			if (!(e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)))
				rc = pf_bvec_push(v, e->fe_physical / bs, (e->fe_length + bs - 1) / bs);
		}
	}
	pf_fiemap_close(&w);
	close(fd);
	return rc;
}

/* Directories of the layout whose blocks the pass read need no getdents in the data sweep. */
static void dir_read(void *arg, size_t layout, uint32_t file)
{
	(void)layout; /* one: the replay's */
	((struct meta *)arg)->c->dir_done[file] = 1;
}

static int stop(void *arg)
{
	return pf_rctx_should_stop(((struct meta *)arg)->c);
}

void pf_replay_metadata_open(struct pf_rctx *c, uint32_t fsi)
{
	struct pf_rfs *rf = &c->fs[fsi];
	if (rf->e2fs)
		return;
	ext2_filsys fs;
	if (ext2fs_open2(rf->devname, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_IGNORE_CSUM_ERRORS, 0, 0, unix_io_manager, &fs))
		return;
	int bdev = open(rf->devname, O_RDONLY | O_CLOEXEC);
	if (bdev < 0) {
		ext2fs_close_free(&fs);
		return;
	}
	rf->e2fs = fs;
	rf->bdev = bdev;
}

void pf_replay_metadata_close(struct pf_rctx *c)
{
	for (uint32_t i = 0; c->fs && i < c->l->nfs; i++) {
		struct pf_rfs *rf = &c->fs[i];
		if (!rf->e2fs) /* bdev is opened with it, and only then (a zeroed entry has bdev 0) */
			continue;
		close(rf->bdev);
		rf->bdev = -1;
		ext2_filsys fs = rf->e2fs;
		ext2fs_close_free(&fs);
		rf->e2fs = NULL;
	}
}

int pf_replay_metadata(struct pf_rctx *c, uint32_t fsi, int head, unsigned *blocks)
{
	const struct pf_rfs *rf = &c->fs[fsi];
	if (!rf->e2fs || rf->bdev < 0)
		return -EIO;
	struct meta m = { .c = c, .fsi = fsi, .fs = rf->e2fs, .bdev = rf->bdev,
			  .chunk = rf->chunk ? rf->chunk : PF_REPLAY_CHUNK_MIN };
	struct pf_meta_layout l = { c->l, fsi };
	struct pf_meta_opts o = { .ls = &l, .nls = 1, .root = (ext2_ino_t)rf->root_ino, .head = head };
	struct pf_meta_sink s = { .read = sweep, .root_dir = root_dir_blocks, .dir_read = dir_read, .stop = stop,
				  .arg = &m };
	int rc = pf_meta_pass(m.fs, &o, &s);
	*blocks += (unsigned)pf_branges_count(m.all.r, m.all.n);
	free(m.all.r);
	free(m.v.r);
	return rc;
}
