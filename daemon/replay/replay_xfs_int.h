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

/* Where a directory's step goes (pf_xfs_plan_up): the data sweep goes down the allocation groups, each group
 * from its start up; a directory below which others with blocks wait is read before them: at its group's start
 * when they lie in its group, in the inode pass when they lie in a higher group (swept before its own). */
enum { PF_XDIR_IN_PLACE, PF_XDIR_GROUP_START, PF_XDIR_PASS };

/* A directory the sweep reads: the layout's, and the filesystem's root. */
struct pf_xdir {
	uint32_t file;           /* layout file; PF_XNONE: the root, not in the layout */
	uint32_t parent;         /* the directory holding it (index); PF_XNONE: none recorded (the walk reads it) */
	uint32_t child, sibling; /* its first subdirectory, the next one of its parent (indices, PF_XNONE) */
	uint64_t first, bytes;   /* where its step lies, by the layout: its block 0 (else its lowest); the bytes of
				  * its blocks (0: not known) */
	uint8_t has_blocks;      /* too large for its inode (a size of a block or more) */
	uint8_t inode_in;        /* its inode cluster is read */
	uint8_t queued;          /* its step placed (or, without blocks, complete) */
	uint8_t complete;        /* its blocks are read: its subdirectories can be opened without reading it */
	uint8_t parts;           /* its DIR_INDEX and DIR_LIST steps still to come */
	uint8_t where;           /* PF_XDIR_* */
	uint32_t need_group;     /* the lowest group swept before a step needing its inode (UINT32_MAX: the pass) */
	int fd;                  /* open between its DIR step and its last part (-1: not) */
};

/* An inode the sweep reads (its cluster, by a bulkstat). */
struct pf_xino {
	uint64_t ino, cluster;
	uint32_t dir;  /* its directory record, or PF_XNONE */
	uint32_t file; /* its layout file, or PF_XNONE (the root not in the layout) */
	uint8_t pass;  /* needed before its group's turn in the sweep: read in the inode pass */
};

struct pf_xfs_sweep {
	uint32_t fs;
	int mfd; /* the mount point: the ioctls */
	struct pf_xfs_geom g;
	uint32_t agcount;
	uint64_t agbytes;
	struct pf_xino *ino; /* by cluster, then number */
	size_t nino;
	struct pf_xdir *dirs;
	size_t ndirs;
	struct pf_xsteps q;  /* the inode pass */
	struct pf_xsteps dq; /* the directories, within the data sweep */
	int in_pass;         /* the inode pass is on */
	int open_dirs;       /* directories held open for their parts */
	int down;            /* the data sweep goes down the groups (replay_xfs_order.c), else up after the pass */
};

/* replay_xfs_order.c: which way the sweep goes (x->down), which inodes the pass reads (their pass flags) and
 * where each directory's step goes (pf_xfs_plan_dirs), decided on the layout's places.  0 or -ENOMEM. */
int pf_xfs_plan(const struct pf_rctx *c, struct pf_xfs_sweep *x);
/* The key of a place in the data sweep's order: up, the place; down, the groups from the last down, each from
 * its start up, in each group first the steps at its start (group_start: its inode index and clusters, the
 * directories others wait for), by place, then its data and the other steps, by place. */
uint64_t pf_xfs_key(const struct pf_xfs_sweep *x, uint64_t place, int group_start);
/* The group a place lies in (the last one for a place beyond). */
uint32_t pf_xfs_group(const struct pf_xfs_sweep *x, uint64_t place);
/* Where each directory's step goes (PF_XDIR_*, for the way x->down says: going up, each one others wait for
 * in the pass), and the lowest group each directory's inode is needed before (need_group), from where the
 * directories' blocks lie. */
void pf_xfs_plan_dirs(struct pf_xfs_sweep *x);

/* replay_xfs_dirs.c */
/* The directory records of filesystem x->fs (the root first), their parents and subdirectories, where their
 * blocks lie by the layout; dir_of[file] set to each layout directory's record (PF_XNONE elsewhere).  0 or
 * -ENOMEM. */
int pf_xfs_dirs_build(const struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t *dir_of);
/* Directory d's inode is in now (or, for the root, always was).  Once its parent is complete too, its step is
 * placed at its block 0 (at the sweep's start when the layout does not say where its blocks are), as
 * d->where says: in the inode pass (while it is on), at its group's start, or in place; one living in its
 * inode is complete at once, and so on down. */
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
