/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Is this file still the one the trace recorded?  The one answer to that question: the aggregation drops such a
 * file from the layout, the replay never reads it, the reorder never moves it (and predicts the replay as the
 * replay will find it).  A file replaced since (a package upgrade writes a new one and renames it over) or
 * rewritten would make replay read stale ranges and reorder move the wrong blocks.
 *
 * The record (struct pf_file, format.h) holds the inode, generation, type, size and mtime the trace saw; the
 * caller gives what is there now (struct pf_file_now), read however it reads it: stat(2) by path or fd, or the
 * inode through libext2fs.  Whether anything is there at all (no path, a free inode) and whether the caller can
 * use what is (a device node, an inline-data inode) are the caller's questions, asked before or after this one. */
#ifndef PREFETCH_FILE_IDENTITY_H
#define PREFETCH_FILE_IDENTITY_H

#include "format.h"

#include <stdint.h>
#include <sys/stat.h>

/* A file as it is now. */
struct pf_file_now {
	uint64_t ino;
	uint32_t mode;             /* st_mode / i_mode: only its type bits (S_IFMT) count */
	uint64_t size;
	int64_t mtime_ns;
	uint32_t generation;       /* valid when generation_known */
	uint8_t generation_known;  /* stat(2) has none; an inode or FS_IOC_GETVERSION has */
	uint8_t mtime_seconds;     /* mtime known to the second only (an ext inode too small for nanoseconds) */
};

/* The answer: the same file, or the first rule it breaks (the order below). */
enum pf_identity {
	PF_ID_SAME = 0,
	PF_ID_INODE,               /* another inode (at its path) */
	PF_ID_GENERATION,          /* its inode number reused by a newer file */
	PF_ID_TYPE,                /* another type of file than the record's */
	PF_ID_NOT_REGULAR,         /* recorded as written (PF_FILE_WRITTEN), no regular file now */
	PF_ID_SIZE,                /* the same file rewritten: its size */
	PF_ID_MTIME,               /* the same file rewritten: its mtime */
	PF_ID_NR
};

/* Another file, not the same one changed: PF_ID_INODE, PF_ID_GENERATION, PF_ID_TYPE. */
static inline int pf_identity_replaced(enum pf_identity v)
{
	return v == PF_ID_INODE || v == PF_ID_GENERATION || v == PF_ID_TYPE;
}

/* How one asker's question differs, each flag for its reason (0: the aggregation's, against the record). */
/* The type that must be there is the one the replay reads the record as: a directory (getdents) when it is
 * flagged PF_FILE_DIR, else a regular file (readahead); its recorded mode is not consulted.  The replay, and the
 * reorder predicting the replay's reads. */
#define PF_ID_AS_READ     0x1u
/* A directory's size and mtime count too: the reorder moves the blocks the layout recorded of it, and only
 * while the directory is as it was (without this a directory is known by inode, generation and type: its size
 * and mtime move with every entry added, and reading it is still right). */
#define PF_ID_DIR_CONTENT 0x2u

/* Compare record rec with now, rule by rule; the first broken is the answer:
 *   1. the inode number differs: PF_ID_INODE;
 *   2. both generations known (the record's non-zero, now's generation_known) and different: PF_ID_GENERATION;
 *   3. the type differs from the expected one: the record's mode's type (none expected when the record has
 *      mode 0: no type recorded), or with PF_ID_AS_READ the one the replay reads it as: PF_ID_TYPE;
 *   4. a directory now: PF_ID_SAME, unless PF_ID_DIR_CONTENT;
 *   5. a record flagged PF_FILE_WRITTEN (the boot writes it: its size and mtime change at every boot) is known by
 *      the rules above alone: PF_ID_SAME if it is a regular file now, else PF_ID_NOT_REGULAR;
 *   6. the size differs: PF_ID_SIZE; the mtime differs: PF_ID_MTIME (when now's is known to the second only,
 *      against the record's rounded down to its second).
 * Pure: reads nothing but its arguments. */
enum pf_identity pf_file_identity(const struct pf_file *rec, const struct pf_file_now *now, unsigned how);

/* What stat(2) says of a file now (no generation). */
void pf_file_now_stat(struct pf_file_now *now, const struct stat *st);

#endif
