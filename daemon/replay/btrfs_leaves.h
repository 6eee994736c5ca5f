/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where on the disk the btrfs tree leaves lie that given keys land in.  btrfs's search ioctl says which items it
 * found, never where their leaves lie; asked in key order, an aged filesystem's leaves come one seek each.  This
 * module reads the few internal nodes on the way to those leaves from the device itself (the chunk map and the
 * trees' roots come from the mounted filesystem, which holds them in memory), so that the metadata pass can ask
 * for its keys in the order their leaves lie: one sweep over the metadata instead of a seek per leaf.
 * Single-device filesystems, and chunks mapped in one piece (single, DUP); elsewhere a key's place is unknown.
 * The places are a hint: a node changed since the last commit, or one that does not read back as the node
 * asked for, leaves its keys' places unknown, and the pass asks for them anyway. */
#ifndef PREFETCH_BTRFS_LEAVES_H
#define PREFETCH_BTRFS_LEAVES_H

#include <stddef.h>
#include <stdint.h>

struct pf_btrfs_key {
	uint64_t objectid;
	uint8_t type;
	uint64_t offset;
};

struct pf_btrfs_disk;

#define PF_BTRFS_PLACE_UNKNOWN UINT64_MAX

/* The filesystem mounted at fsfd (any directory of it), its device node devname.  0, or -errno: -EXDEV on more
 * than one device, -ENOTTY not btrfs, -ENOMEM; *out NULL then. */
int pf_btrfs_disk_open(int fsfd, const char *devname, struct pf_btrfs_disk **out);
void pf_btrfs_disk_close(struct pf_btrfs_disk *d);

/* The tree id of the subvolume fsfd lies in (BTRFS_FS_TREE_OBJECTID for the top level).  0 or -errno. */
int pf_btrfs_subvol_id(int fsfd, uint64_t *id);

/* A leaf of tree `tree`: its logical address (what btrfs tools print), where it lies on the device, its first key
 * (a search for exactly that key, one item, reads that leaf and no other). */
struct pf_btrfs_leaf {
	uint64_t tree;
	uint64_t logical, place;
	struct pf_btrfs_key first;
};

/* Keys to place in one tree: keys[0..n), sorted ascending. */
struct pf_btrfs_keyset {
	uint64_t tree;
	const struct pf_btrfs_key *keys;
	size_t n;
};

/* The leaves that searches for the keys of sets[0..nsets) land in, each once, in the order they lie on the
 * device; with each its successor in key order where a search may go on into it (a search reads the next leaf
 * when its key range goes on past a leaf's end).  The trees' internal nodes are read level by level, each
 * level's nodes of every tree in device order.  Keys whose leaves cannot be told are left out.  *leaves (free()
 * it) and *nleaves; 0, or -errno (a tree without a root item, -ENOMEM).  A tree whose root is a leaf gives none:
 * btrfs holds its roots in memory. */
int pf_btrfs_leaves_of(struct pf_btrfs_disk *d, const struct pf_btrfs_keyset *sets, size_t nsets,
		       struct pf_btrfs_leaf **leaves, size_t *nleaves);

/* Key order, as btrfs sorts: objectid, type, offset. */
int pf_btrfs_key_cmp(const struct pf_btrfs_key *a, const struct pf_btrfs_key *b);

/* An internal node's children (a node of the on-disk format, nodesize bytes, already read): checks its header
 * (bytenr and level as asked, level > 0, item count within the node) and calls child() for each key pointer in
 * order.  0, or -EBADMSG when the node is not the one asked for (before any child() call). */
int pf_btrfs_node_children(const unsigned char *node, size_t nodesize, uint64_t bytenr, unsigned level,
			   void (*child)(void *arg, const struct pf_btrfs_key *k, uint64_t blockptr), void *arg);

struct btrfs_ioctl_search_header;
typedef void (*pf_btrfs_item_fn)(void *arg, const struct btrfs_ioctl_search_header *h, const unsigned char *data);

/* Every item of objectid in tree `tree` (0: the subvolume of fd) with a type from min_type to max_type, in key
 * order, BTRFS_IOC_TREE_SEARCH after search: item() (may be NULL: the leaves are read, nothing more) gets each
 * item's header and data.  At most max_calls searches (0: no bound).  0 or -errno. */
int pf_btrfs_search(int fd, uint64_t tree, uint64_t objectid, uint8_t min_type, uint8_t max_type, unsigned max_calls,
		    pf_btrfs_item_fn item, void *arg);

#endif
