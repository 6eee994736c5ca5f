/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mkbootset: fill a mounted, empty file system with a real boot's file set scattered as an install leaves
 * it, and write the boot's reads as a workload.
 *
 *   mkbootset --tsv BOOT.tsv --workload OUT [--seed N] [--scale N] [--ratio R] [--host-root DIR]
 *             [--package-order | --fresh] DIR
 *
 * BOOT.tsv is a trace of tests/data/debian12-boot ("order first_ts path size resident_bytes").  Each boot
 * file is created at its path below DIR (and, with --scale N > 1, again below DIR/bootK/ for K = 2..N); its
 * content is the host's file at the same path when that has the same size, pseudo-random filler otherwise.
 * R times as much other data (sizes drawn from the boot set's own) goes in beside it.
 *
 * Why the boot files end up scattered: ext4 places small files by creation order (per-CPU preallocation),
 * so the files are written the way dpkg leaves them — packages (small bundles of neighbouring paths) in an
 * order unrelated to the boot's, boot files mixed with other data — and then aged: a quarter of the other
 * data is deleted, a fifth of the boot files are upgraded (rewritten and renamed over), new data fills the
 * holes.  Each file's writeback is started as soon as it is written (sync_file_range: ext4 allocates its
 * blocks then, without the journal commit of an fsync) and the process stays on one CPU, so allocation
 * follows this order.  The same arguments give the same files in the same order (block placement is up to the kernel).
 *
 * --package-order: the root filesystem as a package install leaves it instead: the boot files written in path
 * order, each followed by 2-20 siblings in its directory (lognormal sizes, R times the boot data in all), then
 * 30 % of the siblings deleted; no upgrades.  The boot files then lie in path order with holes between them
 * (issue #13: the case where a reorder's compaction made the replay slower).
 *
 * --fresh: a fresh contiguous install: the boot files alone, written in path order onto the empty filesystem,
 * nothing else, nothing deleted (--ratio is ignored).  Each file then lies whole, no other data among them, where
 * ext4 puts a fresh install (directories spread over the block groups, small files packed together): the best
 * case an installer leaves, against which a reorder must not lose.
 *
 * OUT gets the reads, in boot order: "BYTES<TAB>/PATH" (files untraced at boot start come first).
 * Prints one summary line.
 */
#include "array.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct bootfile {
	char *path;
	uint64_t size, resident;
	long order;          /* first-touch rank; 0 = untraced (opened before tracing started) */
};

struct item {
	char *path;          /* relative to DIR, no leading slash */
	uint64_t size;
	const char *host;    /* host path with the same size, or NULL */
	int boot;            /* a boot file */
	int bundle;          /* creation unit */
	uint64_t key;        /* random order of bundles */
	int deleted;
	int upgrade;         /* rewritten in the ageing pass */
};

static uint64_t rng, content_seed;

static uint64_t rnd(void)
{
	/* splitmix64: tiny and deterministic */
	uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "mkbootset: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory", NULL);
	return p;
}

static char *xasprintf(const char *fmt, const char *a, const char *b)
{
	char *s;
	if (asprintf(&s, fmt, a, b) < 0)
		die("out of memory", NULL);
	return s;
}

static struct bootfile *boot;
static size_t nboot;
static struct item *items;
static size_t nitems, capitems;

static struct item *add_item(char *path, uint64_t size, const char *host, int isboot)
{
	if (PF_ARRAY_RESERVE(items, capitems, nitems + 1, 1024))
		die("out of memory", NULL);
	items[nitems] = (struct item){ .path = path, .size = size, .host = host, .boot = isboot };
	return &items[nitems++];
}

static void load_tsv(const char *tsv)
{
	FILE *f = fopen(tsv, "re");
	if (!f)
		die(pf_strerror(-errno), tsv);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		char order[32], ts[32], path[4096];
		unsigned long long size, res;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%31[^\t]\t%31[^\t]\t%4095[^\t]\t%llu\t%llu", order, ts, path, &size, &res) != 5 ||
		    path[0] != '/' || strstr(path, "/../"))
			die("bad line in", tsv);
		boot = xrealloc(boot, (nboot + 1) * sizeof(*boot));
		boot[nboot++] = (struct bootfile){ .path = strdup(path), .size = size, .resident = res,
						   .order = order[0] == '-' ? 0 : atol(order) };
	}
	free(line);
	fclose(f);
	if (!nboot)
		die("no files in", tsv);
}

