/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetch-reorder: relocate a layout's blocks on an unmounted ext2/3/4 filesystem (or image) so that the
 * next boot reads them nearly sequentially.  Passes: plan (plan.c, pure) -> relocate (relocate.c) -> verify
 * (each unit's copy is read back from the disk — a separate O_DIRECT descriptor, not the page cache — and
 * compared: a mismatch abandons the unit before any pointer changes and stops the run; each block's pointer is
 * re-read after the switch).  The only descriptor besides opts->io is that read-only one.
 *
 * For the crash-injection harness and the benchmark (tests/tools/): call pf_reorder() with opts->io set to
 * a stacked io_manager.
 *  - Every write of a run goes through that manager (data, bitmaps, descriptors, inodes, extent leaves,
 *    indirect blocks, superblock); nothing is written outside it.  Durability is only assumed at
 *    io_channel_flush() (the manager's flush method).  Write order and flush points: top of relocate.c.
 *  - The superblock is always written whole, in one write_blk of 1024 bytes at 1024 (never write_byte), and
 *    only its first 512 bytes ever change (journal_io.h: on metadata_csum its checksum is kept).
 *  - With a journal, metadata blocks are written to the journal first (descriptor, blocks, commit block,
 *    journal superblock), then in place, then the journal superblock again (journal_io.h).
 *  - A pointer switch is one write per inode (depth-0 extent tree, i_block) or per extent leaf block, or one
 *    write per pointer for block-mapped files; the extent tree never changes shape except the copy-on-write
 *    growth below, nothing is allocated after F1 (an allocation attempt by libext2fs fails the run).
 *  - After an interrupted run the filesystem is marked not clean (s_state without EXT2_VALID_FS):
 *    `e2fsck -p` repairs it without questions (leaked blocks, free counts) and no file data is lost;
 *    pf_reorder() refuses it ("run fsck first") until then.
 *  - A refusal writes nothing: every one (mount state, features, MMP, not clean, layout ownership or UUID) is
 *    decided on a read-only open (reorder_open.h), and the filesystem is opened read-write only once the plan
 *    has something to move.  A refused run, --check, --dry-run and a run with nothing to move leave the image
 *    byte-identical and never wait for the MMP protocol.
 *  - After a completed run `e2fsck -fn` is clean, and a second run with the same layout moves 0 blocks and
 *    writes nothing at all (the image is byte-identical).
 *  - The time budget is checked between units (after at least one): res->complete = 0, return 0, the
 *    filesystem is consistent and clean; the next run continues (the plan skips what is in place).  Units are
 *    copied in groups sized to end by the deadline (relocate.h); a unit already copied and verified with its
 *    group still gets its pointer switch after the deadline.
 *  - A run whose plan moves nothing reads the bitmaps, the layout's inodes and extent trees only (no replay
 *    prediction) and writes nothing.
 *  - moved_blocks counts blocks whose pointer now names the new copy.  Blocks whose move could overflow a
 *    full leaf of a deep extent tree are left out of the plan (said in opts->notes); an inode whose
 *    four in-inode extents could overflow gets a spare leaf at F1 and grows copy-on-write.
 *  - The write budget (opts->write_budget_bytes) counts the units' copies (data written to their
 *    destinations, not the few metadata blocks): the run moves the longest prefix of units that fits, and
 *    stops like the time budget (res->complete = 0, res->stopped_by_write_budget).
 *  - Discard (opts->discard, flash only) runs after F5, on the final bitmap: only blocks this run freed and
 *    that are free in it (old copies of switched blocks, new copies not switched) are discarded; a cut
 *    during it leaves a clean filesystem whose free blocks may read back as zeroes.  Never under a mount
 *    (--final-shutdown): the kernel's caches may still map files to their old copies until the reboot.
 * Exit codes of the command: 0 done, 1 error/refusal, 2 usage, 3 stopped by the time or write budget. */
#ifndef PREFETCH_REORDER_H
#define PREFETCH_REORDER_H

#include <ext2fs/ext2fs.h>
#include <stdint.h>

#include "check.h"
#include "note.h"
#include "replay_cost.h"

