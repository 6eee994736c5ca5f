/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mklayout: write a layout for the files of an unmounted ext2/3/4 image, as if a boot had read them.
 *
 *   mklayout [--order random|forward|reverse] [--seed N] [--percent P] [--dirs] [--partial] [--special]
 *            [--bad-uuid] [--paths FILE] [--inode N] -o LAYOUT IMAGE
 *
 * Picks P % of the non-empty regular files (or the paths listed in FILE, one per line, relative to the
 * root), reads their identity and block map with libext2fs, and writes a PF_KIND_LAYOUT through the
 * format.h builder.  The access order is what reorder will lay the blocks out in:
 *   forward  ascending physical block of each range (what is on disk already: little to do)
 *   reverse  descending physical block (everything has to move)
 *   random   shuffled ranges, a file's ranges may be far apart in the order
 * --partial records only some ranges of big files (a boot reads the head of a library and a few pages),
 * --dirs adds the directories on the way to every picked file, --bad-uuid writes a wrong filesystem UUID,
 * --special always picks mkaged's edge cases (sparse, prealloc, hardlink); --inode N also picks inode N as a
 * regular file, named "/inode-N" (one the directories do not name: the orphan file, a quota inode).
 */
#include "array.h"
#include "error.h"
#include "format.h"

#include <errno.h>
#include <ext2fs/ext2fs.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096u

enum order { ORDER_FORWARD, ORDER_REVERSE, ORDER_RANDOM };

struct cand {
	ext2_ino_t ino;
	int is_dir;
	char *path;
};

struct walk {
	ext2_filsys fs;
	struct cand *c;
	size_t n, cap;
	char prefix[4096];
	int err;
};

struct range {
	uint32_t file;
	uint64_t offset, length, physical;
};

static uint64_t rng_state = 1;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static int add_cand(struct walk *w, ext2_ino_t ino, int is_dir, const char *path)
{
	if (PF_ARRAY_RESERVE(w->c, w->cap, w->n + 1, 256))
		return -1;
	w->c[w->n].ino = ino;
	w->c[w->n].is_dir = is_dir;
	w->c[w->n].path = strdup(path);
	if (!w->c[w->n].path)
		return -1;
	w->n++;
	return 0;
}

static int walk_dir(struct walk *w, ext2_ino_t dir);