/* Untraced files first (they were open before tracing began), then by first touch; stable. */
static int by_access(const void *a, const void *b)
{
	const struct bootfile *x = a, *y = b;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct item *)a)->path, ((const struct item *)b)->path);
}

static int by_key(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return strcmp(x->path, y->path);
}

static void mkparents(char *path)
{
	for (char *p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST)
			die(pf_strerror(-errno), path);
		*p = '/';
	}
}

static void filler(unsigned char *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 8) {
		seed += 0x9E3779B97F4A7C15ULL;
		uint64_t z = (seed ^ (seed >> 31)) * 0xBF58476D1CE4E5B9ULL;
		z ^= z >> 29;
		memcpy(buf + i, &z, len - i < 8 ? len - i : 8);
	}
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* Write (or, for an upgrade, rewrite and rename over) one file and start its writeback. */
static void write_item(const struct item *it, int upgrade, unsigned char *buf, size_t bufsz)
{
	char *tmp = upgrade ? xasprintf("%s%s", it->path, ".dpkg-new") : NULL;
	const char *dst = tmp ? tmp : it->path;
	char *p = strdup(dst);
	mkparents(p);
	free(p);
	int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int src = it->host ? open(it->host, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		die(pf_strerror(-errno), dst);
	uint64_t seed = hash(it->path) ^ content_seed, done = 0;
	while (done < it->size) {
		size_t n = it->size - done < bufsz ? (size_t)(it->size - done) : bufsz;
		if (src < 0 || pread(src, buf, n, (off_t)done) != (ssize_t)n) {
			filler(buf, n, seed + done); /* host file unreadable or changed: filler */
			if (src >= 0)
				close(src);
			src = -1;
		}
		if (write(fd, buf, n) != (ssize_t)n)
			die(pf_strerror(errno ? -errno : -ENOSPC), dst);
		done += n;
	}
	if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) || close(fd))
		die(pf_strerror(-errno), dst);
	if (src >= 0)
		close(src);
	if (tmp && rename(tmp, it->path))
		die(pf_strerror(-errno), it->path);
	free(tmp);
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: mkbootset --tsv BOOT.tsv --workload OUT [--seed N] [--scale N] [--ratio R]\n"
		     "                 [--host-root DIR] [--package-order | --fresh] DIR\n");
}

