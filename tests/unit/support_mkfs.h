/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Filesystem images for the unit tests, made by mke2fs in the group scratch directory (support_tmpdir.h). */
#ifndef PREFETCH_TEST_SUPPORT_MKFS_H
#define PREFETCH_TEST_SUPPORT_MKFS_H

/* `mke2fs -q -F ARGS` on a fresh 8 MiB image "<pf_test_dir>/<name>".  Returns its path (a static buffer, valid
 * until the next call), or NULL when mke2fs failed. */
const char *pf_test_mkfs(const char *name, const char *args);

#endif
