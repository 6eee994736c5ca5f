/* SPDX-License-Identifier: GPL-2.0-or-later */
/* read_plan_ext: the read plan (lib/read_plan.h) of a layout's filesystem as prefetch-reorder maps it, on an
 * unmounted ext2/3/4 image (libext2fs: reorder/read_map.c).
 *
 *   read_plan_ext LAYOUT IMAGE
 *
 * Prints the rotational sweep as prefetchd's replay --dump-plan prints the one it builds with FIEMAP: the
 * head's sweep (init's files), then the rest, one line per item (read_plan_dump.c).  The two must be the same
 * line for line (tests/integration/33-read-plan-equal.sh).  Exits 1 when the layout or the image cannot be
 * read or the layout does not name the image's filesystem. */
#include "error.h"
#include "format.h"
#include "read_map.h"
#include "read_plan.h"
#include "replay_cost.h"
#include "replay_predict.h"

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

/* The data items of the plan of filesystem fsi (placed by the mapper) costed bin by bin on the disk model. */
static int data_cost(ext2_filsys fs, const struct pf_image *img, uint32_t fsi, const struct pf_rplan_mapper *m)
{
	struct pf_lorder_opts o = { .flags = PF_LORDER_ONE_FS, .fs = fsi };
	struct pf_ritem *items = NULL, *own = NULL, *it;
	size_t n = 0;
	struct pf_rplan_placed placed = { 0 };
	int rc = pf_rplan_build(img, &o, &items, &n);
	it = items;
	if (!rc)
		rc = pf_rplan_sweep(img, m, &it, &n, &own, &placed);
	uint32_t nbins = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (it[i].bin + 1 > nbins)
			nbins = it[i].bin + 1;
	struct pf_bvec *v = calloc(nbins ? nbins : 1, sizeof(*v));
	struct pf_cost_pass *p = calloc(nbins ? nbins : 1, sizeof(*p));
	if (!rc && (!v || !p))
		rc = -ENOMEM;
	uint64_t bs = fs->blocksize;
	for (size_t i = 0; i < n && !rc; i++)
		if (it[i].kind == PF_RITEM_DATA && it[i].phys_known)
			rc = pf_bvec_push(&v[it[i].bin], it[i].physical / bs,
					  (it[i].physical + it[i].length + bs - 1) / bs - it[i].physical / bs);
	for (uint32_t b = 0; b < nbins; b++)
		p[b] = (struct pf_cost_pass){ .r = v[b].r, .n = v[b].n, .cache = PF_COST_FILES, .data = 1 };
	struct pf_disk_model d = pf_replay_model(fs, PF_MEDIUM_ROTATIONAL);
	struct pf_cost c;
	if (!rc)
		rc = pf_replay_cost(&d, p, nbins, NULL, 0, &c);
	if (!rc)
		printf("data_s %.17g requests %llu blocks %llu\n", c.data_s, (unsigned long long)c.requests,
		       (unsigned long long)c.data_blocks);
	for (uint32_t b = 0; v && b < nbins; b++)
		free(v[b].r);
	free(v);
	free(p);
	free(own);
	free(items);
	return rc;
}

int main(int argc, char **argv)
{
	int cost = argc == 4 && !strcmp(argv[1], "--data-cost");
	if (cost) {
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: read_plan_ext [--data-cost] LAYOUT IMAGE\n");
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
	int fsi = pf_image_find_fs(img, fs->super->s_uuid);
	struct pf_ritem *items = NULL;
	size_t n = 0;
	rc = fsi < 0 ? PF_ECORRUPT : ext2fs_read_inode_bitmap(fs) ? -EIO : pf_rplan_build(img, NULL, &items, &n);
	if (!rc) {
		struct pf_read_map rm = { .fs = fs, .img = img, .fsi = (uint32_t)fsi };
		struct pf_rplan_mapper m = pf_read_map_mapper(&rm);
		if (cost) {
			rc = data_cost(fs, img, (uint32_t)fsi, &m);
		} else {
			size_t nhead = pf_rplan_head_first(img, items, n);
			rc = sweep(img, &m, items, nhead);
			if (!rc)
				rc = sweep(img, &m, items + nhead, n - nhead);
		}
	}
	if (rc)
		fprintf(stderr, "read_plan_ext: %s\n", fsi < 0 ? "the layout does not name the image's filesystem"
							       : pf_strerror(rc));
	free(items);
	ext2fs_close_free(&fs);
	pf_image_free(img);
	return rc ? 1 : 0;
}
