/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The page-cache events as the tracer reads them: one trace_pipe line (trace_page_line.c), a trace_pipe_raw page
 * (trace_page_raw.c), and the per-file spans they add up to (trace_page_table.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "trace_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PG 4096u

static struct pf_page_event ev;

static int parse(const char *line)
{
	return pf_page_line_parse(line, PG, &ev);
}

static void test_read_line(void **state)
{
	(void)state;
	assert_int_equal(parse("              dd-14339   [000] .....  4228.482437: mm_filemap_get_pages: "
			       "dev=7:3 ino=c ofs=409600-413695"), PF_PAGE_LINE_EVENT);
	assert_int_equal(ev.pid, 14339);
	assert_string_equal(ev.comm, "dd");
	assert_int_equal(ev.major, 7);
	assert_int_equal(ev.minor, 3);
	assert_int_equal(ev.ino, 0xc);
	assert_int_equal(ev.start, 409600);
	assert_int_equal(ev.end, 413696); /* inclusive last byte -> exclusive page end */
	/* a read of several pages, a hex inode with letters, a big minor */
	assert_int_equal(parse("  systemd-1  [001] d..1. 5.000001: mm_filemap_get_pages: dev=259:1048575 "
			       "ino=f511a ofs=0-1048575"), PF_PAGE_LINE_EVENT);
	assert_int_equal(ev.minor, 1048575);
	assert_int_equal(ev.ino, 0xf511a);
	assert_int_equal(ev.start, 0);
	assert_int_equal(ev.end, 1048576);
}

static void test_fault_and_map_lines(void **state)
{
	(void)state;
	/* a fault names one page */
	assert_int_equal(parse("        readlink-2956    [000] .....  4228.482612: mm_filemap_fault: dev=254:0 "
			       "ino=f511a ofs=1916928"), PF_PAGE_LINE_EVENT);
	assert_int_equal(ev.start, 1916928);
	assert_int_equal(ev.end, 1916928 + PG);
	/* fault-around: the window mapped */
	assert_int_equal(parse(" ld-linux-x86-64-77 [1] ..... 1.5: mm_filemap_map_pages: dev=8:1 ino=2a "
			       "ofs=65536-131071"), PF_PAGE_LINE_EVENT);
	assert_string_equal(ev.comm, "ld-linux-x86-64");
	assert_int_equal(ev.pid, 77);
	assert_int_equal(ev.start, 65536);
	assert_int_equal(ev.end, 131072);
}

static void test_task_column(void **state)
{
	(void)state;
	/* a name with spaces and dashes; the record-tgid column; a name not cached */
	assert_int_equal(parse("   (sd-run) a-b x-12  [000] ..... 1.0: mm_filemap_fault: dev=8:1 ino=1 ofs=0"),
			 PF_PAGE_LINE_EVENT);
	assert_string_equal(ev.comm, "(sd-run) a-b x");
	assert_int_equal(ev.pid, 12);
	assert_int_equal(parse("   cat-4242    (   4240) [003] ..... 9.9: mm_filemap_fault: dev=8:1 ino=1 ofs=0"),
			 PF_PAGE_LINE_EVENT);
	assert_string_equal(ev.comm, "cat");
	assert_int_equal(ev.pid, 4242);
	assert_int_equal(parse("   <...>-5  [000] ..... 1.0: mm_filemap_fault: dev=8:1 ino=1 ofs=0"), PF_PAGE_LINE_EVENT);
	assert_string_equal(ev.comm, "<...>");
	assert_int_equal(ev.pid, 5);
	/* no readable task: the event still counts, the task is unknown */
	assert_int_equal(parse("garbage: mm_filemap_fault: dev=8:1 ino=1 ofs=0"), PF_PAGE_LINE_EVENT);
	assert_int_equal(ev.pid, -1);
	assert_string_equal(ev.comm, "");
}

static void test_other_lines(void **state)
{
	(void)state;
	assert_int_equal(parse("CPU:1 [LOST 17 EVENTS]"), PF_PAGE_LINE_LOST);
	assert_int_equal(parse(""), PF_PAGE_LINE_OTHER);
	assert_int_equal(parse("# tracer: nop"), PF_PAGE_LINE_OTHER);
	assert_int_equal(parse("  cat-1 [0] ..... 1.0: mm_filemap_add_to_page_cache: dev 8:1 ino 1"), PF_PAGE_LINE_OTHER);
	/* ours, but not in a form this reader knows: counted as lost, never guessed at */
	assert_int_equal(parse("  cat-1 [0] ..... 1.0: mm_filemap_fault: dev=8:1 ino=1"), PF_PAGE_LINE_BAD);
	assert_int_equal(parse("  cat-1 [0] ..... 1.0: mm_filemap_get_pages: dev=8:1 ino=1 ofs=8192"), PF_PAGE_LINE_BAD);
	assert_int_equal(parse("  cat-1 [0] ..... 1.0: mm_filemap_get_pages: dev=8:1 ino=1 ofs=8192-4095"),
			 PF_PAGE_LINE_BAD);
	assert_int_equal(parse("  cat-1 [0] ..... 1.0: mm_filemap_fault: dev=8:1 ino=0x1 ofs=0"), PF_PAGE_LINE_BAD);
	assert_int_equal(parse("  cat-1 [0] ..... 1.0: mm_filemap_fault: dev=-8:1 ino=1 ofs=0"), PF_PAGE_LINE_BAD);
	assert_int_equal(parse("  cat-1 [0] ..... 1.0: mm_filemap_fault: dev=8:1 ino=1 ofs=0x"), PF_PAGE_LINE_BAD);
}

/* The format files of this kernel (6.18), as tracefs gives them (tabs between the parts of a field line). */
static const char get_pages_format[] =
	"name: mm_filemap_get_pages\nID: 599\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned long i_ino;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:dev_t s_dev;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long index;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long last_index;\toffset:32;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"dev=%d:%d ino=%lx ofs=%lld-%lld\", ...\n";
static const char fault_format[] =
	"name: mm_filemap_fault\nID: 601\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned long i_ino;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:dev_t s_dev;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long index;\toffset:24;\tsize:8;\tsigned:0;\n";
static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

struct got {
	struct pf_page_event ev[8];
	int n;
};

static void collect(void *ctx, const struct pf_page_event *e)
{
	struct got *g = ctx;
	assert_true(g->n < 8);
	g->ev[g->n++] = *e;
}

/* Put one event (4-byte header + record) at page[*at]; type_len from the record's size, or 0 (a length word)
 * when long is set. */
static void put_event(unsigned char *page, size_t *at, const unsigned char *rec, size_t len, int long_form)
{
	uint32_t head = long_form ? 0 : (uint32_t)(len / 4);
	memcpy(page + *at, &head, 4);
	*at += 4;
	if (long_form) {
		uint32_t l = (uint32_t)len + 4;
		memcpy(page + *at, &l, 4);
		*at += 4;
	}
	memcpy(page + *at, rec, len);
	*at += len;
}

static void make_record(unsigned char *r, uint16_t type, int32_t pid, uint64_t ino, uint32_t dev, uint64_t index,
			uint64_t last)
{
	memset(r, 0, 40);
	memcpy(r, &type, 2);
	memcpy(r + 4, &pid, 4);
	memcpy(r + 8, &ino, 8);
	memcpy(r + 16, &dev, 4);
	memcpy(r + 24, &index, 8);
	memcpy(r + 32, &last, 8);
}

/* trace_pipe_raw's pages: the formats read, the events of ours taken (a range, a fault), others and time
 * stamps skipped, the long form read, lost events flagged, a page that does not add up refused. */
static void test_raw_page(void **state)
{
	(void)state;
	struct pf_page_raw_format f[2];
	unsigned commit_size, data_off;
	assert_int_equal(pf_page_raw_format(get_pages_format, &f[0]), 0);
	assert_int_equal(f[0].id, 599);
	assert_true(f[0].range);
	assert_int_equal(f[0].index_off, 24); /* "index", not the "last_index" that ends the same way */
	assert_int_equal(f[0].rec_size, 40);
	assert_int_equal(pf_page_raw_format(fault_format, &f[1]), 0);
	assert_false(f[1].range);
	assert_int_equal(pf_page_raw_header(header_page, &commit_size, &data_off), 0);
	assert_int_equal(commit_size, 8);
	assert_int_equal(data_off, 16);
	assert_int_equal(pf_page_raw_format("name: x\nID: 1\nformat:\n\tfield:int common_pid;\toffset:4;\tsize:4;\n", &f[1]),
			 -EINVAL); /* no i_ino: not an event this reader knows */
	assert_int_equal(pf_page_raw_format(fault_format, &f[1]), 0);

	unsigned char page[4096] = { 0 }, rec[40];
	size_t at = 16;
	make_record(rec, 599, 4242, 0xc, 7u << 20 | 3, 2, 2); /* dev 7:3, ino 0xc, page 2 */
	put_event(page, &at, rec, 40, 0);
	uint32_t extend[2] = { 30, 0 };                       /* a time extend: 8 bytes, no record */
	memcpy(page + at, extend, 8);
	at += 8;
	make_record(rec, 12, 1, 1, 1, 1, 1);                  /* another event: skipped */
	put_event(page, &at, rec, 40, 0);
	make_record(rec, 601, 17, 0xd, 8u << 20 | 1, 5, 0);   /* a fault: one page */
	put_event(page, &at, rec, 32, 1);
	uint64_t commit = at - 16;
	memcpy(page + 8, &commit, 8);
	struct got g = { .n = 0 };
	int missed = -1;
	assert_int_equal(pf_page_raw_parse(page, sizeof(page), 8, 16, f, 2, 4096, collect, &g, &missed), 2);
	assert_int_equal(missed, 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.ev[0].pid, 4242);
	assert_int_equal(g.ev[0].major, 7);
	assert_int_equal(g.ev[0].minor, 3);
	assert_int_equal(g.ev[0].ino, 0xc);
	assert_int_equal(g.ev[0].start, 8192);
	assert_int_equal(g.ev[0].end, 12288);
	assert_string_equal(g.ev[0].comm, "");
	assert_int_equal(g.ev[1].major, 8);
	assert_int_equal(g.ev[1].ino, 0xd);
	assert_int_equal(g.ev[1].start, 5 * 4096);
	assert_int_equal(g.ev[1].end, 6 * 4096);

	commit |= 1ull << 31; /* events lost before this page */
	memcpy(page + 8, &commit, 8);
	g.n = 0;
	assert_int_equal(pf_page_raw_parse(page, sizeof(page), 8, 16, f, 2, 4096, collect, &g, &missed), 2);
	assert_int_equal(missed, 1);
	commit = 4096; /* more than the page holds */
	memcpy(page + 8, &commit, 8);
	assert_int_equal(pf_page_raw_parse(page, sizeof(page), 8, 16, f, 2, 4096, collect, &g, &missed), -EBADMSG);
	commit = 20; /* cuts the first record */
	memcpy(page + 8, &commit, 8);
	assert_int_equal(pf_page_raw_parse(page, sizeof(page), 8, 16, f, 2, 4096, collect, &g, &missed), -EBADMSG);
}

static void test_table(void **state)
{
	(void)state;
	struct pf_page_table t = { 0 };
	size_t n;
	assert_null(pf_page_table_spans(&t, 1, 2, &n));
	assert_int_equal(n, 0);
	/* sequential reads merge as they come; a repeat changes nothing; out of order ones are sorted in */
	for (uint64_t p = 0; p < 10; p++)
		assert_int_equal(pf_page_table_add(&t, 1, 2, p * PG, (p + 1) * PG), 0);
	assert_int_equal(pf_page_table_add(&t, 1, 2, 0, PG), 0);
	assert_int_equal(pf_page_table_add(&t, 1, 2, 100 * PG, 101 * PG), 0);
	assert_int_equal(pf_page_table_add(&t, 1, 2, 50 * PG, 52 * PG), 0);
	assert_int_equal(pf_page_table_add(&t, 1, 2, 51 * PG, 53 * PG), 0);
	assert_int_equal(pf_page_table_add(&t, 1, 2, 10 * PG, 11 * PG), 0); /* touches the first span */
	assert_int_equal(pf_page_table_add(&t, 1, 3, 0, PG), 0);            /* another inode */
	assert_int_equal(pf_page_table_add(&t, 9, 2, 0, PG), 0);            /* same inode, another device */
	const struct pf_page_span *s = pf_page_table_spans(&t, 1, 2, &n);
	assert_int_equal(n, 3);
	assert_int_equal(s[0].start, 0);
	assert_int_equal(s[0].end, 11 * PG);
	assert_int_equal(s[1].start, 50 * PG);
	assert_int_equal(s[1].end, 53 * PG);
	assert_int_equal(s[2].start, 100 * PG);
	assert_int_equal(s[2].end, 101 * PG);
	/* many random pages (every other one, backwards): the list is tidied as it grows, the result exact */
	for (uint64_t p = 20000; p-- > 1000;)
		if (p % 2 == 0)
			assert_int_equal(pf_page_table_add(&t, 5, 5, p * PG, (p + 1) * PG), 0);
	s = pf_page_table_spans(&t, 5, 5, &n);
	assert_int_equal(n, 9500);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(s[i].start, (1000 + 2 * i) * PG);
		assert_int_equal(s[i].end, s[i].start + PG);
	}
	/* ...and filling the gaps joins them */
	for (uint64_t p = 1001; p < 20000; p += 2)
		assert_int_equal(pf_page_table_add(&t, 5, 5, p * PG, (p + 1) * PG), 0);
	s = pf_page_table_spans(&t, 5, 5, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].start, 1000 * PG);
	assert_int_equal(s[0].end, 20000 * PG);
	assert_non_null(pf_page_table_spans(&t, 1, 3, &n));
	assert_non_null(pf_page_table_spans(&t, 9, 2, &n));
	pf_page_table_free(&t);
}

