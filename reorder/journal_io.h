/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reorder's metadata writes made safe against a power cut at any instant, torn writes included: an
 * io_channel stacked on the filesystem's own (pf_jio_install), through which libext2fs writes.
 *
 * Promises, once installed:
 *  - With a journal (ext3/ext4 has_journal): every metadata write (inode tables, extent and indirect blocks,
 *    bitmaps, group descriptors) is held in memory until the next io_channel_flush(fs->io) (or until a
 *    transaction is full), then, as named steps (commit() in journal_io.c):
 *      1. the superblock, with needs_recovery set, written and flushed (once per run: it stays set);
 *      2. the blocks written to the journal as one transaction, flushed, then its commit block and the journal
 *         superblock's start, flushed (journal_txn.h);
 *      3. the blocks written in place, flushed;
 *      4. the journal marked empty, flushed.
 *    A cut before the end of 2 leaves the old blocks in place (the transaction does not count); after it,
 *    `e2fsck -p` or the kernel's mount replays the transaction over whatever a cut or a tear left of 3.
 *    Reads see the held blocks.  Writes the reorder makes of file data go through pf_jio_raw(), straight to the
 *    disk (their copies are read back and verified before any pointer names them).
 *  - Without a journal (ext2) writes go to the disk as they come, in today's order (relocate.c).
 *  - The superblock is never written so that a tear can make it unreadable: its writes are held until the
 *    flush, and every one changes only its first 512 bytes.  On metadata_csum the checksum (in the last 4 of
 *    its 1024 bytes) is kept as it is on the disk by setting s_snapshot_id (a field of the never-merged
 *    snapshot feature, read by nothing when s_snapshot_inum is 0) to the value that makes the new contents
 *    checksum to it; a write torn at any sector boundary is then the old or the new superblock, both valid.
 *    e2fsck -p does not fall back to a backup superblock, and a one-group filesystem has none: this is the
 *    only way the primary stays openable.  needs_recovery is set before a transaction is written and cleared
 *    only when the filesystem is closed, after the journal is empty: never "needs_recovery clear but the journal
 *    has data" (e2fsck -p stops there for a manual fsck; the kernel discards the journal).
 *  - pf_jio_finish (or closing the filesystem) writes what is held, clears needs_recovery, flushes.
 * Functions return 0 or a negative pf error (lib/error.h). */
#ifndef PREFETCH_REORDER_JOURNAL_IO_H
#define PREFETCH_REORDER_JOURNAL_IO_H

#include <ext2fs/ext2fs.h>
#include <stddef.h>

/* Stack the channel on fs (opened read-write, nothing written yet).  With a journal this writer refuses
 * (journal_txn.h), a one-line reason in err and -ENOTSUP: nothing written. */
int pf_jio_install(ext2_filsys fs, char *err, size_t errlen);
/* The end of the run's writes: what is held committed, needs_recovery cleared, flushed (closing the filesystem
 * does the same, but libext2fs drops a channel's error at close).  0 when not installed. */
int pf_jio_finish(ext2_filsys fs);
/* The channel below: for the file data copies.  fs->io when not installed. */
io_channel pf_jio_raw(ext2_filsys fs);
/* Whether metadata goes through the journal. */
int pf_jio_journaled(ext2_filsys fs);
/* Counters since install: transactions committed, blocks journaled, superblock writes. */
void pf_jio_stats(ext2_filsys fs, unsigned long *txns, unsigned long *blocks, unsigned long *sb_writes);

/* The superblock image sb (1024 bytes, on-disk byte order) changed so that its crc32c checksum is csum: its
 * s_snapshot_id set accordingly, s_checksum = csum.  Returns 0, or -EINVAL when it cannot (s_snapshot_inum in
 * use). */
int pf_sb_keep_csum(unsigned char *sb, unsigned int csum);

#endif
