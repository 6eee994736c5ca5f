/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Residency pass: which page ranges of a traced file are in the page cache at the end of tracing, split at
 * physical extent boundaries (FIEMAP) so that every range carries the fs block it starts at.  Where the
 * page-cache events were collected (trace_tracefs.c), the pages the boot asked for replace mincore's answer
 * (pf_listed_ranges), and the limit below does not apply: kernel readahead and replay ask for no page through
 * the events that are kept (replay's are ignored by task), so only what the boot read remains (plus the resident
 * holes before read spans: pages the kernel used without an event, trace_page_holes.c).
 *
 * What is recorded, and its limit.  The *set of files* comes only from other processes' fanotify events:
 * prefetchd's own opens (the replay threads run in the same process during 'prefetchd boot') are ignored.  So
 * a file the boot stops opening drops out of the next trace, and then out of the layout, even though replay
 * keeps prefetching it until then.  The *ranges within a file* come from mincore() at the end of tracing, and
 * mincore cannot tell a page the boot read from a page replay pulled in (or one that kernel readahead added):
 * for a file the boot still opens, the recorded ranges are at least what replay prefetched, so they do not
 * shrink while that file is being prefetched.  Pages evicted before the pass (memory pressure, drop_caches)
 * are missed.
 *
 * mincore() on a file mapping reports the real page-cache state only to the file's owner, a caller holding
 * CAP_FOWNER, or one allowed to write the file; anyone else is told every page is resident.  That is why the
 * tracer keeps CAP_FOWNER (privileges.h).
 */
#include "trace_internal.h"

#include "array.h"
#include "fiemap.h"

#include <errno.h>
#include <linux/fiemap.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define FIEMAP_BATCH 128
#define MAX_FILE_EXTENTS (1u << 20) /* a file more fragmented than this is mapped partly (the rest: no phys) */
#define MINCORE_WINDOW (1ull << 30) /* map at most 1 GiB at a time: bounds the mincore vector */

int pf_file_extents(int fd, size_t max, struct pf_file_extent **out)
{
	struct pf_fiemap w;
	struct pf_file_extent *v = NULL;
	size_t n = 0, cap = 0;
	*out = NULL;
	if (!max)
		max = MAX_FILE_EXTENTS;
	int rc = pf_fiemap_open(&w, fd, 0, FIEMAP_MAX_OFFSET, max < FIEMAP_BATCH ? (uint32_t)max + 1 : FIEMAP_BATCH);
	while (!rc && (rc = pf_fiemap_next(&w)) > 0) {
		if (n >= max) {
			rc = max == MAX_FILE_EXTENTS ? 0 : -E2BIG; /* MAX_FILE_EXTENTS: mapped partly */
			break;
		}
		if ((rc = PF_ARRAY_RESERVE(v, cap, n + w.n, 16)))
			break;
		for (uint32_t i = 0; i < w.n; i++) {
			const struct fiemap_extent *fe = &w.ext[i];
			/* Only a plain, aligned extent has a physical position a reader can seek to.
			 * FIEMAP_EXTENT_UNWRITTEN is kept: ext4 writes back new data into unwritten extents and
			 * converts them when the I/O completes, so resident pages there are real data */
			v[n++] = (struct pf_file_extent){ .logical = fe->fe_logical, .length = fe->fe_length,
						.physical = fe->fe_physical,
						.phys_known = !(fe->fe_flags & PF_FIEMAP_NO_PLACE) };
		}
	}
	pf_fiemap_close(&w);
	if (rc) {
		free(v);
		return rc == -EOPNOTSUPP ? pf_xfs_dir_extents(fd, max == MAX_FILE_EXTENTS ? 0 : max, out) : rc;
	}
	*out = v;
	return (int)n;
}

struct rvec {
	struct pf_range *v;
	size_t n, cap;
};

static int push(struct rvec *r, uint64_t off, uint64_t len, uint64_t phys, int known)
{
	if (len == 0)
		return 0;
	if (r->n && r->v[r->n - 1].offset + r->v[r->n - 1].length == off && !known && !r->v[r->n - 1].phys_known) {
		r->v[r->n - 1].length += len; /* adjacent, both without position: one range */
		return 0;
	}
	if (PF_ARRAY_RESERVE(r->v, r->cap, r->n + 1, 16))
		return -ENOMEM;
	r->v[r->n++] = (struct pf_range){ .offset = off, .length = len, .physical = phys, .phys_known = known };
	return 0;
}

/* Add [off, off+len) split at the extents: holes dropped (no I/O recreates them), positions attached.  With
 * no extent map (nx < 0: FIEMAP unsupported) the range goes in whole, without position. */
