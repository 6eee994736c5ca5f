/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Open + refuse.  Writing is allowed only when nobody else can be writing or caching the filesystem:
 *  - unmounted: the normal case (an image file, or a device at the end of shutdown);
 *  - mounted read-only, and the caller says this is the final shutdown step (allow_ro_mount): the kernel
 *    writes nothing to a read-only ext2/3/4, our writes go through the same block-device page cache it reads
 *    metadata from, and it is gone right after.  Never elsewhere: a later remount rw would trust stale
 *    cached bitmaps and extent trees.
 * And only on a clean filesystem: no errors, cleanly unmounted, no journal to replay, no orphans — a reorder
 * bypasses the journal, so the journal must be empty.
 *
 * Every refusal is decided on a read-only open.  A read-write open is not harmless: on an MMP filesystem
 * libext2fs starts the multi-mount protocol right away (writes the MMP block, sleeps twice its interval, and
 * the superblock's write counter is updated at close).  So the filesystem is opened read-only, checked and
 * planned on, and reopened read-write only when the plan has something to write. */
#include "reorder_open.h"

#include "fs_support.h"
#include "fsid.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int refuse(char *err, size_t errlen, int code, const char *fmt, const char *a, const char *b)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, a, b);
	return code;
}

/* The refusals that need no open: swap, mounted.  Sets *mflags (EXT2_MF_*). */
static int check_mount(const char *device, const struct pf_open_opts *o, int *mflags, char *err, size_t errlen)
{
	char mtpt[256] = "";
	*mflags = 0;
	errcode_t ec = ext2fs_check_mount_point(device, mflags, mtpt, sizeof(mtpt));
	if (ec)
		return refuse(err, errlen, PF_EOPEN, "%s: cannot tell whether it is mounted: %s", device,
			      pf_strerror(pf_err_from_ext2(ec)));
	if (*mflags & EXT2_MF_SWAP)
		return refuse(err, errlen, PF_EMOUNTED, "%s is in use as swap%s", device, "");
	if (o->write && (*mflags & EXT2_MF_MOUNTED)) {
		if (!(*mflags & EXT2_MF_READONLY))
			return refuse(err, errlen, PF_EMOUNTED,
				      "%s is mounted read-write on %s: unmount it first (a reorder needs the "
				      "filesystem unmounted, or read-only at the final shutdown step)", device, mtpt);
		if (!o->allow_ro_mount)
			return refuse(err, errlen, PF_EMOUNTED,
				      "%s is mounted read-only on %s: writing under a mount is only safe at the final "
				      "shutdown step (--final-shutdown); unmount it otherwise", device, mtpt);
	}
	return 0;
}

/* The first feature we cannot work with, or NULL (buf may hold the text). */
static const char *unsupported_feature(ext2_filsys fs, int write, char *buf, size_t len)
{
	if (ext2fs_has_feature_bigalloc(fs->super))
		return "bigalloc (cluster allocation)";
	if (ext2fs_has_feature_journal_dev(fs->super))
		return "journal_dev (an external journal device, not a filesystem)";
	if (ext2fs_has_feature_mmp(fs->super))
		return "mmp (multi-mount protection: the filesystem may be shared)";
	/* a read-only open accepts read-only-compatible features libext2fs does not know: it must not write them */
	uint32_t unknown = fs->super->s_feature_ro_compat & ~(uint32_t)EXT2_LIB_FEATURE_RO_COMPAT_SUPP;
	if (write && unknown) {
		snprintf(buf, len, "FEATURE_R%d (read-only compatible, unknown to this libext2fs: it must not write it)",
			 __builtin_ctz(unknown));
		return buf;
	}
	/* and compatible ones it does not know: they may keep data in blocks we would take for free, and e2fsck
	 * refuses to check such a filesystem afterwards */
	unknown = fs->super->s_feature_compat & ~(uint32_t)EXT2_LIB_FEATURE_COMPAT_SUPP;
	if (write && unknown) {
		snprintf(buf, len, "FEATURE_C%d (compatible, unknown to this libext2fs: it must not write beside it)",
			 __builtin_ctz(unknown));
		return buf;
	}
	return NULL;
}

/* Why a reorder must not start on it, or NULL. */
static const char *unclean(ext2_filsys fs, char *buf, size_t len)
{
	struct ext2_super_block *s = fs->super;
	if (s->s_state & EXT2_ERROR_FS)
		return "has errors: run fsck first";
	if (!(s->s_state & EXT2_VALID_FS))
		return "was not cleanly unmounted (or a reorder was interrupted): run fsck first";
	if (ext2fs_has_feature_journal_needs_recovery(s))
		return "has a journal that needs recovery: run fsck first";
	if (s->s_last_orphan || ext2fs_has_feature_orphan_present(s))
		return "has orphan inodes to clean up: run fsck first";
	/* the kernel counts errors as it sets EXT2_ERROR_FS; a full e2fsck clears the count, one that skips a
	 * clean filesystem does not */
	if (s->s_error_count) {
		snprintf(buf, len, "has %u error%s recorded since its last full check: run fsck -f first",
			 s->s_error_count, s->s_error_count == 1 ? "" : "s");
		return buf;
	}
	return NULL;
}

