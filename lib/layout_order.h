/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The layout's reading order: which items the next boot reads, in which order, and in which bin.  Both
 * programs follow it: prefetchd's replay reads in this order, prefetch-reorder lays the blocks out in it.
 *
 * The order (no flags: the replay's):
 *   - data: one DATA item per extent of a regular file, in the layout's extent order (the access order);
 *     pieces of one file that are contiguous in the file and on the disk (or both of unknown place) are one
 *     item; cut after max_bytes of data (whole pages);
 *   - items without data: one DIR item per directory (read whole) and one META item per file without data
 *     (open and stat only), by first-touch rank (ties: file index), each before the first data of a file
 *     touched after it, so a directory comes before what lies below it; those left come last, even past
 *     max_bytes (they are cheap);
 *   - bins: by cumulative DATA bytes, the first PF_LORDER_FIRST_BIN, doubling up to PF_LORDER_MAX_BIN; and
 *     the head: when the layout has init's files (PF_FILE_INIT), they get bin 0 to themselves, wherever they
 *     come, and every other item moves one bin on.  Until they are in, init cannot start.
 * The items stay in access order (the solid-state replay reads them so); the bin says in which sweep the
 * rotational replay reads them: bin by bin, bin 0 (the head) first, each bin in physical order.
 *
 * What prefetch-reorder lays out (PF_LORDER_PLACEMENT) differs on purpose: it places blocks, not reads.  Every
 * directory comes whole (a DIR item, whatever extents the layout recorded for it) before all data, by rank:
 * the metadata pass reads the layout's directories whole, by their inodes, in one sweep before the data sweep,
 * so gathered just ahead of the data they cost that sweep one short run instead of a crossing of the data per
 * level of the directory walk; each extent is its own item (the placement works extent by extent); files
 * without data have no blocks to place.  It lays out one sequence per filesystem and ignores the bins, and
 * with them the head: init's files are placed where their extents come. */
#ifndef PREFETCH_LAYOUT_ORDER_H
#define PREFETCH_LAYOUT_ORDER_H

#include "format.h"

#include <stddef.h>
#include <stdint.h>

/* Default bins: a sweep is one pass of the head over the disk, and every extra bin is one more pass (a boot set
 * of 43 MB scattered over 1 GB on the simulated 7200 rpm disk: one bin 1.28 s, bins of 16+32 MB 1.55 s, of 4, 8,
 * 16 MB 1.81 s).  So a bin holds about a second of transfer: the first 64 MiB of the boot's reads come first,
 * later bins grow to 256 MiB (the later a read is needed, the more slack there is to gather it with its
 * physical neighbours). */
#define PF_LORDER_FIRST_BIN (64ull << 20)
#define PF_LORDER_MAX_BIN (256ull << 20)

enum pf_litem_kind {
	PF_LITEM_DATA = 0, /* a byte range of a file */
	PF_LITEM_DIR = 1,  /* a directory, whole */
	PF_LITEM_META = 2, /* a file whose inode only was needed */
};

struct pf_litem {
	uint32_t file;      /* index into img->files */
	uint8_t kind;       /* enum pf_litem_kind */
	uint8_t phys_known; /* DATA: the layout says where it lies */
	uint32_t bin;
	uint64_t offset;    /* DATA: bytes in the file (0 otherwise) */
	uint64_t length;    /* DATA: bytes, > 0 (0 otherwise) */
	uint64_t physical;  /* bytes on the device by the layout's block number, when phys_known */
};

/* Flags: where an order deviates from the replay's. */
#define PF_LORDER_ONE_FS     0x1u /* only the items of files on filesystem opts.fs */
#define PF_LORDER_DIRS_FIRST 0x4u /* the items without data come before all data, by rank */
#define PF_LORDER_PIECES     0x8u /* one DATA item per extent: contiguous pieces are not merged */
#define PF_LORDER_NO_META    0x10u /* no META items */
/* What prefetch-reorder lays out (with PF_LORDER_ONE_FS). */
#define PF_LORDER_PLACEMENT (PF_LORDER_DIRS_FIRST | PF_LORDER_PIECES | PF_LORDER_NO_META)

struct pf_lorder_opts {
	unsigned flags;           /* PF_LORDER_* */
	uint32_t fs;              /* with PF_LORDER_ONE_FS: index into img->fs */
	uint64_t max_bytes;       /* stop the data after this many bytes (0 = whole layout) */
	uint64_t first_bin_bytes; /* size of the first bin (0 = PF_LORDER_FIRST_BIN); the next ones double ... */
	uint64_t max_bin_bytes;   /* ... up to this (0 = PF_LORDER_MAX_BIN) */
};

/* The items of a layout image in reading order, as above (o NULL: all defaults).  *items is malloc'd (NULL
 * when there are none).  Returns 0 or -ENOMEM. */
int pf_layout_order(const struct pf_image *img, const struct pf_lorder_opts *o, struct pf_litem **items, size_t *n);

/* Is f one of the head's files (init's: read before everything else)? */
int pf_lorder_is_head(const struct pf_file *f);

/* Is directory d (a layout path) above one of the head's files, on the same filesystem?  (Opening them looks
 * it up.) */
int pf_lorder_above_head(const struct pf_image *img, const struct pf_file *d);

/* Bin numbering: each call gives the bin of the next item, which holds data bytes of data.  A bin closes once
 * it holds its size; the first holds first_bytes, the next ones double up to max_bytes. */
struct pf_lorder_bins {
	uint32_t bin;
	uint64_t size, max, fill;
};
void pf_lorder_bins_init(struct pf_lorder_bins *b, uint64_t first_bytes, uint64_t max_bytes);
uint32_t pf_lorder_bins_next(struct pf_lorder_bins *b, uint64_t data);

#endif
