/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The erase block (see erase_block.h). */
#include "erase_block.h"

#include "disk_model.h"
#include "error.h"
#include "note.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define LOOP_MAJOR 7

/* The number in sysfs file dir/name into *v.  0, -errno (no such file), or PF_ECORRUPT (no number in it). */
static int read_ll(const char *dir, const char *name, long long *v)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int rc = fscanf(f, "%lld", v) == 1 ? 0 : PF_ECORRUPT;
	fclose(f);
	return rc;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

uint64_t pf_erase_block_sysfs(const char *sysfs, dev_t devno, uint64_t *part_start, struct pf_note *why)
{
	*part_start = 0;
	if (major(devno) == LOOP_MAJOR)
		return 0;
	char path[PATH_MAX], real[PATH_MAX], disk[PATH_MAX];
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysfs, major(devno), minor(devno));
	if (!realpath(path, real))
		return 0;
	snprintf(disk, sizeof(disk), "%s", real);
	long long start, part;
	if (read_ll(real, "partition", &part) == 0 && part > 0 && read_ll(real, "start", &start) == 0 && start >= 0) {
		*part_start = (uint64_t)start * 512;
		char *slash = strrchr(disk, '/');
		if (slash)
			*slash = 0;
	}
	static const char *const keys[] = { "queue/discard_granularity", "queue/optimal_io_size" };
	for (size_t i = 0; i < 2; i++) {
		long long v;
		if (read_ll(disk, keys[i], &v) == 0 && v >= (long long)PF_ERASE_MIN_SYSFS) {
			const char *name = strrchr(disk, '/') ? strrchr(disk, '/') + 1 : disk;
			pf_note(why, "%.40s %s", name, keys[i] + 6);
			return (uint64_t)v;
		}
	}
	return 0;
}

void pf_erase_block_find(ext2_filsys fs, const char *device, uint64_t config_bytes, int fallback,
			 struct pf_erase_block *out)
{
	memset(out, 0, sizeof(*out));
	out->blocks = 1;
	uint64_t bs = fs->blocksize, part = 0, bytes = 0;
	const struct ext2_super_block *s = fs->super;
	if (config_bytes) {
		bytes = config_bytes;
		snprintf(out->why, sizeof(out->why), "REORDER_ERASE_BLOCK_KB");
	}
	char swhy[sizeof(out->why)];
	struct pf_note sysfs_why = pf_note_into(swhy, sizeof(swhy));
	struct stat st;
	uint64_t sys = 0; /* the partition's offset counts always */
	if (stat(device, &st) == 0 && S_ISBLK(st.st_mode))
		sys = pf_erase_block_sysfs("/sys", st.st_rdev, &part, &sysfs_why);
	if (!bytes && sys) {
		bytes = sys;
		snprintf(out->why, sizeof(out->why), "%s", swhy);
	}
	if (!bytes && s->s_raid_stripe_width > 1) {
		bytes = (uint64_t)s->s_raid_stripe_width * bs;
		snprintf(out->why, sizeof(out->why), "the filesystem's RAID stripe width (%u blocks)",
			 s->s_raid_stripe_width);
	}
	if (!bytes && s->s_raid_stride > 1) {
		bytes = (uint64_t)s->s_raid_stride * bs;
		snprintf(out->why, sizeof(out->why), "the filesystem's RAID stride (%u blocks)", s->s_raid_stride);
	}
	if (!bytes && fallback) {
		bytes = PF_SD_ERASE_BLOCK;
		snprintf(out->why, sizeof(out->why), "none found: the SD model's allocation unit");
	}
	if (!bytes) {
		snprintf(out->why, sizeof(out->why), "none found");
		return;
	}
	pf_erase_block_set(out, bytes, bs, part);
}

void pf_erase_block_set(struct pf_erase_block *out, uint64_t bytes, uint64_t bs, uint64_t part_start)
{
	bytes = bytes / gcd(bytes, bs) * bs; /* a whole number of blocks */
	out->bytes = bytes;
	out->blocks = bytes / bs;
	out->phase = 0;
	/* block b lies at part_start + b*bs: it starts an erase block when (part_start/bs + b) % blocks == 0 */
	if (part_start % bs == 0)
		out->phase = (part_start / bs) % out->blocks;
	else
		snprintf(out->why + strlen(out->why), sizeof(out->why) - strlen(out->why),
			 " (the partition does not start on a block: alignment as if it did)");
}

uint64_t pf_erase_blocks_touched(const struct pf_erase_block *eb, uint64_t start, uint64_t len, uint64_t *whole)
{
	if (eb->blocks <= 1 || !len) {
		if (whole)
			*whole = len;
		return len;
	}
	uint64_t s = start + eb->phase, e = s + len, n = eb->blocks;
	uint64_t first = s / n, last = (e - 1) / n;
	if (whole) {
		uint64_t ws = (s + n - 1) / n, we = e / n; /* whole ones: [ws, we) */
		*whole = we > ws ? we - ws : 0;
	}
	return last - first + 1;
}
