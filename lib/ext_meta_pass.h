/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass on an ext2/3/4 filesystem: the blocks the replay reads before the data, step by step, found
 * from the libext2fs view.  Opening a file reads its inode-table block and the blocks of every directory on its
 * path; done file by file in boot order, the head goes back to the inode tables between data reads about twice a
 * file.  ext4 reads those blocks through the block device's page cache, so reading them ahead on the device, in
 * block order, warms them in one sweep per step.
 *
 * One walk, two sinks: prefetchd's replay (daemon/replay/replay_metadata.c) reads each step with readahead on the
 * device as soon as it is found (the next step's lookups then find it cached); prefetch-reorder's prediction
 * (reorder/replay_predict.c) costs the same steps on the disk model (lib/replay_cost.h), where the blocks lie now
 * or where a plan would leave them.  The steps, in order:
 *   open        the superblock and group descriptors (opening the filesystem read them: the replay finds them
 *               cached; the prediction counts them);
 *   inodes      the inode-table blocks of the mount's root and of every file of the layouts on the filesystem
 *               (places from the group descriptors: no I/O to find them), and (full pass) the block and inode
 *               bitmaps of their groups, which the boot reads where it creates and extends files;
 *   tree-roots  the first level of each file's tree, as its inode names it: walking the trees below then finds
 *               it cached instead of reading it a block at a time (full pass only);
 *   walk-trees  (ordered; only with pf_meta_opts.walk) the tree blocks libext2fs reads one at a time, file by
 *               file in layout order, while it finds the next step's blocks: not read by the sink, only costed;
 *   dirs+trees  the layouts' directories, whole, where their inodes say (never where a layout recorded them: a
 *               reorder moves directories), and the trees of the regular files (full pass only);
 *   walk, walk-inodes, walk, ...  the directory tree of the layouts' paths, from the root, level by level: the
 *               root's blocks; then per level the inode blocks of its directories and their blocks, after which
 *               the next level's names are looked up in them (full pass only).
 * Head (before init's files are read): inodes and dirs+trees for init's files and the directories above them
 * alone (those directories' blocks, not the files' trees), with the root directory's blocks, so that opening
 * them reads nothing one seek at a time.
 * A pass stops (returning 0) at PF_META_MAX_BLOCKS blocks: metadata is small next to data, and a layout asking
 * for more is strange, not a reason to read a lot. */
#ifndef PREFETCH_EXT_META_PASS_H
#define PREFETCH_EXT_META_PASS_H

#include "block_ranges.h"
#include "format.h"

#include <ext2fs/ext2fs.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PF_META_MAX_BLOCKS (1u << 16) /* 256 MiB of 4 KiB blocks over a whole pass */

/* One step's blocks, in the order found (device blocks, where the sink's place put them). */
struct pf_meta_step {
	const char *name;
	const struct pf_brange *r;
	size_t n;
	int cost_only; /* read by libext2fs itself (opening the filesystem, walking the trees): not the pass's to
			* read, only to cost */
	int ordered;   /* read one at a time in this order, waiting for each (walk-trees) */
};

/* A layout of the pass: its files on filesystem fsi (pf_image_find_fs). */
struct pf_meta_layout {
	const struct pf_image *img;
	uint32_t fsi;
};

struct pf_meta_opts {
	const struct pf_meta_layout *ls;
	size_t nls;
	ext2_ino_t root; /* the mount's root directory (EXT2_ROOT_INO for a whole filesystem) */
	int head;        /* the head pass (above) instead of the full one */
	int walk;        /* hand the walk-trees step to the sink too */
};

struct pf_meta_sink {
	/* Read (or cost) a step; a nonzero return stops the pass and is returned (-EINTR, -E2BIG: 0). */
	int (*read)(void *arg, const struct pf_meta_step *s);
	/* Optional: where file blocks (trees, directories; not inode tables or the superblock) [start, start +
	 * count) lie when read, appended to out (the prediction after a plan: moved).  NULL: where they are. */
	int (*place)(void *arg, uint64_t start, uint64_t count, struct pf_bvec *out);
	/* Optional: blocks read with inode ino's tree besides those the filesystem names now (the prediction
	 * after a plan: the extent leaf its runs add), appended to out as they lie. */
	int (*more)(void *arg, ext2_ino_t ino, struct pf_bvec *out);
	/* Optional (head): the root directory's blocks without waiting for its inode (the replay: FIEMAP on the
	 * mount point, whose inode is always in core).  NULL: from its inode. */
	int (*root_dir)(void *arg, struct pf_bvec *out);
	/* Optional: the walk read layout directory ls[layout].img->files[file] (the data sweep need not). */
	void (*dir_read)(void *arg, size_t layout, uint32_t file);
	/* Optional: nonzero to stop between files. */
	int (*stop)(void *arg);
	void *arg;
};

/* A step as prefetchd --dump-plan prints it, one line per run after sorting and merging overlaps (not gaps: a
 * test can tell a block named, a stale directory place say, from one read only because it lies near others):
 * "m FS meta STEP BYTE 0 LENGTH -".  Sorts s's runs into tmp (grown as needed).  Returns 0 or -ENOMEM. */
int pf_meta_step_dump(FILE *f, uint32_t fsi, uint32_t block_size, const struct pf_meta_step *s, struct pf_bvec *tmp);

/* Run the pass on fs (opened by the caller; its inode reads wait for the disk unless the sink read ahead).
 * Returns 0 (also when stopped or over the budget), -ENOMEM, or the sink's error. */
int pf_meta_pass(ext2_filsys fs, const struct pf_meta_opts *o, const struct pf_meta_sink *s);

#endif
