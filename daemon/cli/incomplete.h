/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one warning every command gives when the trace it stored is incomplete (lib/format.h PF_IMG_*): which
 * reasons, so an admin sees why the next layout may be thinner than the boot. */
#ifndef PREFETCH_CLI_INCOMPLETE_H
#define PREFETCH_CLI_INCOMPLETE_H

#include "format.h"

/* Logs "trace PATH is <reasons>" at warning level when img is flagged incomplete; nothing otherwise. */
void pf_warn_if_incomplete(const struct pf_image *img, const char *path);

#endif
