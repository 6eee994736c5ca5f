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
		   const struct pf_run *avoid, struct pf_reloc **out);

/* How many spare extent leaves pf_reloc_begin would allocate for plan p (they come out of the free space the
 * plan did not use: the planner must leave at least that many).  Returns 0 or a negative pf error
 * (lib/error.h). */
int pf_reloc_spares_needed(ext2_filsys fs, const struct pf_plan *p, const ext2_ino_t *inos, size_t nowners,
			   uint64_t *count);

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
