/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pages each file was asked for while tracing, from the page-cache events (trace_tracefs.c): per (dev,
 * ino) a list of byte spans.  Files are keyed by inode, not by trace entry, because a file's first page event
 * may come before fanotify's report of its open (two channels, read in turn).
 *
 * A boot reads most files front to back, so a new span usually touches the last one and is merged at once; the
 * others are appended and the list is sorted and merged when it has doubled since (bounded memory for files
 * read in random order, amortised O(log n) per span). */
#include "trace_internal.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>

static struct pf_page_file *find(const struct pf_page_table *t, dev_t dev, ino_t ino)
{
	size_t pos;
	return pf_devino_get(&t->index, dev, ino, &pos) ? &t->files[pos] : NULL;
}

static struct pf_page_file *add_file(struct pf_page_table *t, dev_t dev, ino_t ino)
{
	if (PF_ARRAY_RESERVE(t->files, t->cap, t->n + 1, 256) || pf_devino_put(&t->index, dev, ino, t->n))
		return NULL;
	t->files[t->n] = (struct pf_page_file){ .dev = dev, .ino = ino };
	return &t->files[t->n++];
}

static int cmp_span(const void *pa, const void *pb)
{
	const struct pf_page_span *a = pa, *b = pb;
	return a->start < b->start ? -1 : a->start > b->start;
}

static void tidy(struct pf_page_file *f)
{
	if (f->n < 2)
		return;
	qsort(f->v, f->n, sizeof(*f->v), cmp_span);
	size_t k = 0;
	for (size_t i = 1; i < f->n; i++) {
		if (f->v[i].start <= f->v[k].end) {
			if (f->v[i].end > f->v[k].end)
				f->v[k].end = f->v[i].end;
		} else {
			f->v[++k] = f->v[i];
		}
	}
	f->n = k + 1;
	f->tidy = f->n;
}

int pf_page_table_add(struct pf_page_table *t, dev_t dev, ino_t ino, uint64_t start, uint64_t end)
{
	if (end <= start)
		return 0;
	struct pf_page_file *f = find(t, dev, ino);
	if (!f && !(f = add_file(t, dev, ino)))
		return -ENOMEM;
	if (f->n) {
		struct pf_page_span *last = &f->v[f->n - 1];
		if (start <= last->end && end >= last->start) { /* touches the newest span: one span */
			if (start < last->start)
				last->start = start;
			if (end > last->end)
				last->end = end;
			return 0;
		}
	}
	if (f->n >= 2 * f->tidy + 64) {
		tidy(f);
		return pf_page_table_add(t, dev, ino, start, end); /* once: the list has just shrunk or is tidy */
	}
	if (PF_ARRAY_RESERVE(f->v, f->cap, f->n + 1, 8))
		return -ENOMEM;
	f->v[f->n++] = (struct pf_page_span){ start, end };
	return 0;
}

const struct pf_page_span *pf_page_table_spans(struct pf_page_table *t, dev_t dev, ino_t ino, size_t *n)
{
	struct pf_page_file *f = find(t, dev, ino);
	*n = 0;
	if (!f)
		return NULL;
	tidy(f);
	*n = f->n;
	return f->v;
}

void pf_page_table_free(struct pf_page_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->files[i].v);
	free(t->files);
	pf_devino_free(&t->index);
	*t = (struct pf_page_table){ 0 };
}
