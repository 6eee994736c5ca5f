/* SPDX-License-Identifier: GPL-2.0-or-later */
/* read_plan_ext: the read plan (lib/read_plan.h) of a layout's filesystem as prefetch-reorder maps it, on an
 * unmounted ext2/3/4 image (libext2fs: reorder/read_map.c).
 *
 *   read_plan_ext LAYOUT IMAGE
 *
 * Prints the rotational replay as prefetchd's replay --dump-plan prints what it reads, built with FIEMAP and
 * on the mounted filesystem: the metadata pass's steps (lib/ext_meta_pass.h; the head pass first when init's
 * files are there, then its sweep), the full pass, then the sweep of the rest, one line per item
 * (read_plan_dump.c).  The two must be the same line for line (tests/integration/31-replay-after-reorder.sh).
 * Exits 1 when the layout or the image cannot be read or the layout does not name the image's filesystem. */
#include "error.h"
#include "ext_meta_pass.h"
#include "format.h"
#include "read_map.h"
#include "read_plan.h"

#include <errno.h>
#include <ext2fs/ext2fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One sweep of items[0 .. n): built with the mapper, printed. */
static int sweep(const struct pf_image *img, const struct pf_rplan_mapper *m, struct pf_ritem *items, size_t n)
{
	struct pf_ritem *own = NULL;
	struct pf_rplan_placed placed = { 0 };
	if (!n)
		return 0;
	int rc = pf_rplan_sweep(img, m, &items, &n, &own, &placed);
	if (!rc)
		pf_rplan_dump(stdout, img, items, n);
	free(own);
	return rc;
}

/* The metadata pass (lib/ext_meta_pass.h) printed as the replay's --dump-plan prints the steps it reads. */
struct meta_dump {
	uint32_t fsi, block_size;
	struct pf_bvec tmp;
};

static int meta_step(void *arg, const struct pf_meta_step *s)
{
	struct meta_dump *d = arg;
	return s->cost_only ? 0 : pf_meta_step_dump(stdout, d->fsi, d->block_size, s, &d->tmp);
}

static int meta(ext2_filsys fs, const struct pf_image *img, uint32_t fsi, int head)
{
	struct meta_dump d = { .fsi = fsi, .block_size = fs->blocksize };
	struct pf_meta_layout l = { img, fsi };
	struct pf_meta_opts o = { .ls = &l, .nls = 1, .root = EXT2_ROOT_INO, .head = head };
	struct pf_meta_sink s = { .read = meta_step, .arg = &d };
	int rc = pf_meta_pass(fs, &o, &s);
	free(d.tmp.r);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: read_plan_ext LAYOUT IMAGE\n");
		return 2;
	}
	struct pf_image *img;
	int rc = pf_image_load(argv[1], 0, PF_KIND_LAYOUT, &img);
	if (rc < 0) {
		fprintf(stderr, "read_plan_ext: %s: %s\n", argv[1], pf_strerror(rc));
		return 1;
	}
	ext2_filsys fs;
	errcode_t e = ext2fs_open(argv[2], EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs);
	if (e) {
		fprintf(stderr, "read_plan_ext: %s: %s\n", argv[2], pf_strerror(pf_err_from_ext2(e)));
		pf_image_free(img);
		return 1;
	}
	uint32_t fsi = 0;
	int named = pf_image_find_fs(img, fs->super->s_uuid, &fsi);
	struct pf_ritem *items = NULL;
	size_t n = 0;
	rc = !named ? PF_ECORRUPT : ext2fs_read_inode_bitmap(fs) ? -EIO : pf_rplan_build(img, NULL, &items, &n);
	if (!rc) {
		struct pf_read_map rm = { .fs = fs, .img = img, .fsi = fsi };
		struct pf_rplan_mapper m = pf_read_map_mapper(&rm);
		size_t nhead = pf_rplan_head_first(img, items, n);
		if (nhead && (rc = meta(fs, img, fsi, 1)) == 0)
			rc = sweep(img, &m, items, nhead);
		if (!rc)
			rc = meta(fs, img, fsi, 0);
		if (!rc)
			rc = sweep(img, &m, items + nhead, n - nhead);
	}
	if (rc)
		fprintf(stderr, "read_plan_ext: %s\n", !named ? "the layout does not name the image's filesystem"
							       : pf_strerror(rc));
	free(items);
	ext2fs_close_free(&fs);
	pf_image_free(img);
	return rc ? 1 : 0;
}
