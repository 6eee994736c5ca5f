/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The medium's class from sysfs (see medium.h). */
#include "medium.h"
#include "config.h"
#include "error.h"
#include "format.h"
#include "log.h"
#include "note.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

/* The number in sysfs file dir/name into *v.  0, -errno (no such file), or PF_ECORRUPT (no number in it). */
static int read_int(const char *dir, const char *name, int *v)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int rc = fscanf(f, "%d", v) == 1 ? 0 : PF_ECORRUPT;
	fclose(f);
	return rc;
}

/* Does sysfs file dir/name hold 1? */
static int says_one(const char *dir, const char *name)
{
	int v;
	return read_int(dir, name, &v) == 0 && v == 1;
}

/* Has the device at dir a request queue (a whole disk: queue/rotational readable)? */
static int has_queue(const char *dir)
{
	int v;
	return read_int(dir, "queue/rotational", &v) == 0;
}

/* The whole disk's directory of a block device's real sysfs directory: itself when it has queue/, its parent
 * for a partition.  0, or -ENOENT when neither has. */
static int disk_dir(const char *real, char *out, size_t len)
{
	snprintf(out, len, "%s", real);
	if (has_queue(out))
		return 0;
	char *slash = strrchr(out, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	return has_queue(out) ? 0 : -ENOENT;
}

/* Is the disk at dir slow flash?  1 (one line noted to why), 0.  depth bounds the walk down stacked devices. */
static int is_slow_flash(const char *dir, struct pf_note *why, int depth)
{
	const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	if (!strncmp(name, "mmcblk", 6)) {
		pf_note(why, "%s: SD/eMMC", name);
		return 1;
	}
	if (strstr(dir, "/usb")) {
		pf_note(why, "%s: on USB", name);
		return 1;
	}
	if (says_one(dir, "removable")) {
		pf_note(why, "%s: removable", name);
		return 1;
	}
	/* device-mapper, md: what they stack on */
	char sl[PATH_MAX + 16];
	snprintf(sl, sizeof(sl), "%s/slaves", dir);
	DIR *d = depth < 4 ? opendir(sl) : NULL;
	if (!d)
		return 0;
	int slow = 0;
	struct dirent *e;
	while (!slow && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[PATH_MAX + 300], real[PATH_MAX], disk[PATH_MAX], under[PF_NOTE_LINE_MAX];
		struct pf_note below = pf_note_into(under, sizeof(under));
		snprintf(p, sizeof(p), "%s/%s", sl, e->d_name);
		if (realpath(p, real) && disk_dir(real, disk, sizeof(disk)) == 0 &&
		    is_slow_flash(disk, &below, depth + 1)) {
			pf_note(why, "%s (under %s)", under, name);
			slow = 1;
		}
	}
	closedir(d);
	return slow;
}

int pf_medium_detect(const char *sysfs, dev_t devno, struct pf_note *why)
{
	char path[PATH_MAX], real[PATH_MAX], disk[PATH_MAX];
	snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysfs ? sysfs : "/sys", major(devno), minor(devno));
	if (!realpath(path, real) || disk_dir(real, disk, sizeof(disk))) {
		pf_note(why, "%u:%u: no queue in sysfs", major(devno), minor(devno));
		return PF_MEDIUM_UNKNOWN;
	}
	const char *name = strrchr(disk, '/') ? strrchr(disk, '/') + 1 : disk;
	if (says_one(disk, "queue/rotational")) {
		pf_note(why, "%s: rotational", name);
		return PF_MEDIUM_ROTATIONAL;
	}
	if (is_slow_flash(disk, why, 0))
		return PF_MEDIUM_SLOW_FLASH;
	pf_note(why, "%s: not rotational", name);
	return PF_MEDIUM_FAST_FLASH;
}

int pf_medium_explain(dev_t devno, int override, struct pf_note *why)
{
	int m = override == PF_MEDIUM_FORCE_ROTATIONAL	 ? PF_MEDIUM_ROTATIONAL
		: override == PF_MEDIUM_FORCE_FAST_FLASH ? PF_MEDIUM_FAST_FLASH
		: override == PF_MEDIUM_FORCE_SLOW_FLASH ? PF_MEDIUM_SLOW_FLASH
							 : PF_MEDIUM_UNKNOWN;
	if (m == PF_MEDIUM_UNKNOWN)
		return pf_medium_detect("/sys", devno, why);
	pf_note(why, "PREFETCH_MEDIUM");
	return m;
}

int pf_medium_of_devno(dev_t devno, int override)
{
	return pf_medium_explain(devno, override, NULL);
}

void pf_medium_log_image(const struct pf_image *img, int override)
{
	for (uint32_t i = 0; i < img->nfs; i++) {
		char why[160];
		struct pf_note n = pf_note_into(why, sizeof(why));
		(void)pf_medium_explain((dev_t)img->fs[i].dev, override, &n);
		pf_info("medium of %s: %s (%s)", img->fs[i].mountpoint ? img->fs[i].mountpoint : "?",
			pf_medium_name((int)img->fs[i].medium), why);
	}
}

int pf_medium_is_flash(int medium)
{
	return medium == PF_MEDIUM_SLOW_FLASH || medium == PF_MEDIUM_FAST_FLASH;
}

const char *pf_medium_name(int medium)
{
	switch (medium) {
	case PF_MEDIUM_ROTATIONAL: return "rotational";
	case PF_MEDIUM_SLOW_FLASH: return "slow-flash";
	case PF_MEDIUM_FAST_FLASH: return "fast-flash";
	default: return "unknown";
	}
}
