/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The erase block (see erase_block.h). */
#include "erase_block.h"

#include "disk_model.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define LOOP_MAJOR 7

static long long read_ll(const char *dir, const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long long v = -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
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

/* From sysfs: the size (0 if none) and the partition's start in bytes. */
static uint64_t from_sysfs(const char *device, uint64_t *part_start, char *why, size_t len)
{
	*part_start = 0;
	struct stat st;
	if (stat(device, &st) || !S_ISBLK(st.st_mode) || major(st.st_rdev) == LOOP_MAJOR)
		return 0;
	char path[64], real[PATH_MAX], disk[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	if (!realpath(path, real))
		return 0;
	snprintf(disk, sizeof(disk), "%s", real);
	long long start = read_ll(real, "start");
	if (read_ll(real, "partition") > 0 && start >= 0) {
		*part_start = (uint64_t)start * 512;
		char *slash = strrchr(disk, '/');
		if (slash)
			*slash = 0;
	}
	static const char *const keys[] = { "queue/discard_granularity", "queue/optimal_io_size" };
	for (size_t i = 0; i < 2; i++) {
		long long v = read_ll(disk, keys[i]);
		if (v >= (long long)PF_ERASE_MIN_SYSFS) {
			const char *name = strrchr(disk, '/') ? strrchr(disk, '/') + 1 : disk;
			snprintf(why, len, "%.40s %s", name, keys[i] + 6);
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
	char swhy[sizeof(out->why)] = "";
	uint64_t sys = from_sysfs(device, &part, swhy, sizeof(swhy)); /* the partition's offset counts always */
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
	bytes = bytes / gcd(bytes, bs) * bs; /* a whole number of blocks */
	out->bytes = bytes;
	out->blocks = bytes / bs;
	/* block b lies at part + b*bs: it starts an erase block when (part/bs + b) % blocks == 0 */
	if (part % bs == 0)
		out->phase = (part / bs) % out->blocks;
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
