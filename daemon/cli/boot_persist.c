/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_persist.h"

#include "aggregate.h"
#include "boot_settings.h"
#include "boot_store.h"
#include "error.h"
#include "incomplete.h"
#include "log.h"
#include "medium.h"
#include "safe_file.h"
#include "state_dir.h"
#include "selfcheck.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Merge the newest TRACE_AGGREGATION_COUNT traces into the layout the next boot replays. */
static void aggregate_layout(const struct pf_boot_paths *p, const struct pf_config *cfg)
{
	char **names;
	size_t n;
	int rc = pf_traces_list(p->traces, &names, &n);
	if (rc) {
		pf_warn("cannot list %s: %s", p->traces, pf_strerror(rc));
		return;
	}
	size_t first = n > (size_t)cfg->aggregation_count ? n - (size_t)cfg->aggregation_count : 0;
	struct pf_image *traces[PF_AGGREGATE_MAX_TRACES];
	size_t nt = 0;
	for (size_t i = first; i < n && nt < PF_AGGREGATE_MAX_TRACES; i++) {
		char path[PF_BOOT_PATH + 256];
		snprintf(path, sizeof(path), "%s/%s", p->traces, names[i]);
		rc = pf_image_load(path, PF_LOAD_REQUIRE_ROOT | PF_LOAD_STATE, PF_KIND_TRACE, &traces[nt]);
		if (rc)
			pf_warn("trace %s left out of the layout: %s", path, pf_strerror(rc));
		else
			nt++;
	}
	pf_trace_names_free(names, n);
	if (nt == 0) {
		pf_warn("no usable trace: layout %s not updated", p->layout);
		return;
	}
	struct pf_aggregate_opts o = { .max_bytes = (uint64_t)cfg->max_prefetch_mb << 20,
				       .max_files = (uint32_t)cfg->max_prefetch_files, .check_files = 1 };
	struct pf_image *layout = NULL;
	struct pf_aggregate_report rep = { 0 };
	rc = pf_aggregate(traces, nt, &o, &layout, &rep);
	for (size_t i = 0; i < nt; i++)
		pf_image_free(traces[i]);
	if (rc) {
		pf_warn("aggregation failed: %s; layout %s not updated", pf_strerror(rc), p->layout);
		return;
	}
	/* An unchanged layout is not written again (a boot whose files are the same as before's): on flash every
	 * rewrite costs an erase block, and the file's mtime stays when its content last changed. */
	rc = pf_layout_save_changed(p->layout, layout);
	if (rc < 0)
		pf_warn("cannot write %s: %s", p->layout, pf_strerror(rc));
	else
		pf_notice("layout: %u traces, %u files kept (%u unstable, %u vanished, %u changed, %u cut), %.1f MiB -> %s%s",
			  rep.traces, rep.files_kept, rep.files_unstable, rep.files_vanished, rep.files_changed,
			  rep.files_cut, (double)rep.bytes_kept / (1024.0 * 1024.0), p->layout,
			  rc == 1 ? " (unchanged, not rewritten)" : "");
	pf_image_free(layout);
}

/* The self-check's decision from the boot log as it is now, logged in one line and kept for the next boot. */
static void self_check(const struct pf_boot_paths *p, const struct pf_config *cfg)
{
	if (!cfg->self_check_interval)
		return;
	char path[PF_BOOT_PATH + 16];
	snprintf(path, sizeof(path), "%s/selfcheck", p->state);
	struct pf_selfcheck sc;
	int rc = pf_selfcheck_load(path, &sc);
	if (rc)
		pf_warn("self-check state %s unreadable (%s): starting again from the default", path, pf_strerror(rc));
	struct pf_boot_record *recs;
	size_t n, bad;
	rc = pf_boottime_load(p->boottime, &recs, &n, &bad);
	if (rc) {
		pf_warn("self-check: cannot read %s (%s): the decision stays %s", p->boottime, pf_strerror(rc),
			pf_policy_name(sc.policy));
		return;
	}
	enum pf_policy was = sc.policy;
	int disarmed = sc.reorder_disarmed;
	pf_selfcheck_decide(recs, n, &sc);
	free(recs);
	if (sc.policy != was || sc.reorder_disarmed != disarmed)
		pf_warn("self-check: %s", sc.why);
	else
		pf_notice("self-check: %s", sc.why);
	if ((rc = pf_selfcheck_save(path, &sc)))
		pf_warn("cannot write %s: %s", path, pf_strerror(rc));
}

