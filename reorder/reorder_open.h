/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Opening the filesystem for a reorder, with every refusal that keeps it safe, decided read-only. */
#ifndef PREFETCH_REORDER_OPEN_H
#define PREFETCH_REORDER_OPEN_H

#include <ext2fs/ext2fs.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct pf_open_opts {
	int write;                 /* checks for a reorder (else only those of a read: --check, --dry-run) */
	int allow_ro_mount;        /* writing under a read-only mount: only at the final shutdown step */
	io_manager io;             /* NULL = unix_io_manager */
	int no_bitmaps;            /* pf_reorder_open only: inodes and directories are all the caller reads */
	uint64_t offset;           /* where the filesystem starts in device, in bytes (a partition of a disk image:
	                            * image_root.h); 0 = at its start */
	uint64_t size;             /* its partition's size in bytes (0 = to the device's end) */
};

/* The byte offset in its device of a filesystem from pf_reorder_open or pf_reorder_reopen_rw (the opts the open was
 * given must outlive the handle): what a read of the device itself, not through libext2fs, adds. */
uint64_t pf_reorder_fs_offset(ext2_filsys fs);

/* Open device READ-ONLY with its bitmaps loaded (unless o->no_bitmaps), after the refusals: mounted (or, when
 * o->write, mounted at all outside the final shutdown step), a feature we cannot work with (bigalloc,
 * journal_dev, mmp, or when o->write one this libext2fs could not write), and when o->write a filesystem that
 * is not clean.  Whatever
 * it returns, nothing was written and the MMP protocol was not started (a read-only open does neither).
 * Returns 0 or a negative pf error (lib/error.h) with the reason in err: a refusal PF_EMOUNTED, PF_EUNCLEAN,
 * PF_EFEATURE, or PF_EOPEN (not an ext2/3/4 filesystem, or cannot be opened: the libext2fs error is in err). */
int pf_reorder_open(const char *device, const struct pf_open_opts *o, ext2_filsys *out, char *err, size_t errlen);

/* Once a plan made on *fs (from pf_reorder_open with o->write) has something to write: reopen device
 * read-write, without the MMP protocol (an MMP filesystem was refused), and check again, before any write,
 * the mount state, the refusals, and that the filesystem is still the one that was checked and planned on
 * (superblock, group descriptors and bitmaps as read): -EAGAIN "changed since it was planned on" otherwise.
 * On success *fs is the read-write handle (the read-only one is closed); on a refusal or error nothing was
 * written and *fs is still the read-only handle.  Returns 0 or a negative pf error with the reason in err. */
int pf_reorder_reopen_rw(const char *device, const struct pf_open_opts *o, ext2_filsys *fs, char *err,
			 size_t errlen);

#endif
