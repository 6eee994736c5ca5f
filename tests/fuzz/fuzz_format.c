/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the trace/layout decoder (pf_image_decode) and what reads a decoded layout (pf_layout_order).
 *
 * Every input is decoded twice: as it is (the magic, size and checksum checks), and with its crc32c field
 * set right, so that mutated records reach the field validation instead of stopping at the checksum.  What
 * decodes must keep format.h's promises (indices in range, absolute paths), survive encode + decode
 * unchanged, and give a reading order whose items point at its files. */
#include "fuzz.h"

#include "error.h"
#include "format.h"
#include "layout_order.h"

#include <string.h>

#include <ext2fs/ext2fs.h>

#define HDR_SIZE 64u
#define CRC_OFFSET 60u

/* The file's checksum as format.h defines it: crc32c of the whole file, the crc field taken as zero. */
static void set_crc(unsigned char *buf, size_t len)
{
	memset(buf + CRC_OFFSET, 0, 4);
	uint32_t crc = ext2fs_crc32c_le(~0u, buf, len);
	for (int i = 0; i < 4; i++)
		buf[CRC_OFFSET + i] = (unsigned char)(crc >> (8 * i));
}

static void check_image(const struct pf_image *img)
{
	FUZZ_CHECK(img->kind == PF_KIND_TRACE || img->kind == PF_KIND_LAYOUT);
	FUZZ_CHECK(img->nfs <= PF_MAX_FS && img->nfiles <= PF_MAX_FILES && img->nextents <= PF_MAX_EXTENTS);
	for (uint32_t i = 0; i < img->nfs; i++) {
		FUZZ_CHECK(img->fs[i].mountpoint && strlen(img->fs[i].mountpoint) < PF_MAX_PATH);
		FUZZ_CHECK(img->fs[i].medium <= PF_MEDIUM_MAX);
	}
	for (uint32_t i = 0; i < img->nfiles; i++) {
		const struct pf_file *f = &img->files[i];
		FUZZ_CHECK(f->fs < img->nfs);
		FUZZ_CHECK(f->path && f->path[0] == '/' && strlen(f->path) < PF_MAX_PATH);
	}
	for (uint32_t i = 0; i < img->nextents; i++) {
		const struct pf_extent *e = &img->extents[i];
		FUZZ_CHECK(e->file < img->nfiles && e->length > 0 && e->offset + e->length >= e->offset);
	}
	(void)pf_image_bytes(img);
}

static void check_same(const struct pf_image *a, const struct pf_image *b)
{
	FUZZ_CHECK(a->kind == b->kind && a->flags == b->flags && a->created == b->created && a->boots == b->boots &&
		   a->lost_events == b->lost_events);
	FUZZ_CHECK(a->nfs == b->nfs && a->nfiles == b->nfiles && a->nextents == b->nextents);
	for (uint32_t i = 0; i < a->nfs; i++) {
		const struct pf_fs *x = &a->fs[i], *y = &b->fs[i];
		FUZZ_CHECK(!memcmp(x->uuid, y->uuid, 16) && x->dev == y->dev && x->block_size == y->block_size &&
			   x->medium == y->medium && !strcmp(x->mountpoint, y->mountpoint));
	}
	for (uint32_t i = 0; i < a->nfiles; i++) {
		const struct pf_file *x = &a->files[i], *y = &b->files[i];
		FUZZ_CHECK(x->fs == y->fs && x->flags == y->flags && x->ino == y->ino && x->generation == y->generation &&
			   x->mode == y->mode && x->size == y->size && x->mtime_ns == y->mtime_ns &&
			   x->ctime_ns == y->ctime_ns && x->first_ns == y->first_ns && x->first_order == y->first_order &&
			   x->boots == y->boots && !strcmp(x->path, y->path));
	}
	for (uint32_t i = 0; i < a->nextents; i++)
		FUZZ_CHECK(!memcmp(&a->extents[i], &b->extents[i], sizeof(a->extents[i])));
}

/* What decodes encodes, and decodes again to the same image. */
static void round_trip(const struct pf_image *img)
{
	void *buf;
	size_t len;
	int rc = pf_image_encode(img, &buf, &len);
	if (rc == -ENOMEM)
		return;
	FUZZ_CHECK(rc == 0);
	struct pf_image *again = NULL;
	rc = pf_image_decode(buf, len, &again);
	free(buf);
	if (rc == -ENOMEM)
		return;
	FUZZ_CHECK(rc == 0);
	check_same(img, again);
	pf_image_free(again);
}

static void check_order(const struct pf_image *img, const struct pf_lorder_opts *o)
{
	struct pf_litem *items;
	size_t n;
	if (pf_layout_order(img, o, &items, &n))
		return; /* -ENOMEM */
	FUZZ_CHECK(n <= (size_t)img->nextents + img->nfiles);
	FUZZ_CHECK((n == 0) == (items == NULL));
	for (size_t i = 0; i < n; i++) {
		const struct pf_litem *it = &items[i];
		FUZZ_CHECK(it->file < img->nfiles && it->kind <= PF_LITEM_META);
		FUZZ_CHECK(it->kind != PF_LITEM_DATA || it->length > 0);
		FUZZ_CHECK(!o || !(o->flags & PF_LORDER_ONE_FS) || img->files[it->file].fs == o->fs);
	}
	free(items);
}

static void decode(const unsigned char *buf, size_t len)
{
	struct pf_image *img = (struct pf_image *)buf; /* must be overwritten */
	int rc = pf_image_decode(buf, len, &img);
	if (rc) {
		FUZZ_CHECK(rc < 0 && img == NULL && pf_strerror(rc) != NULL);
		return;
	}
	FUZZ_CHECK(img != NULL);
	check_image(img);
	round_trip(img);
	check_order(img, NULL);
	struct pf_lorder_opts cut = { .max_bytes = 5000, .first_bin_bytes = 4096, .max_bin_bytes = 16384 };
	check_order(img, &cut);
	struct pf_lorder_opts placement = { .flags = PF_LORDER_PLACEMENT | PF_LORDER_ONE_FS, .fs = 0 };
	check_order(img, &placement);
	pf_image_free(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decode(data, size);
	/* a file shorter than the header has no checksum field to set */
	if (size >= HDR_SIZE && size <= (1u << 20)) {
		unsigned char *copy = malloc(size);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		set_crc(copy, size);
		decode(copy, size);
		free(copy);
	}
	return 0;
}
