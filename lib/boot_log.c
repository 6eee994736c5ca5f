/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Boot-time log records: formatting, parsing, appending, and the measurements they hold. */
#include "boot_log.h"
#include "array.h"
#include "safe_file.h"
#include "state_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

const char *pf_setup_name(enum pf_setup s)
{
	switch (s) {
	case PF_SETUP_OFF: return "off";
	case PF_SETUP_TRACE: return "trace";
	case PF_SETUP_REPLAY: return "replay";
	case PF_SETUP_NARROW: return "narrow";
	case PF_SETUP_REORDER: return "replay+reorder";
	default: return "?";
	}
}

int pf_setup_parse(const char *name, enum pf_setup *s)
{
	for (int i = 0; i < PF_SETUP_COUNT; i++)
		if (!strcmp(name, pf_setup_name((enum pf_setup)i)))
			return *s = (enum pf_setup)i, 0;
	return -EINVAL;
}

/* A line before 0.2.0 knows a reorder only right after the shutdown that moved blocks; a later line knows the
 * reorder that placed the layout's files (its generation) for as long as they stay placed. */
enum pf_setup pf_boot_record_setup(const struct pf_boot_record *r)
{
	if (r->off)
		return PF_SETUP_OFF;
	if (!r->prefetch)
		return PF_SETUP_TRACE;
	if (r->reorder || r->generation > 0)
		return PF_SETUP_REORDER;
	return !r->control && !strcmp(r->policy, "narrow") ? PF_SETUP_NARROW : PF_SETUP_REPLAY;
}

/* A field must be one word: spaces would shift every column after it. */
static const char *word(const char *s)
{
	if (!s[0])
		return "-";
	for (const char *p = s; *p; p++)
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '#')
			return "-";
	return s;
}

void pf_boot_record_init(struct pf_boot_record *r)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->boot_id, "-");
	strcpy(r->end_source, "-");
	strcpy(r->disk, "-");
	strcpy(r->policy, "-");
	strcpy(r->medium, "-");
	strcpy(r->kernel, "-");
	r->generation = r->chunk = r->layout_age = r->late_files = -1;
	r->late_mib = -1.0;
	r->io_ms = r->reads = r->sectors = r->psi_io_ms = r->replay_files = r->used_files = -1;
	r->replay_mib = r->used_mib = r->uncovered_mib = r->replay_s = r->replay_cpu_s = -1.0;
}

/* A measurement as written: 2 decimals, or "-1" (unknown) for anything negative or not finite. */
static const char *measured(double v, char *buf, size_t len)
{
	if (!(v >= 0 && v <= 1e9))
		return "-1";
	snprintf(buf, len, "%.2f", v);
	return buf;
}

int pf_boot_record_format(const struct pf_boot_record *r, char *buf, size_t len)
{
	char m[5][32];
	int n = snprintf(buf, len,
			 "%s %" PRId64 " %.2f %s %d %d %s %" PRId64 " %" PRId64 " %" PRId64 " %d %s %s %s %s %" PRId64
			 " %s %s %" PRId64 " %" PRId64,
			 word(r->boot_id), r->when, r->boot_s, word(r->end_source), r->prefetch ? 1 : 0,
			 r->reorder ? 1 : 0, word(r->disk), r->io_ms, r->reads, r->sectors, r->control ? 1 : 0,
			 word(r->policy), measured(r->replay_mib, m[0], sizeof(m[0])),
			 measured(r->used_mib, m[1], sizeof(m[1])), measured(r->uncovered_mib, m[2], sizeof(m[2])),
			 r->psi_io_ms < -1 ? -1 : r->psi_io_ms, measured(r->replay_s, m[3], sizeof(m[3])),
			 measured(r->replay_cpu_s, m[4], sizeof(m[4])), r->replay_files < -1 ? -1 : r->replay_files,
			 r->used_files < -1 ? -1 : r->used_files);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	char late[32];
	int k = snprintf(buf + n, len - (size_t)n, " %s %" PRId64 " %" PRId64 " %s %s %" PRId64 " %" PRId64 " %s",
			 r->off ? "off" : "on", r->generation < -1 ? -1 : r->generation, r->chunk < -1 ? -1 : r->chunk,
			 word(r->medium), word(r->kernel), r->layout_age < -1 ? -1 : r->layout_age,
			 r->late_files < -1 ? -1 : r->late_files, measured(r->late_mib, late, sizeof(late)));
	if (k < 0 || (size_t)k >= len - (size_t)n)
		return -ENOSPC;
	return n + k;
}

