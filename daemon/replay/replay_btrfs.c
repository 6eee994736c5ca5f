/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass on btrfs (rotational media).  btrfs reads its tree blocks through its own btree inode, which
 * nothing outside the filesystem can fill by readahead; what it can do is ask btrfs for the items the boot will
 * need (BTRFS_IOC_TREE_SEARCH), in key order, so that the leaves holding them are read then, in key order, which
 * on a filesystem written once is close to disk order, instead of one at a time between data reads:
 *   1. the fs-tree items of the layout's inodes (inode, references, extents), in inode-number order: what the
 *      opens and the placing (FIEMAP) look up;
 *   2. the checksum-tree leaves of the layout's data, in logical order: reading data looks its checksums up when
 *      the read is submitted, a seek to the metadata and back for each new leaf during the data sweep.
 * btrfs does not say which tree blocks a search read: the pass counts the bytes it read from the disk (the
 * thread's read_bytes), in blocks of the filesystem's block size (a 16 KiB tree block is 4); tree blocks that
 * were cached count nothing.
 * Measured on the 1 GiB boot image (results/FSTYPES-BENCH.md): 1.92 -> 1.38 s aged, 0.64 -> 0.54 s fresh. */
#include "replay_internal.h"

#include "proc_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SEARCH_CALLS_MAX 64 /* per inode: a file of many extents costs at most this many searches */

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

struct span {
	uint64_t at, len;
};

static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;
	return a->at < b->at ? -1 : a->at > b->at;
}

/* --dump-plan: what a step asks for (btrfs-items: the inode number; btrfs-csums: logical address and length). */
static void dump(const struct pf_rctx *c, uint32_t fsi, const char *step, uint64_t at, uint64_t len)
{
	FILE *f = c->o ? c->o->plan_dump : NULL;
	if (f)
		fprintf(f, "m %u meta %s %llu 0 %llu -\n", fsi, step, (unsigned long long)at, (unsigned long long)len);
}

static void search_init(struct btrfs_ioctl_search_args *a, uint64_t tree, uint64_t objectid)
{
	memset(a, 0, sizeof(*a));
	a->key.tree_id = tree;
	a->key.min_objectid = a->key.max_objectid = objectid;
	a->key.max_type = 255;
	a->key.max_offset = UINT64_MAX;
	a->key.max_transid = UINT64_MAX;
}

/* Step 1, one inode: all its items in the subvolume of fd (tree 0), search after search. */
static void inode_items(int fd, uint64_t ino)
{
	struct btrfs_ioctl_search_args a;
	search_init(&a, 0, ino);
	struct btrfs_ioctl_search_key *k = &a.key;
	for (int calls = 0; calls < SEARCH_CALLS_MAX; calls++) {
		k->nr_items = 4096;
		if (ioctl(fd, BTRFS_IOC_TREE_SEARCH, &a) < 0 || k->nr_items == 0)
			return;
		struct btrfs_ioctl_search_header h = { 0 };
		size_t off = 0;
		for (uint32_t i = 0; i < k->nr_items && off + sizeof(h) <= sizeof(a.buf); i++) {
			memcpy(&h, a.buf + off, sizeof(h));
			off += sizeof(h) + h.len;
		}
		if (h.offset < UINT64_MAX) { /* on after the last item returned */
			k->min_type = h.type;
			k->min_offset = h.offset + 1;
		} else if (h.type < 255) {
			k->min_type = h.type + 1;
			k->min_offset = 0;
		} else {
			return;
		}
	}
}

/* Step 2, one range of data: the checksum-tree leaf the search for its first byte lands in, and those after it up
 * to its end. */
static void data_csums(int fd, uint64_t at, uint64_t len)
{
	struct btrfs_ioctl_search_args a;
	search_init(&a, BTRFS_CSUM_TREE_OBJECTID, (uint64_t)BTRFS_EXTENT_CSUM_OBJECTID);
	a.key.min_type = a.key.max_type = BTRFS_EXTENT_CSUM_KEY;
	a.key.min_offset = at;
	a.key.max_offset = at + len;
	a.key.nr_items = 4096;
	(void)ioctl(fd, BTRFS_IOC_TREE_SEARCH, &a);
}

static int fs_tree_step(struct pf_rctx *c, uint32_t fsi, int fd)
{
	const struct pf_image *l = c->l;
	uint64_t *v = malloc((l->nfiles + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (uint32_t i = 0; i < l->nfiles; i++)
		if (l->files[i].fs == fsi)
			v[n++] = l->files[i].ino;
	qsort(v, n, sizeof(*v), cmp_u64);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (pf_rctx_should_stop(c))
			rc = -EINTR;
		else if (!i || v[i] != v[i - 1]) {
			inode_items(fd, v[i]);
			dump(c, fsi, "btrfs-items", v[i], 0);
		}
	free(v);
	return rc;
}

/* The data's logical addresses as the layout recorded them (FIEMAP at trace time): a hint, a moved file only
 * costs a leaf read for nothing. */
static int csum_step(struct pf_rctx *c, uint32_t fsi, int fd)
{
	const struct pf_image *l = c->l;
	struct span *v = malloc((l->nextents + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (uint32_t i = 0; i < l->nextents; i++) {
		const struct pf_extent *e = &l->extents[i];
		if (l->files[e->file].fs == fsi && (e->flags & PF_EXT_PHYS_KNOWN))
			v[n++] = (struct span){ e->physical * l->fs[fsi].block_size, e->length };
	}
	qsort(v, n, sizeof(*v), cmp_span);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (pf_rctx_should_stop(c))
			rc = -EINTR;
		else {
			data_csums(fd, v[i].at, v[i].len);
			dump(c, fsi, "btrfs-csums", v[i].at, v[i].len);
		}
	free(v);
	return rc;
}

int pf_replay_btrfs_metadata(struct pf_rctx *c, uint32_t fsi, unsigned *blocks)
{
	int fd = open(pf_rpath(c, c->l->fs[fsi].mountpoint), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The searches read the tree blocks they need in this thread, synchronously: its read_bytes grows by what
	 * they read from the disk and by nothing else (the data sweep has not begun; others' reads are theirs). */
	int64_t before, after;
	int counted = pf_thread_read_bytes(&before) == 0;
	int rc = fs_tree_step(c, fsi, fd);
	if (!rc)
		rc = csum_step(c, fsi, fd);
	close(fd);
	if (counted && pf_thread_read_bytes(&after) == 0 && after > before)
		*blocks += (unsigned)((uint64_t)(after - before) / c->fs[fsi].block_size);
	return rc == -EINTR ? 0 : rc;
}
