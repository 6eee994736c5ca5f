/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Is a block device rotational?  Decides between a physically sorted sweep and parallel readers. */
#ifndef PREFETCH_MEDIUM_H
#define PREFETCH_MEDIUM_H

#include <sys/types.h>

/* Returns an enum pf_medium (format.h).  override is an enum pf_medium_override (config.h): the config
 * wins over sysfs, because virtual disks often report the wrong thing. */
int pf_medium_of_devno(dev_t devno, int override);

#endif
