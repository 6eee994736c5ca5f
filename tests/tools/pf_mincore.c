/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pf_mincore: how many 4 KiB pages of a file or block device range are in the page cache.
 *
 *   pf_mincore FILE [OFFSET [LENGTH]]     prints "RESIDENT TOTAL" (pages of the range)
 *
 * Works on block devices too (size from BLKGETSIZE64), which fincore(1) does not: the replay tests use it to
 * see inode-table and directory blocks the metadata pass pulled into the device's page cache.  Mapping a file
 * does not read it; mincore only looks. */
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096ull

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "Usage: pf_mincore FILE [OFFSET [LENGTH]]\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "pf_mincore: %s: %s\n", argv[1], pf_strerror(-errno));
		return 1;
	}
	uint64_t size = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &size) < 0)
		size = 0;
	uint64_t off = argc > 2 ? strtoull(argv[2], NULL, 0) / PAGE * PAGE : 0;
	uint64_t len = argc > 3 ? strtoull(argv[3], NULL, 0) : size > off ? size - off : 0;
	if (off + len > size)
		len = size > off ? size - off : 0;
	uint64_t pages = (len + PAGE - 1) / PAGE, resident = 0;
	if (pages) {
		void *map = mmap(NULL, pages * PAGE, PROT_READ, MAP_SHARED, fd, (off_t)off);
		unsigned char *vec = malloc(pages);
		if (map == MAP_FAILED || !vec || mincore(map, pages * PAGE, vec) < 0) {
			fprintf(stderr, "pf_mincore: %s: %s\n", argv[1], pf_strerror(-errno));
			return 1;
		}
		for (uint64_t i = 0; i < pages; i++)
			resident += vec[i] & 1;
		munmap(map, pages * PAGE);
		free(vec);
	}
	close(fd);
	printf("%llu %llu\n", (unsigned long long)resident, (unsigned long long)pages);
	return 0;
}
