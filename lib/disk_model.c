/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rotational disk model (see disk_model.h). */
#include "disk_model.h"

#include <math.h>

double pf_disk_move_s(const struct pf_disk_model *d, uint64_t from, uint64_t to, int *is_seek)
{
	*is_seek = 0;
	if (from == to)
		return 0;
	uint64_t dist = to > from ? to - from : from - to;
	double seek = PF_DISK_SETTLE_S + PF_DISK_FULL_STROKE_S * sqrt((double)dist / (double)(d->span ? d->span : 1)) +
		      PF_DISK_HALF_TURN_S;
	if (to > from) {
		double through = pf_disk_transfer_s(d, dist);
		if (through < seek)
			return through;
	}
	*is_seek = 1;
	return seek;
}

double pf_disk_transfer_s(const struct pf_disk_model *d, uint64_t n)
{
	return (double)n * d->unit / d->rate;
}

uint64_t pf_disk_request_ns(const struct pf_disk_model *d, uint64_t head, uint64_t off, uint64_t len, int *is_seek)
{
	double t = pf_disk_transfer_s(d, len) + pf_disk_move_s(d, head, off, is_seek);
	return (uint64_t)(t * 1e9 + 0.5);
}