/* A device or image shorter than the superblock says (a truncated image, a shrunk partition): the blocks past
 * its end are not there to read or to move into.  Returns 0, or a refusal. */
static int check_size(ext2_filsys fs, const char *device, const struct pf_open_opts *o, char *err, size_t errlen)
{
	blk64_t have = 0;
	errcode_t ec = 0;
	if (o->size) /* a partition: its own size, not the image's */
		have = o->size / fs->blocksize;
	else
		ec = ext2fs_get_device_size2(device, (int)fs->blocksize, &have);
	if (ec)
		return refuse(err, errlen, PF_EOPEN, "%s: cannot tell its size: %s", device,
			      pf_strerror(pf_err_from_ext2(ec)));
	blk64_t want = ext2fs_blocks_count(fs->super);
	if (have < want) {
		char a[32], b[32];
		snprintf(a, sizeof(a), "%llu", (unsigned long long)have);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)want);
		if (err && errlen)
			snprintf(err, errlen, "%s is truncated: %s blocks long, its superblock says %s", device, a, b);
		return PF_EOPEN;
	}
	return 0;
}

static int refusals(ext2_filsys fs, const char *device, const struct pf_open_opts *o, char *err, size_t errlen)
{
	char buf[128];
	int rc = check_size(fs, device, o, err, errlen);
	if (rc)
		return rc;
	const char *feat = unsupported_feature(fs, o->write, buf, sizeof(buf));
	if (feat)
		return refuse(err, errlen, PF_EFEATURE, "%s: unsupported feature %s", device, feat);
	const char *why = o->write ? unclean(fs, buf, sizeof(buf)) : NULL;
	if (why)
		return refuse(err, errlen, PF_EUNCLEAN, "%s %s", device, why);
	return 0;
}

static int open_fs(const char *device, const struct pf_open_opts *o, int flags, ext2_filsys *out, char *err,
		   size_t errlen)
{
	*out = NULL;
	char io_options[48] = "";
	if (o->offset)
		snprintf(io_options, sizeof(io_options), "offset=%llu", (unsigned long long)o->offset);
	errcode_t ec = ext2fs_open2(device, io_options[0] ? io_options : NULL, flags, 0, 0,
				    o->io ? o->io : unix_io_manager, out);
	if (ec) {
		*out = NULL;
		if (ec == EXT2_ET_UNSUPP_FEATURE || ec == EXT2_ET_RO_UNSUPP_FEATURE)
			return refuse(err, errlen, PF_EFEATURE, "%s: %s (a feature this libext2fs does not know)",
				      device, pf_strerror(pf_err_from_ext2(ec)));
		struct pf_fsid id;
		char what[256], line[400];
		if (ec == EXT2_ET_BAD_MAGIC && !o->offset && pf_fsid_from_name(device, &id) == 0 && id.type[0]) {
			pf_fs_support_text(id.type, id.ndevices, 0, what, sizeof(what));
			snprintf(line, sizeof(line), "%s: the reorder is ext2/3/4 only; the boot replay still works there "
				 "(%s)", id.type, what);
			return refuse(err, errlen, PF_EOPEN, "%s: %s", device, line);
		}
		return refuse(err, errlen, PF_EOPEN, "%s: cannot open as ext2/3/4: %s", device,
			      pf_strerror(pf_err_from_ext2(ec)));
	}
	/* only the primary superblock and descriptors are rewritten, like the kernel does */
	(*out)->flags |= EXT2_FLAG_MASTER_SB_ONLY;
	(*out)->priv_data = (void *)o; /* pf_reorder_fs_offset */
	return 0;
}

uint64_t pf_reorder_fs_offset(ext2_filsys fs)
{
	return fs && fs->priv_data ? ((const struct pf_open_opts *)fs->priv_data)->offset : 0;
}

static int load_bitmaps(ext2_filsys fs, const char *device, char *err, size_t errlen)
{
	errcode_t ec = ext2fs_read_bitmaps(fs);
	if (ec)
		return refuse(err, errlen, PF_EOPEN, "%s: cannot read the bitmaps: %s", device,
			      pf_strerror(pf_err_from_ext2(ec)));
	return 0;
}

int pf_reorder_open(const char *device, const struct pf_open_opts *o, ext2_filsys *out, char *err, size_t errlen)
{
	*out = NULL;
	int mflags;
	int rc = check_mount(device, o, &mflags, err, errlen);
	if (rc)
		return rc;
	/* Neither EXT2_FLAG_RW nor EXT2_FLAG_EXCLUSIVE: libext2fs starts MMP only for those.
	 * EXT2_FLAG_JOURNAL_DEV_OK: an external journal opens, to be refused by name below. */
	ext2_filsys fs;
	rc = open_fs(device, o, EXT2_FLAG_64BITS | EXT2_FLAG_JOURNAL_DEV_OK, &fs, err, errlen);
	if (rc)
		return rc;
	rc = refusals(fs, device, o, err, errlen);
	if (!rc && !o->no_bitmaps)
		rc = load_bitmaps(fs, device, err, errlen);
	if (rc) {
		ext2fs_close_free(&fs);
		return rc;
	}
	*out = fs;
	return 0;
}

