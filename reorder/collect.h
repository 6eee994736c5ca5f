/* SPDX-License-Identifier: GPL-2.0-or-later */
/* From the layout's wishes to movable segments: each file's identity checked against its inode, its byte
 * ranges mapped to logical blocks and then to where they lie now. */
#ifndef PREFETCH_REORDER_COLLECT_H
#define PREFETCH_REORDER_COLLECT_H

#include "layout_load.h"
#include "plan.h"

#include <ext2fs/ext2fs.h>

enum pf_skip {
	PF_SKIP_NONE = 0,
	PF_SKIP_GONE,        /* deleted, or the inode is not in use */
	PF_SKIP_REPLACED,    /* another file now has this inode (generation or type differ) */
	PF_SKIP_CHANGED,     /* size or mtime differ from the layout */
	PF_SKIP_TYPE,        /* not a regular file or directory */
	PF_SKIP_INLINE,      /* inline data: no blocks of its own */
	PF_SKIP_PROTECTED,   /* immutable or append-only */
	PF_SKIP_ENCRYPTED,
	PF_SKIP_VERITY,
	PF_SKIP_SPECIAL,     /* EA inode, DAX */
	PF_SKIP_ERROR,       /* its block map could not be read */
	PF_SKIP_RESERVED,    /* an inode the filesystem itself uses (reserved_inode.h) */
	PF_SKIP_WRITTEN,     /* written at every boot (PF_FILE_WRITTEN): what the next boot appends lands elsewhere */
	PF_SKIP_NR
};

const char *pf_skip_reason(int reason);

struct pf_cfile {
	ext2_ino_t ino;
	const struct pf_file *rec;   /* the first layout record naming it */
	int skip;                    /* enum pf_skip */
	int checked;
	struct pf_bmap_run *runs;
	size_t nruns;
	struct pf_brange *covered;      /* logical ranges already taken (a block is laid out once) */
	size_t ncov, capcov;
};

struct pf_collect {
	struct pf_cfile *files;      /* distinct inodes; pf_seg.owner indexes this */
	size_t nfiles;
	struct pf_seg *segs;         /* in layout order */
	size_t nsegs;
	uint32_t skipped[PF_SKIP_NR];
	uint32_t files_used;
	uint64_t uninit_blocks;      /* unwritten extents left alone */
	uint64_t full_leaf_blocks;   /* left alone: moving them would overflow a full extent leaf */
};

/* Returns 0 or -ENOMEM.  Per-file problems are recorded as skips, not errors. */
int pf_collect(ext2_filsys fs, const struct pf_layouts *l, struct pf_collect *out);
void pf_collect_free(struct pf_collect *c);

/* Inode ino among c->files (sorted by inode): 1 with its index in *i, or 0. */
int pf_collect_find(const struct pf_collect *c, ext2_ino_t ino, size_t *i);

/* Read the blocks of the layout's directories (those collected, c->files) in one sweep (warm.h), for the
 * replay prediction's path lookups, which read them a block at a time.  Returns 0 or -ENOMEM. */
int pf_collect_warm_directories(ext2_filsys fs, const struct pf_collect *c);

#endif
