/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fs_support.h"

#include <stdio.h>
#include <string.h>

void pf_fs_support(const char *type, unsigned ndevices, struct pf_fs_support *out)
{
	*out = (struct pf_fs_support){ 0 };
	if (!strcmp(type, "ext2") || !strcmp(type, "ext3") || !strcmp(type, "ext4")) {
		out->metadata = "inode tables, extent trees, directories";
		out->reorder = 1;
	} else if (!strcmp(type, "xfs")) {
		out->metadata = "inode clusters, then directories within the data sweep";
	} else if (!strcmp(type, "btrfs")) {
		out->metadata = "tree items of its files, checksums of their data";
		out->note = ndevices > 1 ? "data in btrfs logical order, which on several devices is no device's order"
					 : "data in btrfs logical order, which is the device's order on one device";
	}
}

void pf_fs_support_text(const char *type, unsigned ndevices, int with_reorder, char *buf, size_t len)
{
	struct pf_fs_support s;
	pf_fs_support(type, ndevices, &s);
	char meta[96] = "no metadata pass";
	if (s.metadata)
		snprintf(meta, sizeof(meta), "metadata pass (%s)", s.metadata);
	snprintf(buf, len, "traced, replayed, %s%s%s%s", meta,
		 !with_reorder ? "" : s.reorder ? ", reorder possible" : ", no reorder (ext2/3/4 only)",
		 s.note ? "; " : "", s.note ? s.note : "");
}
