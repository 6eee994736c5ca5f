/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd status: what prefetch does on each local filesystem mounted now, and how much of the layout is on it. */
#ifndef PREFETCH_STATUS_FS_H
#define PREFETCH_STATUS_FS_H

#include <stdio.h>

/* One line per filesystem ("  /: ext4, traced, replayed, ...; 412 files in the layout"), and one per local
 * block-device mount that is not traced, with why.  layout: the layout file (may be missing). */
void pf_status_filesystems(FILE *out, const char *layout);

#endif
