/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Errors of prefetch: one domain, one way to turn an error into text.
 *
 * A function that can fail returns 0 (or a count, an index, an fd: its header says) or a negative pf error,
 * an int in one of three disjoint ranges:
 *   -1 .. -PF_ERRNO_MAX            -errno
 *   PF_EBADMAGIC .. PF_EEXT2_OTHER the project's own codes below (enum pf_error)
 *   PF_EEXT2_FIRST - k             libext2fs's own code EXT2_ET_BASE + k, when it has no errno equivalent
 *                                  (pf_err_from_ext2; k < PF_EEXT2_SPAN)
 * pf_strerror gives the text of any of them; a value in none of them reads "unknown error".
 *
 * Reasons travel two ways, and only these two:
 *   - an error's reason: a function that can say more than its code takes (char *err, size_t errlen) as its
 *     last parameters and, when it fails, writes one line there (no newline; "" when the code says it all) for
 *     the caller to log once, at the edge;
 *   - an explanation of a result that is no error (the medium's class, why a trace's ranges come from mincore,
 *     a parser's warnings on the lines it skips, what a reorder left in place): lines noted to a struct
 *     pf_note * (lib/note.h), which the caller keeps in a buffer or sends to the log.
 * A -1 is never returned (it reads as -EPERM): a lookup that may find nothing answers 1 or 0 with what it
 * found in an out-parameter, and a reader that may not know its figure returns a pf error with the figure in
 * an out-parameter.
 */
#ifndef PREFETCH_ERROR_H
#define PREFETCH_ERROR_H

/* Linux's MAX_ERRNO: no errno is larger. */
#define PF_ERRNO_MAX 4095

enum pf_error {
	PF_OK = 0,
	/* trace and layout files (format.h, safe_file.h) */
	PF_EBADMAGIC = -5001, /* not a prefetch trace/layout */
	PF_EVERSION = -5002,  /* written by an unknown format version */
	PF_ETRUNC = -5003,    /* shorter than its header says */
	PF_ECSUM = -5004,     /* checksum mismatch */
	PF_ETOOBIG = -5005,   /* counts or size beyond the limits */
	PF_ECORRUPT = -5006,  /* a field is out of range */
	PF_EKIND = -5007,     /* a trace where a layout was wanted, or the reverse */
	PF_EOWNER = -5008,    /* not owned by root, or group/world writable */
	PF_ENOTREG = -5009,   /* not a regular file */
	/* refusals of the reorder (reorder_open.h), returned with a message naming the reason */
	PF_EMOUNTED = -5010,  /* mounted read-write (or mounted at all, outside the final shutdown) */
	PF_EUNCLEAN = -5011,  /* errors, not cleanly unmounted, journal recovery or orphans: run fsck */
	PF_EFEATURE = -5012,  /* a feature the reorderer does not support */
	PF_EOPEN = -5013,     /* not an ext2/3/4 filesystem, or cannot be opened */
	PF_EVERIFY = -5014,   /* a copy read back from the disk differs from what was written */
	PF_EEXT2_OTHER = -5015, /* a libext2fs code from none of the tables pf_err_from_ext2 knows */
	/* the state directories (state_dir.h) */
	PF_EUNSAFE = -5016,   /* a directory that is a symbolic link, not ours, or writable by group/others */
	PF_ELINKED = -5017,   /* a file to write with other hard links, or not owned by us */
	PF_E_END = -5018,     /* one past the last own code */
};

/* libext2fs's code EXT2_ET_BASE + k is carried as PF_EEXT2_FIRST - k. */
#define PF_EEXT2_FIRST (-6000)
#define PF_EEXT2_SPAN 1000

/* Text for any value (static, never NULL, never empty; thread-safe). */
const char *pf_strerror(int err);

/* A libext2fs errcode_t (a long) in this domain: 0 stays 0; an errno passed through (the unix io manager
 * does) becomes -errno, EXT2_ET_NO_MEMORY -ENOMEM; other libext2fs codes keep their own text in the
 * PF_EEXT2_FIRST range; anything else is PF_EEXT2_OTHER.  Returns 0 or a negative pf error. */
int pf_err_from_ext2(long ec);

#endif
