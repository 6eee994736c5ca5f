/* Opening the filesystem for a reorder, with every refusal that keeps it safe. */
#ifndef PREFETCH_REORDER_OPEN_H
#define PREFETCH_REORDER_OPEN_H

#include <ext2fs/ext2fs.h>
#include <stddef.h>

#include "error.h"

struct pf_open_opts {
	int write;                 /* open read-write for a reorder (else read-only: --check, --dry-run) */
	int allow_ro_mount;        /* writing under a read-only mount: only at the final shutdown step */
	io_manager io;             /* NULL = unix_io_manager */
};

/* Open device with its bitmaps loaded.  Returns 0 or a negative pf error (lib/error.h) with the reason in err:
 * a refusal PF_EMOUNTED, PF_EUNCLEAN, PF_EFEATURE, or PF_EOPEN (not an ext2/3/4 filesystem, or cannot be
 * opened: the libext2fs error is in err). */
int pf_reorder_open(const char *device, const struct pf_open_opts *o, ext2_filsys *out, char *err, size_t errlen);

#endif
