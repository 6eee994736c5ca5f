/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pages a read() used without any page-cache event (see trace_internal.h, pf_page_spans_fill).
 *
 * Why.  filemap_get_pages() (mm/filemap.c, 6.11 up to at least 6.18) emits mm_filemap_get_pages only on its
 * success path.  When the last folio of the batch it looked up is still being read (a readahead in flight),
 * it waits for that folio, drops it from the batch and returns the others through its error label, which
 * returns 0 without the event; filemap_read() copies those pages out and calls it again from the dropped
 * folio on, and that call's event starts there.  So the pages at the start of a read() call go unrecorded, at
 * random (it depends on the disk's timing): measured on an aged 90 %-full image, 1 trace in 2 lost 45-130 KiB,
 * e.g. the first 44 KiB of a 52 KiB library read in one call, or 128 KiB at the start of a 1 MiB chunk.
 *
 * The ring buffer does not lose them (its stats say no overrun), so nothing marks such a trace.  What is
 * certain: those pages were copied to the reader, so they are in the page cache at the end, and they lie
 * right before the start of an event's span, back to where the file's previous span ends (the same reader's
 * previous read() of a sequential read) or to offset 0.  Such a hole is filled when all its pages are still
 * resident.  A hole a reader skipped over inside a readahead window is filled too: at most what mincore
 * would have recorded, never less than the events; the window past a file's last read stays out.  The cost:
 * under 'prefetchd boot' replay's pages are resident too, so a hole the boot no longer reads but the replayed
 * layout held is filled, and the layout does not shrink there (results/LAYOUT-TRIM.md). */
#include "trace_internal.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_HOLE (1ull << 30) /* one mapping per hole: bounds the mincore vector */

int pf_page_spans_fill(const struct pf_page_span *s, size_t ns, int (*resident)(void *ctx, uint64_t start,
		       uint64_t end), void *ctx, struct pf_page_span **out, size_t *nout, uint64_t *filled)
{
	struct pf_page_span *v = NULL;
	size_t n = 0, cap = 0;
	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < ns; i++) {
		uint64_t prev_end = n ? v[n - 1].end : 0;
		if (n && s[i].start <= prev_end) { /* not disjoint after all: merge */
			if (s[i].end > v[n - 1].end)
				v[n - 1].end = s[i].end;
			continue;
		}
		if (s[i].start > prev_end && s[i].start - prev_end <= MAX_HOLE &&
		    resident(ctx, prev_end, s[i].start) == 1) {
			*filled += s[i].start - prev_end;
			if (n) {
				v[n - 1].end = s[i].end > v[n - 1].end ? s[i].end : v[n - 1].end;
				continue;
			}
			if (PF_ARRAY_RESERVE(v, cap, n + 1, 8)) {
				free(v);
				return -ENOMEM;
			}
			v[n++] = (struct pf_page_span){ 0, s[i].end };
			continue;
		}
		if (PF_ARRAY_RESERVE(v, cap, n + 1, 8)) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = s[i];
	}
	*out = v;
	*nout = n;
	return 0;
}

struct res_ctx {
	int fd;
	uint64_t page;
};

/* 0 also where unknown (the mapping failed) */
int pf_pages_all_resident(int fd, uint64_t page, uint64_t start, uint64_t end)
{
	size_t len = (size_t)(end - start), npages = (size_t)((end - start + page - 1) / page);
	void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)start);
	if (map == MAP_FAILED)
		return 0;
	unsigned char *vec = malloc(npages);
	int all = vec && mincore(map, len, vec) == 0;
	for (size_t i = 0; all && i < npages; i++)
		all = vec[i] & 1;
	free(vec);
	munmap(map, len);
	return all;
}

static int all_resident(void *p, uint64_t start, uint64_t end)
{
	const struct res_ctx *c = p;
	return pf_pages_all_resident(c->fd, c->page, start, end);
}

int pf_page_spans_fill_fd(int fd, const struct pf_page_span *s, size_t ns, struct pf_page_span **out,
			  size_t *nout, uint64_t *filled)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct res_ctx c = { .fd = fd, .page = pg > 0 ? (uint64_t)pg : 4096 };
	return pf_page_spans_fill(s, ns, all_resident, &c, out, nout, filled);
}
