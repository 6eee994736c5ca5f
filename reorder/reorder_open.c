/* Open + refuse.  Writing is allowed only when nobody else can be writing or caching the filesystem:
 *  - unmounted: the normal case (an image file, or a device at the end of shutdown);
 *  - mounted read-only, and the caller says this is the final shutdown step (allow_ro_mount): the kernel
 *    writes nothing to a read-only ext2/3/4, our writes go through the same block-device page cache it reads
 *    metadata from, and it is gone right after.  Never elsewhere: a later remount rw would trust stale
 *    cached bitmaps and extent trees.
 * And only on a clean filesystem: no errors, cleanly unmounted, no journal to replay, no orphans — a reorder
 * bypasses the journal, so the journal must be empty. */
#include "reorder_open.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int refuse(char *err, size_t errlen, int code, const char *fmt, const char *a, const char *b)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, a, b);
	return code;
}

/* The first feature we cannot work with, or NULL. */
static const char *unsupported_feature(ext2_filsys fs)
{
	if (ext2fs_has_feature_bigalloc(fs->super))
		return "bigalloc (cluster allocation)";
	if (ext2fs_has_feature_journal_dev(fs->super))
		return "journal_dev (an external journal device, not a filesystem)";
	if (ext2fs_has_feature_mmp(fs->super))
		return "mmp (multi-mount protection: the filesystem may be shared)";
	return NULL;
}

int pf_reorder_open(const char *device, const struct pf_open_opts *o, ext2_filsys *out, char *err, size_t errlen)
{
	*out = NULL;
	int mflags = 0;
	char mtpt[256] = "";
	errcode_t ec = ext2fs_check_mount_point(device, &mflags, mtpt, sizeof(mtpt));
	if (ec)
		return refuse(err, errlen, PF_EOPEN, "%s: cannot tell whether it is mounted: %s", device,
			      pf_strerror(pf_err_from_ext2(ec)));
	if (mflags & EXT2_MF_SWAP)
		return refuse(err, errlen, PF_EMOUNTED, "%s is in use as swap%s", device, "");
	if (o->write && (mflags & EXT2_MF_MOUNTED)) {
		if (!(mflags & EXT2_MF_READONLY))
			return refuse(err, errlen, PF_EMOUNTED,
				      "%s is mounted read-write on %s: unmount it first (a reorder needs the "
				      "filesystem unmounted, or read-only at the final shutdown step)", device, mtpt);
		if (!o->allow_ro_mount)
			return refuse(err, errlen, PF_EMOUNTED,
				      "%s is mounted read-only on %s: writing under a mount is only safe at the final "
				      "shutdown step (--final-shutdown); unmount it otherwise", device, mtpt);
	}

	int flags = EXT2_FLAG_64BITS;
	if (o->write) {
		flags |= EXT2_FLAG_RW;
		struct stat st;
		/* O_EXCL on an unmounted block device: nobody mounts it while we work */
		if (!(mflags & EXT2_MF_MOUNTED) && stat(device, &st) == 0 && S_ISBLK(st.st_mode))
			flags |= EXT2_FLAG_EXCLUSIVE;
	}
	ext2_filsys fs = NULL;
	ec = ext2fs_open2(device, NULL, flags, 0, 0, o->io ? o->io : unix_io_manager, &fs);
	if (ec) {
		if (ec == EXT2_ET_UNSUPP_FEATURE || ec == EXT2_ET_RO_UNSUPP_FEATURE)
			return refuse(err, errlen, PF_EFEATURE, "%s: %s (a feature this libext2fs does not know)",
				      device, pf_strerror(pf_err_from_ext2(ec)));
		return refuse(err, errlen, PF_EOPEN, "%s: cannot open as ext2/3/4: %s", device,
			      pf_strerror(pf_err_from_ext2(ec)));
	}
	/* only the primary superblock and descriptors are rewritten, like the kernel does */
	fs->flags |= EXT2_FLAG_MASTER_SB_ONLY;
	/* Without the copy of the superblock as read, libext2fs writes the superblock whole, in one write,
	 * instead of field by field: a cut between two field writes would leave its checksum wrong and the
	 * filesystem unmountable until e2fsck -b. */
	if (o->write && fs->orig_super)
		ext2fs_free_mem(&fs->orig_super);

	const char *feat = unsupported_feature(fs);
	int rc = 0;
	if (feat) {
		rc = refuse(err, errlen, PF_EFEATURE, "%s: unsupported feature %s", device, feat);
		goto fail;
	}
	if (o->write) {
		const char *why = NULL;
		if (fs->super->s_state & EXT2_ERROR_FS)
			why = "has errors";
		else if (!(fs->super->s_state & EXT2_VALID_FS))
			why = "was not cleanly unmounted (or a reorder was interrupted)";
		else if (ext2fs_has_feature_journal_needs_recovery(fs->super))
			why = "has a journal that needs recovery";
		else if (fs->super->s_last_orphan || ext2fs_has_feature_orphan_present(fs->super))
			why = "has orphan inodes to clean up";
		if (why) {
			rc = refuse(err, errlen, PF_EUNCLEAN, "%s %s: run fsck first", device, why);
			goto fail;
		}
	}
	ec = ext2fs_read_bitmaps(fs);
	if (ec) {
		rc = refuse(err, errlen, PF_EOPEN, "%s: cannot read the bitmaps: %s", device,
			    pf_strerror(pf_err_from_ext2(ec)));
		goto fail;
	}
	*out = fs;
	return 0;
fail:
	ext2fs_close_free(&fs);
	return rc;
}
