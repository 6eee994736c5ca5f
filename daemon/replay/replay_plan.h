/* Replay planning: the work list and its orderings, as pure functions (no I/O) so that they can be unit
 * tested.  Internal to the replay_*.c files and their tests; other modules call pf_replay() only. */
#ifndef PREFETCH_REPLAY_PLAN_H
#define PREFETCH_REPLAY_PLAN_H

#include "format.h"

#include <stddef.h>
#include <stdint.h>

enum pf_ritem_kind {
	PF_RITEM_DATA = 0, /* readahead a byte range of a regular file */
	PF_RITEM_DIR = 1,  /* read a directory (getdents), unless the metadata pass pulled its blocks */
	PF_RITEM_META = 2, /* open and stat only: the boot needed the inode, not the data */
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

struct pf_rplan_opts {
	uint64_t max_bytes;       /* stop planning data after this many bytes (0 = whole layout) */
	uint64_t first_bin_bytes; /* size of the first time bin; the next ones double ... */
	uint64_t max_bin_bytes;   /* ... up to this */
};

/* Default bins: a sweep is one pass of the head over the disk, and every extra bin is one more pass (a boot set
 * of 43 MB scattered over 1 GB on the simulated 7200 rpm disk: one bin 1.28 s, bins of 16+32 MB 1.55 s, of 4, 8,
 * 16 MB 1.81 s).  So a bin holds about a second of transfer: the first 64 MiB of the boot's reads come first,
 * later bins grow to 256 MiB (the later a read is needed, the more slack there is to gather it with its
 * physical neighbours). */
#define PF_RPLAN_FIRST_BIN (64ull << 20)
#define PF_RPLAN_MAX_BIN (256ull << 20)

/* The work list in access order: one DATA item per layout extent (cut at max_bytes), one DIR item per
 * directory, one META item per file without extents, placed by first-touch rank; bins assigned; adjacent
 * pieces of the same file merged.  *items is malloc'd (NULL when empty).  Returns 0 or -ENOMEM. */
int pf_rplan_build(const struct pf_image *layout, const struct pf_rplan_opts *o, struct pf_ritem **items,
		   size_t *n);

/* Bin numbers in the current order by cumulative DATA bytes (first bin first_bytes, doubling up to max_bytes). */
void pf_rplan_assign_bins(struct pf_ritem *items, size_t n, uint64_t first_bytes, uint64_t max_bytes);

/* Sort for the rotational sweep: by bin, then filesystem, then non-data items first (they are cheap and the
 * data reads need the directories), then items whose physical place is unknown (in access order), then by
 * physical address. */
void pf_rplan_sort_physical(struct pf_ritem *items, size_t n);

/* Merge each DATA item into its predecessor when both are of the same file and bin, logically contiguous
 * and (when both are known) physically contiguous.  Returns the new count. */
size_t pf_rplan_coalesce(struct pf_ritem *items, size_t n);

/* A run of device blocks. */
struct pf_brange {
	uint64_t start, count;
};

/* Sort and merge overlapping runs and those separated by at most max_gap blocks (reading through a short
 * gap costs less than a seek).  Returns the new count. */
size_t pf_branges_normalize(struct pf_brange *r, size_t n, uint64_t max_gap);

/* Distinct blocks covered by a list of runs (sorts the list in place). */
uint64_t pf_branges_count(struct pf_brange *r, size_t n);

#endif
