/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_store.h"

#include "safe_file.h"
#include "state_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int trace_name_taken(const struct pf_boot_paths *p, const char *name)
{
	char a[PF_BOOT_PATH + 256], b[PF_BOOT_PATH + 256];
	snprintf(a, sizeof(a), "%s/%s", p->traces, name);
	snprintf(b, sizeof(b), "%s/%s", p->pending_traces, name);
	return access(a, F_OK) == 0 || access(b, F_OK) == 0;
}

void pf_boot_trace_name_free(const struct pf_boot_paths *p, char *name, size_t len, int64_t when, const char *boot_id)
{
	pf_trace_name(name, len, when, boot_id);
	for (int i = 2; i < 100 && trace_name_taken(p, name); i++) {
		char id[64];
		snprintf(id, sizeof(id), "%s-%d", boot_id, i);
		pf_trace_name(name, len, when, id);
	}
}

int pf_boot_buffer_pending(const struct pf_boot_paths *p, const struct pf_image *trace, const char *name,
			   const struct pf_boot_record *rec)
{
	int rc = pf_mkdir(p->runtime, 0755); /* the daemon's own, like PREFETCH_DIR (pf_boot_dir_writable) */
	if (rc == 0)
		rc = pf_state_mkdir(p->pending, 0700);
	if (rc == 0)
		rc = pf_state_mkdir(p->pending_traces, 0700);
	if (rc == 0 && trace) {
		char path[PF_BOOT_PATH + 256];
		snprintf(path, sizeof(path), "%s/%s", p->pending_traces, name);
		rc = pf_image_save_state(path, trace);
	}
	if (rc == 0)
		rc = pf_boottime_append(p->pending_boottime, rec);
	return rc;
}

int pf_boot_reorder_armed(const struct pf_boot_paths *p)
{
	return pf_state_exists(p->reorder_armed);
}

/* The first line of path, without its newline, or "" (0 when path cannot be read). */
static int first_line(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	char *text;
	size_t tlen;
	if (pf_state_read_text(path, 64 * 1024, &text, &tlen))
		return 0;
	snprintf(buf, len, "%.*s", (int)strcspn(text, "\n"), text);
	free(text);
	return 1;
}

/* "EPOCH WHAT: DETAILS" as the run wrote it, without the epoch (the boot's own time is on the line). */
static const char *outcome_text(const char *line)
{
	const char *s = line + strspn(line, "0123456789");
	return s != line && *s == ' ' ? s + 1 : line;
}

int pf_boot_reorder_moved(const struct pf_boot_paths *p)
{
	char line[1024];
	if (!first_line(p->reorder_outcome, line, sizeof(line)))
		return 1;
	unsigned long long blocks = 0;
	const char *t = outcome_text(line);
	return (sscanf(t, "done: moved %llu blocks", &blocks) == 1 ||
		sscanf(t, "time budget spent: moved %llu blocks", &blocks) == 1 ||
		sscanf(t, "write budget spent: moved %llu blocks", &blocks) == 1) && blocks > 0;
}

int pf_boot_reorder_consume(const struct pf_boot_paths *p, const struct pf_boot_record *rec)
{
	char armed[256], outcome[1024];
	if (!first_line(p->reorder_armed, armed, sizeof(armed)))
		return 0;
	int have_outcome = first_line(p->reorder_outcome, outcome, sizeof(outcome));
	char *line;
	int len = asprintf(&line, "%lld boot %s recorded after reorder armed: %s; shutdown run: %s\n",
			   (long long)rec->when, rec->boot_id, armed,
			   have_outcome && outcome[0] ? outcome_text(outcome) : "outcome in that shutdown's kernel log only");
	if (len < 0)
		return -ENOMEM;
	int rc = pf_state_append(p->reorder_log, NULL, line, (size_t)len);
	free(line);
	pf_state_unlink(p->reorder_outcome); /* counted once, like the marker */
	int r = pf_state_unlink(p->reorder_armed);
	return rc ? rc : r;
}
