/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "dump.h"
#include "error.h"
#include "medium.h"
#include "fs_support.h"
#include "fsid.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void put_path(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			fprintf(out, "\\%03o", *p);
		else
			fputc(*p, out);
	}
}

void pf_dump_extents(FILE *out, const struct pf_image *img)
{
	fprintf(out, "# path\toffset\tlength\torder\tphysical\n");
	for (uint32_t i = 0; i < img->nextents; i++) {
		const struct pf_extent *e = &img->extents[i];
		put_path(out, img->files[e->file].path);
		fprintf(out, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu32 "\t", e->offset, e->length, i);
		if (e->flags & PF_EXT_PHYS_KNOWN)
			fprintf(out, "%" PRIu64 "\n", e->physical);
		else
			fprintf(out, "-\n");
	}
}

void pf_dump_files(FILE *out, const struct pf_image *img)
{
	fprintf(out, "# order\tflags\tsize\tinode\tfirst_ms\tboots\tfs\tpath\n");
	for (uint32_t i = 0; i < img->nfiles; i++) {
		const struct pf_file *f = &img->files[i];
		fprintf(out, "%" PRIu32 "\t%c%c%c%c%c\t%" PRIu64 "\t%" PRIu64 "\t%.3f\t%" PRIu32 "\t%" PRIu32 "\t",
			f->first_order, f->flags & PF_FILE_DIR ? 'd' : '-', f->flags & PF_FILE_EXEC ? 'x' : '-',
			f->flags & PF_FILE_METADATA ? 'm' : '-', f->flags & PF_FILE_INIT ? 'i' : '-',
			f->flags & PF_FILE_WRITTEN ? 'w' : '-', f->size, f->ino,
			(double)f->first_ns / 1e6, f->boots, f->fs);
		put_path(out, f->path);
		fputc('\n', out);
	}
}

struct pos {
	uint32_t fs;
	uint64_t start, end;
};

static int cmp_pos(const void *a, const void *b)
{
	const struct pos *x = a, *y = b;
	if (x->fs != y->fs)
		return x->fs < y->fs ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

void pf_dump_seeks(const struct pf_image *img, uint64_t *in_order, uint64_t *sorted)
{
	*in_order = *sorted = 0;
	struct pos *v = malloc((img->nextents ? img->nextents : 1) * sizeof(*v));
	if (!v)
		return;
	size_t n = 0;
	for (uint32_t i = 0; i < img->nextents; i++) {
		const struct pf_extent *e = &img->extents[i];
		if (!(e->flags & PF_EXT_PHYS_KNOWN))
			continue;
		uint32_t fs = img->files[e->file].fs;
		uint64_t bs = img->fs[fs].block_size ? img->fs[fs].block_size : 4096;
		v[n].fs = fs;
		v[n].start = e->physical;
		v[n].end = e->physical + (e->length + bs - 1) / bs;
		if (n && (v[n].fs != v[n - 1].fs || v[n].start != v[n - 1].end))
			(*in_order)++;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_pos);
	uint64_t end = n ? v[0].end : 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i].fs != v[i - 1].fs || v[i].start > end) {
			(*sorted)++;
			end = v[i].end;
		} else if (v[i].end > end) {
			end = v[i].end;
		}
	}
	free(v);
}

/* What prefetch does on the filesystem, where it is mounted now at its recorded mount point (same UUID). */
static void put_support(FILE *out, const struct pf_fs *fs)
{
	struct pf_fsid id;
	char what[256];
	int rc = fs->mountpoint ? pf_fsid_of_dir(fs->mountpoint, &id) : -ENOENT;
	if (rc == -ENOENT || rc == -ENODEV || rc == -ENODATA || (!rc && memcmp(id.uuid, fs->uuid, 16))) {
		fprintf(out, "#   prefetch there: not mounted there now\n");
		return;
	}
	if (rc) {
		fprintf(out, "#   prefetch there: cannot tell (%s)\n", pf_strerror(rc));
		return;
	}
	pf_fs_support_text(id.type, id.ndevices, 1, what, sizeof(what));
	fprintf(out, "#   prefetch there: %s: %s\n", id.type, what);
}

void pf_dump_summary(FILE *out, const struct pf_image *img)
{
	char when[64] = "?";
	time_t t = (time_t)img->created;
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(out, "# kind: %s\n", img->kind == PF_KIND_TRACE ? "trace" : "layout");
	fprintf(out, "# created: %s (%" PRIu64 ")\n", when, img->created);
	fprintf(out, "# boots: %" PRIu32 "\n", img->boots);
	char flags[512];
	pf_image_flags_text(img, flags, sizeof(flags));
	fprintf(out, "# flags: %s\n", flags);
	for (uint32_t i = 0; i < img->nfs; i++) {
		char uuid[37];
		pf_uuid_format(img->fs[i].uuid, uuid);
		fprintf(out, "# filesystem %" PRIu32 ": uuid %s, mountpoint ", i, uuid);
		put_path(out, img->fs[i].mountpoint);
		uint32_t ff = img->fs[i].flags;
		const char *pages = img->kind != PF_KIND_TRACE     ? ""
				    : ff & PF_FS_PAGES_TRACED ? ", ranges: pages read (tracepoints)"
				    : ff & PF_FS_PAGES_LOST   ? ", ranges: resident pages (mincore; page events lost)"
							      : ", ranges: resident pages (mincore)";
		if (ff & PF_FS_SKIPPED) {
			fprintf(out, ", not traced: no filesystem UUID to know it by across boots\n");
			continue;
		}
		fprintf(out, ", medium %s, block size %" PRIu32 "%s%s%s\n", pf_medium_name((int)img->fs[i].medium),
			img->fs[i].block_size, ff & PF_FS_SUBVOL ? ", btrfs subvolume" : "",
			ff & PF_FS_GONE ? ", gone (unmounted during tracing)" : "", pages);
		put_support(out, &img->fs[i]);
	}
	uint32_t files = 0, dirs = 0, meta = 0, exec = 0, known = 0;
	for (uint32_t i = 0; i < img->nfiles; i++) {
		uint32_t f = img->files[i].flags;
		if (f & PF_FILE_DIR)
			dirs++;
		else
			files++;
		meta += !!(f & PF_FILE_METADATA);
		exec += !!(f & PF_FILE_EXEC);
	}
	for (uint32_t i = 0; i < img->nextents; i++)
		known += !!(img->extents[i].flags & PF_EXT_PHYS_KNOWN);
	uint64_t bytes = pf_image_bytes(img), s_order, s_sorted;
	pf_dump_seeks(img, &s_order, &s_sorted);
	fprintf(out, "# files: %" PRIu32 " (exec %" PRIu32 ", metadata only %" PRIu32 ")\n", files, exec, meta);
	fprintf(out, "# dirs: %" PRIu32 "\n", dirs);
	fprintf(out, "# bytes: %" PRIu64 " (%.1f MiB)\n", bytes, (double)bytes / (1024.0 * 1024.0));
	fprintf(out, "# extents: %" PRIu32 " (physical block known: %" PRIu32 ")\n", img->nextents, known);
	fprintf(out, "# estimated seeks: %" PRIu64 " in access order, %" PRIu64 " sorted by physical block\n",
		s_order, s_sorted);
}
