/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The on-disk format of traces and layouts, shared by prefetchd and prefetch-reorder.
 *
 * One versioned, little-endian, fixed-width format serves both kinds of file:
 *
 *   header (64 bytes)      magic "PREFETCH", version, kind, counts, flags, created, crc32c
 *   fs records (48 each)   filesystem UUID, st_dev, block size, medium, mount point, flags
 *   file records (80 each) identity (fs, inode, generation, size, mtime, ctime), path, first touch
 *   extent records (32)    file index, byte offset, byte length, physical block — in access order
 *   string table           NUL-terminated paths and mount points
 *
 * The order of the extent array *is* the access order: replay walks it (or sorts it by physical
 * block), reorder lays the blocks out in it.  A whole file is read into memory and every field is
 * validated before anyone sees it; files are written atomically (temp + fsync + rename).
 */
#ifndef PREFETCH_FORMAT_H
#define PREFETCH_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h" /* PF_E* codes returned below */

#define PF_FORMAT_VERSION 1u

enum pf_kind { PF_KIND_TRACE = 1, PF_KIND_LAYOUT = 2 };

/* The medium's class (lib/medium.h).  SLOW_FLASH (3) came after version 1's first files: a reader older than it
 * refuses a file that records it (a downgrade only; older files read as before). */
enum pf_medium {
	PF_MEDIUM_UNKNOWN = 0,
	PF_MEDIUM_ROTATIONAL = 1,
	PF_MEDIUM_FAST_FLASH = 2, /* SATA/NVMe SSDs (and any non-rotational disk not known to be slow) */
	PF_MEDIUM_SOLID = PF_MEDIUM_FAST_FLASH, /* its older name */
	PF_MEDIUM_SLOW_FLASH = 3, /* SD cards, eMMC, USB sticks */
	PF_MEDIUM_MAX = PF_MEDIUM_SLOW_FLASH,
};

/* Header flags.  PF_IMG_INCOMPLETE is set whenever the trace misses something; the bits after it say why.
 * Files written before the reason bits existed (same version 1: they were reserved as zero) carry the
 * summary bit alone, meaning "events lost or cut short"; readers ignore bits they do not know, so adding a
 * reason needs no version change. */
#define PF_IMG_INCOMPLETE  0x1u  /* the trace is missing files the boot opened (any of the reasons below) */
#define PF_IMG_EVENTS_LOST 0x2u  /* fanotify events lost (queue overflow, an event the kernel could not open) */
#define PF_IMG_FILE_CAP    0x4u  /* the file cap (max_files, the format's bounds) was reached: later files left out */
#define PF_IMG_FS_GONE     0x8u  /* a traced filesystem went away during tracing (PF_FS_GONE on its record) */
#define PF_IMG_TIMED_OUT   0x10u /* tracing was cut by its time-out (TRACE_TIMEOUT), not ended by 'stop' */
#define PF_IMG_REASONS     (PF_IMG_EVENTS_LOST | PF_IMG_FILE_CAP | PF_IMG_FS_GONE | PF_IMG_TIMED_OUT)

/* Filesystem flags. */
#define PF_FS_GONE         0x1u  /* unmounted during tracing: this trace's view of it ends there (trace only) */
/* Where its files' page ranges came from (trace only; both bits clear in files written before they existed, which
 * all used mincore; readers ignore bits they do not know, so these need no version change):
 *   PF_FS_PAGES_TRACED  the pages the boot asked for, from the page-cache tracepoints (mm_filemap_get_pages,
 *                       mm_filemap_map_pages, mm_filemap_fault): kernel readahead beyond them is left out;
 *   neither             the pages resident at the end of tracing (mincore): readahead and replay included;
 *   PF_FS_PAGES_LOST    the tracepoints were on but events were lost (ring buffer overrun): mincore instead. */
#define PF_FS_PAGES_TRACED 0x2u
#define PF_FS_PAGES_LOST   0x4u
/* One mounted subvolume of a btrfs filesystem (trace and layout): several records may share its UUID, told apart
 * by mount point; its files are checked against the subvolume's st_dev.  Readers that do not know it see one
 * record per UUID as before (the first). */
#define PF_FS_SUBVOL       0x8u
/* Listed, not traced: a local block-device filesystem without a UUID to know it by across boots (uuid all zero,
 * no files).  Readers that do not know it see a filesystem with no files. */
#define PF_FS_SKIPPED      0x10u

/* File flags. */
#define PF_FILE_DIR        0x1u  /* a directory the boot looked up (replay reads it, reorder may move it) */
#define PF_FILE_EXEC       0x2u  /* opened for execution */
#define PF_FILE_METADATA   0x4u  /* only its inode/metadata was needed (no data ranges) */
#define PF_FILE_INIT       0x8u  /* mapped by init (PID 1) when tracing ended: loaded before anything else ran */
/* Written while the boot was traced (a log the boot appends to, a state file it rewrites in place): its size and
 * mtime change at every boot, so aggregate and replay know it by inode and generation alone, and read what of it
 * is there (reorder leaves it where it is).  Readers that do not know it see a changed file, as before. */
#define PF_FILE_WRITTEN    0x10u

/* Extent flags. */
#define PF_EXT_PHYS_KNOWN  0x1u  /* physical is valid */