/* Whether two handles' bitmaps are the same: 1, 0, or a negative pf error. */
static int same_bitmaps(ext2_filsys a, ext2_filsys b)
{
	enum { BITS = 1 << 16 };
	unsigned char *x = malloc(BITS / 8), *y = malloc(BITS / 8);
	int same = x && y ? 1 : -ENOMEM;
	errcode_t ec = 0;
	uint64_t end = ext2fs_blocks_count(a->super);
	for (uint64_t s = a->super->s_first_data_block; same == 1 && !ec && s < end; s += BITS) {
		size_t n = end - s < BITS ? (size_t)(end - s) : BITS;
		memset(x, 0, BITS / 8);
		memset(y, 0, BITS / 8);
		ec = ext2fs_get_block_bitmap_range2(a->block_map, s, n, x);
		if (!ec)
			ec = ext2fs_get_block_bitmap_range2(b->block_map, s, n, y);
		if (!ec && memcmp(x, y, (n + 7) / 8))
			same = 0;
	}
	end = (uint64_t)a->super->s_inodes_count + 1;
	for (uint64_t s = 1; same == 1 && !ec && s < end; s += BITS) {
		size_t n = end - s < BITS ? (size_t)(end - s) : BITS;
		memset(x, 0, BITS / 8);
		memset(y, 0, BITS / 8);
		ec = ext2fs_get_inode_bitmap_range2(a->inode_map, (ext2_ino_t)s, n, x);
		if (!ec)
			ec = ext2fs_get_inode_bitmap_range2(b->inode_map, (ext2_ino_t)s, n, y);
		if (!ec && memcmp(x, y, (n + 7) / 8))
			same = 0;
	}
	free(x);
	free(y);
	return ec ? pf_err_from_ext2(ec) : same;
}

/* Whether b is the filesystem a was, as read: superblock, group descriptors, bitmaps.  Any change made
 * through the kernel or libext2fs in between (a mount, a file written, a tune2fs) shows in one of them. */
static int same_filesystem(ext2_filsys a, ext2_filsys b)
{
	if (memcmp(a->super, b->super, sizeof(*a->super)) || a->desc_blocks != b->desc_blocks ||
	    a->blocksize != b->blocksize ||
	    memcmp(a->group_desc, b->group_desc, (size_t)a->desc_blocks * a->blocksize))
		return 0;
	return same_bitmaps(a, b);
}

int pf_reorder_reopen_rw(const char *device, const struct pf_open_opts *o, ext2_filsys *fs, char *err,
			 size_t errlen)
{
	int mflags;
	int rc = check_mount(device, o, &mflags, err, errlen);
	if (rc)
		return rc;
	/* EXT2_FLAG_SKIP_MMP: an MMP filesystem was refused on the read-only handle; should one have gained MMP
	 * since, the protocol does not write its block, and the checks below refuse it */
	int flags = EXT2_FLAG_64BITS | EXT2_FLAG_RW | EXT2_FLAG_SKIP_MMP;
	struct stat st;
	/* O_EXCL on an unmounted block device: nobody mounts it while we work */
	if (!(mflags & EXT2_MF_MOUNTED) && stat(device, &st) == 0 && S_ISBLK(st.st_mode))
		flags |= EXT2_FLAG_EXCLUSIVE;
	ext2_filsys rw;
	rc = open_fs(device, o, flags, &rw, err, errlen);
	if (rc)
		return rc;
	/* Without the copy of the superblock as read, libext2fs writes the superblock whole, in one write,
	 * instead of field by field: a cut between two field writes would leave its checksum wrong and the
	 * filesystem unmountable until e2fsck -b. */
	if (rw->orig_super)
		ext2fs_free_mem(&rw->orig_super);
	rc = refusals(rw, device, o, err, errlen);
	if (!rc)
		rc = load_bitmaps(rw, device, err, errlen);
	if (!rc) {
		rc = same_filesystem(*fs, rw);
		if (rc < 0)
			refuse(err, errlen, rc, "%s: comparing the bitmaps: %s", device, pf_strerror(rc));
		else if (rc == 0)
			rc = refuse(err, errlen, -EAGAIN, "%s changed since it was checked and planned on%s: run again",
				    device, "");
		else
			rc = 0;
	}
	if (rc) {
		ext2fs_close_free(&rw); /* nothing was written: closing writes nothing either */
		return rc;
	}
	ext2fs_close_free(fs);
	*fs = rw;
	return 0;
}
