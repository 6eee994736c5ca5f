/* Physical places of a file's ranges from FIEMAP, for items whose layout record has none. */
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
			while (i < n && items[i]->offset < fe->fe_logical) /* in a hole: no place */
				i++;
			for (; i < n && items[i]->offset < fe->fe_logical + fe->fe_length; i++) {
				if (fe->fe_flags & FIEMAP_NO_PLACE)
					continue;
				items[i]->physical = fe->fe_physical + (items[i]->offset - fe->fe_logical);
				items[i]->phys_known = 1;
			}
		}
		const struct fiemap_extent *last = &q.ext[q.fm.fm_mapped_extents - 1];
		if ((last->fe_flags & FIEMAP_EXTENT_LAST) || last->fe_logical + last->fe_length <= start)
			break;
		start = last->fe_logical + last->fe_length;
	}
	return 0;
}
