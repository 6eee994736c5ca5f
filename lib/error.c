/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "error.h"

#include <errno.h>
#include <string.h>

#include <ext2fs/ext2_err.h> /* et_ext2_error_table: libext2fs's own messages */

#define AT(code) [PF_EBADMAGIC - (code)]
static const char *const own_text[] = {
	AT(PF_EBADMAGIC) = "not a prefetch trace or layout (bad magic)",
	AT(PF_EVERSION) = "unsupported format version",
	AT(PF_ETRUNC) = "file is truncated",
	AT(PF_ECSUM) = "checksum mismatch (file is corrupt)",
	AT(PF_ETOOBIG) = "file is larger than the format limits",
	AT(PF_ECORRUPT) = "file is corrupt (field out of range)",
	AT(PF_EKIND) = "wrong kind of file (trace where a layout was expected, or the reverse)",
	AT(PF_EOWNER) = "refused: not owned by root or writable by group/others",
	AT(PF_ENOTREG) = "not a regular file",
	AT(PF_EMOUNTED) = "the filesystem is mounted",
	AT(PF_EUNCLEAN) = "the filesystem is not clean: run fsck first",
	AT(PF_EFEATURE) = "the filesystem uses a feature the reorder does not support",
	AT(PF_EOPEN) = "not an ext2/3/4 filesystem, or it cannot be opened",
	AT(PF_EVERIFY) = "the copy read back from the disk differs from what was written",
	AT(PF_EEXT2_OTHER) = "unexpected error code from libext2fs",
	AT(PF_EUNSAFE) = "refused: a symbolic link, not owned by the running user, or writable by group/others",
	AT(PF_ELINKED) = "refused: a file with other hard links, or not owned by the running user",
};
_Static_assert(sizeof(own_text) / sizeof(own_text[0]) == (size_t)(PF_EBADMAGIC - PF_E_END),
	       "every own code has its text");

const char *pf_strerror(int err)
{
	if (err == 0)
		return "success";
	if (err < 0 && err >= -PF_ERRNO_MAX) {
		/* strerror's text without its "Unknown error N" for numbers it does not know */
		const char *s = strerrordesc_np(-err);
		return s ? s : "unknown error";
	}
	if (err <= PF_EBADMAGIC && err > PF_E_END)
		return own_text[PF_EBADMAGIC - err];
	if (err <= PF_EEXT2_FIRST && err > PF_EEXT2_FIRST - PF_EEXT2_SPAN &&
	    PF_EEXT2_FIRST - err < et_ext2_error_table.n_msgs)
		return et_ext2_error_table.msgs[PF_EEXT2_FIRST - err];
	return "unknown error";
}

int pf_err_from_ext2(long ec)
{
	if (ec == 0)
		return 0;
	if (ec > 0 && ec <= PF_ERRNO_MAX)
		return (int)-ec;
	if (ec == EXT2_ET_NO_MEMORY)
		return -ENOMEM;
	/* the rest keep libext2fs's text: "short read" says an image ends early, where -EIO would not */
	long k = ec - et_ext2_error_table.base;
	if (k >= 0 && k < et_ext2_error_table.n_msgs && k < PF_EEXT2_SPAN)
		return PF_EEXT2_FIRST - (int)k;
	return PF_EEXT2_OTHER;
}
