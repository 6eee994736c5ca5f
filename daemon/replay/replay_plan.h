/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replay planning: the work list and its orderings, as pure functions (no I/O) so that they can be unit
 * tested.  Internal to the replay_*.c files and their tests; other modules call pf_replay() only. */
#ifndef PREFETCH_REPLAY_PLAN_H
#define PREFETCH_REPLAY_PLAN_H

#include "block_ranges.h" /* pf_brange: the metadata pass's runs */
#include "format.h"
#include "layout_order.h"

#include <stddef.h>
#include <stdint.h>

enum pf_ritem_kind {
	PF_RITEM_DATA = PF_LITEM_DATA, /* readahead a byte range of a regular file */
	PF_RITEM_DIR = PF_LITEM_DIR,   /* read a directory (getdents), unless the metadata pass pulled its blocks */
	PF_RITEM_META = PF_LITEM_META, /* open and stat only: the boot needed the inode, not the data */
};

/* Where an item's physical place comes from. */
enum pf_rphys_src {
	PF_RPHYS_NONE = 0,   /* unknown: swept in access order, before the placed items of its bin */
	PF_RPHYS_LAYOUT = 1, /* the layout's block number (stale after a reorder: only a fallback) */
	PF_RPHYS_NOW = 2,    /* FIEMAP at replay time */
};

struct pf_ritem {
	uint32_t file;     /* index into layout->files */
	uint32_t fs;       /* index into layout->fs */
	uint8_t kind;      /* enum pf_ritem_kind */
	uint8_t phys_known;
	uint8_t phys_src;  /* enum pf_rphys_src (PF_RPHYS_NONE iff !phys_known) */
	uint8_t moved;     /* FIEMAP placed it elsewhere than the layout said */
	uint32_t bin;      /* time bin: early data is swept before late data */
	uint32_t seq;      /* rank in access order */
	uint64_t offset;   /* bytes in the file */
	uint64_t length;
	uint64_t physical; /* bytes on the device, when phys_known */
};

/* The work list: the layout's reading order (layout_order.h, o as there; NULL: defaults), its items with
 * the layout's physical places (PF_RPHYS_LAYOUT), numbered in order (seq).  *items is malloc'd (NULL when
 * empty).  Returns 0 or -ENOMEM. */
int pf_rplan_build(const struct pf_image *layout, const struct pf_lorder_opts *o, struct pf_ritem **items,
		   size_t *n);

/* Sort for the rotational sweep: by bin, then filesystem, then non-data items first (they are cheap and the
 * data reads need the directories), then items whose physical place is unknown (in access order), then by
 * physical address. */
void pf_rplan_sort_physical(struct pf_ritem *items, size_t n);

/* Merge each DATA item into its predecessor (in the items' order) when both are of the same file and bin,
 * logically contiguous or overlapping and (when both are known) physically contiguous; the merged item keeps
 * the earlier seq.  pf_rplan_merge_flash's rule without holes.  Returns the new count. */
size_t pf_rplan_coalesce(struct pf_ritem *items, size_t n);

/* For slow flash, where every request costs the same wherever it lies: merge the DATA items of each file and
 * bin that lie adjacent on the device (logically and physically the same distance apart, or both unplaced)
 * with holes up to `hole` bytes between them read through; the merged item takes the earliest seq (its first
 * touch).  Other items are kept.  The result is in first-touch order (by seq).  Returns the new count. */
size_t pf_rplan_merge_flash(struct pf_ritem *items, size_t n, uint64_t hole);

#endif
