/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The disk models: what a request costs on a 7200 rpm disk without a command queue, on an SD card (or cheap
 * eMMC), or on a SATA SSD.  Both the simulated disk (tests/simdisk) and prefetch-reorder's --check figures and
 * planner charge by them, so their figures agree.
 *
 * Rotational (pf_disk_7200rpm), one request at a time in arrival order.  Moving the head from where the last
 * request ended to where the next starts:
 *   the same place                 nothing
 *   a gap forward                  read through (gap / rate) while that is cheaper than a seek
 *   otherwise (or backwards)       a seek: settle + full stroke * sqrt(distance / span) + half a rotation
 * then the transfer: length / rate.  Writes cost as reads.
 *
 * Flash (pf_disk_sd, pf_disk_ssd): no head, so no move; every request costs a fixed request_s (command, mapping
 * lookup, first page) divided by queue_depth, then length / rate.  queue_depth is the parallelism the device
 * gets from requests outstanding at once; the models charge request_s / queue_depth for every request, i.e.
 * they assume the queue is kept full (the SD model is queue depth 1, so it is exact there; for the SSD it is
 * the best case, a lower bound on the time).  A write's bytes are programmed at write_rate, in erase blocks a
 * card's translation layer maps whole (the cheapest cards; A1/A2 cards buffer small writes, see PF_SD_*).  The
 * card keeps open the erase block the last write ended inside: a write starting where the last one ended
 * continues it, nothing copied (how a Speed Class card fills an allocation unit from requests smaller than
 * it).  Any other write starting inside an erase block has the card copy that block's old data ahead of it
 * (read at rate, programmed at write_rate), and closes the open one by copying its old data after the last
 * write the same way.  A lone 4 KiB write thus costs, with the close the next write pays, about a
 * read-modify-write of its erase block (erase_block / rate + erase_block / write_rate); an aligned erase block
 * written in order, in any number of requests, erase_block / write_rate.  erase_block 0: writes cost
 * length / write_rate.
 *
 * Positions and lengths count in units of `unit` bytes (1: bytes, as the simulated disk sees requests; a block
 * size: blocks, as --check sees a layout); span is the full stroke in the same units.  Pure functions. */
#ifndef PREFETCH_DISK_MODEL_H
#define PREFETCH_DISK_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define PF_DISK_SETTLE_S      0.001   /* head settle */
#define PF_DISK_FULL_STROKE_S 0.014   /* seek across the whole span, beyond the settle */
#define PF_DISK_HALF_TURN_S   0.00417 /* half a rotation at 7200 rpm: the mean wait for the sector */
#define PF_DISK_RATE_BPS      100e6   /* media transfer rate, bytes per second */

/* SD card, Application Performance Class A1 at its minimums (SD Association, Physical Layer Simplified
 * Specification 6.00+: A1 = random read >= 1500 IOPS and random write >= 500 IOPS of 4 KiB, sustained
 * sequential write >= 10 MB/s), on a UHS-I SDR50 host (50 MB/s bus, e.g. a Raspberry Pi 3/4: ~45 MB/s of
 * payload).  The request cost is what is left of 1/1500 s once 4 KiB are transferred.  Queue depth 1: the
 * Linux mmc stack sends an SD card one command at a time.  Erase block: the 4 MiB allocation unit of SDHC/SDXC
 * cards (the unit the Speed Class write rate is measured over). */
#define PF_SD_RATE_BPS        45e6
#define PF_SD_REQUEST_S       (1.0 / 1500 - 4096 / PF_SD_RATE_BPS)
#define PF_SD_QUEUE_DEPTH     1
#define PF_SD_WRITE_RATE_BPS  10e6
#define PF_SD_ERASE_BLOCK     (4u << 20)
/* The largest read the mmc stack sends an SD card in one command: the host's max_req_size, 512 KiB on the
 * common SDHCI hosts (queue/max_sectors_kb); a longer read costs one request per 512 KiB. */
#define PF_SD_MAX_REQUEST     (512u << 10)

/* SATA SSD, a mainstream datasheet's figures (Samsung 870 EVO: sequential read 560 MB/s, write 530 MB/s,
 * 4 KiB random read 13,000 IOPS at queue depth 1 and 98,000 at queue depth 32).  The request cost is 1/13000 s
 * less the 4 KiB transfer; the queue buys 98000 / 13000 ~ 7.5x: an effective depth of 8.  Writes go through
 * the drive's cache and page-mapped translation layer: no erase-block cost. */
#define PF_SSD_RATE_BPS       560e6
#define PF_SSD_REQUEST_S      (1.0 / 13000 - 4096 / PF_SSD_RATE_BPS)
#define PF_SSD_QUEUE_DEPTH    8
#define PF_SSD_WRITE_RATE_BPS 530e6

