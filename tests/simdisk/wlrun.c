/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wlrun: replay a boot's reads — open each listed file in order and read its first BYTES bytes — and
 * report how long it took.
 *
 *   wlrun [-C DIR] [-q] [-r] WORKLOAD
 *
 * WORKLOAD lines are "BYTES<TAB>PATH" (tests/mkbootset.sh writes them from a real boot trace); a relative
 * PATH is taken below DIR.  BYTES is what the boot had of the file in the page cache (rounded up to pages,
 * cut at the file size).  Readahead is switched off on each file (POSIX_FADV_RANDOM) so exactly those bytes
 * are read — a prefetcher that recorded them can then cover them all.  -r keeps the kernel's readahead, as a
 * real boot has it: the page cache then holds more than was read (what a trace must not take for the boot's
 * reads: results/bench-layout-trim.sh).  Missing files are counted, not fatal.
 * Prints one line: "files N missing N bytes N seconds S".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1u << 20)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read up to want bytes from the start of path; returns bytes read or -errno. */
static long long read_file(const char *path, unsigned long long want, char *buf, int readahead)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (!readahead)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	long long got = 0;
	while ((unsigned long long)got < want) {
		unsigned long long left = want - (unsigned long long)got;
		ssize_t n = read(fd, buf, left < CHUNK ? left : CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			got = -errno;
			break;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	return got;
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	int quiet = 0, readahead = 0, opt;
	while ((opt = getopt(argc, argv, "C:qrh")) != -1) {
		switch (opt) {
		case 'C': dir = optarg; break;
		case 'q': quiet = 1; break;
		case 'r': readahead = 1; break;
		case 'h':
			printf("Usage: wlrun [-C DIR] [-q] [-r] WORKLOAD\n");
			return 0;
		default: return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "Usage: wlrun [-C DIR] [-q] [-r] WORKLOAD\n");
		return 2;
	}
	FILE *wl = fopen(argv[optind], "re");
	if (!wl) {
		fprintf(stderr, "wlrun: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if (dir && chdir(dir)) {
		fprintf(stderr, "wlrun: %s: %s\n", dir, strerror(errno));
		fclose(wl);
		return 1;
	}
	char *buf = malloc(CHUNK), *line = NULL;
	size_t cap = 0;
	unsigned long files = 0, missing = 0, lineno = 0;
	unsigned long long bytes = 0;
	int rc = 0;
	double t0 = now();
	while (buf && getline(&line, &cap, wl) > 0) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		char *tab = strchr(line, '\t'), *end;
		if (!line[0] || line[0] == '#')
			continue;
		unsigned long long want = tab ? strtoull(line, &end, 10) : 0;
		if (!tab || end != tab || !tab[1]) {
			fprintf(stderr, "wlrun: %s:%lu: expected BYTES<TAB>PATH\n", argv[optind], lineno);
			rc = 1;
			break;
		}
		const char *path = tab + 1;
		if (dir && path[0] == '/')
			path++; /* paths of the traced system, relative to DIR */
		long long got = read_file(path, want, buf, readahead);
		if (got < 0) {
			missing++;
			if (!quiet)
				fprintf(stderr, "wlrun: %s: %s\n", path, strerror((int)-got));
			continue;
		}
		files++;
		bytes += (unsigned long long)got;
	}
	double secs = now() - t0;
	if (!buf) {
		fprintf(stderr, "wlrun: out of memory\n");
		rc = 1;
	}
	if (!rc)
		printf("files %lu missing %lu bytes %llu seconds %.6f\n", files, missing, bytes, secs);
	free(line);
	free(buf);
	fclose(wl);
	return rc;
}
