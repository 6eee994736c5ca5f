/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What kind of medium a block device is: rotational, slow flash (SD cards, eMMC, USB sticks: a fixed cost per
 * request, little or no parallelism) or fast flash (SATA/NVMe SSDs).  Decides how a replay reads and whether a
 * reorder is worth its writes.
 *
 * From sysfs: queue/rotational (1: rotational); otherwise slow flash when the disk is an mmcblk (SD/eMMC), sits
 * on a USB transport (its device path goes through usb*) or is removable, or when a device-mapper/md device
 * stacks on such a one; any other non-rotational disk is fast flash.  What sysfs cannot tell (a DRAM-less SSD
 * behind SATA looks like any SSD; virtual disks report what the host chose) the configuration overrides. */
#ifndef PREFETCH_MEDIUM_H
#define PREFETCH_MEDIUM_H

#include <sys/types.h>

struct pf_note;

/* The class of devno from the sysfs tree mounted at sysfs ("/sys"; tests pass a fixture): an enum pf_medium
 * (format.h), PF_MEDIUM_UNKNOWN when sysfs does not know the device.  One line noted to why (note.h; may be
 * NULL) says why, e.g. "mmcblk0: SD/eMMC". */
int pf_medium_detect(const char *sysfs, dev_t devno, struct pf_note *why);

/* Returns an enum pf_medium (format.h).  override is an enum pf_medium_override (config.h): the config
 * wins over sysfs, because virtual disks often report the wrong thing. */
int pf_medium_of_devno(dev_t devno, int override);

/* As pf_medium_of_devno, with one line noted to why (may be NULL): pf_medium_detect's, or "PREFETCH_MEDIUM"
 * when overridden. */
int pf_medium_explain(dev_t devno, int override, struct pf_note *why);

/* Log (info) the medium recorded for each filesystem of a trace, with why it is that one (the override, or
 * sysfs now): one line each, "medium of MOUNTPOINT: CLASS (WHY)". */
struct pf_image;
void pf_medium_log_image(const struct pf_image *img, int override);

/* The enum pf_medium's name as the logs and the configuration say it: rotational, slow-flash, fast-flash,
 * unknown. */
const char *pf_medium_name(int medium);

/* Whether medium is flash, slow or fast (no seeks to save; freed blocks worth discarding). */
int pf_medium_is_flash(int medium);

#endif
