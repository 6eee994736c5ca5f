/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "format.h"
#include "array.h"
#include "safe_file.h"
#include "state_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ext2fs/ext2fs.h> /* ext2fs_crc32c_le: the checksum e2fsprogs already maintains */

#define MAGIC "PREFETCH"
#define HDR_SIZE 64u
#define FS_SIZE 48u
#define FILE_SIZE 80u
#define EXT_SIZE 32u
#define CRC_OFFSET 60u

/* ---- in-memory building ---- */

struct pf_image *pf_image_new(enum pf_kind kind)
{
	struct pf_image *img = calloc(1, sizeof(*img));
	if (img) {
		img->kind = kind;
		img->boots = kind == PF_KIND_TRACE ? 1 : 0;
	}
	return img;
}

void pf_image_free(struct pf_image *img)
{
	if (!img)
		return;
	for (uint32_t i = 0; i < img->nfs; i++)
		free(img->fs[i].mountpoint);
	for (uint32_t i = 0; i < img->nfiles; i++)
		free(img->files[i].path);
	free(img->fs);
	free(img->files);
	free(img->extents);
	free(img);
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem, uint32_t limit)
{
	if (need <= *cap)
		return 0;
	if (need > limit)
		return PF_ETOOBIG;
	size_t c = *cap;
	int rc = pf_array_reserve_max(arr, &c, need, elem, 16, limit);
	*cap = (uint32_t)c;
	return rc;
}

static char *dup_str(const char *s)
{
	return strdup(s ? s : "");
}

int pf_image_add_fs(struct pf_image *img, const struct pf_fs *fs)
{
	int rc = grow((void **)&img->fs, &img->cap_fs, img->nfs + 1, sizeof(*fs), PF_MAX_FS);
	if (rc)
		return rc;
	struct pf_fs *d = &img->fs[img->nfs];
	*d = *fs;
	if (!(d->mountpoint = dup_str(fs->mountpoint)))
		return -ENOMEM;
	return (int)img->nfs++;
}

int pf_image_add_file(struct pf_image *img, const struct pf_file *file)
{
	if (file->fs >= img->nfs || !file->path || strlen(file->path) >= PF_MAX_PATH)
		return PF_ECORRUPT;
	int rc = grow((void **)&img->files, &img->cap_files, img->nfiles + 1, sizeof(*file), PF_MAX_FILES);
	if (rc)
		return rc;
	struct pf_file *d = &img->files[img->nfiles];
	*d = *file;
	if (!(d->path = dup_str(file->path)))
		return -ENOMEM;
	return (int)img->nfiles++;
}

int pf_image_add_extent(struct pf_image *img, const struct pf_extent *ext)
{
	if (ext->file >= img->nfiles || ext->offset + ext->length < ext->offset)
		return PF_ECORRUPT;
	int rc = grow((void **)&img->extents, &img->cap_extents, img->nextents + 1, sizeof(*ext), PF_MAX_EXTENTS);
	if (rc)
		return rc;
	img->extents[img->nextents] = *ext;
	return (int)img->nextents++;
}

int pf_image_find_fs(const struct pf_image *img, const uint8_t uuid[16], uint32_t *fsi)
{
	for (uint32_t i = 0; i < img->nfs; i++)
		if (memcmp(img->fs[i].uuid, uuid, 16) == 0) {
			*fsi = i;
			return 1;
		}
	return 0;
}

uint64_t pf_image_bytes(const struct pf_image *img)
{
	uint64_t total = 0;
	for (uint32_t i = 0; i < img->nextents; i++)
		total += img->extents[i].length;
	return total;
}

/* ---- little-endian field access ---- */

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t checksum(const unsigned char *buf, size_t len)
{
	/* crc32c over the whole file with the crc field taken as zero */
	static const unsigned char zero[4];
	uint32_t crc = ext2fs_crc32c_le(~0u, buf, CRC_OFFSET);
	crc = ext2fs_crc32c_le(crc, zero, 4);
	return ext2fs_crc32c_le(crc, buf + CRC_OFFSET + 4, len - CRC_OFFSET - 4);
}

