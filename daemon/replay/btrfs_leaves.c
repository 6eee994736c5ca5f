/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where the leaves lie that keys land in (btrfs_leaves.h): the chunk map and the roots asked of the mounted
 * filesystem (BTRFS_IOC_TREE_SEARCH on the chunk and root trees, both held in memory since the mount), the
 * internal nodes read from the device level by level, each level's nodes in the order they lie. */
#include "btrfs_leaves.h"

#include "array.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The on-disk node format (fs/btrfs/accessors.h): a 101-byte header, then 33-byte key pointers. */
#define HDR_BYTENR 48
#define HDR_NRITEMS 96
#define HDR_LEVEL 100
#define HDR_SIZE 101
#define PTR_SIZE 33

struct chunk {
	uint64_t logical, length, physical;
};

struct pf_btrfs_disk {
	int fsfd, bdev;
	uint32_t nodesize;
	struct chunk *chunks;
	size_t nchunks, capchunks;
};

static uint64_t le64_at(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static uint32_t le32_at(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

int pf_btrfs_key_cmp(const struct pf_btrfs_key *a, const struct pf_btrfs_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

int pf_btrfs_search(int fd, uint64_t tree, uint64_t objectid, uint8_t min_type, uint8_t max_type, unsigned max_calls,
		    pf_btrfs_item_fn item, void *arg)
{
	struct btrfs_ioctl_search_args a;
	memset(&a, 0, sizeof(a));
	struct btrfs_ioctl_search_key *k = &a.key;
	k->tree_id = tree;
	k->min_objectid = k->max_objectid = objectid;
	k->min_type = min_type;
	k->max_type = max_type;
	k->max_offset = UINT64_MAX;
	k->max_transid = UINT64_MAX;
	for (unsigned calls = 0; !max_calls || calls < max_calls; calls++) {
		k->nr_items = 4096;
		if (ioctl(fd, BTRFS_IOC_TREE_SEARCH, &a) < 0)
			return -errno;
		if (k->nr_items == 0)
			return 0;
		struct btrfs_ioctl_search_header h = { 0 };
		size_t off = 0;
		for (uint32_t i = 0; i < k->nr_items && off + sizeof(h) <= sizeof(a.buf); i++) {
			memcpy(&h, a.buf + off, sizeof(h));
			off += sizeof(h);
			if (off + h.len > sizeof(a.buf))
				return -EOVERFLOW;
			if (item)
				item(arg, &h, (const unsigned char *)a.buf + off);
			off += h.len;
		}
		if (h.offset < UINT64_MAX) { /* on after the last item returned */
			k->min_type = h.type;
			k->min_offset = h.offset + 1;
		} else if (h.type < max_type) {
			k->min_type = h.type + 1;
			k->min_offset = 0;
		} else {
			return 0;
		}
	}
	return 0;
}

struct chunk_list {
	struct pf_btrfs_disk *d;
	int err;
};

/* One CHUNK_ITEM: kept where the chunk lies in one piece on the device (single, DUP: stripe 0 is a copy). */
static void chunk_item(void *arg, const struct btrfs_ioctl_search_header *h, const unsigned char *data)
{
	struct chunk_list *cl = arg;
	if (h->len < sizeof(struct btrfs_chunk))
		return;
	struct btrfs_chunk c;
	memcpy(&c, data, sizeof(c));
	uint64_t type = le64toh(c.type);
	if (type & (BTRFS_BLOCK_GROUP_RAID0 | BTRFS_BLOCK_GROUP_RAID10 | BTRFS_BLOCK_GROUP_RAID5 |
		    BTRFS_BLOCK_GROUP_RAID6))
		return; /* striped: no one device offset */
	struct pf_btrfs_disk *d = cl->d;
	if (PF_ARRAY_RESERVE(d->chunks, d->capchunks, d->nchunks + 1, 16)) {
		cl->err = -ENOMEM;
		return;
	}
	d->chunks[d->nchunks++] = (struct chunk){ h->offset, le64toh(c.length), le64toh(c.stripe.offset) };
}

/* The device offset of logical address a, or PF_BTRFS_PLACE_UNKNOWN. */
static uint64_t device_of(const struct pf_btrfs_disk *d, uint64_t a)
{
	for (size_t i = 0; i < d->nchunks; i++)
		if (a >= d->chunks[i].logical && a - d->chunks[i].logical < d->chunks[i].length)
			return d->chunks[i].physical + (a - d->chunks[i].logical);
	return PF_BTRFS_PLACE_UNKNOWN;
}

int pf_btrfs_disk_open(int fsfd, const char *devname, struct pf_btrfs_disk **out)
{
	*out = NULL;
	struct btrfs_ioctl_fs_info_args fi;
	memset(&fi, 0, sizeof(fi));
	if (ioctl(fsfd, BTRFS_IOC_FS_INFO, &fi) < 0)
		return -errno;
	if (fi.num_devices != 1)
		return -EXDEV;
	int bdev = open(devname, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (bdev < 0)
		return -errno;
	struct stat st;
	struct pf_btrfs_disk *d = calloc(1, sizeof(*d));
	if (!d || fstat(bdev, &st) < 0 || !S_ISBLK(st.st_mode) || !fi.nodesize) {
		int rc = !d ? -ENOMEM : -ENOTBLK;
		free(d);
		close(bdev);
		return rc;
	}
	*d = (struct pf_btrfs_disk){ .fsfd = fsfd, .bdev = bdev, .nodesize = fi.nodesize };
	(void)posix_fadvise(bdev, 0, 0, POSIX_FADV_RANDOM); /* a node each read, no readahead around it */
	struct chunk_list cl = { d, 0 };
	int rc = pf_btrfs_search(fsfd, BTRFS_CHUNK_TREE_OBJECTID, BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY,
				 BTRFS_CHUNK_ITEM_KEY, 0, chunk_item, &cl);
	if (!rc)
		rc = cl.err;
	if (!rc && !d->nchunks)
		rc = -ENODATA;
	if (rc) {
		pf_btrfs_disk_close(d);
		return rc;
	}
	*out = d;
	return 0;
}

void pf_btrfs_disk_close(struct pf_btrfs_disk *d)
{
	if (!d)
		return;
	close(d->bdev);
	free(d->chunks);
	free(d);
}

int pf_btrfs_subvol_id(int fsfd, uint64_t *id)
{
	struct btrfs_ioctl_ino_lookup_args a;
	memset(&a, 0, sizeof(a));
	a.objectid = BTRFS_FIRST_FREE_OBJECTID;
	if (ioctl(fsfd, BTRFS_IOC_INO_LOOKUP, &a) < 0)
		return -errno;
	*id = a.treeid;
	return 0;
}

struct root_found {
	uint64_t bytenr;
	unsigned level;
	int found;
};

static void root_item(void *arg, const struct btrfs_ioctl_search_header *h, const unsigned char *data)
{
	struct root_found *r = arg;
	struct btrfs_root_item ri;
	if (h->len < offsetof(struct btrfs_root_item, level) + 1)
		return;
	memset(&ri, 0, sizeof(ri));
	memcpy(&ri, data, h->len < sizeof(ri) ? h->len : sizeof(ri));
	*r = (struct root_found){ le64toh(ri.bytenr), ri.level, 1 };
}

int pf_btrfs_node_children(const unsigned char *node, size_t nodesize, uint64_t bytenr, unsigned level,
			   void (*child)(void *arg, const struct pf_btrfs_key *k, uint64_t blockptr), void *arg)
{
	if (nodesize < HDR_SIZE || le64_at(node + HDR_BYTENR) != bytenr || level == 0 || node[HDR_LEVEL] != level)
		return -EBADMSG;
	uint32_t n = le32_at(node + HDR_NRITEMS);
	if (n == 0 || n > (nodesize - HDR_SIZE) / PTR_SIZE)
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++) {
		const unsigned char *p = node + HDR_SIZE + (size_t)i * PTR_SIZE;
		struct pf_btrfs_key k = { le64_at(p), p[8], le64_at(p + 9) };
		child(arg, &k, le64_at(p + 17));
	}
	return 0;
}

/* A node still to read: its logical address, its level, the keys [a, b) of set `set` that land below it. */
struct todo {
	uint64_t bytenr, place;
	unsigned level;
	size_t set, a, b;
};

struct level_walk {
	const struct pf_btrfs_disk *d;
	const struct pf_btrfs_keyset *sets;
	const struct pf_btrfs_key *keys; /* the node's set's keys */
	size_t set;
	unsigned level;
	struct todo *next; /* internal nodes of the next level */
	size_t nnext, cap;
	struct pf_btrfs_leaf *leaf; /* leaves found (level 1) */
	size_t nleaf, leafcap;
	size_t a, b;          /* the node's keys still to hand out */
	int leaves, err;      /* children are leaves (a level-1 node) */
	struct pf_btrfs_key prev_key; /* the previous child, which keys below this child's first key land in */
	uint64_t prev_ptr;
	int have_prev, successor; /* the previous child was a leaf with keys: this one is read after it */
};

static void add_leaf(struct level_walk *w, const struct pf_btrfs_key *first, uint64_t bytenr)
{
	uint64_t place = device_of(w->d, bytenr);
	if (place == PF_BTRFS_PLACE_UNKNOWN)
		return;
	if (PF_ARRAY_RESERVE(w->leaf, w->leafcap, w->nleaf + 1, 64)) {
		w->err = -ENOMEM;
		return;
	}
	w->leaf[w->nleaf++] = (struct pf_btrfs_leaf){ w->sets[w->set].tree, bytenr, place, *first };
}

/* Hands the keys below `upto` (NULL: all that are left) to the previous child. */
static void give_previous(struct level_walk *w, const struct pf_btrfs_key *upto)
{
	size_t a = w->a;
	while (w->a < w->b && (!upto || pf_btrfs_key_cmp(&w->keys[w->a], upto) < 0))
		w->a++;
	if (w->a == a)
		return;
	if (w->leaves) {
		add_leaf(w, &w->prev_key, w->prev_ptr);
		w->successor = 1;
		return;
	}
	uint64_t place = device_of(w->d, w->prev_ptr);
	if (place == PF_BTRFS_PLACE_UNKNOWN)
		return;
	if (PF_ARRAY_RESERVE(w->next, w->cap, w->nnext + 1, 16)) {
		w->err = -ENOMEM;
		return;
	}
	w->next[w->nnext++] = (struct todo){ w->prev_ptr, place, w->level - 1, w->set, a, w->a };
}

static void child_ptr(void *arg, const struct pf_btrfs_key *k, uint64_t blockptr)
{
	struct level_walk *w = arg;
	if (w->have_prev) {
		w->successor = 0;
		give_previous(w, k);
		/* a search whose keys go on past a leaf's end reads the next one: read it in its place too */
		if (w->successor)
			add_leaf(w, k, blockptr);
	}
	w->have_prev = 1; /* keys below the first child's key land in the first child too */
	w->prev_key = *k, w->prev_ptr = blockptr;
}

static int cmp_todo(const void *pa, const void *pb)
{
	const struct todo *a = pa, *b = pb;
	return a->place < b->place ? -1 : a->place > b->place;
}

static int cmp_leaf(const void *pa, const void *pb)
{
	const struct pf_btrfs_leaf *a = pa, *b = pb;
	return a->place < b->place ? -1 : a->place > b->place;
}

/* One level, every tree's nodes of it: each read where it lies, in device order; its children for the next. */
static int walk_level(struct level_walk *w, struct todo *nodes, size_t n, unsigned level, unsigned char *buf)
{
	qsort(nodes, n, sizeof(*nodes), cmp_todo);
	w->leaves = level == 1;
	w->level = level;
	/* all of the level asked for at once, then read one by one: the disk's queue holds them side by side, ahead
	 * of the boot's own reads that would come between reads made one at a time */
	for (size_t i = 0; i < n; i++)
		(void)readahead(w->d->bdev, (off64_t)nodes[i].place, w->d->nodesize);
	for (size_t i = 0; i < n && !w->err; i++) {
		if (pread(w->d->bdev, buf, w->d->nodesize, (off_t)nodes[i].place) != (ssize_t)w->d->nodesize)
			continue;
		w->set = nodes[i].set, w->keys = w->sets[nodes[i].set].keys;
		w->a = nodes[i].a, w->b = nodes[i].b, w->have_prev = 0;
		if (pf_btrfs_node_children(buf, w->d->nodesize, nodes[i].bytenr, level, child_ptr, w))
			continue;
		give_previous(w, NULL); /* the last child takes the rest */
	}
	return w->err;
}

/* The leaves in device order, each once. */
static size_t sort_leaves(struct pf_btrfs_leaf *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_leaf);
	size_t m = 1;
	for (size_t i = 1; i < n; i++)
		if (v[i].logical != v[m - 1].logical)
			v[m++] = v[i];
	return m;
}

/* The roots of the sets' trees that have keys to place and more than a leaf: *roots (one per such tree), *n, the
 * highest level among them.  0 or -errno (a tree without a root item). */
static int find_roots(struct pf_btrfs_disk *d, const struct pf_btrfs_keyset *sets, size_t nsets, struct todo *roots,
		      size_t *n, unsigned *top)
{
	for (size_t i = 0; i < nsets; i++) {
		struct root_found r = { 0 };
		int rc = pf_btrfs_search(d->fsfd, BTRFS_ROOT_TREE_OBJECTID, sets[i].tree, BTRFS_ROOT_ITEM_KEY,
					 BTRFS_ROOT_ITEM_KEY, 0, root_item, &r);
		if (rc)
			return rc;
		if (!r.found)
			return -ENOENT;
		uint64_t place = device_of(d, r.bytenr);
		/* a root that is a leaf is in memory (btrfs keeps its roots): nothing to read */
		if (r.level == 0 || sets[i].n == 0 || place == PF_BTRFS_PLACE_UNKNOWN)
			continue;
		roots[(*n)++] = (struct todo){ r.bytenr, place, r.level, i, 0, sets[i].n };
		if (r.level > *top)
			*top = r.level;
	}
	return 0;
}

int pf_btrfs_leaves_of(struct pf_btrfs_disk *d, const struct pf_btrfs_keyset *sets, size_t nsets,
		       struct pf_btrfs_leaf **leaves, size_t *nleaves)
{
	*leaves = NULL, *nleaves = 0;
	struct todo *roots = calloc(nsets + 1, sizeof(*roots)), *cur = NULL;
	unsigned char *buf = malloc(d->nodesize);
	size_t nroots = 0, ncur = 0;
	unsigned top = 0;
	int rc = !roots || !buf ? -ENOMEM : find_roots(d, sets, nsets, roots, &nroots, &top);
	struct level_walk w = { .d = d, .sets = sets };
	size_t curcap = 0;
	/* level by level from the highest root down, the trees of lower roots joining at their level */
	for (unsigned level = top; level > 0 && !rc; level--) {
		for (size_t i = 0; i < nroots && !rc; i++)
			if (roots[i].level == level) {
				if (PF_ARRAY_RESERVE(cur, curcap, ncur + 1, 16))
					rc = -ENOMEM;
				else
					cur[ncur++] = roots[i];
			}
		if (rc || !ncur)
			continue;
		w.next = NULL, w.nnext = w.cap = 0;
		rc = walk_level(&w, cur, ncur, level, buf);
		free(cur);
		cur = w.next, ncur = w.nnext, curcap = w.cap;
	}
	free(cur);
	free(buf);
	free(roots);
	if (rc) {
		free(w.leaf);
		return rc;
	}
	*leaves = w.leaf, *nleaves = sort_leaves(w.leaf, w.nleaf);
	return 0;
}
