/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The read plan: what the replay reads and in which order, as data, built by pure functions (no I/O).
 * prefetchd's replay (daemon/replay/) executes it, mapping the files with FIEMAP; prefetch-reorder
 * (reorder/replay_predict.c) builds it with libext2fs's mapping, as the filesystem is now or as a plan would
 * leave it.  Both hand this module a block mapper (struct pf_rplan_mapper: where each file's bytes lie) and
 * get the same items back.
 *
 * The plan of a layout:
 *   1. the work list (pf_rplan_build): the layout's reading order (layout_order.h), items numbered in it;
 *   2. the head (pf_rplan_head_first): init's files to the front, read in a sweep of their own;
 *   3. the places (pf_rplan_place): every DATA item where its blocks lie now, by the mapper, file by file in
 *      inode order; a range lying in several places apart is cut into one item per place;
 *   4. per medium: the rotational sweep (pf_rplan_sweep: sorted by bin and physical place, contiguous items
 *      coalesced) or the slow-flash reads (pf_rplan_flash: each file's adjacent ranges merged, holes up to
 *      PF_RPLAN_FLASH_HOLE read through, in first-touch order). */
#ifndef PREFETCH_READ_PLAN_H
#define PREFETCH_READ_PLAN_H

#include "disk_model.h"
#include "format.h"
#include "layout_order.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pf_ritem_kind {
	PF_RITEM_DATA = PF_LITEM_DATA, /* readahead a byte range of a regular file */
	PF_RITEM_DIR = PF_LITEM_DIR,   /* read a directory (getdents), unless the metadata pass pulled its blocks */
	PF_RITEM_META = PF_LITEM_META, /* open and stat only: the boot needed the inode, not the data */
};

/* Where an item's physical place comes from. */
enum pf_rphys_src {
	PF_RPHYS_NONE = 0,   /* unknown: swept in access order, before the placed items of its bin */
	PF_RPHYS_LAYOUT = 1, /* the layout's block number (stale after a reorder: only a fallback) */
	PF_RPHYS_NOW = 2,    /* the mapper's (FIEMAP at replay time; libext2fs in a prediction) */
};

struct pf_ritem {
	uint32_t file;     /* index into layout->files */
	uint32_t fs;       /* index into layout->fs */
	uint8_t kind;      /* enum pf_ritem_kind */
	uint8_t phys_known;
	uint8_t phys_src;  /* enum pf_rphys_src (PF_RPHYS_NONE iff !phys_known) */
	uint8_t moved;     /* the mapper placed it elsewhere than the layout said */
	uint32_t bin;      /* time bin: early data is swept before late data */
	uint32_t seq;      /* rank in access order */
	uint64_t offset;   /* bytes in the file */
	uint64_t length;
	uint64_t physical; /* bytes on the device, when phys_known */
	uint64_t mapped;   /* PF_RPHYS_NOW: bytes from physical on that the device reads for it (the rest of the
			    * range lies in holes, which read nothing; merged items: what lies between, too) */
};

/* A growable list of items. */
struct pf_rvec {
	struct pf_ritem *v;
	size_t n, cap;
};

/* Slow flash: the hole read through rather than split, what a request costs on the SD model in bytes at its
 * rate (about 26 KB), rounded up to pages.  The replay reads with it, the prediction costs with it. */
#define PF_RPLAN_FLASH_HOLE ((((uint64_t)(PF_SD_REQUEST_S * PF_SD_RATE_BPS)) + 4095) / 4096 * 4096)

/* 1. The work list: the layout's reading order (layout_order.h, o as there; NULL: defaults), its items with
 * the layout's physical places (PF_RPHYS_LAYOUT), numbered in order (seq).  *items is malloc'd (NULL when
 * empty).  Returns 0 or -ENOMEM. */
int pf_rplan_build(const struct pf_image *layout, const struct pf_lorder_opts *o, struct pf_ritem **items,
		   size_t *n);

/* 2. init's files (layout_order.h: their bin of their own) to the front, stably.  Returns how many there
 * are; 0 when they are all of the items or none (one sweep), or when there is no memory to spare. */
