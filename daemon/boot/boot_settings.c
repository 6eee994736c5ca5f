/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_settings.h"

#include "format.h"
#include "medium.h"
#include "safe_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

int pf_reorder_placed_load(const char *path, int64_t *generation, int64_t *chunk)
{
	*generation = 0;
	*chunk = -1;
	char *text;
	size_t len;
	int rc = pf_read_text(path, 4096, 0, &text, &len);
	if (rc)
		return rc == -ENOENT ? 0 : (*generation = -1, rc);
	int64_t g, c, when;
	int ok = sscanf(text, "generation %" SCNd64 " chunk %" SCNd64 " when %" SCNd64, &g, &c, &when) == 3 && g >= 0 &&
		 c >= -1;
	free(text);
	if (!ok) {
		*generation = -1;
		return -EINVAL;
	}
	*generation = g;
	*chunk = c;
	return 0;
}

int pf_reorder_placed_save(const char *path, int64_t generation, int64_t chunk, int64_t when)
{
	char buf[128];
	int len = snprintf(buf, sizeof(buf), "generation %" PRId64 " chunk %" PRId64 " when %" PRId64 "\n", generation,
			   chunk, when);
	return pf_write_atomic(path, buf, (size_t)len, 0600);
}

int pf_reorder_marker_chunk(const char *line, int64_t *chunk)
{
	const char *p = strstr(line, " chunk ");
	if (!p)
		return 0;
	char *end;
	long long v = strtoll(p + 7, &end, 10);
	if (end == p + 7 || v <= 0 || (*end != '\0' && *end != ' ' && *end != '\n'))
		return 0;
	*chunk = v;
	return 1;
}

/* The chunk size of the reorder armed at the last shutdown: its marker's, else the configuration's. */
static int64_t armed_chunk(const struct pf_boot_paths *p, const struct pf_config *cfg)
{
	char *text;
	size_t len;
	int64_t chunk = cfg->chunk_size_blocks;
	if (pf_read_text(p->reorder_armed, 4096, 0, &text, &len) == 0) {
		(void)pf_reorder_marker_chunk(text, &chunk); /* without one, the configuration's */
		free(text);
	}
	return chunk;
}

/* Boots recorded after the layout was last written, into *age: its age when this boot replays it.  0, or a
 * negative pf error (no layout, an unreadable log). */
static int layout_age(const struct pf_boot_paths *p, int64_t *age)
{
	struct stat st;
	if (stat(p->layout, &st) < 0)
		return -errno;
	struct pf_boot_record *recs;
	size_t n, bad;
	*age = 0;
	int rc = pf_boottime_load(p->boottime, &recs, &n, &bad);
	if (rc)
		return rc == -ENOENT ? 0 : rc; /* no log yet: the layout of this boot's predecessor, age 0 */
	for (size_t i = 0; i < n; i++)
		*age += recs[i].when > (int64_t)st.st_mtime;
	free(recs);
	return 0;
}

void pf_boot_settings(const struct pf_boot_paths *p, const struct pf_config *cfg, dev_t dev, int moved,
		      struct pf_boot_record *rec)
{
	struct utsname u;
	snprintf(rec->kernel, sizeof(rec->kernel), "%s", uname(&u) == 0 ? u.release : "-");
	int medium = dev ? pf_medium_of_devno(dev, cfg->medium) : PF_MEDIUM_UNKNOWN;
	snprintf(rec->medium, sizeof(rec->medium), "%s", pf_medium_name(medium));
	if (pf_reorder_placed_load(p->reorder_placed, &rec->generation, &rec->chunk) == 0 && moved) {
		rec->generation++;
		rec->chunk = armed_chunk(p, cfg);
	}
	if (layout_age(p, &rec->layout_age))
		rec->layout_age = -1; /* the record's "not known" */
}

int pf_boot_settings_keep(const struct pf_boot_paths *p, const struct pf_boot_record *rec)
{
	if (!rec->reorder || rec->generation <= 0)
		return 0;
	return pf_reorder_placed_save(p->reorder_placed, rec->generation, rec->chunk, rec->when);
}
