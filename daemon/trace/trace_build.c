/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The end of tracing: each recorded file's page ranges (those the boot asked for, from the page-cache events
 * where they were collected whole, else the residency pass) and the PF_KIND_TRACE image.
 * Files keep their first-touch order (parent directories just before the first file below them), after the
 * files init has mapped (trace_init.c); within a file, extents go by offset.  Identity (size, times) is taken
 * now, when the ranges are measured, so that both describe the same content.  A file with no resident page
 * (opened or mapped but not read, or evicted since) is kept as PF_FILE_METADATA without extents: its lookup and
 * inode were still needed, and it keeps its place in the order.  A file deleted since it was opened is left
 * out, and so are the files of a filesystem no longer mounted (it is marked PF_FS_GONE).
 *
 * A file whose recorded path still leads to it, unchanged since its first open (size and times), takes its
 * extents from what that open showed (trace_snapshot.c) and is opened only if a page-cache question needs it
 * (a hole before a read span, trace_page_holes.c).  Any other file is opened again here, one at a time, by the
 * handle recorded at its first open (trace_handle.c); its path is the one it has now (as the kernel names the
 * reopened file) when that still leads to it, else the one it was opened by when that does; a file reachable
 * by neither is left out (renamed away, or deleted). */
#include "trace_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int64_t ts_ns(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* A path that leads to e's inode now (malloc'd), or NULL. */
static char *current_path(const struct pf_tracer *t, int fd, const struct pf_trace_entry *e)
{
	char *p = pf_trace_fd_path(t, fd);
	struct stat st;
	if (p && stat(p, &st) == 0 && st.st_dev == e->dev && st.st_ino == e->ino)
		return p;
	free(p);
	if (stat(e->path, &st) == 0 && st.st_dev == e->dev && st.st_ino == e->ino)
		return strdup(e->path);
	return NULL;
}

/* The format bounds the string table and the extent count: past them, entries are left out rather than the
 * whole trace failing to encode. */
struct budget {
	uint64_t strtab;
	int extents_full;
};

/* Where an entry's ranges come from: its first open's snapshot (fd -1 until a page-cache question needs the file
 * open), or the file opened again. */
struct source {
	struct pf_tracer *t;
	const struct pf_trace_entry *e;
	int from_snap;
	int mincore;               /* its ranges are its resident pages (wants_mincore), not the events' */
	int fd;                    /* -1: not open; -2: opening it failed */
	uint64_t page;
};

/* 1 when another traced subvolume of e's filesystem holds a traced file with e's inode number: the page events,
 * which name a file by the filesystem's device and its inode number, cannot tell the two apart.  (A subvolume
 * nobody mounted, nested in a traced one, is not traced: its files' events can add to a traced file's pages, which
 * at worst reads more of that file than the boot did, as mincore's pages would.) */
static int pages_shared(struct pf_tracer *t, const struct pf_trace_entry *e)
{
	const struct pf_trace_fs *fs = &t->fs[e->fs];
	for (int i = 0; i < t->nfs; i++)
		if (i != (int)e->fs && t->fs[i].page_dev == fs->page_dev && pf_trace_lookup(t, t->fs[i].dev, e->ino))
			return 1;
	return 0;
}

/* Whether e's ranges are its resident pages rather than the pages the events say were read: init's files were
 * read before tracing began (trace_init.c), and the events of a file whose inode number another traced subvolume
 * shares are both files' pages. */
static int wants_mincore(struct pf_tracer *t, const struct pf_trace_entry *e)
{
	return (e->flags & PF_FILE_INIT) || !pf_trace_pages_cover(t, (int)e->fs) || pages_shared(t, e);
}

/* The snapshot when it still holds (see trace_snapshot.c) and no mincore pass is needed, else the file opened
 * again by handle.  Returns the path (malloc'd) with *st, or NULL with errno-like -rc in *rc when the entry is
 * left out (deleted since, its filesystem gone, no path leads to it). */
static char *open_source(struct source *src, struct stat *st, int *rc)
{
	const struct pf_trace_entry *e = src->e;
	src->fd = -1;
	src->mincore = wants_mincore(src->t, e);
	src->from_snap = e->snap && ((e->flags & PF_FILE_DIR) || !src->mincore);
	if (src->from_snap && e->verified)
		pf_trace_snapshot_stat(e, st); /* its path checked when it was resolved, a moment ago (trace_fid.c) */
	else if (src->from_snap)
		src->from_snap = pf_trace_snapshot_current(e, st);
	if (src->from_snap) {
		char *p = strdup(e->path);
		*rc = p ? 0 : -ENOMEM;
		return p;
	}
	int fd = pf_trace_reopen(src->t, e, st);
	*rc = fd < 0 ? fd : 0;
	if (fd < 0)
		return NULL;
	src->fd = fd;
	char *p = e->path_ok ? strdup(e->path) : current_path(src->t, fd, e); /* path_ok: checked a moment ago */
	*rc = p ? 0 : -ENOENT;
	return p;
}