static int add_mapped(struct rvec *r, uint64_t off, uint64_t len, const struct pf_file_extent *x, int nx,
		      uint32_t bs, size_t *cursor)
{
	if (nx < 0)
		return push(r, off, len, 0, 0);
	uint64_t end = off + len;
	/* extents are sorted; resident runs come in increasing offset, so a cursor suffices */
	size_t i = *cursor;
	while (i < (size_t)nx && x[i].logical + x[i].length <= off)
		i++;
	*cursor = i;
	int rc = 0;
	for (; i < (size_t)nx && x[i].logical < end && rc == 0; i++) {
		uint64_t s = off > x[i].logical ? off : x[i].logical;
		uint64_t e = end < x[i].logical + x[i].length ? end : x[i].logical + x[i].length;
		if (e <= s)
			continue;
		uint64_t pbyte = x[i].physical + (s - x[i].logical);
		int known = x[i].phys_known && bs && pbyte % bs == 0;
		rc = push(r, s, e - s, known ? pbyte / bs : 0, known);
	}
	return rc;
}

int pf_resident_ranges(int fd, uint64_t size, uint32_t block_size, struct pf_range **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (size == 0)
		return 0;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t page = pg > 0 ? (uint64_t)pg : 4096;
	struct pf_file_extent *x = NULL;
	int nx = pf_file_extents(fd, 0, &x);
	if (nx == -ENOMEM)
		return nx;
	if (nx < 0)
		nx = -1; /* no map: ranges without positions */
	struct rvec r = { 0 };
	size_t cursor = 0;
	unsigned char *vec = NULL;
	int rc = 0;
	uint64_t run_start = 0, run_len = 0;
	for (uint64_t woff = 0; woff < size && rc == 0; woff += MINCORE_WINDOW) {
		uint64_t wlen = size - woff < MINCORE_WINDOW ? size - woff : MINCORE_WINDOW;
		size_t npages = (size_t)((wlen + page - 1) / page);
		void *map = mmap(NULL, wlen, PROT_READ, MAP_SHARED, fd, (off_t)woff);
		if (map == MAP_FAILED) {
			rc = -errno;
			break;
		}
		if (!vec && !(vec = malloc(npages))) {
			munmap(map, wlen);
			rc = -ENOMEM;
			break;
		}
		if (mincore(map, wlen, vec) < 0)
			rc = -errno;
		munmap(map, wlen);
		for (size_t p = 0; p < npages && rc == 0; p++) {
			uint64_t off = woff + p * page;
			if (vec[p] & 1) {
				if (run_len == 0)
					run_start = off;
				run_len = off + page - run_start;
			} else if (run_len) {
				rc = add_mapped(&r, run_start, run_len, x, nx, block_size, &cursor);
				run_len = 0;
			}
		}
	}
	if (rc == 0 && run_len) {
		if (run_start + run_len > size)
			run_len = size - run_start; /* the last page holds only the tail of the file */
		rc = add_mapped(&r, run_start, run_len, x, nx, block_size, &cursor);
	}
	free(vec);
	free(x);
	if (rc) {
		free(r.v);
		return rc;
	}
	*out = r.v;
	*n = r.n;
	return 0;
}

int pf_listed_ranges(int fd, uint64_t size, uint32_t block_size, const struct pf_page_span *s, size_t ns,
		     struct pf_range **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (size == 0 || ns == 0)
		return 0;
	struct pf_file_extent *x = NULL;
	int nx = pf_file_extents(fd, 0, &x);
	if (nx == -ENOMEM)
		return nx;
	int rc = pf_listed_ranges_map(x, nx < 0 ? -1 : nx, size, block_size, s, ns, out, n);
	free(x);
	return rc;
}

int pf_listed_ranges_map(const struct pf_file_extent *x, int nx, uint64_t size, uint32_t block_size,
			 const struct pf_page_span *s, size_t ns, struct pf_range **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (size == 0 || ns == 0)
		return 0;
	struct rvec r = { 0 };
	size_t cursor = 0;
	int rc = 0;
	for (size_t i = 0; i < ns && rc == 0 && s[i].start < size; i++) {
		/* a read asks for whole pages up to its end, which may lie past the end of the file */
		uint64_t end = s[i].end < size ? s[i].end : size;
		rc = add_mapped(&r, s[i].start, end - s[i].start, x, nx, block_size, &cursor);
	}
	if (rc) {
		free(r.v);
		return rc;
	}
	*out = r.v;
	*n = r.n;
	return 0;
}

int pf_mapped_ranges(int fd, uint64_t size, uint32_t block_size, struct pf_range **out, size_t *n)
{
	const struct pf_page_span whole = { .start = 0, .end = size };
	return pf_listed_ranges(fd, size, block_size, &whole, 1, out, n);
}
