/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "outcome_note.h"

#include "error.h"
#include "reorder_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUTCOME_FILE_MAX (64 * 1024)

struct outcome_block {
	blk64_t blk;
	unsigned blocksize;
	size_t bytes; /* of the block that belong to the file */
};

/* Whether an inode may be written over as ours: owned by the uid running, not writable by group or others,
 * and (a file) one link only: a hard link elsewhere would carry our write into another file. */
static int ours(const struct ext2_inode *in, int file)
{
	return inode_uid(*in) == geteuid() && !(in->i_mode & 022) &&
	       (!file || in->i_links_count == 1);
}

/* The inode at path, looked up one component at a time from the root: every directory on the way a directory
 * (a symbolic link is not followed), the last one's holder ours (a trusted state directory, state_dir.h).  On
 * a refusal, the reason in err. */
static int look_up(ext2_filsys fs, const char *device, const char *path, ext2_ino_t *ino, struct ext2_inode *in,
		   char *err, size_t errlen)
{
	ext2_ino_t dir = EXT2_ROOT_INO;
	const char *p = path;
	for (;;) {
		p += strspn(p, "/");
		size_t n = strcspn(p, "/");
		if (n == 0)
			break;
		errcode_t ec = ext2fs_read_inode(fs, dir, in);
		if (!ec && !LINUX_S_ISDIR(in->i_mode)) {
			snprintf(err, errlen, "%s: %s: a component is not a directory (a symbolic link is not followed)",
				 device, path);
			return PF_ENOTREG;
		}
		if (!ec && p[n] == '\0' && !ours(in, 0)) {
			snprintf(err, errlen, "%s: %s: its directory is not owned by uid %u or is writable by others",
				 device, path, (unsigned)geteuid());
			return PF_EUNSAFE;
		}
		if (!ec)
			ec = ext2fs_lookup(fs, dir, p, (int)n, NULL, &dir);
		if (ec) {
			int rc = pf_err_from_ext2(ec);
			snprintf(err, errlen, "%s: %s: %s", device, path,
				 ec == EXT2_ET_FILE_NOT_FOUND ? "no such file" : pf_strerror(rc));
			return rc;
		}
		p += n;
	}
	*ino = dir;
	errcode_t ec = ext2fs_read_inode(fs, dir, in);
	if (ec) {
		int rc = pf_err_from_ext2(ec);
		snprintf(err, errlen, "%s: %s: %s", device, path, pf_strerror(rc));
		return rc;
	}
	return 0;
}

/* Where the file's first block is, found on a read-only open after the reorder's refusals. */
static int locate_block(const char *device, const char *path, int allow_ro_mount, struct outcome_block *out,
			char *err, size_t errlen)
{
	struct pf_open_opts oo = { .write = 1, .allow_ro_mount = allow_ro_mount, .no_bitmaps = 1 };
	ext2_filsys fs;
	int rc = pf_reorder_open(device, &oo, &fs, err, errlen);
	if (rc)
		return rc;
	ext2_ino_t ino = 0;
	struct ext2_inode inode;
	int ret_flags = 0;
	blk64_t phys = 0;
	errcode_t ec = 0;
	if ((rc = look_up(fs, device, path, &ino, &inode, err, errlen))) {
		/* the reason is in err */
	} else if (!LINUX_S_ISREG(inode.i_mode)) {
		rc = PF_ENOTREG;
		snprintf(err, errlen, "%s: %s: not a regular file", device, path);
	} else if (!ours(&inode, 1)) {
		rc = PF_ELINKED;
		snprintf(err, errlen, "%s: %s: has %u links, or is not owned by uid %u, or is writable by others: not "
			 "written", device, path, (unsigned)inode.i_links_count, (unsigned)geteuid());
	} else if (EXT2_I_SIZE(&inode) == 0 || EXT2_I_SIZE(&inode) > OUTCOME_FILE_MAX ||
		   (inode.i_flags & EXT4_INLINE_DATA_FL)) {
		rc = PF_ECORRUPT;
		snprintf(err, errlen, "%s: %s: not a prepared outcome file (size %llu%s)", device, path,
			 (unsigned long long)EXT2_I_SIZE(&inode), (inode.i_flags & EXT4_INLINE_DATA_FL) ? ", inline" : "");
	} else if ((ec = ext2fs_bmap2(fs, ino, &inode, NULL, 0, 0, &ret_flags, &phys)) != 0) {
		rc = pf_err_from_ext2(ec);
		snprintf(err, errlen, "%s: %s: cannot map its first block: %s", device, path, pf_strerror(rc));
	} else if (phys == 0 || (ret_flags & BMAP_RET_UNINIT)) {
		rc = PF_ECORRUPT;
		snprintf(err, errlen, "%s: %s: its first block is %s, not written", device, path,
			 phys ? "preallocated" : "a hole");
	} else {
		out->blk = phys;
		out->blocksize = fs->blocksize;
		out->bytes = EXT2_I_SIZE(&inode) < fs->blocksize ? EXT2_I_SIZE(&inode) : fs->blocksize;
	}
	ext2fs_close_free(&fs); /* read-only: closing writes nothing */
	return rc;
}

/* line, "\n", newlines up to the file's end within the block, zeroes after it (as past any file's end). */
static void compose_block(char *buf, const struct outcome_block *b, const char *line)
{
	memset(buf, 0, b->blocksize);
	memset(buf, '\n', b->bytes);
	size_t n = strnlen(line, PF_OUTCOME_MAX);
	if (n > b->bytes - 1)
		n = b->bytes - 1;
	memcpy(buf, line, n);
}

static int write_block(const char *device, const struct outcome_block *b, const char *buf, char *err, size_t errlen)
{
	/* O_DIRECT: past the block device's page cache, which a read-only mount may still hold; an image on
	 * tmpfs refuses it, and is written through the cache and synced instead */
	int fd = open(device, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL)
		fd = open(device, O_WRONLY | O_CLOEXEC);
	ssize_t n = -1;
	if (fd >= 0) {
		n = pwrite(fd, buf, b->blocksize, (off_t)b->blk * b->blocksize);
		if (n < 0 && errno == EINVAL) { /* O_DIRECT opened but the buffer's alignment is not the device's */
			int flags = fcntl(fd, F_GETFL);
			if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_DIRECT) == 0)
				n = pwrite(fd, buf, b->blocksize, (off_t)b->blk * b->blocksize);
		}
	}
	int rc = 0;
	if (fd < 0 || n < 0 || (size_t)n != b->blocksize || fdatasync(fd) < 0)
		rc = n >= 0 && fd >= 0 && (size_t)n != b->blocksize ? -EIO : -errno;
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
	if (rc)
		snprintf(err, errlen, "%s: writing block %llu: %s", device, (unsigned long long)b->blk, pf_strerror(rc));
	return rc;
}

int pf_outcome_note(const char *device, const char *path, const char *line, int allow_ro_mount, char *err,
		    size_t errlen)
{
	struct outcome_block b = { 0 };
	int rc = locate_block(device, path, allow_ro_mount, &b, err, errlen);
	if (rc)
		return rc;
	char *buf;
	if (posix_memalign((void **)&buf, 4096, b.blocksize)) {
		snprintf(err, errlen, "%s: %s", device, pf_strerror(-ENOMEM));
		return -ENOMEM;
	}
	compose_block(buf, &b, line);
	rc = write_block(device, &b, buf, err, errlen);
	free(buf);
	return rc;
}
