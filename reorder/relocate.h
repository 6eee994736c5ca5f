/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Moving the planned units on disk, safely against a power cut at any instant (write order: relocate.c). */
#ifndef PREFETCH_REORDER_RELOCATE_H
#define PREFETCH_REORDER_RELOCATE_H

#include "plan.h"

#include "disk_model.h"
#include "error.h"

#include <ext2fs/ext2fs.h>

struct pf_reloc;

/* Mark the filesystem "not clean" (durably), then allocate every unit's destination (durably), and a spare
 * extent leaf for each inode that may outgrow its in-inode extents: the first free block after the inode's
 * first destination, outside avoid (NULL: none) while the filesystem has such a block (making room: a leaf
 * left in the window would stay in the layout's way).  inos[owner] gives each move's inode.  Returns 0 or a
 * negative pf error (lib/error.h). */
int pf_reloc_begin(ext2_filsys fs, const struct pf_plan *p, const ext2_ino_t *inos, size_t nowners,
		   const struct pf_brange *avoid, struct pf_reloc **out);

struct pf_reloc_sim;

/* How many spare extent leaves pf_reloc_begin would allocate for plan p (they come out of the free space the
 * plan did not use: the planner must leave at least that many), on the filesystem as it is, or as the runs
 * simulated in sim (NULL: none) leave it.  Returns 0 or a negative pf error (lib/error.h). */
int pf_reloc_spares_needed(ext2_filsys fs, const struct pf_plan *p, const ext2_ino_t *inos, size_t nowners,
			   const struct pf_reloc_sim *sim, uint64_t *count);

/* A simulation of complete runs, one after the other, for predictions: nothing is written, the block
 * bitmap is copied when a spare must be placed.  It follows what a run does to extent trees: an inode whose
 * extents no longer fit in the inode grows a leaf (its spare, placed as pf_reloc_begin places it), which the
 * next boot's replay reads.  A run is taken to finish and to switch each inode's moves at once: true when
 * the staging buffer holds the plan whole (pf_reloc_unit's groups; up to 512 MiB, an eighth of the free
 * memory); a file whose moves fall in two groups can overflow in between and keep a leaf not simulated.
 * Return 0 or a negative pf error. */
int pf_reloc_sim_new(ext2_filsys fs, struct pf_reloc_sim **out);
/* A complete run of plan p (pf_reloc_begin with avoid, every unit, pf_reloc_end) on the state so far. */
int pf_reloc_sim_run(struct pf_reloc_sim *s, const struct pf_plan *p, const ext2_ino_t *inos, size_t nowners,
		     const struct pf_brange *avoid);
/* The extent leaf the simulated runs added to ino (its tree grew out of the inode), or 0. */
uint64_t pf_reloc_sim_leaf(const struct pf_reloc_sim *s, ext2_ino_t ino);
void pf_reloc_sim_free(struct pf_reloc_sim *s);

/* Copy unit u (with the next units, as many as the buffer holds: their old copies read in one sweep, written,
 * flushed, read back), switch its files' block pointers to the copy (with those of the group's other units
 * whose copy verified: one flush for the group; their own calls then only report), verify.  inos[owner] gives
 * each move's inode.  On failure *partial says whether some pointers may already have been switched (the
 * filesystem then stays marked for fsck).  Returns 0 or a negative pf error (lib/error.h): PF_EVERIFY when
 * the copy read back from the disk differs from what was written (nothing switched). */
int pf_reloc_unit(struct pf_reloc *r, const struct pf_plan *p, size_t u, const ext2_ino_t *inos, int *partial);

/* deadline (pf_monotonic_s() time, 0 = none): pf_reloc_unit sizes each group of units it copies at once so
 * that the group, and the metadata writes still to come after it, end by then: the later groups at the pace
 * measured, the first at the lower of a rotational disk's pace with its seeks (20 MB/s) and the medium's best
 * verified copy (pf_disk_copy_bps of m), its writes and read-back never assumed faster than m's rates; the
 * metadata writes at what F0 and F1 took on this device (pf_reloc_begin measured them).  At least one unit. */
void pf_reloc_set_deadline(struct pf_reloc *r, double deadline, const struct pf_disk_model *m);

/* With a deadline: whether the time left is too short for another group and the metadata writes after it
 * (a run should stop before the next unit that is not staged). */
int pf_reloc_out_of_time(const struct pf_reloc *r);

/* Whether unit u's data is already written and verified (it was copied with an earlier unit's group): only
 * its pointer switch is left, which costs little; a time budget should let it finish. */
int pf_reloc_staged(const struct pf_reloc *r, size_t u);

/* Blocks of unit u (after pf_reloc_unit) whose pointers now name the new copy. */
uint64_t pf_reloc_switched(const struct pf_reloc *r, const struct pf_plan *p, size_t u);

/* Units [0, done) are complete: free the old copy of each switched block and the new copy of each other one;
 * release the destinations of the other units (with partial_unit, not those of unit done nor of the rest of
 * its group, whose pointers may have been switched with it: leaked until fsck); write everything; when
 * mark_clean, mark the filesystem clean again.
 * Frees r.  Returns 0 or a negative pf error (lib/error.h). */
int pf_reloc_end(struct pf_reloc *r, const struct pf_plan *p, size_t done, int partial_unit, int mark_clean);

#endif