/* The margin by which a plan's predicted replay must beat the current one before anything moves (percent of
 * the current replay's model seconds; replay_predict.h).  A config key should set it (REORDER_MIN_GAIN_PERCENT);
 * for now the command line's --min-gain does. */
#define PF_REORDER_MIN_GAIN_PERCENT 10.0

struct pf_reorder_opts {
	const char *const *layouts;  /* layout files, in priority order */
	int nlayouts;
	long chunk_blocks;           /* CHUNK_SIZE_BLOCKS (<= 0: 2000) */
	int time_budget_s;           /* REORDER_TIME_BUDGET: stop between units of work after this (<= 0: none);
	                              * at least one unit is done per run, so every run makes progress */
	int reserve_percent;         /* REORDER_FREE_RESERVE_PERCENT: free space (of the fs size) never used */
	int dry_run;                 /* plan and report, write nothing */
	int check_only;              /* --check: read-only report of the layout on disk */
	int progress;                /* call progress_cb while moving */
	int allow_any_owner;         /* tests only: skip the root-ownership check of layouts */
	io_manager io;               /* NULL = unix_io_manager; tests stack a crash-injecting one */
	/* added after the first version (zero = default): */
	int allow_ro_mount;          /* --final-shutdown: write although mounted read-only (see reorder_open.c) */
	void *ctx;                   /* passed to progress_cb */
	void (*progress_cb)(void *ctx, uint64_t done_blocks, uint64_t total_blocks);
	struct pf_note *notes;       /* one line per skipped file and other remarks (lib/note.h; may be NULL) */
	int time_budget_ms;          /* > 0: overrides time_budget_s (finer, for tests) */
	int gain_gate;               /* move only when the predicted replay gains more than min_gain_percent (0: no
	                              * gate, as before: tools and tests that drive pf_reorder() directly) */
	double min_gain_percent;
	int chunk_sweep;             /* --check: also plan with the chunk sizes of PF_CHUNK_TRIALS (result's trials) */
	/* flash (issue #17; zero = as before: the rotational rules) */
	int medium;                  /* enum pf_medium (format.h) of the target.  PF_MEDIUM_SLOW_FLASH: predicted on
	                              * the SD model, destinations in whole erase blocks (erase_block.h; chunks and
	                              * pieces rounded up to erase blocks), no seek model; PF_MEDIUM_FAST_FLASH:
	                              * predicted on the SSD model; otherwise the 7200 rpm disk */
	uint64_t erase_block_bytes;  /* REORDER_ERASE_BLOCK_KB in bytes (0 = auto); slow flash only */
	uint64_t write_budget_bytes; /* REORDER_WRITE_BUDGET_MB: a run copies at most this much (whole units, in
	                              * order; 0 = no limit) and stops cleanly before the unit that would pass it */
	int discard;                 /* on flash (slow or fast): after the run, discard the blocks it freed, through
	                              * the io channel, where the device supports it (discard.h) */
	int make_room;               /* REORDER_MAKE_ROOM (rotational only, no write budget): when the free space is
	                              * too scattered for the set, consider moving other files out of a window first
	                              * (evacuate.h); done only when the model predicts a replay faster by the
	                              * margin (min_gain_percent, at least PF_REORDER_MIN_GAIN_PERCENT without a
	                              * gate) than the plan without it */
	int layouts_are_state;       /* the layouts are $PREFETCH_DIR's own (no --layout given): read only from a
	                              * trusted state directory, not through a link (lib/state_dir.h) */
	uint64_t offset, size;       /* the filesystem's byte offset and size in device (a partition of a disk image,
	                              * image_root.h; 0, 0 = the whole device) */
};

/* The chunk sizes --check tries beside CHUNK_SIZE_BLOCKS, in blocks. */
#define PF_CHUNK_TRIALS { 250, 500, 1000, 2000, 4000, 8000, 16000 }
#define PF_MAX_CHUNK_TRIALS 8

/* What one chunk size would give on the free space and layout as they are now. */
struct pf_chunk_trial {
	long chunk_blocks;
	uint64_t units, chunks, chunks_split, chunks_failed, blocks_to_move;
	double replay_after_s;       /* the next replay predicted after this plan (model seconds) */
	double gain_percent;         /* of that over the replay now */
};

