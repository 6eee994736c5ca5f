/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The read plan's block mapper from libext2fs (see read_map.h). */
#include "read_map.h"

#include "array.h"
#include "blockmap.h"
#include "collect.h"
#include "inode_identity.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Is layout file f the inode it names now, as the replay's identity check would find it (PF_ID_AS_READ)? */
static int same_file(ext2_filsys fs, const struct pf_file *f, struct ext2_inode_large *in)
{
	struct pf_file_now now;
	return pf_inode_now(fs, f->ino, in, &now) == 1 && pf_file_identity(f, &now, PF_ID_AS_READ) == PF_ID_SAME;
}

/* Run r's blocks as extents in bytes, piece by piece where the moves leave them; an unwritten run (it reads
 * as zeros, as FIEMAP's replay sees it: no read to place) without a place. */
static int add_run(const struct pf_read_map *m, const struct pf_bmap_run *r, struct pf_rplan_extent **x, size_t *n,
		   size_t *cap)
{
	uint64_t bs = m->fs->blocksize;
	struct pf_bvec pieces = { 0 };
	int rc = m->nmoves ? pf_cost_relocate_run(m->moves, m->nmoves, r->pblk, r->len, &pieces)
			   : pf_bvec_push(&pieces, r->pblk, r->len);
	uint64_t lblk = r->lblk;
	for (size_t i = 0; i < pieces.n && !rc; i++) {
		if ((rc = PF_ARRAY_RESERVE(*x, *cap, *n + 1, 16)))
			break;
		(*x)[(*n)++] = (struct pf_rplan_extent){ .logical = lblk * bs, .length = pieces.r[i].count * bs,
							 .physical = pieces.r[i].start * bs, .placed = !r->uninit };
		lblk += pieces.r[i].count;
	}
	free(pieces.r);
	return rc ? -ENOMEM : 0;
}

static int map_file(void *arg, uint32_t file, uint64_t start, uint64_t end, struct pf_rplan_extent **x, size_t *nx,
		    uint64_t *covered)
{
	const struct pf_read_map *m = arg;
	const struct pf_file *f = &m->img->files[file];
	struct ext2_inode_large in;
	*covered = end;
	if (f->fs != m->fsi || !same_file(m->fs, f, &in))
		return PF_RPLAN_UNMAPPED;
	struct pf_bmap_run *runs = NULL;
	size_t nruns = 0, cap = 0;
	int rc = pf_blockmap(m->fs, (ext2_ino_t)f->ino, (struct ext2_inode *)&in, &runs, &nruns);
	for (size_t i = 0; i < nruns && !rc; i++) {
		const struct pf_bmap_run *r = &runs[i];
		uint64_t bs = m->fs->blocksize;
		if ((r->lblk + r->len) * bs > start && r->lblk * bs < end) /* as FIEMAP: the extents over the range */
			rc = add_run(m, r, x, nx, &cap);
	}
	free(runs);
	return rc;
}

struct pf_rplan_mapper pf_read_map_mapper(struct pf_read_map *m)
{
	return (struct pf_rplan_mapper){ .map = map_file, .arg = m };
}
