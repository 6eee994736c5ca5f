/* SPDX-License-Identifier: GPL-2.0-or-later */
/* driver: run a fuzz target without libFuzzer, for a machine with gcc only (make fuzz picks it then).
 *
 *   fuzz_TARGET [-t SECONDS] [-n COUNT] [-s SEED] [-a PREFIX] PATH...
 *
 * PATH is a file, or a folder whose files are all read (sorted by name).  Each is fed once as it is; then
 * mutated copies of them, round robin: input i is seed file i % nseeds changed by 1 to 8 mutations (bit flips,
 * bytes set to boundary values or to the characters the text formats use, truncations, insertions, deletions,
 * duplicated ranges, splices with another seed, numbers replaced by extreme ones) drawn from a generator seeded
 * with SEED and i only, so every run of the same corpus feeds the same inputs.  It stops after COUNT mutations
 * of each seed or after SECONDS, whichever comes first (neither given: 10 s; -t 0 alone: the files only).
 *
 * Built with ASan and UBSan: a sanitizer report or an abort (a failed FUZZ_CHECK) ends the run, and the input
 * that caused it is first written to PREFIXcrash-SEED-I; 'fuzz_TARGET PREFIXcrash-SEED-I' feeds it again.
 * The last line says what ran: "NAME: N inputs (S files, M mutations) in T s, no crash". */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sanitizer/common_interface_defs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FUZZ_MAX_LEN (1u << 20) /* larger seed files are refused, mutations are cut to this */

struct seed {
	char *name;
	uint8_t *data;
	size_t len;
};

static struct seed *seeds;
static size_t nseeds;

/* The input being fed, for the death callback. */
static const uint8_t *cur_data;
static size_t cur_len;
static char crash_path[4096];

/* An abort is a failed check: let ASan report it (with a stack) and run the death callback. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_abort=1";
}

static void write_crash(void)
{
	if (!crash_path[0] || !cur_data)
		return;
	int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	for (size_t off = 0; off < cur_len;) {
		ssize_t w = write(fd, cur_data + off, cur_len - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fd);
	static const char msg[] = "driver: the input is in ";
	if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, crash_path, strlen(crash_path)) < 0 || write(2, "\n", 1) < 0)
		return;
}

static void feed(const uint8_t *data, size_t len)
{
	cur_data = data;
	cur_len = len;
	LLVMFuzzerTestOneInput(data, len);
	cur_data = NULL;
}

/* ---- the corpus ---- */

static int add_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	uint8_t *buf = malloc(FUZZ_MAX_LEN + 1);
	size_t len = buf ? fread(buf, 1, FUZZ_MAX_LEN + 1, f) : 0;
	int rc = !buf ? -ENOMEM : ferror(f) ? -EIO : len > FUZZ_MAX_LEN ? -EFBIG : 0;
	fclose(f);
	struct seed *grown = rc ? NULL : realloc(seeds, (nseeds + 1) * sizeof(*seeds));
	char *name = grown ? strdup(path) : NULL;
	if (!rc && !name)
		rc = -ENOMEM;
	if (grown)
		seeds = grown;
	if (rc) {
		free(buf);
		free(name);
		return rc;
	}
	seeds[nseeds++] = (struct seed){ .name = name, .data = buf, .len = len };
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return add_file(path);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;
	for (struct dirent *e; !rc && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char **grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown || asprintf(&grown[n], "%s/%s", path, e->d_name) < 0)
			rc = -ENOMEM;
		else
			n++;
		if (grown)
			names = grown;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_name);
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = add_file(names[i]);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* ---- mutations ---- */

/* splitmix64: small, and the same sequence for the same (seed, i) everywhere. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t below(uint64_t *s, size_t n)
{
	return n ? (size_t)(next(s) % n) : 0;
}

struct buf {
	uint8_t *p;
	size_t len;
};

/* Room for len bytes more at pos (pos <= b->len); the buffer holds FUZZ_MAX_LEN + 64. */
static size_t open_gap(struct buf *b, size_t pos, size_t len)
{
	if (b->len + len > FUZZ_MAX_LEN)
		len = FUZZ_MAX_LEN - b->len;
	memmove(b->p + pos + len, b->p + pos, b->len - pos);
	b->len += len;
	return len;
}