struct pf_reorder_result {
	uint64_t moved_blocks;
	uint64_t chunks, chunks_split, chunks_failed;
	uint64_t already_in_place_blocks;
	uint32_t files_skipped;      /* with reasons logged */
	int complete;                /* 0 when the time budget stopped it (the next run continues) */
	double seconds;
	/* added after the first version: */
	uint64_t layout_blocks;      /* blocks of the layout found on this filesystem */
	uint64_t planned_blocks;     /* blocks the plan moves (moved_blocks when complete) */
	uint64_t failed_blocks;      /* in chunks that did not fit in the free space minus the reserve */
	uint64_t units, units_done;
	uint64_t chunks_in_place;
	uint32_t block_size;
	uint32_t files;              /* files of the layout on this filesystem, usable */
	char skipped[256];           /* "3 changed since the layout, 1 inline data", or "" */
	int fsck_needed;             /* an error left the filesystem marked for fsck */
	struct pf_layout_figures before, after; /* now / after the plan (--check, --dry-run, and a real run) */
	uint64_t free_blocks, reserve_blocks; /* free now; never used (REORDER_FREE_RESERVE_PERCENT of the size) */
	char not_fit[192];           /* why chunks_failed > 0, e.g. "reserve: only 82 free blocks above the 1 % ...",
	                              * or "" */
	uint64_t near_blocks;        /* of already_in_place_blocks: not contiguous but near enough (plan.h) */
	int compacted;               /* the set had spread: all of it planned into one run (plan.h) */
	struct pf_cost replay_now, replay_after; /* the next replay predicted now / after the plan (replay_predict.h) */
	double gain_percent;         /* of replay_after over replay_now */
	int predicted;               /* replay_now and replay_after are set */
	int not_worth;               /* the gate held the plan back: nothing written (planned_blocks still says
	                              * what the plan would have moved) */
	struct pf_chunk_trial trials[PF_MAX_CHUNK_TRIALS]; /* chunk_sweep: one per size tried, smallest first */
	int ntrials;
	int recommended;             /* index into trials: the best predicted replay; of sizes within 1 % of it,
	                              * the one moving fewest blocks, then with fewest units */
	/* flash (issue #17): */
	char model[160];             /* the disk model the prediction used, in words (pf_disk_describe) */
	uint64_t erase_block_bytes;  /* the erase block the plan aligned to (0: none) */
	char erase_block_why[128];   /* where it came from (erase_block.h) */
	uint64_t plan_bytes, plan_erase_blocks;   /* the whole plan's copies: bytes, erase blocks they touch */
	uint64_t run_units, run_bytes, run_erase_blocks; /* of those, what this run's write budget allows */
	uint64_t written_bytes, written_erase_blocks, written_whole_erase_blocks; /* copies written */
	int stopped_by_write_budget; /* complete == 0 because of the write budget */
	uint64_t discarded_blocks, discard_requests;
	int discard_state;           /* 0 not asked (or not flash), 1 done, -1 not supported by the device, -2 not
	                              * done: mounted read-only (--final-shutdown) */
	/* making room (opts->make_room; evacuate.h) */
	int room;                    /* 0 not considered, 1 considered and not chosen (room_why), 2 chosen */
	char room_why[160];          /* why not, or "" */
	uint64_t room_start, room_len; /* the window */
	uint64_t room_blocks, room_files; /* other files' blocks the plan moves out of it, and their files */
	uint64_t room_stuck;         /* blocks in the window nothing moves (metadata, ...) */
	double room_without_s;       /* the predicted replay after the plan without making room */
	uint64_t room_moved;         /* other files' blocks moved out (the run) */
	int room_incomplete;         /* the run stopped while making room (time budget): the layout not moved */
};

/* Returns 0 (res->complete says whether everything planned was done) or a negative pf error (lib/error.h) with
 * the message in err: the refusals of reorder_open.h (PF_EMOUNTED, PF_EUNCLEAN, PF_EFEATURE, PF_EOPEN, -EAGAIN
 * "changed since it was checked"), -ENOENT "layout is for another filesystem", a file error of format.h for a
 * bad layout, PF_EVERIFY, or another. */
int pf_reorder(const char *device, const struct pf_reorder_opts *o, struct pf_reorder_result *res, char *err,
	       size_t errlen);

#endif
