/* Opening the filesystem for a reorder, with every refusal that keeps it safe. */
#ifndef PREFETCH_REORDER_OPEN_H
#define PREFETCH_REORDER_OPEN_H

#include <ext2fs/ext2fs.h>
#include <stddef.h>

/* Refusals (negative, returned with a message): */
#define PF_REORDER_EMOUNTED  (-2001) /* mounted read-write (or mounted at all, outside the final shutdown) */
#define PF_REORDER_EUNCLEAN  (-2002) /* errors, not cleanly unmounted, journal recovery or orphans: run fsck */
#define PF_REORDER_EFEATURE  (-2003) /* a feature the reorderer does not support */
#define PF_REORDER_EOPEN     (-2004) /* not an ext2/3/4 filesystem, or cannot be opened */

struct pf_open_opts {
	int write;                 /* open read-write for a reorder (else read-only: --check, --dry-run) */
	int allow_ro_mount;        /* writing under a read-only mount: only at the final shutdown step */
	io_manager io;             /* NULL = unix_io_manager */
};

/* Open device with its bitmaps loaded.  Returns 0 or a refusal / error with the reason in err. */
int pf_reorder_open(const char *device, const struct pf_open_opts *o, ext2_filsys *out, char *err, size_t errlen);

#endif