/* Limits that bound memory on read; a file claiming more is refused as oversized. */
#define PF_MAX_FS        64u
#define PF_MAX_FILES     (1u << 20)
#define PF_MAX_EXTENTS   (1u << 23)
#define PF_MAX_STRTAB    (64u << 20)
#define PF_MAX_PATH      4096u

struct pf_fs {
	uint8_t uuid[16];          /* filesystem UUID as in the superblock (all zero: unknown) */
	uint64_t dev;              /* st_dev at trace time (changes across boots; informational) */
	uint32_t block_size;
	uint32_t medium;           /* enum pf_medium */
	char *mountpoint;          /* where it was mounted when traced, e.g. "/" */
	uint32_t flags;            /* PF_FS_* */
};

struct pf_file {
	uint32_t fs;               /* index into fs[] */
	uint32_t flags;            /* PF_FILE_* */
	uint64_t ino;
	uint32_t generation;       /* i_generation, 0 if unknown */
	uint32_t mode;             /* st_mode */
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
	uint64_t first_ns;         /* first touch, ns since trace start (layout: mean over boots) */
	uint32_t first_order;      /* 1-based rank of first touch (layout: merged rank) */
	uint32_t boots;            /* traces this file appeared in (trace: 1) */
	char *path;                /* absolute path at trace time */
};

struct pf_extent {
	uint32_t file;             /* index into files[] */
	uint32_t flags;            /* PF_EXT_* */
	uint64_t offset;           /* bytes, page aligned */
	uint64_t length;           /* bytes */
	uint64_t physical;         /* fs block of offset, if PF_EXT_PHYS_KNOWN */
};

struct pf_image {
	uint32_t kind;             /* enum pf_kind */
	uint32_t flags;            /* PF_IMG_* */
	uint64_t created;          /* unix seconds */
	uint32_t boots;            /* traces merged (trace: 1) */
	uint32_t lost_events;      /* fanotify events lost while tracing (overflows, unreadable events) */
	uint32_t nfs, nfiles, nextents;
	struct pf_fs *fs;
	struct pf_file *files;
	struct pf_extent *extents;
	/* growth capacity for the builder functions */
	uint32_t cap_fs, cap_files, cap_extents;
};

/* Building.  Strings are copied.  Return an index (>= 0) or a negative pf error (lib/error.h). */
struct pf_image *pf_image_new(enum pf_kind kind);
void pf_image_free(struct pf_image *img);
int pf_image_add_fs(struct pf_image *img, const struct pf_fs *fs);
int pf_image_add_file(struct pf_image *img, const struct pf_file *file);
int pf_image_add_extent(struct pf_image *img, const struct pf_extent *ext);
/* The fs with this UUID: 1 with its index in *fsi, or 0 when the image names none. */
int pf_image_find_fs(const struct pf_image *img, const uint8_t uuid[16], uint32_t *fsi);

/* Serialise to / parse from memory.  pf_image_encode returns a malloc'd buffer.  Both return 0 or a negative
 * pf error (lib/error.h). */
int pf_image_encode(const struct pf_image *img, void **buf, size_t *len);
int pf_image_decode(const void *buf, size_t len, struct pf_image **out);

/* Load options. */
#define PF_LOAD_REQUIRE_ROOT  0x1u  /* refuse unless owned by root and not group/world writable */
#define PF_LOAD_STATE         0x2u  /* a state file: in a trusted directory, not through a link (state_dir.h) */

/* Read and validate a file.  want_kind 0 accepts either kind.  Returns 0 or a negative pf error (lib/error.h). */
int pf_image_load(const char *path, unsigned opts, uint32_t want_kind, struct pf_image **out);
/* Write atomically, mode 0600 (a trace or layout lists the files a user opened), owned by the caller (root when
 * run as a service).  Returns 0 or a negative pf error (lib/error.h). */
int pf_image_save(const char *path, const struct pf_image *img);
/* pf_image_save of a state file: into its trusted directory only (state_dir.h: PF_EUNSAFE otherwise). */
int pf_image_save_state(const char *path, const struct pf_image *img);
/* pf_image_save_state of a layout, unless the file at path already holds it but for the creation time (the header's
 * "created") and the files' mean first-touch times (first_ns: in a layout only shown by dump, the order is
 * first_ns' rank, first_order, which does count; being means of nanosecond timings they differ after every
 * boot): then nothing is written and 1 returned, and the file keeps its mtime, its "created" and those times,
 * which so say when that content was first made.  0 when written.  Returns PF_EKIND for a trace, or a negative
 * pf error (lib/error.h) if the write fails. */
int pf_layout_save_changed(const char *path, const struct pf_image *layout);

/* Totals for summaries. */
uint64_t pf_image_bytes(const struct pf_image *img);

/* The header flags in words, for dumps and log lines: "none", or "incomplete (" the reasons ")", e.g.
 * "incomplete (12 events lost, file cap reached, filesystem /boot gone, timed out)".  An old file's bare
 * PF_IMG_INCOMPLETE reads "N events lost" or "cut short".  Always NUL-terminated (cut to len). */
void pf_image_flags_text(const struct pf_image *img, char *buf, size_t len);

#endif
