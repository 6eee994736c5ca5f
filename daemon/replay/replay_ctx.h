/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state of one replay, shared by its steps (replay_*.c): the layout, the options, the filesystems as found
 * now, each file's outcome, the clock and the stop flag.  Internal: others call pf_replay(). */
#ifndef PREFETCH_REPLAY_CTX_H
#define PREFETCH_REPLAY_CTX_H

#include "format.h"
#include "read_plan.h"
#include "replay_opts.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* Largest single readahead(2)/getdents call: readahead may block while it submits I/O (queue full, block
 * mapping), so the stop flag and the deadline are checked at least this often.  readahead(2) and
 * POSIX_FADV_WILLNEED also silently read no more than max(read_ahead_kb, max_sectors_kb) of the device per
 * call: a filesystem's chunk is the smaller of the two bounds (PF_REPLAY_CHUNK_MIN when sysfs does not say). */
#define PF_REPLAY_CHUNK (1u << 20)
#define PF_REPLAY_CHUNK_MIN (128u << 10)

struct pf_xfs_sweep;

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
	struct pf_xfs_sweep *xfs; /* XFS: the metadata steps within the sweep (replay_xfs.c), NULL: none */
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
	unsigned meta_blocks;            /* blocks read by metadata steps within the sweep (XFS) */
};

/* Stop flag set or deadline passed (records which).  Cheap; call between reads. */
int pf_rctx_should_stop(struct pf_rctx *c);

/* A layout path as the replay opens it: relative to the working directory with opts->relative_paths. */
const char *pf_rpath(const struct pf_rctx *c, const char *path);

#endif