static int walk_entry(ext2_ino_t dir, int entry, struct ext2_dir_entry *d, int offset, int blocksize, char *buf,
		      void *priv)
{
	(void)dir;
	(void)entry;
	(void)offset;
	(void)blocksize;
	(void)buf;
	struct walk *w = priv;
	int len = ext2fs_dirent_name_len(d);
	if ((len == 1 && d->name[0] == '.') || (len == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	if (len == 10 && !memcmp(d->name, "lost+found", 10) && !w->prefix[0])
		return 0;
	struct ext2_inode in;
	if (ext2fs_read_inode(w->fs, d->inode, &in)) {
		w->err = 1;
		return DIRENT_ABORT;
	}
	size_t plen = strlen(w->prefix);
	if (plen + (size_t)len + 2 >= sizeof(w->prefix))
		return 0;
	w->prefix[plen] = '/';
	memcpy(w->prefix + plen + 1, d->name, (size_t)len);
	w->prefix[plen + 1 + len] = 0;
	if (LINUX_S_ISDIR(in.i_mode)) {
		if (add_cand(w, d->inode, 1, w->prefix) < 0 || walk_dir(w, d->inode) < 0)
			w->err = 1;
	} else if (LINUX_S_ISREG(in.i_mode) && EXT2_I_SIZE(&in) > 0) {
		if (add_cand(w, d->inode, 0, w->prefix) < 0)
			w->err = 1;
	}
	w->prefix[plen] = 0;
	return w->err ? DIRENT_ABORT : 0;
}

static int walk_dir(struct walk *w, ext2_ino_t dir)
{
	errcode_t e = ext2fs_dir_iterate2(w->fs, dir, 0, NULL, walk_entry, w);
	return e || w->err ? -1 : 0;
}

static int64_t ts_ns(uint32_t sec, uint32_t extra, int has_extra)
{
	/* ext4 extra field: low 2 bits extend the epoch, the rest is nanoseconds */
	int64_t s = (int32_t)sec;
	if (has_extra) {
		s += (int64_t)(extra & 3) << 32;
		return s * 1000000000LL + (extra >> 2);
	}
	return s * 1000000000LL;
}

static int push(struct range **rs, size_t *n, size_t *cap, const struct range *r)
{
	if (PF_ARRAY_RESERVE(*rs, *cap, *n + 1, 1024))
		return -1;
	(*rs)[(*n)++] = *r;
	return 0;
}

/* Ranges of file bytes [from, to) split where the physical mapping jumps; holes and unwritten extents are
 * skipped (a boot finds nothing on disk to read there). */
static int map_ranges(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode *in, uint32_t fidx, uint64_t from, uint64_t to,
		      struct range **rs, size_t *n, size_t *cap)
{
	uint64_t bs = fs->blocksize;
	size_t first = *n;
	struct range cur = { .file = fidx };
	int have = 0;
	for (uint64_t lb = from / bs; lb * bs < to; lb++) {
		blk64_t pb = 0;
		int ret_flags = 0;
		if (ext2fs_bmap2(fs, ino, in, NULL, 0, lb, &ret_flags, &pb))
			return -1;
		int mapped = pb != 0 && !(ret_flags & BMAP_RET_UNINIT);
		if (mapped && have && cur.physical + cur.length / bs == pb) {
			cur.length += bs;
			continue;
		}
		if (have && push(rs, n, cap, &cur) < 0)
			return -1;
		have = mapped;
		cur.offset = lb * bs;
		cur.length = bs;
		cur.physical = pb;
	}
	if (have && push(rs, n, cap, &cur) < 0)
		return -1;
	/* The tracer records page-aligned byte ranges with the physical block of their first byte: widen every
	 * run to pages and merge the ones that now touch (with 1 KiB blocks a page can span two runs). */
	size_t out = first;
	for (size_t i = first; i < *n; i++) {
		struct range r = (*rs)[i];
		uint64_t e = (r.offset + r.length + PAGE - 1) / PAGE * PAGE;
		r.offset = r.offset / PAGE * PAGE;
		r.length = e - r.offset;
		if (out > first && (*rs)[out - 1].offset + (*rs)[out - 1].length > r.offset) {
			struct range *p = &(*rs)[out - 1];
			if (e > p->offset + p->length)
				p->length = e - p->offset;
			continue;
		}
		blk64_t pb = 0;
		int ret_flags = 0;
		if (ext2fs_bmap2(fs, ino, in, NULL, 0, r.offset / bs, &ret_flags, &pb))
			return -1;
		r.physical = (ret_flags & BMAP_RET_UNINIT) ? 0 : pb;
		(*rs)[out++] = r;
	}
	*n = out;
	return 0;
}

static int cmp_phys_up(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->physical < y->physical ? -1 : x->physical > y->physical;
}

static int cmp_phys_down(const void *a, const void *b)
{
	return cmp_phys_up(b, a);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: mklayout [--order random|forward|reverse] [--seed N] [--percent P] [--dirs] [--partial]\n"
		     "                [--special] [--bad-uuid] [--paths FILE] [--inode N] -o LAYOUT IMAGE\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "order", required_argument, 0, 'O' }, { "seed", required_argument, 0, 's' },
		{ "percent", required_argument, 0, 'p' }, { "dirs", no_argument, 0, 'd' },
		{ "partial", no_argument, 0, 'P' },     { "bad-uuid", no_argument, 0, 'b' },
		{ "paths", required_argument, 0, 'l' }, { "output", required_argument, 0, 'o' },
		{ "special", no_argument, 0, 'S' },     { "help", no_argument, 0, 'h' },
		{ "inode", required_argument, 0, 'i' },
		{ 0, 0, 0, 0 }
	};
	enum order order = ORDER_RANDOM;
	double percent = 30;
	int dirs = 0, partial = 0, bad_uuid = 0, special = 0, c;
	const char *out = NULL, *paths = NULL;
	unsigned long extra_ino = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'O':
			if (!strcmp(optarg, "random"))
				order = ORDER_RANDOM;
			else if (!strcmp(optarg, "forward"))
				order = ORDER_FORWARD;
			else if (!strcmp(optarg, "reverse"))
				order = ORDER_REVERSE;
			else {
				usage(stderr);
				return 2;
			}
			break;
		case 's': rng_state = strtoull(optarg, NULL, 0) * 0x9E3779B97F4A7C15ULL + 1; break;
		case 'p': percent = atof(optarg); break;
		case 'd': dirs = 1; break;
		case 'P': partial = 1; break;
		case 'b': bad_uuid = 1; break;
		case 'l': paths = optarg; break;
		case 'S': special = 1; break;
		case 'i': extra_ino = strtoul(optarg, NULL, 0); break;
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!out || optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	const char *image = argv[optind];
	ext2_filsys fs;
	errcode_t e = ext2fs_open(image, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs);
	if (e) {
		fprintf(stderr, "mklayout: %s: %s\n", image, pf_strerror(pf_err_from_ext2(e)));
		return 1;
	}
	struct walk w = { .fs = fs };
	if (walk_dir(&w, EXT2_ROOT_INO) < 0) {
		fprintf(stderr, "mklayout: cannot walk %s\n", image);
		return 1;
	}

	char extra_name[32];
	snprintf(extra_name, sizeof(extra_name), "/inode-%lu", extra_ino);
	if (extra_ino && add_cand(&w, (ext2_ino_t)extra_ino, 0, extra_name) < 0)
		return 1;

	/* choose */
	char *pick = calloc(w.n ? w.n : 1, 1);
	if (extra_ino)
		pick[w.n - 1] = 1;
	if (paths) {
		FILE *f = fopen(paths, "r");
		if (!f) {
			fprintf(stderr, "%s: %s\n", paths, pf_strerror(-errno));
			return 1;
		}
		char line[4096];
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			for (size_t i = 0; i < w.n; i++)
				if (!w.c[i].is_dir && !strcmp(w.c[i].path, line))
					pick[i] = 1;
		}
		fclose(f);
	} else {
		for (size_t i = 0; i < w.n; i++)
			if (!w.c[i].is_dir && (double)(rnd() % 10000) < percent * 100)
				pick[i] = 1;
	}
	if (special) {
		/* mkaged's edge cases: a sparse file, one with unwritten (preallocated) extents, a hard link */
		for (size_t i = 0; i < w.n; i++) {
			const char *b = strrchr(w.c[i].path, '/');
			b = b ? b + 1 : w.c[i].path;
			if (!w.c[i].is_dir && (!strcmp(b, "sparse") || !strcmp(b, "prealloc") || !strcmp(b, "hardlink")))
				pick[i] = 1;
		}
	}
	if (dirs) {
		/* every directory that is a prefix of a picked file's path */
		for (size_t i = 0; i < w.n; i++) {
			if (!w.c[i].is_dir)
				continue;
			size_t l = strlen(w.c[i].path);
			for (size_t j = 0; j < w.n && !pick[i]; j++)
				if (pick[j] && !w.c[j].is_dir && !strncmp(w.c[j].path, w.c[i].path, l) &&
				    w.c[j].path[l] == '/')
					pick[i] = 1;
		}
	}

	struct pf_image *img = pf_image_new(PF_KIND_LAYOUT);
	img->created = 1795288058;
	img->boots = 3;
	struct pf_fs pfs = { .block_size = fs->blocksize, .medium = PF_MEDIUM_ROTATIONAL, .mountpoint = "/" };
	memcpy(pfs.uuid, fs->super->s_uuid, 16);
	if (bad_uuid)
		pfs.uuid[0] ^= 0xff;
	if (pf_image_add_fs(img, &pfs) < 0)
		return 1;

	struct range *rs = NULL;
	size_t nr = 0, cap = 0;
	int has_extra = EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE;
	for (size_t i = 0; i < w.n; i++) {
		if (!pick[i])
			continue;
		struct ext2_inode_large in;
		memset(&in, 0, sizeof(in));
		if (ext2fs_read_inode_full(fs, w.c[i].ino, (struct ext2_inode *)&in, sizeof(in)))
			return 1;
		int extra = has_extra && in.i_extra_isize >= 24;
		struct pf_file pf = {
			.fs = 0,
			.flags = w.c[i].is_dir ? PF_FILE_DIR : 0,
			.ino = w.c[i].ino,
			.generation = in.i_generation,
			.mode = in.i_mode,
			.size = EXT2_I_SIZE(&in),
			.mtime_ns = ts_ns(in.i_mtime, in.i_mtime_extra, extra),
			.ctime_ns = ts_ns(in.i_ctime, in.i_ctime_extra, extra),
			.first_order = img->nfiles + 1,
			.first_ns = (uint64_t)(img->nfiles + 1) * 1000000,
			.boots = 3,
			.path = w.c[i].path,
		};
		int fidx = pf_image_add_file(img, &pf);
		if (fidx < 0)
			return 1;
		uint64_t size = EXT2_I_SIZE(&in);
		if (in.i_flags & EXT4_INLINE_DATA_FL)
			continue; /* in the inode: no blocks of its own, the tracer has no physical for it either */
		uint64_t end = (size + PAGE - 1) / PAGE * PAGE;
		if (partial && !w.c[i].is_dir && size > 64 * 1024) {
			/* the head, and one block-aligned piece from the middle */
			uint64_t mid = (size / 2) / 4096 * 4096;
			if (map_ranges(fs, w.c[i].ino, (struct ext2_inode *)&in, (uint32_t)fidx, 0, 16384, &rs, &nr,
				       &cap) < 0 ||
			    map_ranges(fs, w.c[i].ino, (struct ext2_inode *)&in, (uint32_t)fidx, mid, mid + 12288, &rs,
				       &nr, &cap) < 0)
				return 1;
		} else if (map_ranges(fs, w.c[i].ino, (struct ext2_inode *)&in, (uint32_t)fidx, 0, end, &rs, &nr,
				      &cap) < 0) {
			return 1;
		}
	}
	if (order == ORDER_FORWARD)
		qsort(rs, nr, sizeof(*rs), cmp_phys_up);
	else if (order == ORDER_REVERSE)
		qsort(rs, nr, sizeof(*rs), cmp_phys_down);
	else
		for (size_t i = nr; i > 1; i--) {
			size_t j = rnd() % i;
			struct range t = rs[i - 1];
			rs[i - 1] = rs[j];
			rs[j] = t;
		}
	for (size_t i = 0; i < nr; i++) {
		struct pf_extent x = { .file = rs[i].file, .flags = rs[i].physical ? PF_EXT_PHYS_KNOWN : 0, .offset = rs[i].offset,
				       .length = rs[i].length, .physical = rs[i].physical };
		if (pf_image_add_extent(img, &x) < 0)
			return 1;
	}
	int rc = pf_image_save(out, img);
	if (rc < 0) {
		fprintf(stderr, "mklayout: %s: %s\n", out, pf_strerror(rc));
		return 1;
	}
	printf("mklayout: %u files, %u ranges, %.1f MiB\n", img->nfiles, img->nextents,
	       pf_image_bytes(img) / 1048576.0);
	pf_image_free(img);
	for (size_t i = 0; i < w.n; i++)
		free(w.c[i].path);
	free(w.c);
	free(pick);
	free(rs);
	ext2fs_close_free(&fs);
	return 0;
}