/* ---- encode ---- */

int pf_image_encode(const struct pf_image *img, void **bufp, size_t *lenp)
{
	*bufp = NULL;
	*lenp = 0;
	if (img->nfs > PF_MAX_FS || img->nfiles > PF_MAX_FILES || img->nextents > PF_MAX_EXTENTS)
		return PF_ETOOBIG;
	uint64_t strtab = 0;
	for (uint32_t i = 0; i < img->nfs; i++)
		strtab += strlen(img->fs[i].mountpoint) + 1;
	for (uint32_t i = 0; i < img->nfiles; i++)
		strtab += strlen(img->files[i].path) + 1;
	if (strtab > PF_MAX_STRTAB)
		return PF_ETOOBIG;
	size_t len = HDR_SIZE + (size_t)img->nfs * FS_SIZE + (size_t)img->nfiles * FILE_SIZE +
		     (size_t)img->nextents * EXT_SIZE + (size_t)strtab;
	unsigned char *buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;

	memcpy(buf, MAGIC, 8);
	put32(buf + 8, PF_FORMAT_VERSION);
	put32(buf + 12, img->kind);
	put32(buf + 16, HDR_SIZE);
	put32(buf + 20, img->flags);
	put64(buf + 24, img->created);
	put32(buf + 32, img->nfs);
	put32(buf + 36, img->nfiles);
	put32(buf + 40, img->nextents);
	put32(buf + 44, (uint32_t)strtab);
	put32(buf + 48, img->boots);
	put32(buf + 52, img->lost_events);
	/* 56..59 reserved, 60..63 crc */

	unsigned char *p = buf + HDR_SIZE;
	unsigned char *strbase = buf + len - strtab;
	uint32_t stroff = 0;
#define ADD_STR(s, offp, lenp)                              \
	do {                                                \
		size_t l_ = strlen(s);                      \
		memcpy(strbase + stroff, (s), l_ + 1);      \
		put32((offp), stroff);                      \
		put32((lenp), (uint32_t)l_);                \
		stroff += (uint32_t)l_ + 1;                 \
	} while (0)

	for (uint32_t i = 0; i < img->nfs; i++, p += FS_SIZE) {
		const struct pf_fs *f = &img->fs[i];
		memcpy(p, f->uuid, 16);
		put64(p + 16, f->dev);
		put32(p + 24, f->block_size);
		put32(p + 28, f->medium);
		ADD_STR(f->mountpoint, p + 32, p + 36);
		put32(p + 40, f->flags);
		/* 44..47 reserved */
	}
	for (uint32_t i = 0; i < img->nfiles; i++, p += FILE_SIZE) {
		const struct pf_file *f = &img->files[i];
		put32(p + 0, f->fs);
		put32(p + 4, f->flags);
		put64(p + 8, f->ino);
		put32(p + 16, f->generation);
		put32(p + 20, f->mode);
		put64(p + 24, f->size);
		put64(p + 32, (uint64_t)f->mtime_ns);
		put64(p + 40, (uint64_t)f->ctime_ns);
		put64(p + 48, f->first_ns);
		put32(p + 56, f->first_order);
		put32(p + 60, f->boots);
		ADD_STR(f->path, p + 64, p + 68);
	}
	for (uint32_t i = 0; i < img->nextents; i++, p += EXT_SIZE) {
		const struct pf_extent *e = &img->extents[i];
		put32(p + 0, e->file);
		put32(p + 4, e->flags);
		put64(p + 8, e->offset);
		put64(p + 16, e->length);
		put64(p + 24, e->physical);
	}
#undef ADD_STR
	put32(buf + CRC_OFFSET, checksum(buf, len));
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* ---- decode ---- */

static int get_str(const unsigned char *strtab, uint32_t strtab_len, const unsigned char *rec, char **out)
{
	uint32_t off = get32(rec), len = get32(rec + 4);
	if (off > strtab_len || len >= PF_MAX_PATH || len >= strtab_len - off || strtab[off + len] != '\0' ||
	    memchr(strtab + off, '\0', len))
		return PF_ECORRUPT;
	*out = strndup((const char *)strtab + off, len);
	return *out ? 0 : -ENOMEM;
}

int pf_image_decode(const void *data, size_t len, struct pf_image **out)
{
	const unsigned char *buf = data;
	*out = NULL;
	if (len < 8)
		return len > 0 && memcmp(buf, MAGIC, len) == 0 ? PF_ETRUNC : PF_EBADMAGIC;
	if (memcmp(buf, MAGIC, 8) != 0)
		return PF_EBADMAGIC;
	if (len < HDR_SIZE)
		return PF_ETRUNC;
	if (get32(buf + 8) != PF_FORMAT_VERSION)
		return PF_EVERSION;
	uint32_t kind = get32(buf + 12);
	if (get32(buf + 16) != HDR_SIZE || (kind != PF_KIND_TRACE && kind != PF_KIND_LAYOUT))
		return PF_ECORRUPT;
	uint32_t nfs = get32(buf + 32), nfiles = get32(buf + 36), next = get32(buf + 40), strtab = get32(buf + 44);
	if (nfs > PF_MAX_FS || nfiles > PF_MAX_FILES || next > PF_MAX_EXTENTS || strtab > PF_MAX_STRTAB)
		return PF_ETOOBIG;
	uint64_t want = (uint64_t)HDR_SIZE + (uint64_t)nfs * FS_SIZE + (uint64_t)nfiles * FILE_SIZE +
			(uint64_t)next * EXT_SIZE + strtab;
	if (len < want)
		return PF_ETRUNC;
	if (len > want)
		return PF_ECORRUPT; /* trailing bytes: something else was appended or sizes lie */
	if (get32(buf + CRC_OFFSET) != checksum(buf, len))
		return PF_ECSUM;

	struct pf_image *img = pf_image_new(kind);
	if (!img)
		return -ENOMEM;
	img->flags = get32(buf + 20);
	img->created = get64(buf + 24);
	img->boots = get32(buf + 48);
	img->lost_events = get32(buf + 52);
	int rc = -ENOMEM;
	if ((nfs && !(img->fs = calloc(nfs, sizeof(*img->fs)))) ||
	    (nfiles && !(img->files = calloc(nfiles, sizeof(*img->files)))) ||
	    (next && !(img->extents = calloc(next, sizeof(*img->extents)))))
		goto fail;
	img->cap_fs = nfs;
	img->cap_files = nfiles;
	img->cap_extents = next;

	const unsigned char *p = buf + HDR_SIZE;
	const unsigned char *strbase = buf + len - strtab;
	for (uint32_t i = 0; i < nfs; i++, p += FS_SIZE) {
		struct pf_fs *f = &img->fs[i];
		memcpy(f->uuid, p, 16);
		f->dev = get64(p + 16);
		f->block_size = get32(p + 24);
		f->medium = get32(p + 28);
		f->flags = get32(p + 40); /* zero in files written before it existed */
		img->nfs = i + 1; /* so that free() sees the string below */
		if ((rc = get_str(strbase, strtab, p + 32, &f->mountpoint)))
			goto fail;
		if (f->medium > PF_MEDIUM_MAX || (f->block_size & (f->block_size - 1))) {
			rc = PF_ECORRUPT;
			goto fail;
		}
	}
	for (uint32_t i = 0; i < nfiles; i++, p += FILE_SIZE) {
		struct pf_file *f = &img->files[i];
		f->fs = get32(p + 0);
		f->flags = get32(p + 4);
		f->ino = get64(p + 8);
		f->generation = get32(p + 16);
		f->mode = get32(p + 20);
		f->size = get64(p + 24);
		f->mtime_ns = (int64_t)get64(p + 32);
		f->ctime_ns = (int64_t)get64(p + 40);
		f->first_ns = get64(p + 48);
		f->first_order = get32(p + 56);
		f->boots = get32(p + 60);
		img->nfiles = i + 1;
		if ((rc = get_str(strbase, strtab, p + 64, &f->path)))
			goto fail;
		if (f->fs >= nfs || f->path[0] != '/') {
			rc = PF_ECORRUPT;
			goto fail;
		}
	}
	for (uint32_t i = 0; i < next; i++, p += EXT_SIZE) {
		struct pf_extent *e = &img->extents[i];
		e->file = get32(p + 0);
		e->flags = get32(p + 4);
		e->offset = get64(p + 8);
		e->length = get64(p + 16);
		e->physical = get64(p + 24);
		if (e->file >= nfiles || e->length == 0 || e->offset + e->length < e->offset) {
			rc = PF_ECORRUPT;
			goto fail;
		}
	}
	img->nextents = next;
	*out = img;
	return 0;
fail:
	pf_image_free(img);
	return rc;
}

/* ---- files ---- */

int pf_image_load(const char *path, unsigned opts, uint32_t want_kind, struct pf_image **out)
{
	void *buf;
	size_t len;
	size_t max = HDR_SIZE + (size_t)PF_MAX_FS * FS_SIZE + (size_t)PF_MAX_FILES * FILE_SIZE +
		     (size_t)PF_MAX_EXTENTS * EXT_SIZE + PF_MAX_STRTAB;
	*out = NULL;
	int rc;
	if (opts & PF_LOAD_STATE) {
		int fd = pf_state_open(path, O_RDONLY, 0);
		if (fd < 0)
			return fd;
		rc = pf_read_fd(fd, max, !!(opts & PF_LOAD_REQUIRE_ROOT), &buf, &len);
		close(fd);
	} else {
		rc = pf_read_file(path, max, !!(opts & PF_LOAD_REQUIRE_ROOT), &buf, &len);
	}
	if (rc)
		return rc;
	rc = pf_image_decode(buf, len, out);
	free(buf);
	if (rc == 0 && want_kind && (*out)->kind != want_kind) {
		pf_image_free(*out);
		*out = NULL;
		rc = PF_EKIND;
	}
	return rc;
}

static int save(const char *path, const struct pf_image *img, int state)
{
	void *buf;
	size_t len;
	int rc = pf_image_encode(img, &buf, &len);
	if (rc)
		return rc;
	rc = state ? pf_state_write(path, buf, len, 0600) : pf_write_atomic(path, buf, len, 0600);
	free(buf);
	return rc;
}

int pf_image_save(const char *path, const struct pf_image *img)
{
	return save(path, img, 0);
}

int pf_image_save_state(const char *path, const struct pf_image *img)
{
	return save(path, img, 1);
}

int pf_layout_save_changed(const char *path, const struct pf_image *layout)
{
	if (layout->kind != PF_KIND_LAYOUT)
		return PF_EKIND;
	struct pf_image *old = NULL;
	if (pf_image_load(path, PF_LOAD_STATE, PF_KIND_LAYOUT, &old) != 0 || old->nfiles != layout->nfiles) {
		pf_image_free(old);
		return pf_image_save_state(path, layout);
	}
	/* The new layout with the old one's creation time and first-touch means: byte for byte the old file
	 * (checksum included) when nothing else changed. */
	struct pf_image same = *layout;
	same.created = old->created;
	same.files = malloc(((size_t)layout->nfiles ? layout->nfiles : 1) * sizeof(*same.files));
	if (!same.files) {
		pf_image_free(old);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < layout->nfiles; i++) {
		same.files[i] = layout->files[i];
		same.files[i].first_ns = old->files[i].first_ns;
	}
	pf_image_free(old);
	void *buf;
	size_t len;
	int rc = pf_image_encode(&same, &buf, &len);
	free(same.files);
	if (rc)
		return rc;
	int held = pf_file_holds(path, buf, len, 0600);
	free(buf);
	return held ? 1 : pf_image_save_state(path, layout);
}
