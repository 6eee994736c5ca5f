/* Physical places of a file's ranges from FIEMAP, as the file lies now.  The layout's own block numbers date
 * from when it was made: a prefetch-reorder since then (it runs at every shutdown) moved the blocks, and a
 * sweep sorted by the old numbers reads them in a scrambled order (slower than no prefetch at all). */
#include "replay_internal.h"

#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>

#define FIEMAP_BATCH 64

/* Extents whose physical address means nothing for ordering reads. */
#define FIEMAP_NO_PLACE                                                                                     \
	(FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE | \
	 FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_NOT_ALIGNED)

/* What FIEMAP says of an item decides it, whatever the layout said: a hole or an extent without a place
 * leaves it unplaced. */
static void place(struct pf_ritem *it, const struct fiemap_extent *fe)
{
	uint64_t was = it->phys_src == PF_RPHYS_LAYOUT ? it->physical : UINT64_MAX;
	if (fe && !(fe->fe_flags & FIEMAP_NO_PLACE)) {
		it->physical = fe->fe_physical + (it->offset - fe->fe_logical);
		it->phys_known = 1;
		it->phys_src = PF_RPHYS_NOW;
		it->moved = was != UINT64_MAX && was != it->physical;
	} else {
		it->physical = 0;
		it->phys_known = 0;
		it->phys_src = PF_RPHYS_NONE;
		it->moved = was != UINT64_MAX;
	}
}

int pf_replay_fiemap(int fd, struct pf_ritem *const *items, size_t n)
{
	if (!n)
		return 0;
	struct {
		struct fiemap fm;
		struct fiemap_extent ext[FIEMAP_BATCH];
	} q;
	uint64_t start = items[0]->offset, end = 0;
	for (size_t i = 0; i < n; i++)
		if (items[i]->offset + items[i]->length > end)
			end = items[i]->offset + items[i]->length;
	size_t i = 0;
	/* Items are decided one by one as the extents pass them: should a later call fail, the ones not reached
	 * keep the layout's place (the fallback). */
	while (i < n && start < end) {
		memset(&q, 0, sizeof(q)); /* whole: valgrind does not know FIEMAP fills the extents */
		q.fm.fm_start = start;
		q.fm.fm_length = end - start;
		q.fm.fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, &q.fm) < 0)
			return -errno;
		if (!q.fm.fm_mapped_extents)
			break;
		for (uint32_t j = 0; j < q.fm.fm_mapped_extents && i < n; j++) {
			const struct fiemap_extent *fe = &q.ext[j];
			for (; i < n && items[i]->offset < fe->fe_logical; i++) /* in a hole */
				place(items[i], NULL);
			for (; i < n && items[i]->offset < fe->fe_logical + fe->fe_length; i++)
				place(items[i], fe);
		}
		const struct fiemap_extent *last = &q.ext[q.fm.fm_mapped_extents - 1];
		if ((last->fe_flags & FIEMAP_EXTENT_LAST) || last->fe_logical + last->fe_length <= start)
			break;
		start = last->fe_logical + last->fe_length;
	}
	for (; i < n; i++) /* past the last extent: a hole (the file shrank would have failed the identity check) */
		place(items[i], NULL);
	return 0;
}
