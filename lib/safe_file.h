/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Whole-file I/O with the guarantees the state files need: atomic replacement and ownership checks. */
#ifndef PREFETCH_SAFE_FILE_H
#define PREFETCH_SAFE_FILE_H

#include <stddef.h>

/* Replace path with buf: write a new temp file beside it (a random name made with O_EXCL: never a file someone
 * else created or linked there), fsync, rename over path (a symbolic link at path is replaced, not followed),
 * fsync the directory.  Either the old or the new content is there after a crash, never a mix.  No directory is
 * created.  Returns 0 or -errno; PF_ENOTREG, nothing written, where path is a device node, FIFO, socket or
 * directory (never replaced). */
int pf_write_atomic(const char *path, const void *buf, size_t len, unsigned mode);

/* pf_write_atomic of the entry name in the directory open as dfd. */
int pf_write_atomic_at(int dfd, const char *name, const void *buf, size_t len, unsigned mode);

/* The directory part of path ("." for a bare name, "/" for one in the root) into dir, the last component in
 * *base (a pointer into path).  Returns 0, -ENAMETOOLONG, or -EISDIR when path ends in '/'. */
int pf_path_split(const char *path, char *dir, size_t dirlen, const char **base);

/* The directory holding path, open (O_DIRECTORY), and its last component in *base (a pointer into path).
 * Returns the fd or -errno (-EISDIR when path ends in '/'). */
int pf_open_parent(const char *path, const char **base);

/* Open an input file for reading: refused with PF_ENOTREG, before any read and without waiting (a FIFO, a
 * device, a directory), unless it is a regular file.  Returns the fd or a negative pf error (-ENOENT: missing). */
int pf_open_input(const char *path);

/* Whether path already is a regular file of the caller (owner = effective uid), of exactly this mode, holding
 * exactly buf: 1 if so, 0 if not or if that cannot be told (missing, unreadable: then it must be written).
 * Lets a writer skip a replacement that would change nothing: on flash every rewrite costs an erase block. */
int pf_file_holds(const char *path, const void *buf, size_t len, unsigned mode);

/* Read a whole regular file of at most max bytes into a malloc'd buffer (a procfs or sysfs file, which says
 * size 0, up to max bytes).  Anything else is refused before any read (pf_open_input).
 * With require_root, refuse (PF_EOWNER) a file not owned by root or writable by group/others; a program run by
 * another user (the effective uid) also takes that user's own files (prefetch-image on an image the user owns:
 * nothing a user could write then decides what a more privileged process does).
 * Returns 0 or a negative pf error (lib/error.h): -errno, PF_ENOTREG, PF_ETOOBIG or PF_EOWNER. */
int pf_read_file(const char *path, size_t max, int require_root, void **buf, size_t *len);

/* pf_read_file of an open fd (checked as pf_read_file checks the file; read from its current offset). */
int pf_read_fd(int fd, size_t max, int require_root, void **buf, size_t *len);
int pf_read_fd_text(int fd, size_t max, int require_root, char **text, size_t *len);

/* pf_read_file for text: the content followed by a '\0' (which len does not count), in *text (free it).
 * Returns 0 or a negative pf error, as pf_read_file. */
int pf_read_text(const char *path, size_t max, int require_root, char **text, size_t *len);

/* mkdir of path itself (not of missing parents: -ENOENT then) with mode, unless it is a directory already.
 * Returns 0 or -errno. */
int pf_mkdir(const char *path, unsigned mode);

/* mkdir -p with the given mode for created components (for tests and tools: no command creates missing parents).
 * Returns 0 or -errno. */
int pf_mkdir_p(const char *path, unsigned mode);

#endif