/* for the holes before read spans (trace_page_holes.c): the file opened on the first question */
static int source_resident(void *p, uint64_t start, uint64_t end)
{
	struct source *src = p;
	if (src->fd == -1) {
		struct stat st;
		src->fd = pf_trace_reopen(src->t, src->e, &st);
		if (src->fd < 0)
			src->fd = -2;
	}
	return src->fd >= 0 && pf_pages_all_resident(src->fd, src->page, start, end);
}

static int entry_ranges(struct source *src, const struct stat *st, struct pf_range **r, size_t *nr)
{
	struct pf_tracer *t = src->t;
	const struct pf_trace_entry *e = src->e;
	uint32_t bs = t->fs[e->fs].block_size;
	uint64_t size = (uint64_t)st->st_size;
	const struct pf_file_extent *x = src->from_snap ? &t->xmap[e->xfirst] : NULL;
	if (S_ISDIR(st->st_mode)) {
		const struct pf_page_span whole = { .start = 0, .end = size };
		return x ? pf_listed_ranges_map(x, (int)e->nx, size, bs, &whole, 1, r, nr)
			 : pf_mapped_ranges(src->fd, size, bs, r, nr);
	}
	if (src->mincore)
		return pf_resident_ranges(src->fd, size, bs, r, nr);
	size_t ns;
	const struct pf_page_span *s = pf_page_table_spans(&t->pages.table, t->fs[e->fs].page_dev, e->ino, &ns);
	struct pf_page_span *full = NULL;
	size_t nfull = 0;
	uint64_t filled = 0;
	/* pages a read() used without an event (trace_page_holes.c) */
	int rc = pf_page_spans_fill(s, ns, source_resident, src, &full, &nfull, &filled);
	if (rc == 0)
		rc = x ? pf_listed_ranges_map(x, (int)e->nx, size, bs, full, nfull, r, nr)
		       : pf_listed_ranges(src->fd, size, bs, full, nfull, r, nr);
	free(full);
	t->st.page_bytes_filled += filled;
	return rc;
}

static int add_entry(struct pf_image *img, struct pf_tracer *t, const struct pf_trace_entry *e, uint32_t *rank,
		     struct budget *b)
{
	struct stat st;
	if (e->dead)
		return 0; /* not a file to record after all (trace_fid.c) */
	if (e->pending) {
		t->st.dropped++; /* FID mode: not opened at the end (deleted since, its filesystem gone) */
		return 0;
	}
	long pg = sysconf(_SC_PAGESIZE);
	struct source src = { .t = t, .e = e, .fd = -1, .page = pg > 0 ? (uint64_t)pg : 4096 };
	int rc;
	char *path = open_source(&src, &st, &rc);
	if (rc == -ENOMEM)
		return rc;
	if (!path || b->strtab + strlen(path) + 1 > PF_MAX_STRTAB) {
		if (path)
			t->capped = 1; /* the format's bound on names */
		free(path);
		if (src.fd >= 0)
			close(src.fd);
		t->st.dropped++; /* deleted since (nothing to prefetch next boot), or its filesystem is gone */
		return 0;
	}
	b->strtab += strlen(path) + 1;
	struct pf_range *r = NULL;
	size_t nr = 0;
	rc = entry_ranges(&src, &st, &r, &nr);
	/* resolved by path alone (trace_fid.c): its generation read from this open */
	uint32_t generation = e->path_ok && src.fd >= 0 ? pf_trace_generation(src.fd) : e->generation;
	if (src.fd >= 0)
		close(src.fd);
	if (rc == -ENOMEM) {
		free(path);
		return rc;
	}
	if (rc) {
		nr = 0; /* unmappable (e.g. a special file system quirk): keep the file, metadata only */
	}
	struct pf_file f = {
		.fs = e->fs,
		.flags = e->flags | (nr == 0 ? PF_FILE_METADATA : 0) |
			 (S_ISREG(st.st_mode) && ts_ns(st.st_mtim) >= t->start_real_ns ? PF_FILE_WRITTEN : 0),
		.ino = (uint64_t)st.st_ino,
		.generation = generation,
		.mode = st.st_mode,
		.size = (uint64_t)st.st_size,
		.mtime_ns = ts_ns(st.st_mtim),
		.ctime_ns = ts_ns(st.st_ctim),
		.first_ns = e->first_ns,
		.first_order = ++*rank,
		.boots = 1,
		.path = path,
	};
	int idx = pf_image_add_file(img, &f);
	free(path);
	if (idx < 0) {
		free(r);
		return idx;
	}
	for (size_t i = 0; i < nr && !b->extents_full; i++) {
		struct pf_extent x = { .file = (uint32_t)idx, .flags = r[i].phys_known ? PF_EXT_PHYS_KNOWN : 0,
				       .offset = r[i].offset, .length = r[i].length, .physical = r[i].physical };
		if ((rc = pf_image_add_extent(img, &x)) == PF_ETOOBIG) {
			b->extents_full = 1;
			t->capped = 1;
			t->st.dropped++;
			break;
		}
		if (rc < 0) {
			free(r);
			return rc;
		}
		t->st.bytes += r[i].length;
	}
	free(r);
	if (S_ISDIR(st.st_mode))
		t->st.dirs++;
	else
		t->st.files++;
	return 0;
}

