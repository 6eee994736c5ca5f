/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pf_mklayout: build a layout (or a trace) of files on mounted filesystems from lines of text, as if a boot had
 * read them in that order.  For replay tests and benchmarks.
 *
 *   pf_mklayout [--kind layout|trace] [--no-phys] [--init[=PREFIX]] [--dir-blocks] OUTPUT [INPUT]
 *
 * INPUT (default stdin): one read per line, in access order; blank lines and '#' comments are skipped.
 *   PATH OFFSET LENGTH   bytes; rounded out to whole pages; LENGTH 0 = to the end of the file
 *   PATH                 a regular file: all of it; a directory: a PF_FILE_DIR entry (the boot listed it)
 * The same path may appear on several lines (one extent each); its first line sets its first-touch rank.
 * Identity (inode, generation, size, mtime, ctime) comes from stat and FS_IOC_GETVERSION now, the
 * filesystem record from blkid (UUID), statvfs (block size), sysfs (medium) and the mount point found by
 * walking up to where st_dev changes.  Physical blocks come from FIEMAP unless --no-phys (then replay
 * maps them itself).  --init flags every regular file PF_FILE_INIT (mapped by init), --init=PREFIX those whose
 * path begins with PREFIX; --dir-blocks records a directory's blocks (FIEMAP) as the tracer does.  The output is
 * written atomically with mode 0644 (root-owned when run as root). */
#include "error.h"
#include "fiemap.h"
#include "format.h"
#include "fsid.h"
#include "medium.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define PAGE 4096ull

static int no_phys;
static int all_init; /* --init: every regular file as one init (PID 1) had mapped */
static const char *init_prefix; /* --init=PREFIX: only those whose path begins with PREFIX */
static int dir_blocks; /* --dir-blocks: a directory's blocks as an extent, as the tracer records them */

static void mountpoint_of(const char *path, dev_t dev, char *out, size_t len)
{
	char cur[PATH_MAX];
	snprintf(cur, sizeof(cur), "%s", path);
	for (;;) {
		if (!strcmp(cur, "/"))
			break;
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof(tmp), "%s", cur);
		char *parent = dirname(tmp);
		struct stat st;
		if (stat(parent, &st) < 0 || st.st_dev != dev)
			break;
		snprintf(cur, sizeof(cur), "%s", parent);
	}
	snprintf(out, len, "%s", cur);
}

static int fs_index(struct pf_image *img, const char *path, const struct stat *st)
{
	struct stat ms;
	for (uint32_t i = 0; i < img->nfs; i++)
		if (stat(img->fs[i].mountpoint, &ms) == 0 && ms.st_dev == st->st_dev)
			return (int)i;
	char mnt[PATH_MAX];
	mountpoint_of(path, st->st_dev, mnt, sizeof(mnt));
	struct pf_fs fs = { .dev = st->st_dev, .mountpoint = mnt };
	struct pf_fsid id;
	if (pf_fsid_from_devno(st->st_dev, &id) == 0)
		memcpy(fs.uuid, id.uuid, 16);
	struct statvfs sv;
	fs.block_size = statvfs(mnt, &sv) == 0 ? (uint32_t)sv.f_bsize : 4096;
	fs.medium = (uint32_t)pf_medium_of_devno(st->st_dev, 0);
	return pf_image_add_fs(img, &fs);
}

/* fs block holding byte offset of fd, or -1 */
static int64_t physical_of(int fd, uint64_t offset, uint32_t bs)
{
	struct pf_fiemap w;
	int64_t p = -1;
	if (pf_fiemap_open(&w, fd, offset, PAGE, 1) == 0 && pf_fiemap_next(&w) > 0) {
		const struct fiemap_extent *e = &w.ext[0];
		if (e->fe_logical <= offset && !(e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)))
			p = (int64_t)((e->fe_physical + (offset - e->fe_logical)) / bs);
	}
	pf_fiemap_close(&w);
	return p;
}

/* One extent of file fi; place: its physical block from FIEMAP now (files and directories alike). */
static int add_extent(struct pf_image *img, int fi, const char *path, uint64_t offset, uint64_t length, int place)
{
	struct pf_extent e = { .file = (uint32_t)fi, .offset = offset, .length = length };
	if (place) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		int64_t p = fd >= 0 ? physical_of(fd, offset, img->fs[img->files[fi].fs].block_size) : -1;
		if (fd >= 0)
			close(fd);
		if (p >= 0) {
			e.physical = (uint64_t)p;
			e.flags = PF_EXT_PHYS_KNOWN;
		}
	}
	return pf_image_add_extent(img, &e) < 0 ? -1 : 0;
}

