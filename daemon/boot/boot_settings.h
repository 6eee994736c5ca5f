/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The settings recorded with every boot that can change its time (boot_log.h's 0.2.0 columns): the reorder that
 * placed the layout's files and its chunk size, the disk's medium class, the kernel release, the layout's age.
 *
 * The reorder generation: $PREFETCH_DIR/reorder-placed holds one line "generation N chunk C when T": the N-th
 * shutdown reorder that moved blocks placed the layout's files, with CHUNK_SIZE_BLOCKS C (from the marker the arm
 * step writes, "... chunk C"; the configuration's when the marker has none).  It stays until a later reorder
 * moves blocks again, so every boot on a settled reordered disk (the shutdowns after it moved nothing) is
 * counted under it.  Files rewritten since (an upgrade) are not followed: their new blocks are wherever the
 * filesystem put them. */
#ifndef PREFETCH_BOOT_SETTINGS_H
#define PREFETCH_BOOT_SETTINGS_H

#include "boot_log.h"
#include "boot_state.h"
#include "config.h"

#include <stdint.h>
#include <sys/types.h>

/* The file: missing -> generation 0, chunk -1 (0 returned); unreadable or malformed -> -1, -1 and the error. */
int pf_reorder_placed_load(const char *path, int64_t *generation, int64_t *chunk);
/* Write it (atomically).  Returns 0 or a negative pf error. */
int pf_reorder_placed_save(const char *path, int64_t generation, int64_t chunk, int64_t when);

/* "chunk C" (C > 0) in the arm step's marker line: 1 with C in *chunk, or 0 when absent. */
int pf_reorder_marker_chunk(const char *line, int64_t *chunk);

/* Fill rec's settings: kernel release, medium (of the root's device dev as pf_fsid_block_device gives it, 0 when
 * not known; with the configuration's override), the generation and
 * chunk (a new generation when moved: the reorder armed at the last shutdown moved blocks), and the layout's age
 * (boots in the log since the layout was last written; -1 without one). */
void pf_boot_settings(const struct pf_boot_paths *p, const struct pf_config *cfg, dev_t dev, int moved,
		      struct pf_boot_record *rec);

/* Once a record with a new generation is appended: keep that generation (rec->reorder set).  Returns 0 or the
 * error of the write. */
int pf_boot_settings_keep(const struct pf_boot_paths *p, const struct pf_boot_record *rec);

#endif