/* a page cache of 64 pages: resident[i] says whether page i is in it */
static const char *cache;

static int fake_resident(void *ctx, uint64_t start, uint64_t end)
{
	assert_ptr_equal(ctx, &cache);
	assert_int_equal(start % PG, 0);
	for (uint64_t p = start / PG; p < (end + PG - 1) / PG; p++)
		if (p >= strlen(cache) || cache[p] != 'r')
			return 0;
	return 1;
}

static void test_fill_holes(void **state)
{
	(void)state;
	struct pf_page_span *v;
	size_t n;
	uint64_t filled = 0;
	/* a file read front to back in three read() calls, [0,11) [11,43) [43,45) pages; the kernel gave no event
	 * for the first 11 pages (the batch met a folio still being read) nor for [11,32) (the same in the second
	 * call): the events say [11..] only from 32 on.  Pages 45-60 are readahead, never read. */
	cache = "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr....";
	const struct pf_page_span lost[] = { { 11 * PG, 11 * PG + PG }, { 32 * PG, 45 * PG } };
	/* (the first span: the event of the page the batch dropped, [11, 12); the read's own event came later) */
	assert_int_equal(pf_page_spans_fill(lost, 2, fake_resident, &cache, &v, &n, &filled), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].start, 0);
	assert_int_equal(v[0].end, 45 * PG); /* the readahead past the last read stays out */
	assert_int_equal(filled, 11 * PG + 20 * PG);
	free(v);
	/* holes not wholly resident stay: a page read at 7 and at 40, nothing between in the cache but page 8 */
	cache = ".......rr...............................r.......................";
	const struct pf_page_span apart[] = { { 7 * PG, 8 * PG }, { 40 * PG, 41 * PG } };
	filled = 0;
	assert_int_equal(pf_page_spans_fill(apart, 2, fake_resident, &cache, &v, &n, &filled), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].start, 7 * PG);
	assert_int_equal(v[0].end, 8 * PG);
	assert_int_equal(v[1].start, 40 * PG);
	assert_int_equal(v[1].end, 41 * PG);
	assert_int_equal(filled, 0);
	free(v);
	/* nothing evicted, nothing to fill: the spans as they were; no span: nothing */
	cache = "rrrrrrrr";
	const struct pf_page_span whole[] = { { 0, 8 * PG } };
	assert_int_equal(pf_page_spans_fill(whole, 1, fake_resident, &cache, &v, &n, &filled), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].end, 8 * PG);
	assert_int_equal(filled, 0);
	free(v);
	assert_int_equal(pf_page_spans_fill(NULL, 0, fake_resident, &cache, &v, &n, &filled), 0);
	assert_int_equal(n, 0);
	assert_null(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_line),     cmocka_unit_test(test_fault_and_map_lines),
		cmocka_unit_test(test_task_column),   cmocka_unit_test(test_other_lines),
		cmocka_unit_test(test_table),         cmocka_unit_test(test_fill_holes),
		cmocka_unit_test(test_raw_page),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
