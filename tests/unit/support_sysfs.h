/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A fake sysfs tree for the unit tests of code that reads /sys (medium classes, erase blocks): directories and
 * one-line files below a root the test made (pf_test_mkdtemp).  Each function fails the test on an error. */
#ifndef PREFETCH_TEST_SUPPORT_SYSFS_H
#define PREFETCH_TEST_SUPPORT_SYSFS_H

/* mkdir -p of root/rel */
void pf_fake_sysfs_mkdirs(const char *root, const char *rel);

/* root/rel holds text (its directory must exist) */
void pf_fake_sysfs_put(const char *root, const char *rel, const char *text);

#endif