size_t pf_rplan_head_first(const struct pf_image *layout, struct pf_ritem *items, size_t n);

/* ---- 3. the places ---- */

/* One extent of a file as the mapper sees it (bytes); placed 0: no place a reader could seek to. */
struct pf_rplan_extent {
	uint64_t logical, length, physical;
	int placed;
};

/* Mapper results besides 0 (mapped) and negative errors (-ENOMEM stops the placing; any other: the file's
 * map is refused, its layout places stand). */
#define PF_RPLAN_UNMAPPED 1 /* no file to map (missing, changed): not counted, its items untouched */

struct pf_rplan_mapper {
	/* The extents of file (index into layout->files) over bytes [start, end), sorted by logical and not
	 * overlapping, into *x (malloc'd, freed by the caller); *covered: where the map ends when it was cut
	 * short (else end).  Returns 0, PF_RPLAN_UNMAPPED or a negative error as above. */
	int (*map)(void *arg, uint32_t file, uint64_t start, uint64_t end, struct pf_rplan_extent **x, size_t *nx,
		   uint64_t *covered);
	/* Optional: nonzero to stop placing (the rest keep the layout's places). */
	int (*stop)(void *arg);
	void *arg;
};

/* What the placing did. */
struct pf_rplan_placed {
	unsigned files, failed;  /* files mapped; of those, the mapper refused */
	unsigned now, layout;    /* data items placed by the mapper; by the layout's record (fallback) */
	unsigned moved;          /* placed elsewhere than the layout said */
	unsigned pieces;         /* pieces cut off ranges that now lie in several places */
};

/* Place the n DATA items of one file (sorted by offset, not overlapping; items before `covered` only) by the
 * extents x: each item gets the place of its first piece (PF_RPHYS_NOW; none in a hole or an extent without
 * a place; moved set when the layout said otherwise); a range lying in several places apart is cut, the
 * pieces after the first appended to more.  Returns 0 or -ENOMEM. */
int pf_rplan_place_file(struct pf_ritem *const *items, size_t n, const struct pf_rplan_extent *x, size_t nx,
			uint64_t covered, struct pf_rvec *more);

/* 3. Place the DATA items of *items (n of them) by the mapper, file by file in inode order (the layout's
 * inode numbers), adding to *placed.  Pieces cut off ranges are added: then *items and *n change to a new
 * array, also returned in *own for the caller to free (else *own is NULL).  Returns 0 or -ENOMEM. */
int pf_rplan_place(const struct pf_image *layout, const struct pf_rplan_mapper *m, struct pf_ritem **items,
		   size_t *n, struct pf_ritem **own, struct pf_rplan_placed *placed);

/* ---- 4. the passes ---- */

/* The rotational sweep of *items: placed (3), sorted (pf_rplan_sort_physical) and coalesced; *n, *items and
 * *own as in pf_rplan_place.  Returns 0 or -ENOMEM. */
int pf_rplan_sweep(const struct pf_image *layout, const struct pf_rplan_mapper *m, struct pf_ritem **items,
		   size_t *n, struct pf_ritem **own, struct pf_rplan_placed *placed);

/* The slow-flash reads of *items: placed (3), then merged (pf_rplan_merge_flash, PF_RPLAN_FLASH_HOLE); as
 * pf_rplan_sweep. */
int pf_rplan_flash(const struct pf_image *layout, const struct pf_rplan_mapper *m, struct pf_ritem **items,
		   size_t *n, struct pf_ritem **own, struct pf_rplan_placed *placed);

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

/* read_plan_dump.c: the items as text to f, one line each in their order:
 * "BIN FS KIND SRC PHYSICAL OFFSET LENGTH PATH" (KIND data|dir|meta; SRC of PHYSICAL, in bytes: now = the
 * mapper's, layout = the layout's record, none); flushed. */
void pf_rplan_dump(FILE *f, const struct pf_image *layout, const struct pf_ritem *items, size_t n);

#endif