static void mutate(struct buf *b, uint64_t *s, const struct seed *other)
{
	static const uint64_t values[] = { 0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x1000, 0x7fff, 0xffff, 0x7fffffff,
					   0x80000000, 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
					   0x8000000000000000ull, 0xffffffffffffffffull, 64, 48, 80, 32 };
	static const char chars[] = "\n\n\n\t =\"'\\#$-/,.0123456789abcdefghijklmnopqrstuvwxyz";
	static const char *const numbers[] = { "0", "-1", "1", "-0", "4294967295", "4294967296",
					       "9223372036854775807", "9223372036854775808", "-9223372036854775809",
					       "1e7", "9999999.999", "1e308", "1e-320", "nan", "inf", "0x10", "" };
	size_t pos = below(s, b->len + 1);
	switch (below(s, 9)) {
	case 0: /* flip a bit */
		if (b->len)
			b->p[pos % b->len] ^= (uint8_t)(1u << below(s, 8));
		break;
	case 1: { /* a boundary value, little-endian, 1 to 8 bytes */
		size_t w = (size_t)1 << below(s, 4);
		uint64_t v = values[below(s, sizeof(values) / sizeof(values[0]))];
		if (below(s, 2))
			v = -v;
		for (size_t k = 0; k < w && pos + k < b->len; k++)
			b->p[pos + k] = (uint8_t)(v >> (8 * k));
		break;
	}
	case 2: /* a character that means something in the text formats */
		if (b->len)
			b->p[pos % b->len] = (uint8_t)chars[below(s, sizeof(chars) - 1)];
		break;
	case 3: /* cut */
		b->len = pos;
		break;
	case 4: { /* insert random bytes or characters */
		size_t n = open_gap(b, pos, 1 + below(s, 16));
		int text = (int)below(s, 2);
		for (size_t k = 0; k < n; k++)
			b->p[pos + k] = text ? (uint8_t)chars[below(s, sizeof(chars) - 1)] : (uint8_t)next(s);
		break;
	}
	case 5: { /* delete a range */
		size_t n = below(s, b->len - pos + 1);
		if (n > 64)
			n = 64;
		memmove(b->p + pos, b->p + pos + n, b->len - pos - n);
		b->len -= n;
		break;
	}
	case 6: { /* repeat a range somewhere else */
		if (!b->len)
			break;
		size_t from = below(s, b->len), n = 1 + below(s, b->len - from);
		if (n > 256)
			n = 256;
		uint8_t tmp[256];
		memcpy(tmp, b->p + from, n);
		n = open_gap(b, pos, n);
		memcpy(b->p + pos, tmp, n);
		break;
	}
	case 7: { /* splice: this input up to pos, then another seed from somewhere on */
		size_t from = below(s, other->len + 1), n = other->len - from;
		if (pos + n > FUZZ_MAX_LEN)
			n = FUZZ_MAX_LEN - pos;
		memcpy(b->p + pos, other->data + from, n);
		b->len = pos + n;
		break;
	}
	case 8: { /* replace the number around pos (or insert one) by an extreme one */
		while (pos > 0 && b->p[pos - 1] >= '0' && b->p[pos - 1] <= '9')
			pos--;
		size_t end = pos;
		while (end < b->len && ((b->p[end] >= '0' && b->p[end] <= '9') || b->p[end] == '-' || b->p[end] == '.'))
			end++;
		const char *num = numbers[below(s, sizeof(numbers) / sizeof(numbers[0]))];
		size_t nl = strlen(num);
		memmove(b->p + pos, b->p + end, b->len - end);
		b->len -= end - pos;
		nl = open_gap(b, pos, nl);
		memcpy(b->p + pos, num, nl);
		break;
	}
	}
}

/* ---- the run ---- */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "Usage: fuzz_TARGET [-t SECONDS] [-n COUNT] [-s SEED] [-a PREFIX] PATH...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double seconds = -1;
	unsigned long long count = 0, seed = 1;
	const char *prefix = "./";
	int opt;
	while ((opt = getopt(argc, argv, "t:n:s:a:")) != -1) {
		char *end = NULL;
		switch (opt) {
		case 't': seconds = strtod(optarg, &end); break;
		case 'n': count = strtoull(optarg, &end, 10); break;
		case 's': seed = strtoull(optarg, &end, 10); break;
		case 'a': prefix = optarg; break;
		default: usage();
		}
		if (end && (*end || end == optarg))
			usage();
	}
	if (optind >= argc)
		usage();
	if (seconds < 0)
		seconds = count ? 0 : 10;
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (int i = optind; i < argc; i++) {
		int rc = add_path(argv[i]);
		if (rc) {
			fprintf(stderr, "%s: %s: %s\n", name, argv[i], strerror(-rc));
			return 2;
		}
	}
	__sanitizer_set_death_callback(write_crash);

	double start = now();
	unsigned long long inputs = 0, mutations = 0;
	for (size_t i = 0; i < nseeds; i++, inputs++) {
		snprintf(crash_path, sizeof(crash_path), "%scrash-%s", prefix, strrchr(seeds[i].name, '/') ?
										  strrchr(seeds[i].name, '/') + 1 : seeds[i].name);
		feed(seeds[i].data, seeds[i].len);
	}
	struct buf b = { .p = malloc(FUZZ_MAX_LEN + 64) };
	if (!b.p)
		return 2;
	for (uint64_t i = 0; nseeds && (count || seconds > 0); i++) {
		if ((count && i >= count * nseeds) || (seconds > 0 && (i & 63) == 0 && now() - start >= seconds))
			break;
		uint64_t s = seed * 0x100000001b3ull ^ i;
		const struct seed *from = &seeds[i % nseeds];
		memcpy(b.p, from->data, from->len);
		b.len = from->len;
		for (size_t k = 1 + below(&s, 8); k > 0; k--)
			mutate(&b, &s, &seeds[below(&s, nseeds)]);
		snprintf(crash_path, sizeof(crash_path), "%scrash-%llu-%" PRIu64, prefix, seed, i);
		feed(b.p, b.len);
		inputs++;
		mutations++;
	}
	free(b.p);
	printf("%s: %llu inputs (%zu files, %llu mutations) in %.0f s, no crash\n", name, inputs, nseeds, mutations,
	       now() - start);
	for (size_t i = 0; i < nseeds; i++) {
		free(seeds[i].name);
		free(seeds[i].data);
	}
	free(seeds);
	return 0;
}
