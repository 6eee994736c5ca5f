/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slow flash (SD cards, eMMC, USB sticks): no seeks, but a fixed cost per request and little parallelism, so
 * the fewer and larger the requests the better, and the order may stay the boot's.  Each file's ranges that lie
 * adjacent on the device are merged (a small hole costs less to read through than a request of its own), then
 * read in first-touch order by two readers: one keeps the device busy while the other waits in open() or for a
 * mapping block. */
#include "replay_internal.h"

#include "disk_model.h"

#include <stdlib.h>

/* The hole read through rather than split: what a request costs on the SD model, in bytes at its rate (about
 * 26 KB), rounded up to pages. */
#define PF_REPLAY_FLASH_HOLE ((((uint64_t)(PF_SD_REQUEST_S * PF_SD_RATE_BPS)) + 4095) / 4096 * 4096)

int pf_replay_flash(struct pf_rctx *c, struct pf_ritem *items, size_t n)
{
	if (!n)
		return 0;
	struct pf_ritem *own = NULL;
	int rc = pf_replay_place(c, &items, &n, &own);
	if (rc)
		return rc;
	n = pf_rplan_merge_flash(items, n, PF_REPLAY_FLASH_HOLE);
	pf_replay_dump_plan(c, items, n);
	struct pf_rpar *par = NULL;
	rc = pf_replay_parallel_start(c, items, n, PF_REPLAY_FLASH_READERS, &par);
	pf_replay_parallel_join(par);
	free(own);
	return rc;
}
