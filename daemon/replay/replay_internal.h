/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared state of one replay, split across replay_*.c by concern.  Internal: others call pf_replay(). */
#ifndef PREFETCH_REPLAY_INTERNAL_H
#define PREFETCH_REPLAY_INTERNAL_H

#include "replay.h"
#include "block_ranges.h" /* pf_brange: the metadata pass's runs */
#include "read_plan.h"

#include <stdatomic.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Largest single readahead(2)/getdents call: readahead may block while it submits I/O (queue full, block
 * mapping), so the stop flag and the deadline are checked at least this often.  readahead(2) and
 * POSIX_FADV_WILLNEED also silently read no more than max(read_ahead_kb, max_sectors_kb) of the device per
 * call: a filesystem's chunk is the smaller of the two bounds (PF_REPLAY_CHUNK_MIN when sysfs does not say). */
#define PF_REPLAY_CHUNK (1u << 20)
#define PF_REPLAY_CHUNK_MIN (128u << 10)
/* Readers on slow flash: the device serves one request at a time; a second reader overlaps its waits in open()
 * and block mapping with the first one's reads. */
#define PF_REPLAY_FLASH_READERS 2

/* A layout filesystem as it is found now. */
struct pf_rfs {
	int ok;               /* mounted where the layout says, same UUID (when both are known) */
	dev_t dev;            /* st_dev of the mount point now */
	ino_t root_ino;       /* inode of the mount point's root directory */
	int medium;           /* enum pf_medium (never UNKNOWN: unknown counts as rotational) */
	uint32_t block_size;
	uint32_t chunk;       /* bytes per readahead call on this device (see PF_REPLAY_CHUNK) */
	char type[32];        /* blkid TYPE, "" if unknown */
	char devname[256];    /* block device node, "" if none */
	struct struct_ext2_filsys *e2fs; /* the metadata pass's handle (libext2fs), opened at the start */
	int bdev;             /* the device, for the metadata pass's readahead (-1: none) */
};

/* Per-file outcome; the first thread to decide records it. */
enum { PF_RFILE_UNSEEN = 0, PF_RFILE_OK, PF_RFILE_MISSING, PF_RFILE_CHANGED, PF_RFILE_UNREADABLE };

struct pf_rctx {
	const struct pf_image *l;
	const struct pf_replay_opts *o;
	struct pf_rfs *fs;               /* [l->nfs] */
	_Atomic unsigned char *fstate;   /* [l->nfiles] PF_RFILE_* */
	unsigned char *dir_done;         /* [l->nfiles] blocks already pulled by the metadata pass */
	uint64_t deadline_ns;            /* CLOCK_MONOTONIC */
	int has_deadline;
	atomic_ullong bytes;
	atomic_int timed_out, stopped;
	int fd_budget;                   /* fds the sweep may keep open at once */
	struct pf_rplan_placed map;      /* the placing (FIEMAP) of the sweeps and the flash reads (one thread) */
	double map_at;                   /* when the last placing ended (CLOCK_MONOTONIC s) */
};

/* Stop flag set or deadline passed (records which).  Cheap; call between reads. */
int pf_rctx_should_stop(struct pf_rctx *c);

/* A layout path as the replay opens it: relative to the working directory with opts->relative_paths. */
const char *pf_rpath(const struct pf_rctx *c, const char *path);
/* replay_open.c: find the layout's filesystems now (mount point, UUID, device, medium). */
void pf_replay_resolve_fs(struct pf_rctx *c);
/* Does a file found now match its layout record?  0, or -ESTALE (changed) / -EXDEV (other filesystem). */
int pf_replay_verify(const struct pf_file *f, const struct stat *st, dev_t dev);
/* Open a layout file after checking its identity; records the outcome.  META items need no fd: returns 0
 * without opening when want_fd is 0.  Returns an fd (>= 0 when want_fd), 0, or a negative errno. */
int pf_replay_open(struct pf_rctx *c, uint32_t file, int want_fd);
/* Do one item on an open fd: readahead in chunks, or read a directory.  Returns 0 or -errno / -EINTR. */
int pf_replay_do_item(struct pf_rctx *c, int fd, const struct pf_ritem *it);

/* replay_fiemap.c: the replay's block mapper (read_plan.h): each file opened after its identity check (the
 * outcome recorded), its extents from FIEMAP; stops when pf_rctx_should_stop. */
struct pf_rplan_mapper pf_replay_mapper(struct pf_rctx *c);
/* The places of DATA items of one file (sorted by offset, not overlapping) from FIEMAP on fd, as
 * pf_rplan_place_file places them.  0, or -errno / -ENOMEM (FIEMAP refused: items untouched, the layout's
 * places stand). */
int pf_replay_fiemap(int fd, struct pf_ritem *const *items, size_t n, struct pf_rvec *more);

/* replay_metadata.c: metadata pass on one ext2/3/4 filesystem; adds the blocks read to *blocks.  head: only the
 * inode-table blocks of init's files and of the directories above them, and those directories' blocks. */
int pf_replay_metadata(struct pf_rctx *c, uint32_t fs, int head, unsigned *blocks);
/* Open (at the start: the device's path may not resolve later in an initramfs) and close the handles the
 * metadata pass uses; a filesystem that cannot be opened gets no metadata pass. */
void pf_replay_metadata_open(struct pf_rctx *c, uint32_t fs);
void pf_replay_metadata_close(struct pf_rctx *c);

/* replay_xfs.c: metadata pass on one XFS filesystem (the inode clusters of the layout's files and directories,
 * in disk order); adds the blocks read to *blocks.  0 or -errno (not XFS, no geometry: nothing read). */
int pf_replay_xfs_metadata(struct pf_rctx *c, uint32_t fs, unsigned *blocks);

/* replay_btrfs.c: metadata pass on one btrfs filesystem (subvolume): the fs-tree items of the layout's inodes,
 * then the checksums of its data, each in key order.  btrfs does not say how many tree blocks that read (none
 * are counted).  0 or -errno. */
int pf_replay_btrfs_metadata(struct pf_rctx *c, uint32_t fs);

/* replay_rotational.c: the plan's sweep of items (read_plan.h, pf_rplan_sweep: placed by FIEMAP now, sorted,
 * coalesced), read (all on rotational filesystems). */
int pf_replay_sweep(struct pf_rctx *c, struct pf_ritem *items, size_t n);

/* replay_flash.c: the slow-flash reads: the plan's (read_plan.h, pf_rplan_flash: placed by FIEMAP now, each
 * file's ranges adjacent on the device merged, holes up to PF_RPLAN_FLASH_HOLE read through), read them in first-touch order with
 * PF_REPLAY_FLASH_READERS readers.  Returns when done: 0 or -ENOMEM. */
int pf_replay_flash(struct pf_rctx *c, struct pf_ritem *items, size_t n);

/* replay_parallel.c: readers pulling items in access order. */
struct pf_rpar;
int pf_replay_parallel_start(struct pf_rctx *c, const struct pf_ritem *items, size_t n, int threads,
			     struct pf_rpar **out);
void pf_replay_parallel_join(struct pf_rpar *p);

#endif
