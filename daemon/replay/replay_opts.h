/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a replay is asked to do and what it reports (replay.h: pf_replay), in a header of their own: the
 * replay's steps share them. */
#ifndef PREFETCH_REPLAY_OPTS_H
#define PREFETCH_REPLAY_OPTS_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

struct pf_replay_opts {
	int medium_override;       /* enum pf_medium_override */
	int threads;               /* readers on solid-state media */
	int nice_after_head;       /* rotational: once init's files are read, the replaying thread takes this nice
				    * value (0 = unchanged), so that the rest of it uses only CPU the boot leaves */
	int idle_io_after_head;    /* rotational and slow flash: once init's files are read, the replaying thread (and
				    * the readers it starts then) read in the idle I/O class (REPLAY_IDLE_IO) */
	int timeout_s;             /* give up after this long */
	uint64_t max_bytes;        /* never read more than this (0 = no bound beyond the layout) */
	volatile sig_atomic_t *stop; /* optional: stop early when set */
	int relative_paths;        /* the layout's paths are under the working directory: a root not changed into
				    * yet (started from the initramfs); block devices are opened at the start */
	_Atomic uint64_t *read_at_ns; /* optional: [layout's nfiles], zeroed by the caller; gets the CLOCK_MONOTONIC
				    * ns at which the replay's first read of each file's data was submitted (0: none), for
				    * the boot record to compare with the boot's first touch (boot_measure.h) */
	FILE *plan_dump;           /* optional (debugging, tests): the rotational sweep's plan, one line per item in
				    * sweep order: "BIN FS KIND SRC PHYSICAL OFFSET LENGTH PATH" (KIND data|dir|meta;
				    * SRC of PHYSICAL, in bytes: now = FIEMAP, layout = the layout's record, none) */
};

struct pf_replay_stats {
	unsigned files, files_skipped; /* skipped: missing, changed or unreadable */
	unsigned files_missing;    /* of files_skipped: gone, or their filesystem is not mounted */
	unsigned files_changed;    /* of files_skipped: inode, size, mtime or generation differ (never read) */
	unsigned long long bytes;  /* readahead requested (clipped to the files' sizes) */
	unsigned metadata_blocks;  /* inode-table / directory / extent-tree blocks pulled in the metadata pass (ext,
				    * XFS: the blocks it asked for; btrfs: what its tree searches read from the disk,
				    * in the filesystem's blocks) */
	unsigned placed_now;       /* rotational data ranges placed by FIEMAP at replay time */
	unsigned placed_layout;    /* ... by the layout's block numbers (FIEMAP failed: fallback) */
	unsigned placed_moved;     /* data ranges FIEMAP placed elsewhere than the layout said (moved: a reorder) */
	unsigned placed_pieces;    /* extra pieces: ranges that now lie in several places are cut (counted in
				    * placed_now when placed) */
	int medium;                /* enum pf_medium used (rotational if any filesystem was swept) */
	int timed_out;
	int stopped;               /* *opts->stop was set */
	double seconds;
	double at_metadata, at_placed, at_end; /* rotational: CLOCK_MONOTONIC (uptime) seconds at which the metadata pass,
				    * the placing (FIEMAP) and the replay ended, so that a boot's log can be lined up with them */
};

#endif
