/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The page-cache events as the ring buffer holds them (per_cpu/cpuN/trace_pipe_raw), read without the kernel
 * formatting each one as a line for us to parse again (trace_page_line.c): at tens of thousands of events per
 * boot, that formatting and parsing was a tenth of the tracer's CPU.  The layout of each event's record (its
 * id, where its fields are and how wide) comes from its format file, that of a buffer page from header_page,
 * as they say it; a format this reader does not know keeps the text pipe in use (trace_tracefs.c).
 *
 * A page: a u64 time stamp, the commit word (the bytes of events that follow; bit 31: events were lost before
 * this page), then the events.  Each event: a 32-bit header (type_len: 5 bits, time_delta: 27 bits), then for
 * type_len 1..28 a record of type_len * 4 bytes, for 0 a 32-bit length (itself included) and the record, 29
 * padding (a length; with time_delta 0 the rest of the page), 30 and 31 time stamps of 8 bytes in all. */
#include "trace_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RB_MISSED_EVENTS (1ul << 31)
#define RB_MISSED_STORED (1ul << 30)
#define TYPE_DATA_MAX 28
#define TYPE_PADDING 29
#define TYPE_TIME_EXTEND 30
#define TYPE_TIME_STAMP 31

/* "field:TYPE NAME;\toffset:N;\tsize:N;" of the field NAME in a format file: 0, or -ENOENT. */
static int field(const char *text, const char *name, unsigned *off, unsigned *size)
{
	size_t n = strlen(name);
	for (const char *p = strstr(text, "field:"); p; p = strstr(p + 1, "field:")) {
		const char *semi = strchr(p, ';');
		if (!semi || (size_t)(semi - p) < n + 1 || memcmp(semi - n, name, n))
			continue;
		char before = *(semi - n - 1); /* "index" is not "last_index" */
		if (before != ' ' && before != '*' && before != '\t')
			continue;
		if (sscanf(semi, ";%*[ \t]offset:%u;%*[ \t]size:%u;", off, size) == 2)
			return 0;
	}
	return -ENOENT;
}

static int ok_width(unsigned size)
{
	return size == 4 || size == 8;
}

int pf_page_raw_format(const char *text, struct pf_page_raw_format *f)
{
	memset(f, 0, sizeof(*f));
	const char *id = strstr(text, "\nID: ");
	unsigned common_size = 0;
	if (!id || sscanf(id, "\nID: %d", &f->id) != 1 || field(text, "common_pid", &f->pid_off, &common_size) ||
	    common_size != 4 || field(text, "i_ino", &f->ino_off, &f->ino_size) ||
	    field(text, "s_dev", &f->dev_off, &f->dev_size) || field(text, "index", &f->index_off, &f->index_size) ||
	    !ok_width(f->ino_size) || f->dev_size != 4 || !ok_width(f->index_size))
		return -EINVAL;
	f->range = field(text, "last_index", &f->last_off, &f->last_size) == 0;
	if (f->range && !ok_width(f->last_size))
		return -EINVAL;
	f->rec_size = f->dev_off + 4;
	unsigned ends[] = { f->pid_off + 4, f->ino_off + f->ino_size, f->index_off + f->index_size,
			    f->range ? f->last_off + f->last_size : 0 };
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (ends[i] > f->rec_size)
			f->rec_size = ends[i];
	return 0;
}

int pf_page_raw_header(const char *text, unsigned *commit_size, unsigned *data_off)
{
	unsigned off, size;
	if (field(text, "commit", &off, &size) || off != 8 || !ok_width(size) || field(text, "data", data_off, &off) ||
	    *data_off < 8 + size)
		return -EINVAL;
	*commit_size = size;
	return 0;
}

static uint64_t get(const unsigned char *p, unsigned size)
{
	if (size == 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* One record: an event of ours (1, *ev filled), another (0), or one too short for its format (-EBADMSG). */
static int record(const unsigned char *r, size_t len, const struct pf_page_raw_format *fmts, size_t nfmts,
		  uint64_t page, struct pf_page_event *ev)
{
	if (len < 2)
		return -EBADMSG;
	uint16_t type;
	memcpy(&type, r, 2);
	const struct pf_page_raw_format *f = NULL;
	for (size_t i = 0; i < nfmts && !f; i++)
		if (fmts[i].id == type)
			f = &fmts[i];
	if (!f)
		return 0;
	if (len < f->rec_size)
		return -EBADMSG;
	memset(ev, 0, sizeof(*ev));
	int32_t pid;
	memcpy(&pid, r + f->pid_off, 4);
	uint32_t dev = (uint32_t)get(r + f->dev_off, 4); /* the kernel's dev_t: major << 20 | minor */
	uint64_t index = get(r + f->index_off, f->index_size);
	uint64_t last = f->range ? get(r + f->last_off, f->last_size) : index;
	if (last < index || last >= UINT64_MAX / page)
		return -EBADMSG;
	ev->pid = pid;
	ev->major = dev >> 20;
	ev->minor = dev & 0xfffff;
	ev->ino = get(r + f->ino_off, f->ino_size);
	ev->start = index * page;
	ev->end = (last + 1) * page;
	return 1;
}

int pf_page_raw_parse(const unsigned char *buf, size_t len, unsigned commit_size, unsigned data_off,
		      const struct pf_page_raw_format *fmts, size_t nfmts, uint64_t page,
		      void (*take)(void *ctx, const struct pf_page_event *ev), void *ctx, int *missed)
{
	if (len < data_off)
		return -EBADMSG;
	uint64_t commit = get(buf + 8, commit_size);
	*missed = (commit & (RB_MISSED_EVENTS | RB_MISSED_STORED)) != 0;
	uint64_t used = commit & (RB_MISSED_STORED - 1);
	if (used > len - data_off)
		return -EBADMSG;
	const unsigned char *p = buf + data_off, *end = p + used;
	int n = 0;
	while (end - p >= 4) {
		uint32_t head;
		memcpy(&head, p, 4);
		unsigned type_len = head & 0x1f, delta = head >> 5; /* little-endian bit fields */
		size_t size, hdr = 4;
		if (type_len == TYPE_PADDING && delta == 0)
			break; /* the rest of the page is empty */
		if (type_len == TYPE_TIME_EXTEND || type_len == TYPE_TIME_STAMP) {
			size = 8;
		} else if (type_len == TYPE_PADDING || type_len == 0) {
			if (end - p < 8)
				return -EBADMSG;
			uint32_t l;
			memcpy(&l, p + 4, 4);
			size = 4 + (size_t)l;
			hdr = 8;
		} else {
			size = 4 + (size_t)type_len * 4;
		}
		if (size < hdr || size > (size_t)(end - p))
			return -EBADMSG;
		if (type_len <= TYPE_DATA_MAX) {
			struct pf_page_event ev;
			int rc = record(p + hdr, size - hdr, fmts, nfmts, page, &ev);
			if (rc < 0)
				return rc;
			if (rc > 0) {
				take(ctx, &ev);
				n++;
			}
		}
		p += size;
	}
	return n;
}
