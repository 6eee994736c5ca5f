/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metadata pass on btrfs (rotational media).  btrfs reads its tree blocks through its own btree inode, which
 * nothing outside the filesystem can fill by readahead; what it can do is ask btrfs for the items the boot will
 * need (BTRFS_IOC_TREE_SEARCH), so that the leaves holding them are read then, before the data sweep, instead of
 * one at a time between data reads:
 *   1. list the searches: the fs-tree items of the layout's inodes (inode, references, extents: what the opens
 *      and the placing, FIEMAP, look up), and the checksum-tree leaves of the layout's data (reading data looks
 *      its checksums up when the read is submitted, a seek to the metadata and back for each new leaf);
 *   2. find the leaves they land in, and the extent-tree leaves of the data (FIEMAP asks there whether an
 *      extent is shared), from the internal nodes read off the device (btrfs_leaves.h);
 *   3. read those leaves in the order they lie, each by a search for its first key alone: one sweep over the
 *      metadata.  In key order, an aged filesystem's leaves cost a seek each.  A search waits for its leaf, so
 *      several threads keep LEAF_READS_IN_FLIGHT of them queued: one at a time, the boot's own reads came
 *      between them in the boot lab and made each a seek again (results/bootlab/FSTYPES-RUN.md);
 *   4. the searches of step 1, in key order: what they need is cached (or, where step 2 could not tell the
 *      leaves, they read them now, in key order).
 * btrfs does not say which tree blocks a search read: the pass counts the bytes it read from the disk (its
 * threads' read_bytes, the internal nodes of step 2 included), in blocks of the filesystem's block size (a
 * 16 KiB tree block is 4); tree blocks that were cached count nothing.
 * Measured on the 1 GiB boot image: results/FSTYPES-BENCH.md. */
#include "replay_internal.h"

#include "btrfs_leaves.h"
#include "proc_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SEARCH_CALLS_MAX 64 /* per inode: a file of many extents costs at most this many searches */
#define LEAF_READS_IN_FLIGHT 8 /* enough for the disk's scheduler to take them in order, few enough to leave the
				* boot's own reads a place in the queue */

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

/* --dump-plan: what a step asks for (btrfs-leaf: the leaf's logical address; btrfs-items: the inode number;
 * btrfs-csums: logical address and length). */
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

/* One inode: all its items in the subvolume of fd (tree 0), search after search. */
static void inode_items(int fd, uint64_t ino)
{
	(void)pf_btrfs_search(fd, 0, ino, 0, 255, SEARCH_CALLS_MAX, NULL, NULL);
}

/* One range of data: the checksum-tree leaf the search for its first byte lands in, and those after it up
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

/* One search of the pass: the items of an inode, or the checksums of a range of data. */
enum { ITEMS, CSUMS };
struct search {
	int kind;
	uint64_t at, len; /* ITEMS: the inode number; CSUMS: the logical range */
};

/* Step 1: the searches in key order: the layout's inodes, then its data's checksums by the logical addresses the
 * layout recorded (FIEMAP at trace time: a hint, a moved file only costs a leaf read for nothing).  0 or
 * -ENOMEM. */
static int list_searches(const struct pf_image *l, uint32_t fsi, struct search **out, size_t *n)
{
	uint64_t *ino = malloc((l->nfiles + 1) * sizeof(*ino));
	struct span *sp = malloc((l->nextents + 1) * sizeof(*sp));
	struct search *s = calloc(l->nfiles + l->nextents + 1, sizeof(*s));
	size_t ni = 0, nsp = 0, ns = 0;
	if (!ino || !sp || !s) {
		free(ino), free(sp), free(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < l->nfiles; i++)
		if (l->files[i].fs == fsi)
			ino[ni++] = l->files[i].ino;
	qsort(ino, ni, sizeof(*ino), cmp_u64);
	for (uint32_t i = 0; i < l->nextents; i++) {
		const struct pf_extent *e = &l->extents[i];
		if (l->files[e->file].fs == fsi && (e->flags & PF_EXT_PHYS_KNOWN))
			sp[nsp++] = (struct span){ e->physical * l->fs[fsi].block_size, e->length };
	}
	qsort(sp, nsp, sizeof(*sp), cmp_span);
	for (size_t i = 0; i < ni; i++)
		if (!i || ino[i] != ino[i - 1])
			s[ns++] = (struct search){ ITEMS, ino[i], 0 };
	for (size_t i = 0; i < nsp; i++)
		s[ns++] = (struct search){ CSUMS, sp[i].at, sp[i].len };
	free(ino);
	free(sp);
	*out = s, *n = ns;
	return 0;
}

/* Step 2, for the searches of one kind (s[0..n), in key order), the keys that tree `tree` holds for them.  NULL
 * only without memory (n > 0). */
static struct pf_btrfs_key *keys_of(uint64_t tree, const struct search *s, size_t n)
{
	struct pf_btrfs_key *k = calloc(n + 1, sizeof(*k));
	for (size_t i = 0; k && i < n; i++)
		if (s[i].kind == ITEMS)
			k[i] = (struct pf_btrfs_key){ s[i].at, 0, 0 };
		else if (tree == BTRFS_CSUM_TREE_OBJECTID)
			k[i] = (struct pf_btrfs_key){ (uint64_t)BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, s[i].at };
		else /* the extent tree: the data extent's item (the placing's FIEMAP asks whether it is shared) */
			k[i] = (struct pf_btrfs_key){ s[i].at, BTRFS_EXTENT_ITEM_KEY, UINT64_MAX };
	return k;
}

/* Step 3: the leaves v[0..n) in device order, each read by a one-item search for its first key; threads take
 * them in that order, so that the ones queued at any time lie side by side. */
struct touch {
	struct pf_rctx *c;
	int fd;
	const struct pf_btrfs_leaf *v;
	size_t n;
	atomic_size_t next;
	atomic_uint_fast64_t read_bytes; /* what the threads' searches read from the disk */
};

static void *touch_leaves(void *arg)
{
	struct touch *t = arg;
	int64_t before, after;
	int counted = pf_thread_read_bytes(&before) == 0;
	while (!pf_rctx_should_stop(t->c)) {
		size_t i = atomic_fetch_add(&t->next, 1);
		if (i >= t->n)
			break;
		const struct pf_btrfs_leaf *l = &t->v[i];
		struct btrfs_ioctl_search_args a;
		search_init(&a, l->tree, l->first.objectid);
		a.key.min_type = a.key.max_type = l->first.type;
		a.key.min_offset = a.key.max_offset = l->first.offset;
		a.key.nr_items = 1;
		(void)ioctl(t->fd, BTRFS_IOC_TREE_SEARCH, &a);
	}
	if (counted && pf_thread_read_bytes(&after) == 0 && after > before)
		atomic_fetch_add(&t->read_bytes, (uint64_t)(after - before));
	return NULL;
}

/* Reads v[0..n) with up to LEAF_READS_IN_FLIGHT threads; *read_bytes gets what they read from the disk. */
static void touch_in_flight(struct pf_rctx *c, int fd, const struct pf_btrfs_leaf *v, size_t n, uint64_t *read_bytes)
{
	*read_bytes = 0;
	if (!n)
		return;
	struct touch t = { .c = c, .fd = fd, .v = v, .n = n };
	atomic_init(&t.next, 0);
	atomic_init(&t.read_bytes, 0);
	struct pf_rthreads th;
	pf_rthreads_start(&th, n < LEAF_READS_IN_FLIGHT ? (int)n : LEAF_READS_IN_FLIGHT, touch_leaves, &t);
	pf_rthreads_join(&th);
	*read_bytes = atomic_load(&t.read_bytes);
}

/* Steps 2 and 3: the leaves of the subvolume's tree, the checksum tree and the extent tree, read where they lie,
 * in the device's order.  Nothing on several devices, striped chunks or an unreadable device: step 4 then reads
 * in key order.  *leaf_bytes: what step 3's threads read from the disk. */
static int read_leaves(struct pf_rctx *c, uint32_t fsi, int fd, const struct search *s, size_t n, uint64_t *leaf_bytes)
{
	struct pf_btrfs_disk *d;
	uint64_t subvol;
	if (!c->fs[fsi].devname[0] || pf_btrfs_subvol_id(fd, &subvol) || pf_btrfs_disk_open(fd, c->fs[fsi].devname, &d))
		return 0;
	size_t nitems = 0;
	while (nitems < n && s[nitems].kind == ITEMS)
		nitems++;
	struct pf_btrfs_keyset sets[3] = {
		{ subvol, keys_of(subvol, s, nitems), nitems },
		{ BTRFS_CSUM_TREE_OBJECTID, keys_of(BTRFS_CSUM_TREE_OBJECTID, s + nitems, n - nitems), n - nitems },
		{ BTRFS_EXTENT_TREE_OBJECTID, keys_of(BTRFS_EXTENT_TREE_OBJECTID, s + nitems, n - nitems), n - nitems },
	};
	struct pf_btrfs_leaf *v = NULL;
	size_t nv = 0;
	int rc = sets[0].keys && sets[1].keys && sets[2].keys ? 0 : -ENOMEM;
	if (!rc && pf_btrfs_leaves_of(d, sets, 3, &v, &nv) == -ENOMEM)
		rc = -ENOMEM;
	pf_btrfs_disk_close(d);
	for (size_t i = 0; i < 3; i++)
		free((void *)sets[i].keys);
	if (!rc) {
		touch_in_flight(c, fd, v, nv, leaf_bytes);
		for (size_t i = 0; i < nv; i++)
			dump(c, fsi, "btrfs-leaf", v[i].logical, 0);
		if (pf_rctx_should_stop(c))
			rc = -EINTR;
	}
	free(v);
	return rc;
}

/* Step 4: the searches, in key order. */
static int run_searches(struct pf_rctx *c, uint32_t fsi, int fd, const struct search *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (pf_rctx_should_stop(c))
			return -EINTR;
		if (s[i].kind == ITEMS) {
			inode_items(fd, s[i].at);
			dump(c, fsi, "btrfs-items", s[i].at, 0);
		} else {
			data_csums(fd, s[i].at, s[i].len);
			dump(c, fsi, "btrfs-csums", s[i].at, s[i].len);
		}
	}
	return 0;
}

int pf_replay_btrfs_metadata(struct pf_rctx *c, uint32_t fsi, unsigned *blocks)
{
	int fd = open(pf_rpath(c, c->l->fs[fsi].mountpoint), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The searches read the tree blocks they need in the thread that asks, synchronously: its read_bytes grows
	 * by what they read from the disk and by nothing else (the data sweep has not begun; others' reads are
	 * theirs).  Step 3's threads count theirs themselves. */
	int64_t before, after;
	uint64_t leaf_bytes = 0;
	int counted = pf_thread_read_bytes(&before) == 0;
	struct search *s = NULL;
	size_t n = 0;
	int rc = list_searches(c->l, fsi, &s, &n);
	if (!rc) {
		rc = read_leaves(c, fsi, fd, s, n, &leaf_bytes);
		if (!rc)
			rc = run_searches(c, fsi, fd, s, n);
		free(s);
	}
	close(fd);
	if (counted && pf_thread_read_bytes(&after) == 0 && after >= before)
		*blocks += (unsigned)(((uint64_t)(after - before) + leaf_bytes) / c->fs[fsi].block_size);
	return rc == -EINTR ? 0 : rc;
}
