/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slow flash (SD cards, eMMC, USB sticks): no seeks, but a fixed cost per request and little parallelism, so
 * the fewer and larger the requests the better, and the order may stay the boot's.  Each file's ranges that lie
 * adjacent on the device are merged (a small hole costs less to read through than a request of its own), then
 * read in first-touch order by two readers: one keeps the device busy while the other waits in open() or for a
 * mapping block. */
#include "replay_internal.h"

#include "clock.h"

#include <stdlib.h>

/* Readers on slow flash: the device serves one request at a time; a second reader overlaps its waits in open()
 * and block mapping with the first one's reads. */
#define PF_REPLAY_FLASH_READERS 2

int pf_replay_flash(struct pf_rctx *c, struct pf_ritem *items, size_t n)
{
	if (!n)
		return 0;
	struct pf_ritem *own = NULL;
	struct pf_rplan_mapper m = pf_replay_mapper(c);
	int rc = pf_rplan_flash(c->l, &m, &items, &n, &own, &c->map);
	c->map_at = pf_monotonic_s();
	if (rc)
		return rc;
	if (c->o && c->o->plan_dump)
		pf_rplan_dump(c->o->plan_dump, c->l, items, n);
	struct pf_rpar *par = NULL;
	rc = pf_replay_parallel_start(c, items, n, PF_REPLAY_FLASH_READERS, &par);
	pf_replay_parallel_join(par);
	free(own);
	return rc;
}
