/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What 'prefetchd boot' writes into PREFETCH_DIR once it is writable: the buffered items, this boot's trace, the
 * layout for the next boot (merged from the newest traces) and the boot record.  Every failure is logged and the
 * rest still done: a boot must go on. */
#ifndef PREFETCH_BOOT_PERSIST_H
#define PREFETCH_BOOT_PERSIST_H

#include "boot_log.h"
#include "boot_state.h"
#include "config.h"
#include "format.h"

/* Move the early-boot buffer over; store trace (if not NULL) as traces/trace_name; rotate the traces;
 * re-aggregate the layout; append rec to boottime.log if append_rec (else it came with the buffer); consume
 * the reorder marker.  Returns 0, or the error that kept trace from being stored (everything else is logged
 * and does not count: the trace is what 'prefetchd stop' reports on). */
int pf_boot_persist(const struct pf_boot_paths *p, const struct pf_config *cfg, const struct pf_image *trace,
		     const char *trace_name, const struct pf_boot_record *rec, int append_rec);

/* A boot with prefetch off: the buffer moved over, rec appended (if append_rec), the reorder marker consumed;
 * no trace, no layout, no self-check. */
void pf_boot_persist_record(const struct pf_boot_paths *p, const struct pf_boot_record *rec, int append_rec);

#endif