/* The self-check's columns, after the first ten: each one present must be valid; missing ones stay unknown. */
static int parse_selfcheck(const char *rest, struct pf_boot_record *t)
{
	char end;
	int got = sscanf(rest, "%d %7s %lf %lf %lf %" SCNd64 " %lf %lf %" SCNd64 " %" SCNd64 " %c", &t->control, t->policy,
			 &t->replay_mib, &t->used_mib, &t->uncovered_mib, &t->psi_io_ms, &t->replay_s, &t->replay_cpu_s,
			 &t->replay_files, &t->used_files, &end);
	if (got <= 0)
		return 0;
	if (t->control != 0 && t->control != 1)
		return -EINVAL;
	if (got >= 2 && strcmp(t->policy, "-") && strcmp(t->policy, "replay") && strcmp(t->policy, "narrow") &&
	    strcmp(t->policy, "off"))
		return -EINVAL;
	const double *d[] = { &t->replay_mib, &t->used_mib, &t->uncovered_mib, &t->replay_s, &t->replay_cpu_s };
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		if (!(*d[i] >= -1.0 && *d[i] <= 1e9))
			return -EINVAL;
	if (t->psi_io_ms < -1 || t->replay_files < -1 || t->used_files < -1)
		return -EINVAL;
	return 0;
}

/* The settings' columns (0.2.0), after the self-check's: each one present must be valid. */
static int parse_settings(const char *rest, struct pf_boot_record *t)
{
	char run[8], end;
	int got = sscanf(rest, "%7s %" SCNd64 " %" SCNd64 " %15s %71s %" SCNd64 " %c", run, &t->generation, &t->chunk,
			 t->medium, t->kernel, &t->layout_age, &end);
	if (got <= 0)
		return 0;
	if (!strcmp(run, "off"))
		t->off = 1;
	else if (strcmp(run, "on") && strcmp(run, "-"))
		return -EINVAL;
	if (t->generation < -1 || t->chunk < -1 || t->layout_age < -1)
		return -EINVAL;
	return 0;
}

/* The columns of where the boot still waits, after the settings': each one present must be valid. */
static int parse_late(const char *rest, struct pf_boot_record *t)
{
	char end;
	int got = sscanf(rest, "%" SCNd64 " %lf %c", &t->late_files, &t->late_mib, &end);
	if (got <= 0)
		return 0;
	return t->late_files < -1 || !(t->late_mib >= -1.0 && t->late_mib <= 1e9) ? -EINVAL : 0;
}

/* The start of the n-th space-separated field of line ("" past the last). */
static const char *field(const char *line, int n)
{
	const char *p = line;
	for (int i = 0; i < n; i++) {
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	return p;
}

int pf_boot_record_parse(const char *line, struct pf_boot_record *r)
{
	struct pf_boot_record t;
	pf_boot_record_init(&t);
	char end;
	/* %n-free: the last %c catches nothing but a trailing field of a newer version, which is allowed */
	int got = sscanf(line, "%39s %" SCNd64 " %lf %15s %d %d %31s %" SCNd64 " %" SCNd64 " %" SCNd64 " %c", t.boot_id,
			 &t.when, &t.boot_s, t.end_source, &t.prefetch, &t.reorder, t.disk, &t.io_ms, &t.reads,
			 &t.sectors, &end);
	if (got < 10)
		return -EINVAL;
	/* up to 1e7 s inclusive: a time just under it is written rounded to "10000000.00", which must read back */
	if (!(t.boot_s >= 0 && t.boot_s <= 1e7) || (t.prefetch != 0 && t.prefetch != 1) ||
	    (t.reorder != 0 && t.reorder != 1) || t.io_ms < -1 || t.reads < -1 || t.sectors < -1)
		return -EINVAL;
	if (got == 11 && parse_selfcheck(field(line, 10), &t))
		return -EINVAL;
	if (got == 11 && parse_settings(field(line, 20), &t))
		return -EINVAL;
	if (got == 11 && parse_late(field(line, 26), &t))
		return -EINVAL;
	*r = t;
	return 0;
}

int pf_boottime_parse(const char *text, struct pf_boot_record **recs, size_t *n, size_t *bad)
{
	*recs = NULL;
	*n = *bad = 0;
	size_t cap = 0;
	int first = 1;
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[PF_BOOTTIME_LINE_MAX];
		if (len >= sizeof(line)) {
			(*bad)++;
		} else {
			memcpy(line, p, len);
			line[len] = '\0';
			if (first && !strncmp(line, "# prefetch boottime log, format ", 32) &&
			    strcmp(line, PF_BOOTTIME_HEADER) != 0) {
				free(*recs);
				*recs = NULL;
				*n = 0;
				return -EPROTO;
			}
			if (line[0] != '#' && line[0] != '\0') {
				struct pf_boot_record r;
				if (pf_boot_record_parse(line, &r)) {
					(*bad)++;
				} else {
					if (PF_ARRAY_RESERVE(*recs, cap, *n + 1, 64)) {
						free(*recs);
						*recs = NULL;
						*n = 0;
						return -ENOMEM;
					}
					(*recs)[(*n)++] = r;
				}
			}
		}
		first = 0;
		if (!eol)
			break;
		p = eol + 1;
	}
	return 0;
}