enum pf_disk_kind { PF_DISK_ROTATIONAL = 0, PF_DISK_FLASH = 1 };

struct pf_disk_model {
	uint64_t span;         /* the full stroke, in units (0 counts as 1) */
	uint32_t unit;         /* bytes per unit of position and length */
	double rate;           /* bytes per second (reads) */
	int kind;              /* enum pf_disk_kind (0, rotational, when not set) */
	/* flash only */
	double request_s;      /* fixed cost of one request at queue depth 1 */
	unsigned queue_depth;  /* requests served at once (0 counts as 1) */
	double write_rate;     /* bytes per second programming erase blocks */
	uint64_t erase_block;  /* bytes; 0: no read-modify-write */
	uint64_t max_request;  /* bytes one request carries at most (the rest: more requests); 0: no limit.  Only
	                        * the replay prediction (replay_cost.h) splits by it; the simulated disk charges
	                        * the requests the kernel sends it */
};

/* The 7200 rpm disk at its media rate, positions in units of `unit` bytes over a span of `span` units. */
static inline struct pf_disk_model pf_disk_7200rpm(uint64_t span, uint32_t unit)
{
	return (struct pf_disk_model){ .span = span, .unit = unit, .rate = PF_DISK_RATE_BPS };
}

/* The A1 SD card (PF_SD_*), in units of `unit` bytes over `span` units. */
static inline struct pf_disk_model pf_disk_sd(uint64_t span, uint32_t unit)
{
	return (struct pf_disk_model){ .span = span, .unit = unit, .rate = PF_SD_RATE_BPS, .kind = PF_DISK_FLASH,
				       .request_s = PF_SD_REQUEST_S, .queue_depth = PF_SD_QUEUE_DEPTH,
				       .write_rate = PF_SD_WRITE_RATE_BPS, .erase_block = PF_SD_ERASE_BLOCK,
				       .max_request = PF_SD_MAX_REQUEST };
}

/* The SATA SSD (PF_SSD_*), in units of `unit` bytes over `span` units. */
static inline struct pf_disk_model pf_disk_ssd(uint64_t span, uint32_t unit)
{
	return (struct pf_disk_model){ .span = span, .unit = unit, .rate = PF_SSD_RATE_BPS, .kind = PF_DISK_FLASH,
				       .request_s = PF_SSD_REQUEST_S, .queue_depth = PF_SSD_QUEUE_DEPTH,
				       .write_rate = PF_SSD_WRITE_RATE_BPS };
}

/* Seconds to bring the head from `from` to `to`; *is_seek is 1 when that is a seek, 0 when it is nothing or a
 * gap read through.  Flash: 0, never a seek. */
double pf_disk_move_s(const struct pf_disk_model *d, uint64_t from, uint64_t to, int *is_seek);

/* Seconds to transfer n units (reading). */
double pf_disk_transfer_s(const struct pf_disk_model *d, uint64_t n);

/* The fixed seconds every request costs: 0 on the rotational model (its costs are the moves), request_s /
 * queue_depth on flash. */
double pf_disk_per_request_s(const struct pf_disk_model *d);

/* How many requests a read of n units takes: 1, or on a model with max_request one per max_request bytes. */
uint64_t pf_disk_requests(const struct pf_disk_model *d, uint64_t n);

/* Bytes per second the model writes a long sequential run at: its write rate on flash, its rate otherwise. */
double pf_disk_write_bps(const struct pf_disk_model *d);

/* Bytes per second at which a verified copy (read, written, read back) proceeds on the model at best: its
 * transfer rates alone, no seek, no request cost.  An upper bound on what the reorder moves per second. */
double pf_disk_copy_bps(const struct pf_disk_model *d);

/* One line naming the model and its parameters, e.g. "SD card (A1): 575.6 us per request, 45 MB/s, requests
 * up to 512 KiB".  Returns buf. */
const char *pf_disk_describe(const struct pf_disk_model *d, char *buf, size_t len);

/* The service time of a read of len units at off with the head at `head`: move plus transfer plus the
 * per-request cost, rounded to the nearest nanosecond; *is_seek as pf_disk_move_s. */
uint64_t pf_disk_request_ns(const struct pf_disk_model *d, uint64_t head, uint64_t off, uint64_t len, int *is_seek);

/* The same for a write: as a read on the rotational model; on flash the per-request cost plus what it
 * programs and copies (see above), the device's last write having ended at last_write_end (0 at the start:
 * nothing open). */
uint64_t pf_disk_write_ns(const struct pf_disk_model *d, uint64_t head, uint64_t last_write_end, uint64_t off,
			  uint64_t len, int *is_seek);

#endif
