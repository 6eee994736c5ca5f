/* SPDX-License-Identifier: GPL-2.0-or-later */
/* XFS's metadata pass (replay_xfs.c: the inode pass, the steps within the sweep, the files' opens by handle;
 * replay_xfs_dirs.c: the directories, which must be opened by path, parents first).  Private to
 * daemon/replay/. */
#ifndef PREFETCH_REPLAY_XFS_INT_H
#define PREFETCH_REPLAY_XFS_INT_H

#include "replay_internal.h"
#include "xfs_ino.h"
#include "xfs_steps.h"

#include <stdint.h>

#define PF_XNONE UINT32_MAX

/* kinds of struct pf_xstep; at one address, in this order.  AG and INODES: the inode pass; DIR: a directory
 * opened (its first block), its other blocks read then or, within the sweep, by the two steps after it where
 * they lie: DIR_INDEX its hash index (a lookup), DIR_LIST its other data blocks (getdents) */
enum { PF_XSTEP_AG, PF_XSTEP_INODES, PF_XSTEP_DIR, PF_XSTEP_DIR_INDEX, PF_XSTEP_DIR_LIST };

/* A directory the sweep reads: the layout's, and the filesystem's root. */
struct pf_xdir {
	uint32_t file;           /* layout file; PF_XNONE: the root, not in the layout */
	uint32_t parent;         /* the directory holding it (index); PF_XNONE: none recorded (the walk reads it) */
	uint32_t child, sibling; /* its first subdirectory, the next one of its parent (indices, PF_XNONE) */
	uint64_t first, bytes;   /* where its blocks lie, by the layout: the lowest, their bytes (0: not known) */
	uint8_t has_blocks;      /* too large for its inode (a size of a block or more) */
	uint8_t above_blocks;    /* a directory below it has blocks: they wait for its own */
	uint8_t inode_in;        /* its inode cluster is read */
	uint8_t queued;          /* its step placed (or, without blocks, complete) */
	uint8_t complete;        /* its blocks are read: its subdirectories can be opened without reading it */
	uint8_t parts;           /* its DIR_INDEX and DIR_LIST steps still to come */
	int fd;                  /* open between its DIR step and its last part (-1: not) */
};

/* An inode the sweep reads (its cluster, by a bulkstat). */
struct pf_xino {
	uint64_t ino, cluster;
	uint32_t dir; /* its directory record, or PF_XNONE */
};

struct pf_xfs_sweep {
	uint32_t fs;
	int mfd; /* the mount point: the ioctls */
	struct pf_xfs_geom g;
	struct pf_xino *ino; /* by cluster, then number */
	size_t nino;
	struct pf_xdir *dirs;
	size_t ndirs;
	struct pf_xsteps q;  /* the inode pass */
	struct pf_xsteps dq; /* the directories, within the data sweep */
	int in_pass;         /* the inode pass is on */
	int open_dirs;       /* directories held open for their parts */
};

/* replay_xfs_dirs.c */
/* The directory records of filesystem x->fs (the root first), their parents and subdirectories, where their
 * blocks lie by the layout; dir_of[file] set to each layout directory's record (PF_XNONE elsewhere).  0 or
 * -ENOMEM. */
int pf_xfs_dirs_build(const struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t *dir_of);
/* Directory d's inode is in now (or, for the root, always was).  Once its parent is complete too, its step is
 * placed at the lowest of its blocks (at 0 when the layout does not say where they are): in the inode pass
 * when directories with blocks wait for it and the pass has not gone by there yet, else in the data sweep
 * (x->dq); one living in its inode is complete at once, and so on down. */
void pf_xfs_dir_inode_in(struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t d);
/* A directory's steps: DIR opens it by path (XFS reads its first block); then getdents (its data blocks) and a
 * lookup of a name not there (its hash index), at once in the inode pass, or in the data sweep each by a
 * step of its own where those blocks lie (XFS_IOC_GETBMAPX on the open directory; at once when they lie
 * behind).  The directory is complete after its last part. */
void pf_xfs_dir_read(struct pf_rctx *c, struct pf_xfs_sweep *x, const struct pf_xstep *s);
/* The directories still held open (a replay stopped early) closed. */
void pf_xfs_dirs_close(struct pf_xfs_sweep *x);
/* A step's line in the plan dump (--dump-plan): "m FS meta STEP ADDR 0 LEN PATH" (PATH "-": none). */
void pf_xfs_dump(const struct pf_rctx *c, const struct pf_xfs_sweep *x, const char *step, const struct pf_xstep *s,
		 const char *path);

#endif
