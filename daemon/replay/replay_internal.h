/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The steps of one replay (replay_*.c), on its shared state (replay_ctx.h).  Internal: others call
 * pf_replay(). */
#ifndef PREFETCH_REPLAY_INTERNAL_H
#define PREFETCH_REPLAY_INTERNAL_H

#include "block_ranges.h" /* pf_brange: the metadata pass's runs */
#include "read_plan.h"
#include "replay_ctx.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* replay_open.c: find the layout's filesystems now (mount point, UUID, device, medium). */
void pf_replay_resolve_fs(struct pf_rctx *c);
/* Is the file found now (st; fd: it open, or -1) the one its layout record names, as the replay reads it
 * (lib/file_identity.h, PF_ID_AS_READ)?  With fd, its generation too (FS_IOC_GETVERSION) where the record has
 * one and the filesystem answers.  0, or -ESTALE (changed) / -EXDEV (other filesystem). */
int pf_replay_verify(const struct pf_file *f, const struct stat *st, int fd, dev_t dev);
/* Open a layout file after checking its identity; records the outcome.  META items need no fd: returns 0
 * without opening when want_fd is 0.  Returns an fd (>= 0 when want_fd), 0, or a negative errno. */
int pf_replay_open(struct pf_rctx *c, uint32_t file, int want_fd);
/* Do one item on an open fd: readahead in chunks, or read a directory.  Returns 0 or -errno / -EINTR. */
int pf_replay_do_item(struct pf_rctx *c, int fd, const struct pf_ritem *it);
/* Read the directory open on fd (getdents, bounded).  0 or -errno / -EINTR. */
int pf_replay_read_dir(struct pf_rctx *c, int fd);
/* Record a file's outcome (PF_RFILE_*), unless one is recorded already. */
void pf_replay_record(struct pf_rctx *c, uint32_t file, unsigned char state);

/* replay_fiemap.c: the replay's block mapper (read_plan.h): each file opened after its identity check (the
 * outcome recorded), its extents from FIEMAP; stops when pf_rctx_should_stop. */
struct pf_rplan_mapper pf_replay_mapper(struct pf_rctx *c);
/* The places of DATA items of one file (sorted by offset, not overlapping) from FIEMAP on fd, as
 * pf_rplan_place_file places them.  0, or -errno / -ENOMEM (FIEMAP refused: items untouched, the layout's
 * places stand). */
int pf_replay_fiemap(int fd, struct pf_ritem *const *items, size_t n, struct pf_rvec *more);

/* replay_metadata.c: metadata pass on one ext2/3/4 filesystem (lib/ext_meta_pass.h's steps, each read ahead on
 * the device); adds the blocks read to *blocks.  head: only the inode-table blocks of init's files and of the
 * directories above them, and those directories' blocks.  0, or -EIO (no handle) / -ENOMEM. */
int pf_replay_metadata(struct pf_rctx *c, uint32_t fs, int head, unsigned *blocks);
/* Open (at the start: the device's path may not resolve later in an initramfs) and close the handles the
 * metadata pass uses; a filesystem that cannot be opened gets no metadata pass. */
void pf_replay_metadata_open(struct pf_rctx *c, uint32_t fs);
void pf_replay_metadata_close(struct pf_rctx *c);

/* replay_xfs.c: the metadata pass on one XFS filesystem.  The data sweep goes down the allocation groups (the
 * last first), each from its start up; each group's inode index and inode clusters of the layout's files and
 * directories at its start, its directories' blocks each where it lies (those others wait for at its start).
 * What a group swept before needs (an inode of a lower group on a directory's path, a file's inode lying
 * below its data) is read now, in the inode pass, going up.  pf_replay_xfs_metadata reads that pass and
 * hangs the other steps on c->fs[fs].xfs; 0 or -errno (not XFS, no geometry, no CAP_SYS_ADMIN: nothing read, no steps, the files are
 * opened by path).  Then the placing and the sweep open that filesystem's data files with pf_replay_xfs_open:
 * by handle, no directory read, identity checked as pf_replay_open does (falls back to it, by path, when the
 * handle is stale or refused); the sweep calls pf_replay_xfs_upto before each data item placed at
 * [physical, end) (the steps lying before it) and pf_replay_xfs_flush once its items of that filesystem are
 * read (the rest, in elevator order); pf_replay_xfs_order puts a bin's items of the filesystem (n, sorted by
 * pf_rplan_sort_physical) in that order first (0 or -ENOMEM: left as they are).  The blocks read are added
 * to c->meta_blocks. */
int pf_replay_xfs_metadata(struct pf_rctx *c, uint32_t fs);
void pf_replay_xfs_upto(struct pf_rctx *c, struct pf_xfs_sweep *x, uint64_t physical, uint64_t end);
void pf_replay_xfs_flush(struct pf_rctx *c, struct pf_xfs_sweep *x);
int pf_replay_xfs_order(const struct pf_xfs_sweep *x, struct pf_ritem *items, size_t n);
/* Nonzero when the sweep places x's data by the layout, not by FIEMAP (going down, replay_xfs_order.c); the
 * items it does not place then wait for the end (their opens would read inodes out of order).  x may be NULL. */
int pf_replay_xfs_layout_places(const struct pf_xfs_sweep *x);
int pf_replay_xfs_open(struct pf_rctx *c, struct pf_xfs_sweep *x, uint32_t file);
void pf_replay_xfs_close(struct pf_rctx *c);

/* replay_btrfs.c: metadata pass on one btrfs filesystem (subvolume): the fs-tree items of the layout's inodes,
 * then the checksums of its data, each in key order.  Adds to *blocks what the searches read from the disk, in
 * the filesystem's blocks (btrfs does not say which tree blocks they visited; cached ones count nothing).
 * 0 or -errno. */
int pf_replay_btrfs_metadata(struct pf_rctx *c, uint32_t fs, unsigned *blocks);

/* replay_rotational.c: the plan's sweep of items (read_plan.h, pf_rplan_sweep: placed by FIEMAP now, sorted,
 * coalesced), read (all on rotational filesystems), XFS's directory steps among them. */
int pf_replay_sweep(struct pf_rctx *c, struct pf_ritem *items, size_t n);

/* replay_flash.c: the slow-flash reads: the plan's (read_plan.h, pf_rplan_flash: placed by FIEMAP now, each
 * file's ranges adjacent on the device merged, holes up to PF_RPLAN_FLASH_HOLE read through), read them in first-touch order with
 * PF_REPLAY_FLASH_READERS readers.  Returns when done: 0 or -ENOMEM. */
int pf_replay_flash(struct pf_rctx *c, struct pf_ritem *items, size_t n);

/* replay_threads.c: up to `threads` (1 to PF_RTHREADS_MAX) threads running run(arg), each taking work from what
 * arg shares until it runs out; join waits for them, and runs run(arg) in the calling thread when none could
 * start, so that the work is done either way. */
#define PF_RTHREADS_MAX 64
struct pf_rthreads {
	void *(*run)(void *);
	void *arg;
	int started;
	pthread_t tid[PF_RTHREADS_MAX];
};
void pf_rthreads_start(struct pf_rthreads *t, int threads, void *(*run)(void *), void *arg);
void pf_rthreads_join(struct pf_rthreads *t);

/* replay_parallel.c: readers pulling items in access order. */
struct pf_rpar;
int pf_replay_parallel_start(struct pf_rctx *c, const struct pf_ritem *items, size_t n, int threads,
			     struct pf_rpar **out);
void pf_replay_parallel_join(struct pf_rpar *p);

#endif