/* A standard normal draw (Box-Muller). */
static double gauss(void)
{
	double u = ((double)(rnd() >> 11) + 0.5) / 9007199254740992.0, v = (double)(rnd() >> 11) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* --package-order: boot files (items[0..nboot)) in path order, each followed by its siblings; write, then
 * delete 30 % of the siblings.  Returns the bytes of other data written; *freed gets those deleted. */
static uint64_t package_order(double ratio, uint64_t bootbytes, uint64_t *freed)
{
	size_t nb = nitems;
	qsort(items, nb, sizeof(*items), by_path);
	/* lognormal sizes, sigma 1.5, whose mean makes the siblings (11 per boot file on average) ratio times the
	 * boot data */
	const double sigma = 1.5;
	double mean = ratio * (double)bootbytes / (11.0 * (double)(nb ? nb : 1));
	double mu = log(mean > 1 ? mean : 1) - sigma * sigma / 2;
	struct item *order = xrealloc(NULL, nb * 21 * sizeof(*order));
	size_t n = 0;
	uint64_t other = 0;
	for (size_t i = 0; i < nb; i++) {
		order[n++] = items[i];
		const char *slash = strrchr(items[i].path, '/');
		int dirlen = slash ? (int)(slash - items[i].path) : 0;
		for (uint64_t k = 2 + rnd() % 19; k; k--) {
			double sz = exp(mu + sigma * gauss());
			uint64_t size = sz > 64e6 ? (uint64_t)64e6 : (uint64_t)sz;
			char name[32];
			snprintf(name, sizeof(name), "s%06zu.dat", n);
			char *path = dirlen ? NULL : strdup(name);
			if (dirlen && asprintf(&path, "%.*s/%s", dirlen, items[i].path, name) < 0)
				die("out of memory", NULL);
			order[n++] = (struct item){ .path = path, .size = size };
			other += size;
		}
	}
	free(items);
	items = order;
	nitems = capitems = n;
	size_t bufsz = 1 << 20;
	unsigned char *buf = xrealloc(NULL, bufsz);
	for (size_t i = 0; i < nitems; i++)
		write_item(&items[i], 0, buf, bufsz);
	free(buf);
	*freed = 0;
	for (size_t i = 0; i < nitems; i++)
		if (!items[i].boot && rnd() % 10 < 3) {
			if (unlink(items[i].path))
				die(pf_strerror(-errno), items[i].path);
			*freed += items[i].size;
		}
	return other;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "tsv", 1, 0, 't' },   { "workload", 1, 0, 'w' },  { "seed", 1, 0, 's' }, { "scale", 1, 0, 'n' },
		{ "ratio", 1, 0, 'r' }, { "host-root", 1, 0, 'H' }, { "help", 0, 0, 'h' }, { "package-order", 0, 0, 'P' },
		{ "fresh", 0, 0, 'F' },         { 0, 0, 0, 0 },
	};
	int pkg = 0, fresh = 0;
	const char *tsv = NULL, *wlpath = NULL, *host = NULL;
	unsigned long long seed = 1;
	long scale = 1;
	double ratio = 8;
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 't': tsv = optarg; break;
		case 'w': wlpath = optarg; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': scale = atol(optarg); break;
		case 'r': ratio = atof(optarg); break;
		case 'H': host = optarg; break;
		case 'P': pkg = 1; break;
		case 'F': fresh = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!tsv || !wlpath || optind != argc - 1 || scale < 1 || scale > 100 || !(ratio >= 0 && ratio <= 100) ||
	    (pkg && fresh)) {
		usage(stderr);
		return 2;
	}
	rng = content_seed = seed;
	load_tsv(tsv);
	if (chdir(argv[optind]))
		die(pf_strerror(-errno), argv[optind]);
	/* One CPU: ext4's per-CPU preallocation then follows the creation order alone. */
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	/* The boot files of every copy, with host content where the host has the same file. */
	uint64_t bootbytes = 0;
	unsigned hostfiles = 0;
	for (size_t i = 0; i < nboot; i++) {
		struct stat st;
		char *hp = host ? xasprintf("%s%s", host, boot[i].path) : NULL;
		if (hp && (stat(hp, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != boot[i].size)) {
			free(hp);
			hp = NULL;
		}
		hostfiles += hp != NULL;
		for (long k = 1; k <= scale; k++) {
			char pre[32];
			snprintf(pre, sizeof(pre), "boot%ld/", k);
			add_item(xasprintf("%s%s", k == 1 ? "" : pre, boot[i].path + 1), boot[i].size, hp, 1);
			bootbytes += boot[i].size;
		}
	}
	uint64_t other = 0, freed = 0;
	unsigned upgraded = 0;
	size_t nbootitems = nitems;
	if (fresh) {
		qsort(items, nitems, sizeof(*items), by_path);
		size_t bufsz = 1 << 20;
		unsigned char *buf = xrealloc(NULL, bufsz);
		for (size_t i = 0; i < nitems; i++)
			write_item(&items[i], 0, buf, bufsz);
		free(buf);
		goto workload;
	}
	if (pkg) {
		other = package_order(ratio, bootbytes, &freed);
		other -= freed; /* the summary counts written = other + freed */
		goto workload;
	}
	/* Packages: bundles of 1-6 neighbouring paths. */
	qsort(items, nitems, sizeof(*items), by_path);
	int bundle = 0;
	for (size_t i = 0; i < nitems; bundle++)
		for (uint64_t n = 1 + rnd() % 6; n && i < nitems; n--)
			items[i++].bundle = bundle;

	/* Other data: sizes drawn from the boot set, in bundles of 1-20 files under package directories
	 * spread over the usual trees (and sometimes beside boot files). */
	static const char *const roots[] = { "usr/share", "usr/lib", "usr/lib/x86_64-linux-gnu", "usr/bin", "var/lib",
					     "opt", "usr/share/doc", "usr/lib/python3/dist-packages" };
	uint64_t want = (uint64_t)(ratio * (double)bootbytes);
	while (other < want) {
		char dir[256];
		const struct item *near = &items[rnd() % nbootitems];
		if (rnd() % 4 == 0) { /* beside a boot file: same directory */
			const char *slash = strrchr(near->path, '/');
			snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - near->path) : 0, near->path);
		} else {
			snprintf(dir, sizeof(dir), "%s/pkg%04d", roots[rnd() % (sizeof(roots) / sizeof(roots[0]))], bundle);
		}
		for (uint64_t n = 1 + rnd() % 20; n && other < want; n--) {
			uint64_t size = items[rnd() % nbootitems].size * (50 + rnd() % 150) / 100 + rnd() % 4096;
			char name[32];
			snprintf(name, sizeof(name), "f%06zu.dat", nitems);
			add_item(xasprintf(dir[0] ? "%s/%s" : "%s%s", dir, name), size, NULL, 0)->bundle = bundle;
			other += size;
		}
		bundle++;
	}
	/* Install order: bundles shuffled. */
	uint64_t *bkey = xrealloc(NULL, (size_t)bundle * sizeof(*bkey));
	for (int b = 0; b < bundle; b++)
		bkey[b] = rnd();
	for (size_t i = 0; i < nitems; i++)
		items[i].key = bkey[items[i].bundle];
	qsort(items, nitems, sizeof(*items), by_key);

	size_t bufsz = 1 << 20;
	unsigned char *buf = xrealloc(NULL, bufsz);
	for (size_t i = 0; i < nitems; i++)
		write_item(&items[i], 0, buf, bufsz);

	/* Ageing: delete a quarter of the other data, then upgrades of a fifth of the boot files mixed with
	 * new data of the deleted volume, in random order. */
	for (size_t i = 0; i < nitems; i++)
		if (!items[i].boot && rnd() % 4 == 0) {
			if (unlink(items[i].path))
				die(pf_strerror(-errno), items[i].path);
			items[i].deleted = 1;
			freed += items[i].size;
		}
	size_t nold = nitems;
	for (size_t i = 0; i < nold; i++) {
		if (items[i].deleted)
			add_item(xasprintf("%s%s", items[i].path, ".new"), items[i].size, NULL, 0); /* moves items */
		else if (items[i].boot && rnd() % 5 == 0)
			items[i].upgrade = 1;
	}
	size_t *age = xrealloc(NULL, (nitems + 1) * sizeof(*age)), nage = 0;
	for (size_t i = 0; i < nitems; i++)
		if (i >= nold || items[i].upgrade)
			age[nage++] = i;
	for (size_t i = nage; i > 1; i--) { /* Fisher-Yates */
		size_t j = rnd() % i, t = age[i - 1];
		age[i - 1] = age[j];
		age[j] = t;
	}
	for (size_t i = 0; i < nage; i++) {
		write_item(&items[age[i]], items[age[i]].upgrade, buf, bufsz);
		upgraded += items[age[i]].upgrade;
	}
	free(age);
	free(bkey);
	free(buf);