int pf_tracer_finish(struct pf_tracer *t, struct pf_image **trace, struct pf_trace_stats *st)
{
	*trace = NULL;
	struct pf_image *img = pf_image_new(PF_KIND_TRACE);
	if (!img)
		return -ENOMEM;
	img->created = (uint64_t)time(NULL);
	img->boots = 1;
	/* tracing is over: no more events (the reopens below would queue ours), and which filesystems are left */
	if (t->fan_fd >= 0) {
		close(t->fan_fd);
		t->fan_fd = -1;
	}
	pf_trace_read_unmounts(t);
	pf_trace_pages_stop(t); /* the rest of the page events, and whether any were lost */
	pf_trace_open_mounts(t);
	if (t->fid)
		pf_trace_fid_resolve(t); /* what FID mode's events did not tell: opened once, now */
	t->st.files = t->st.dirs = 0;
	t->st.bytes = 0;
	int rc = 0;
	struct budget b = { 0 };
	for (int i = 0; i < t->nfs && rc >= 0; i++) {
		b.strtab += strlen(t->fs[i].mountpoint) + 1;
		struct pf_fs fs = { .dev = (uint64_t)t->fs[i].dev, .block_size = t->fs[i].block_size,
				    .medium = (uint32_t)t->fs[i].medium, .mountpoint = t->fs[i].mountpoint };
		memcpy(fs.uuid, t->fs[i].uuid, 16);
		if (t->fs[i].subvol)
			fs.flags |= PF_FS_SUBVOL;
		if (t->fs[i].gone) {
			fs.flags |= PF_FS_GONE;
			img->flags |= PF_IMG_INCOMPLETE | PF_IMG_FS_GONE;
		}
		if (pf_trace_pages_cover(t, i))
			fs.flags |= PF_FS_PAGES_TRACED;
		else if (t->pages.state == PF_PAGES_LOST)
			fs.flags |= PF_FS_PAGES_LOST;
		rc = pf_image_add_fs(img, &fs);
	}
	for (int i = t->nfs; i < t->nfs + t->nskipped && rc >= 0; i++) {
		b.strtab += strlen(t->fs[i].mountpoint) + 1;
		struct pf_fs fs = { .dev = (uint64_t)t->fs[i].dev, .mountpoint = t->fs[i].mountpoint, .flags = PF_FS_SKIPPED };
		rc = pf_image_add_fs(img, &fs);
	}
	/* init's files first (trace_init.c), then everything else in first-touch order */
	size_t *first = NULL, nfirst = 0;
	if (rc >= 0)
		rc = pf_trace_init_files(t, "/proc/1/maps", &first, &nfirst);
	uint32_t rank = 0;
	for (size_t k = 0; k < nfirst && rc >= 0; k++)
		rc = add_entry(img, t, &t->ents[first[k]], &rank, &b);
	for (size_t i = 0; i < t->nents && rc >= 0; i++)
		if (!(t->ents[i].flags & PF_FILE_INIT))
			rc = add_entry(img, t, &t->ents[i], &rank, &b);
	free(first);
	pf_trace_close_mounts(t);
	if (rc < 0) {
		pf_image_free(img);
		return rc;
	}
	unsigned long lost = t->st.overflows + t->st.lost;
	if (lost) {
		img->flags |= PF_IMG_INCOMPLETE | PF_IMG_EVENTS_LOST;
		img->lost_events = lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost;
	}
	if (t->capped)
		img->flags |= PF_IMG_INCOMPLETE | PF_IMG_FILE_CAP;
	if (t->timed_out)
		img->flags |= PF_IMG_INCOMPLETE | PF_IMG_TIMED_OUT;
	for (int i = 0; i < t->nfs; i++)
		t->st.pages_traced |= pf_trace_pages_cover(t, i);
	struct pf_note pages_why = pf_note_into(t->st.pages_why, sizeof(t->st.pages_why));
	if (t->pages.state == PF_PAGES_LOST)
		pf_note(&pages_why, "page events lost");
	else if (t->pages.state == PF_PAGES_OFF)
		pf_note(&pages_why, "%s", t->pages.why);
	else if (!t->st.pages_traced)
		pf_note(&pages_why, "no page event on the traced filesystems");
	t->st.fid = t->fid;
	t->st.start_ns = t->start_ns;
	snprintf(t->st.fid_why, sizeof(t->st.fid_why), "%s", t->fid_why);
	if (st)
		*st = t->st;
	*trace = img;
	return 0;
}
