/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int pf_array_reserve_max(void **items, size_t *cap, size_t need, size_t elem_size, size_t first, size_t limit)
{
	if (need <= *cap)
		return 0;
	if (need > limit)
		return -E2BIG;
	if (elem_size && limit > SIZE_MAX / elem_size)
		limit = SIZE_MAX / elem_size; /* the byte count must not wrap */
	if (need > limit)
		return -ENOMEM;
	size_t ncap = *cap ? *cap : first ? first : 1;
	if (ncap > limit)
		ncap = limit;
	while (ncap < need)
		ncap = ncap > limit / 2 ? limit : ncap * 2;
	void *p = realloc(*items, ncap * elem_size);
	if (!p)
		return -ENOMEM;
	*items = p;
	*cap = ncap;
	return 0;
}

int pf_array_reserve(void **items, size_t *cap, size_t need, size_t elem_size, size_t first)
{
	return pf_array_reserve_max(items, cap, need, elem_size, first, SIZE_MAX); /* too big for memory: -ENOMEM */
}