workload:

	/* The workload: every copy's read of boot entry i, for i in boot order. */
	qsort(boot, nboot, sizeof(*boot), by_access);
	FILE *wl = fopen(wlpath, "we");
	if (!wl)
		die(pf_strerror(-errno), wlpath);
	uint64_t readbytes = 0;
	for (size_t i = 0; i < nboot; i++) {
		uint64_t pages = (boot[i].size + 4095) / 4096 * 4096;
		uint64_t res = boot[i].resident < pages ? boot[i].resident : pages;
		for (long k = 1; k <= scale; k++) {
			if (k == 1)
				fprintf(wl, "%llu\t%s\n", (unsigned long long)res, boot[i].path);
			else
				fprintf(wl, "%llu\t/boot%ld%s\n", (unsigned long long)res, k, boot[i].path);
			readbytes += res;
		}
	}
	if (fclose(wl))
		die(pf_strerror(-errno), wlpath);
	printf("mkbootset: %zu boot files (%u from the host, %u upgraded), %.1f MiB; %zu other files, %.1f MiB "
	       "(%.1f MiB deleted); workload %zu reads, %.1f MiB\n",
	       nboot * (size_t)scale, hostfiles * (unsigned)scale, upgraded, bootbytes / 1048576.0,
	       nitems - nbootitems, (other + freed) / 1048576.0, freed / 1048576.0, nboot * (size_t)scale,
	       readbytes / 1048576.0);
	return 0;
}
