/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "status_fs.h"

#include "error.h"
#include "format.h"
#include "fs_support.h"
#include "fsid.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SEEN 256

/* Files of the layout on the filesystem with this UUID mounted at mnt (btrfs subvolumes: the one at mnt). */
static uint32_t layout_files(const struct pf_image *l, const uint8_t uuid[16], const char *mnt)
{
	uint32_t n = 0;
	for (uint32_t f = 0; l && f < l->nfiles; f++) {
		const struct pf_fs *fs = &l->fs[l->files[f].fs];
		if (!memcmp(fs->uuid, uuid, 16) && (!(fs->flags & PF_FS_SUBVOL) || !strcmp(fs->mountpoint, mnt)))
			n++;
	}
	return n;
}

static void one(FILE *out, const struct pf_image *l, const char *dir, const char *type)
{
	struct pf_fsid id;
	int rc = pf_fsid_of_dir(dir, &id);
	if (rc) {
		fprintf(out, "  %s: %s, not traced: %s%s\n", dir, type,
			rc == -ENODATA ? "no filesystem UUID to know it by across boots" : "its UUID cannot be read: ",
			rc == -ENODATA ? "" : pf_strerror(rc));
		return;
	}
	char what[256];
	pf_fs_support_text(id.type, id.ndevices, 1, what, sizeof(what));
	fprintf(out, "  %s: %s%s, %s", dir, id.type, !strcmp(type, "btrfs") ? " subvolume" : "", what);
	if (l)
		fprintf(out, "; %u files in the layout", layout_files(l, id.uuid, dir));
	fputc('\n', out);
}

void pf_status_filesystems(FILE *out, const char *layout)
{
	struct pf_image *l = NULL;
	if (pf_image_load(layout, PF_LOAD_REQUIRE_ROOT, PF_KIND_LAYOUT, &l))
		l = NULL;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	fprintf(out, "filesystems:%s\n", f ? "" : " /proc/self/mountinfo unreadable");
	dev_t seen[MAX_SEEN];
	int nseen = 0;
	char *line = NULL;
	size_t cap = 0;
	while (f && getline(&line, &cap, f) > 0) {
		char dir[4096], type[64] = "", src[4096] = "";
		const char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*u %*u %*u:%*u %*s %4095s", dir) != 1 || sscanf(sep + 3, "%63s %4095s", type, src) != 2)
			continue;
		/* local block-device filesystems: a device node as the source, or btrfs (anonymous st_dev) */
		if (strncmp(src, "/dev/", 5) && strcmp(type, "btrfs"))
			continue;
		if (strchr(dir, '\\')) /* escaped characters: such a mount point is not worth unescaping here */
			continue;
		struct stat st;
		if (stat(dir, &st) < 0)
			continue;
		int dup = 0;
		for (int i = 0; i < nseen && !dup; i++)
			dup = seen[i] == st.st_dev;
		if (dup)
			continue; /* a bind mount of one already listed */
		if (nseen < MAX_SEEN)
			seen[nseen++] = st.st_dev;
		one(out, l, dir, type);
	}
	free(line);
	if (f)
		fclose(f);
	pf_image_free(l);
}
