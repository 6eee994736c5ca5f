/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state directories (PREFETCH_DIR, its traces/, PREFETCH_RUNTIME_DIR and its pending/): what both programs
 * write there as root is written only where nobody else can have put a link or a file.
 *
 * A state directory is trusted when it is a directory itself (not a symbolic link to one), owned by the effective
 * uid running (root at boot; the user otherwise) and not writable by group or others.  Every function below
 * opens the directory holding its path that way, checks it, and works relative to that directory fd: the last
 * component is opened with O_NOFOLLOW, a file to write must be a regular file of ours with no other hard link,
 * new files are made with O_EXCL.  A refusal is PF_EUNSAFE (the directory) or PF_ELINKED (the file);
 * pf_state_dir_why() says what exactly is wrong, for the one line that reports it. */
#ifndef PREFETCH_STATE_DIR_H
#define PREFETCH_STATE_DIR_H

#include <dirent.h>
#include <stddef.h>

/* Open dir (O_DIRECTORY, not following a symbolic link at its last component) if it is trusted.  Returns the fd,
 * -errno (-ENOENT: missing), or PF_EUNSAFE. */
int pf_state_dir_open(const char *dir);

/* The reason of a PF_EUNSAFE: why dir is not trusted, e.g. "/x has mode 1777: writable by group or others", one
 * line into err (errlen bytes, lib/error.h; "" if it is trusted, or if it cannot be looked at: the error of the
 * failed call says that). */
void pf_state_dir_why(const char *dir, char *err, size_t errlen);

/* Make dir (the last component only, with mode) unless it exists, in a trusted parent; then it must be trusted
 * itself.  Returns 0, -errno or PF_EUNSAFE. */
int pf_state_mkdir(const char *dir, unsigned mode);

/* Open the file at path in its trusted directory: O_NOFOLLOW, O_NONBLOCK during the open (a FIFO is refused, not
 * waited on), then a regular file only (PF_ENOTREG).  Opened for writing (O_WRONLY, O_RDWR), it must also be ours
 * with a single link (PF_ELINKED).  flags may add O_CREAT (mode) or O_APPEND.  Returns the fd or a negative pf
 * error. */
int pf_state_open(const char *path, int flags, unsigned mode);

/* Read the whole state file at path as text (at most max bytes; NUL-terminated; free *text).  Returns 0 or a
 * negative pf error (-ENOENT: missing). */
int pf_state_read_text(const char *path, size_t max, char **text, size_t *len);
int pf_state_read(const char *path, size_t max, void **buf, size_t *len);

/* Replace the state file at path with buf, atomically (pf_write_atomic_at in its trusted directory).  Returns 0
 * or a negative pf error. */
int pf_state_write(const char *path, const void *buf, size_t len, unsigned mode);

/* Append one line (line, len bytes ending in '\n') to the state file at path, made (or set to) mode 0600, with
 * header (may be NULL) first when it is new or empty.  Whole or nothing: a failed or short write is cut back (ftruncate) to the size
 * before it.  A last line without its newline (an older crash) is ended first, so the new line starts on a line
 * of its own.  Returns 0 or a negative pf error. */
int pf_state_append(const char *path, const char *header, const char *line, size_t len);

/* Remove the state file at path from its trusted directory.  Returns 0 or a negative pf error (-ENOENT). */
int pf_state_unlink(const char *path);

/* Whether the state file at path exists (in a trusted directory; a symbolic link does not count): 1 or 0. */
int pf_state_exists(const char *path);

/* Open a trusted directory for listing (closedir it).  NULL with errno set (EPERM for PF_EUNSAFE). */
DIR *pf_state_opendir(const char *dir, int *err);

#endif
