/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The root filesystem inside a disk image: libblkid reads the partition table (GPT or MBR), and each partition's
 * filesystem is probed where it lies (a probe on the image's descriptor at the partition's offset). */
#include "image_root.h"

#include "error.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The discoverable partitions specification's root types (systemd's), for the machines images are built for. */
static const char *const root_types[] = {
	"4f68bce3-e8cd-4db1-96e7-fbcaf984b709", /* root, x86-64 */
	"b921b045-1df0-41c3-af44-4c6f280d3fae", /* root, arm64 */
};

/* The filesystem type found at [off, off+size) of fd ("" when none), by a libblkid superblock probe. */
static void probe_type(int fd, uint64_t off, uint64_t size, char *type, size_t len)
{
	type[0] = 0;
	blkid_probe pr = blkid_new_probe();
	if (!pr)
		return;
	if (blkid_probe_set_device(pr, fd, (blkid_loff_t)off, (blkid_loff_t)size) == 0) {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
		const char *val;
		if (blkid_do_safeprobe(pr) == 0 && blkid_probe_lookup_value(pr, "TYPE", &val, NULL) == 0)
			snprintf(type, len, "%s", val);
	}
	blkid_free_probe(pr);
}

static int is_ext(const char *type)
{
	return !strcmp(type, "ext2") || !strcmp(type, "ext3") || !strcmp(type, "ext4");
}

static int is_root_type(blkid_partition p)
{
	const char *t = blkid_partition_get_type_string(p);
	for (size_t i = 0; t && i < sizeof(root_types) / sizeof(root_types[0]); i++)
		if (!strcasecmp(t, root_types[i]))
			return 1;
	return 0;
}

struct candidates {
	int n_ext, chosen_root;
	struct pf_image_root best, root, wanted;
	int have_wanted;
	char table[8];        /* the partition table's type */
	char seen[160];       /* what the partitions hold, for the refusal: "1 vfat, 2 swap" */
};

/* One partition: its filesystem probed, kept when it is a candidate. */
static void consider(int fd, blkid_partition p, int want, const char *table, struct candidates *c)
{
	struct pf_image_root r = { .partno = blkid_partition_get_partno(p) };
	r.offset = (uint64_t)blkid_partition_get_start(p) * 512;
	r.size = (uint64_t)blkid_partition_get_size(p) * 512;
	snprintf(r.table, sizeof(r.table), "%s", table);
	probe_type(fd, r.offset, r.size, r.type, sizeof(r.type));
	size_t used = strlen(c->seen);
	snprintf(c->seen + used, sizeof(c->seen) - used, "%s%d %s", used ? ", " : "", r.partno,
		 r.type[0] ? r.type : "unknown");
	if (want && r.partno == want) {
		c->wanted = r;
		c->have_wanted = 1;
	}
	if (!is_ext(r.type))
		return;
	c->n_ext++;
	if (!c->chosen_root && is_root_type(p)) {
		c->root = r;
		c->chosen_root = 1;
	}
	if (c->n_ext == 1 || r.size > c->best.size)
		c->best = r;
}

static int choose(const char *target, int want, struct candidates *c, struct pf_image_root *out, char *err,
		  size_t errlen)
{
	if (want) {
		if (!c->have_wanted) {
			snprintf(err, errlen, "%s: no partition %d (partitions: %s)", target, want, c->seen);
			return PF_EOPEN;
		}
		if (!is_ext(c->wanted.type)) {
			snprintf(err, errlen, "%s: partition %d holds %s, not ext2/3/4: nothing changed", target, want,
				 c->wanted.type[0] ? c->wanted.type : "no filesystem known");
			return PF_EOPEN;
		}
		*out = c->wanted;
		snprintf(out->why, sizeof(out->why), "partition %d of its %s table, as asked", want, out->table);
		return 0;
	}
	if (!c->n_ext) {
		snprintf(err, errlen, "%s: no ext2/3/4 root filesystem in its %s partition table (partitions: %s): "
			 "nothing changed", target, c->table, c->seen[0] ? c->seen : "none");
		return PF_EOPEN;
	}
	if (c->chosen_root) {
		*out = c->root;
		snprintf(out->why, sizeof(out->why), "partition %d of its %s table, typed as the root", out->partno,
			 out->table);
	} else {
		*out = c->best;
		snprintf(out->why, sizeof(out->why), c->n_ext == 1 ? "partition %d of its %s table, its only ext2/3/4"
			 : "partition %d of its %s table, the largest ext2/3/4 (--partition N chooses)", out->partno,
			 out->table);
	}
	return 0;
}

/* A regular file: its partition table, or the file as a bare filesystem. */
static int find_in_file(const char *target, int fd, uint64_t fsize, int want, struct pf_image_root *out, char *err,
			size_t errlen)
{
	blkid_probe pr = blkid_new_probe();
	if (!pr || blkid_probe_set_device(pr, fd, 0, 0) != 0) {
		if (pr)
			blkid_free_probe(pr);
		snprintf(err, errlen, "%s: cannot probe it: %s", target, strerror(errno ? errno : EIO));
		return PF_EOPEN;
	}
	blkid_partlist ls = blkid_probe_get_partitions(pr);
	int n = ls ? blkid_partlist_numof_partitions(ls) : 0;
	if (n > 0) {
		blkid_parttable tab = blkid_partlist_get_table(ls);
		const char *table = tab ? blkid_parttable_get_type(tab) : "";
		struct candidates c = { 0 };
		snprintf(c.table, sizeof(c.table), "%s", table ? table : "");
		for (int i = 0; i < n; i++)
			consider(fd, blkid_partlist_get_partition(ls, i), want, table ? table : "", &c);
		blkid_free_probe(pr);
		return choose(target, want, &c, out, err, errlen);
	}
	blkid_free_probe(pr);
	memset(out, 0, sizeof(*out));
	probe_type(fd, 0, fsize, out->type, sizeof(out->type));
	if (want) {
		snprintf(err, errlen, "%s: no partition table, so no partition %d", target, want);
		return PF_EOPEN;
	}
	/* not ext2/3/4 either: the open says what it is, as for any bare image */
	snprintf(out->why, sizeof(out->why), "the whole file, a bare filesystem image");
	return 0;
}

int pf_image_root_find(const char *target, int want, struct pf_image_root *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	struct stat st;
	if (stat(target, &st) == 0 && S_ISBLK(st.st_mode)) {
		if (want) {
			snprintf(err, errlen, "%s: --partition is for disk image files; give the partition's own device",
				 target);
			return PF_EOPEN;
		}
		snprintf(out->why, sizeof(out->why), "the whole block device");
		return 0;
	}
	int fd = open(target, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot open: %s", target, strerror(e));
		return PF_EOPEN;
	}
	int rc;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: neither a block device nor an image file", target);
		rc = PF_EOPEN;
	} else {
		rc = find_in_file(target, fd, (uint64_t)st.st_size, want, out, err, errlen);
	}
	close(fd);
	return rc;
}

void pf_image_root_io_options(const struct pf_image_root *root, char *buf, size_t len)
{
	if (root->offset)
		snprintf(buf, len, "offset=%llu", (unsigned long long)root->offset);
	else if (len)
		buf[0] = 0;
}