static int add_line(struct pf_image *img, char *line, unsigned lineno)
{
	char path[PATH_MAX];
	unsigned long long off = 0, len = 0;
	int n = sscanf(line, "%4095s %llu %llu", path, &off, &len);
	if (n != 1 && n != 3) {
		fprintf(stderr, "pf_mklayout: line %u: want 'PATH [OFFSET LENGTH]'\n", lineno);
		return -1;
	}
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "pf_mklayout: line %u: %s: %s\n", lineno, path, pf_strerror(-errno));
		return -1;
	}
	int fi = -1;
	for (uint32_t i = 0; i < img->nfiles; i++)
		if (!strcmp(img->files[i].path, path)) {
			fi = (int)i;
			break;
		}
	if (fi < 0) {
		int fs = fs_index(img, path, &st);
		if (fs < 0)
			return -1;
		struct pf_file f = { .fs = (uint32_t)fs, .ino = st.st_ino, .mode = st.st_mode, .size = (uint64_t)st.st_size,
				     .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
				     .ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
				     .first_order = img->nfiles + 1, .first_ns = (uint64_t)(img->nfiles + 1) * 1000000,
				     .boots = 1, .path = path };
		if (S_ISDIR(st.st_mode))
			f.flags |= PF_FILE_DIR;
		else if (!st.st_size)
			f.flags |= PF_FILE_METADATA;
		if (all_init && S_ISREG(st.st_mode) && (!init_prefix || !strncmp(path, init_prefix, strlen(init_prefix))))
			f.flags |= PF_FILE_INIT;
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		unsigned int gen;
		if (fd >= 0 && ioctl(fd, FS_IOC_GETVERSION, &gen) == 0)
			f.generation = gen;
		if (fd >= 0)
			close(fd);
		fi = pf_image_add_file(img, &f);
		if (fi < 0)
			return -1;
	}
	if (S_ISDIR(st.st_mode) && dir_blocks && n == 1 && st.st_size)
		return add_extent(img, fi, path, 0, ((uint64_t)st.st_size + PAGE - 1) / PAGE * PAGE, 1);
	if (!S_ISREG(st.st_mode) || !st.st_size)
		return 0;
	uint64_t size = (uint64_t)st.st_size, start = off / PAGE * PAGE;
	uint64_t end = n == 1 || !len ? size : off + len;
	if (end > size)
		end = size;
	end = (end + PAGE - 1) / PAGE * PAGE;
	if (start >= end)
		return 0;
	return add_extent(img, fi, path, start, end - start, !no_phys);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "kind", required_argument, NULL, 'k' },
					      { "no-phys", no_argument, NULL, 'n' },
					      { "init", optional_argument, NULL, 'i' },
					      { "dir-blocks", no_argument, NULL, 'd' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	enum pf_kind kind = PF_KIND_LAYOUT;
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'k' && !strcmp(optarg, "layout"))
			kind = PF_KIND_LAYOUT;
		else if (c == 'k' && !strcmp(optarg, "trace"))
			kind = PF_KIND_TRACE;
		else if (c == 'n')
			no_phys = 1;
		else if (c == 'i') {
			all_init = 1;
			init_prefix = optarg;
		}
		else if (c == 'd')
			dir_blocks = 1;
		else {
			fprintf(c == 'h' ? stdout : stderr,
				"Usage: pf_mklayout [--kind layout|trace] [--no-phys] [--init[=PREFIX]] [--dir-blocks] OUTPUT [INPUT]\n"
				"INPUT lines: PATH [OFFSET LENGTH] (bytes, access order)\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind != argc - 1 && optind != argc - 2) {
		fprintf(stderr, "Usage: pf_mklayout [--kind layout|trace] [--no-phys] [--init[=PREFIX]] [--dir-blocks] OUTPUT [INPUT]\n");
		return 2;
	}
	const char *output = argv[optind];
	FILE *in = optind + 1 < argc ? fopen(argv[optind + 1], "re") : stdin;
	if (!in) {
		fprintf(stderr, "pf_mklayout: %s: %s\n", argv[optind + 1], pf_strerror(-errno));
		return 1;
	}
	struct pf_image *img = pf_image_new(kind);
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int rc = img ? 0 : -1;
	while (!rc && getline(&line, &cap, in) > 0) {
		lineno++;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && *p != '\n' && *p != '#')
			rc = add_line(img, p, lineno);
	}
	free(line);
	if (in != stdin)
		fclose(in);
	if (!rc) {
		img->boots = 1;
		int err = pf_image_save(output, img);
		if (err) {
			fprintf(stderr, "pf_mklayout: %s: %s\n", output, pf_strerror(err));
			rc = -1;
		}
	}
	pf_image_free(img);
	return rc ? 1 : 0;
}
