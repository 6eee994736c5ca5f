/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The disk models (see disk_model.h). */
#include "disk_model.h"

#include <math.h>
#include <stdio.h>

double pf_disk_move_s(const struct pf_disk_model *d, uint64_t from, uint64_t to, int *is_seek)
{
	*is_seek = 0;
	if (from == to || d->kind == PF_DISK_FLASH)
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

double pf_disk_write_bps(const struct pf_disk_model *d)
{
	return d->kind == PF_DISK_FLASH && d->write_rate > 0 ? d->write_rate : d->rate;
}

double pf_disk_copy_bps(const struct pf_disk_model *d)
{
	return 1.0 / (2.0 / d->rate + 1.0 / pf_disk_write_bps(d));
}

double pf_disk_per_request_s(const struct pf_disk_model *d)
{
	if (d->kind != PF_DISK_FLASH)
		return 0;
	return d->request_s / (d->queue_depth ? d->queue_depth : 1);
}

uint64_t pf_disk_requests(const struct pf_disk_model *d, uint64_t n)
{
	if (d->kind != PF_DISK_FLASH || !d->max_request || !n)
		return 1;
	uint64_t bytes = n * d->unit;
	return (bytes + d->max_request - 1) / d->max_request;
}

const char *pf_disk_describe(const struct pf_disk_model *d, char *buf, size_t len)
{
	if (d->kind != PF_DISK_FLASH) {
		snprintf(buf, len, "rotational disk (7200 rpm): %g ms + %g ms*sqrt(distance/span) + %g ms per seek, "
			 "%g MB/s", PF_DISK_SETTLE_S * 1e3, PF_DISK_FULL_STROKE_S * 1e3, PF_DISK_HALF_TURN_S * 1e3,
			 d->rate / 1e6);
		return buf;
	}
	char maxr[48] = "";
	if (d->max_request)
		snprintf(maxr, sizeof(maxr), ", requests up to %llu KiB", (unsigned long long)(d->max_request >> 10));
	snprintf(buf, len, "%s: %.1f us per request, %g MB/s%s", d->erase_block ? "SD card (A1)" : "SATA SSD",
		 pf_disk_per_request_s(d) * 1e6, d->rate / 1e6, maxr);
	return buf;
}

static uint64_t to_ns(double s)
{
	return (uint64_t)(s * 1e9 + 0.5);
}

uint64_t pf_disk_request_ns(const struct pf_disk_model *d, uint64_t head, uint64_t off, uint64_t len, int *is_seek)
{
	if (d->kind == PF_DISK_FLASH) {
		*is_seek = 0;
		return to_ns(pf_disk_per_request_s(d) + pf_disk_transfer_s(d, len));
	}
	/* the rotational sum in this order: the simulated disk's figures stay the same to the nanosecond */
	return to_ns(pf_disk_transfer_s(d, len) + pf_disk_move_s(d, head, off, is_seek));
}

uint64_t pf_disk_write_ns(const struct pf_disk_model *d, uint64_t head, uint64_t last_write_end, uint64_t off,
			  uint64_t len, int *is_seek)
{
	if (d->kind != PF_DISK_FLASH)
		return pf_disk_request_ns(d, head, off, len, is_seek);
	*is_seek = 0;
	double t = pf_disk_per_request_s(d) + (double)len * d->unit / d->write_rate;
	uint64_t eb = d->erase_block;
	uint64_t s = off * d->unit, open = last_write_end * d->unit;
	if (!eb || !len || s == open) /* no erase blocks, or continuing the open one */
		return to_ns(t);
	/* in bytes: the open erase block's old data after the last write, this one's before s, copied */
	uint64_t copied = (open % eb ? eb - open % eb : 0) + s % eb;
	t += (double)copied / d->rate + (double)copied / d->write_rate;
	return to_ns(t);
}
