/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing transactions into an ext3/ext4 filesystem's own (internal) jbd2 journal, as the kernel writes them, so
 * that the boot's `e2fsck -p` or the kernel's mount replays them after a power cut (journal_io.c decides when).
 *
 * Promises:
 *  - Only the journal's blocks are written (its inode's blocks, looked up once at pf_jtxn_open), through the
 *    raw channel given (never the filesystem's own metadata).
 *  - A transaction is written at the journal's first block with the sequence the journal superblock expects
 *    next: descriptor blocks (tags as the journal's features say: 32- or 64-bit block numbers, checksum v2 or
 *    v3 tags with the descriptor tail checksum, data blocks beginning with the jbd2 magic escaped), its blocks,
 *    then - after a flush - the commit block (with its checksum under v2/v3) together with the journal
 *    superblock's s_start pointing at it, flushed.  Until that last flush the transaction does not count; after
 *    it, replay writes every block of it.
 *  - The journal superblock is changed only in its first 512 bytes (s_sequence, s_start and the checksum at
 *    0xFC are all there), so a write of it torn at any sector boundary is the old one or the new one.
 *  - pf_jtxn_empty marks the journal empty again (s_start 0, the sequence moved on so the blocks just written
 *    can never be replayed again), flushed.
 *  - Journals this does not know how to write are refused at open (-ENOTSUP, with the reason): an external
 *    journal, a journal block size other than the filesystem's, fast commit, unknown incompatible features,
 *    a journal not empty (s_start != 0).
 * Every function returns 0 or a negative pf error (lib/error.h). */
#ifndef PREFETCH_REORDER_JOURNAL_TXN_H
#define PREFETCH_REORDER_JOURNAL_TXN_H

#include <ext2fs/ext2fs.h>
#include <stddef.h>
#include <stdint.h>

struct pf_jtxn;

/* fs: the filesystem (its journal inode and superblock fields); raw: the channel that writes to the disk (block
 * size fs->blocksize).  err (errlen bytes) says why a journal is refused (lib/error.h). */
int pf_jtxn_open(ext2_filsys fs, io_channel raw, struct pf_jtxn **out, char *err, size_t errlen);
/* The most filesystem blocks one transaction holds. */
size_t pf_jtxn_capacity(const struct pf_jtxn *j);
/* Write blocks blk[i] (contents data[i], fs->blocksize bytes each) as one committed transaction (n <=
 * capacity, n > 0). */
int pf_jtxn_commit(struct pf_jtxn *j, const uint64_t *blk, char *const *data, size_t n);
/* The transaction is in place: the journal is empty again. */
int pf_jtxn_empty(struct pf_jtxn *j);
void pf_jtxn_close(struct pf_jtxn *j);

#endif
