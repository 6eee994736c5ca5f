/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rotational disk model: what a request costs on a 7200 rpm disk without a command queue, one request at a
 * time in arrival order.  Both the simulated disk (tests/simdisk) and prefetch-reorder's --check figures and
 * planner charge by it, so their figures agree.
 *
 * Moving the head from where the last request ended to where the next starts:
 *   the same place                 nothing
 *   a gap forward                  read through (gap / rate) while that is cheaper than a seek
 *   otherwise (or backwards)       a seek: settle + full stroke * sqrt(distance / span) + half a rotation
 * then the transfer: length / rate.
 *
 * Positions and lengths count in units of `unit` bytes (1: bytes, as the simulated disk sees requests; a block
 * size: blocks, as --check sees a layout); span is the full stroke in the same units.  Pure functions. */
#ifndef PREFETCH_DISK_MODEL_H
#define PREFETCH_DISK_MODEL_H

#include <stdint.h>

#define PF_DISK_SETTLE_S      0.001   /* head settle */
#define PF_DISK_FULL_STROKE_S 0.014   /* seek across the whole span, beyond the settle */
#define PF_DISK_HALF_TURN_S   0.00417 /* half a rotation at 7200 rpm: the mean wait for the sector */
#define PF_DISK_RATE_BPS      100e6   /* media transfer rate, bytes per second */

struct pf_disk_model {
	uint64_t span; /* the full stroke, in units (0 counts as 1) */
	uint32_t unit; /* bytes per unit of position and length */
	double rate;   /* bytes per second */
};

/* The 7200 rpm disk at its media rate, positions in units of `unit` bytes over a span of `span` units. */
static inline struct pf_disk_model pf_disk_7200rpm(uint64_t span, uint32_t unit)
{
	return (struct pf_disk_model){ .span = span, .unit = unit, .rate = PF_DISK_RATE_BPS };
}

/* Seconds to bring the head from `from` to `to`; *is_seek is 1 when that is a seek, 0 when it is nothing or a
 * gap read through. */
double pf_disk_move_s(const struct pf_disk_model *d, uint64_t from, uint64_t to, int *is_seek);

/* Seconds to transfer n units. */
double pf_disk_transfer_s(const struct pf_disk_model *d, uint64_t n);

/* The service time of a request of len units at off with the head at `head`: move plus transfer, rounded to
 * the nearest nanosecond; *is_seek as pf_disk_move_s. */
uint64_t pf_disk_request_ns(const struct pf_disk_model *d, uint64_t head, uint64_t off, uint64_t len, int *is_seek);

#endif