int pf_boottime_load(const char *path, struct pf_boot_record **recs, size_t *n, size_t *bad)
{
	char *text;
	size_t len;
	*recs = NULL;
	*n = *bad = 0;
	int rc = pf_read_text(path, 64u << 20, 0, &text, &len);
	if (rc)
		return rc;
	/* a last line without its newline was cut by a crash: not a record (its fields may stop anywhere) */
	char *end = strrchr(text, '\n');
	int cut = len > 0 && text[len - 1] != '\n';
	if (cut)
		*(end ? end + 1 : text) = '\0';
	rc = pf_boottime_parse(text, recs, n, bad);
	if (rc == 0 && cut)
		(*bad)++;
	free(text);
	return rc;
}

int pf_boottime_append(const char *path, const struct pf_boot_record *r)
{
	char line[PF_BOOTTIME_LINE_MAX];
	int len = pf_boot_record_format(r, line, sizeof(line) - 1);
	if (len < 0)
		return len;
	line[len++] = '\n';
	return pf_state_append(path,
			       PF_BOOTTIME_HEADER
			       "\n# boot_id unix_time boot_s end_source prefetch reorder disk io_ms reads sectors\n",
			       line, (size_t)len);
}

int pf_diskstats_parse(const char *text, unsigned maj, unsigned min, char *name, size_t namelen, int64_t *reads,
		       int64_t *sectors, int64_t *io_ms)
{
	const char *p = text;
	while (*p) {
		unsigned a, b;
		char nm[64];
		long long f[10];
		/* major minor name, then (after the name) 1 reads, 2 merged, 3 sectors read, 4 ms reading,
		 * 5 writes, 6 merged, 7 sectors written, 8 ms writing, 9 in flight, 10 ms doing I/O */
		int got = sscanf(p, "%u %u %63s %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &a, &b, nm, &f[0], &f[1],
				 &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9]);
		if (got == 13 && a == maj && b == min) {
			snprintf(name, namelen, "%s", nm);
			*reads = f[0];
			*sectors = f[2];
			*io_ms = f[9];
			return 0;
		}
		const char *eol = strchr(p, '\n');
		if (!eol)
			break;
		p = eol + 1;
	}
	return -ENOENT;
}

/* The whole disk of a partition: /sys/dev/block/M:m/partition exists, and the parent directory is the disk. */
static dev_t whole_disk(dev_t dev)
{
	char path[128], real[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", major(dev), minor(dev));
	if (access(path, F_OK) != 0)
		return dev;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", major(dev), minor(dev));
	if (!realpath(path, real))
		return dev;
	FILE *f = fopen(real, "re");
	if (!f)
		return dev;
	unsigned a, b;
	int ok = fscanf(f, "%u:%u", &a, &b) == 2;
	fclose(f);
	return ok ? makedev(a, b) : dev;
}

int pf_boot_record_disk(dev_t dev, unsigned ndevices, struct pf_boot_record *r)
{
	strcpy(r->disk, "-");
	r->io_ms = r->reads = r->sectors = -1;
	if (!dev || !ndevices)
		return -ENODEV;
	if (ndevices > 1)
		return -EXDEV; /* btrfs on several devices: no one disk's counters are the boot's */
	dev = whole_disk(dev);
	/* /proc files report size 0: read them to EOF */
	FILE *f = fopen("/proc/diskstats", "re");
	if (!f)
		return -errno;
	size_t cap = 0, len = 0;
	char *text = NULL;
	int err;
	/* room for one more byte and the NUL: the buffer doubles from 64 KiB while reads fill it, up to 4 MiB */
	while (!(err = PF_ARRAY_RESERVE(text, cap, len + 2, 1u << 16))) {
		size_t got = fread(text + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0 || len + 1 < cap || cap >= (4u << 20))
			break;
	}
	fclose(f);
	if (err) {
		free(text);
		return err;
	}
	text[len] = '\0';
	int rc = pf_diskstats_parse(text, major(dev), minor(dev), r->disk, sizeof(r->disk), &r->reads, &r->sectors,
				&r->io_ms);
	free(text);
	return rc;
}