/* The reorder armed at the last shutdown counts for this boot only; a new generation it made stays. */
static void consume_reorder(const struct pf_boot_paths *p, const struct pf_boot_record *rec)
{
	int rc;
	if (!pf_boot_reorder_armed(p))
		return;
	if ((rc = pf_boot_settings_keep(p, rec)))
		pf_warn("cannot write %s: %s (the next boots are not counted under reorder generation %lld)",
			p->reorder_placed, pf_strerror(rc), (long long)rec->generation);
	if ((rc = pf_boot_reorder_consume(p, rec)))
		pf_warn("cannot note the armed reorder in %s or remove %s: %s", p->reorder_log, p->reorder_armed,
			pf_strerror(rc));
}

int pf_boot_persist(const struct pf_boot_paths *p, const struct pf_config *cfg, const struct pf_image *trace,
		    const char *trace_name, const struct pf_boot_record *rec, int append_rec)
{
	int stored = 0;
	char err[2 * PF_BOOT_PATH];
	int rc = pf_boot_dirs_trusted(p, err, sizeof(err));
	if (rc) {
		pf_err("refusing the state directory: %s: nothing stored, nothing removed", err);
		return rc;
	}
	rc = pf_boot_flush_pending(p);
	if (rc > 0)
		pf_notice("moved %d buffered item(s) from %s to %s", rc, p->pending, p->state);
	else if (rc < 0)
		pf_warn("could not move the buffer %s: %s", p->pending, pf_strerror(rc));
	if (trace) {
		char path[PF_BOOT_PATH + 256];
		snprintf(path, sizeof(path), "%s/%s", p->traces, trace_name);
		if ((rc = pf_state_mkdir(p->traces, 0700)) || (rc = pf_image_save_state(path, trace))) {
			pf_warn("cannot store the trace %s: %s", path, pf_strerror(rc));
			stored = rc;
		} else {
			pf_notice("trace: %u files -> %s", trace->nfiles, path);
			pf_medium_log_image(trace, cfg->medium);
		}
		pf_warn_if_incomplete(trace, path);
	}
	/* a few more than are merged: a bad newest trace can be left out without shrinking the vote */
	rc = pf_traces_rotate(p->traces, (size_t)cfg->aggregation_count + 2);
	if (rc < 0)
		pf_warn("cannot rotate %s: %s", p->traces, pf_strerror(rc));
	aggregate_layout(p, cfg);
	if (append_rec && (rc = pf_boottime_append(p->boottime, rec)))
		pf_warn("cannot append to %s: %s", p->boottime, pf_strerror(rc));
	self_check(p, cfg);
	consume_reorder(p, rec);
	return stored;
}

void pf_boot_persist_record(const struct pf_boot_paths *p, const struct pf_boot_record *rec, int append_rec)
{
	int rc = pf_boot_flush_pending(p);
	if (rc > 0)
		pf_notice("moved %d buffered item(s) from %s to %s", rc, p->pending, p->state);
	else if (rc < 0)
		pf_warn("could not move the buffer %s: %s", p->pending, pf_strerror(rc));
	if (append_rec && (rc = pf_boottime_append(p->boottime, rec)))
		pf_warn("cannot append to %s: %s", p->boottime, pf_strerror(rc));
	consume_reorder(p, rec);
}
