/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Growable arrays: room for a number of elements, the capacity doubling from a first size. */
#ifndef PREFETCH_ARRAY_H
#define PREFETCH_ARRAY_H

#include <stddef.h>

/* Makes *items (room for *cap elements of elem_size bytes) hold at least need elements: the capacity doubles
 * from *cap (or from first when *cap is 0) until it does, never beyond limit elements.  The elements kept move
 * with the array, as with realloc.  Returns 0 (also when there is room already), -E2BIG when need > limit, or
 * -ENOMEM; on failure *items and *cap are left as they were (nothing is freed). */
int pf_array_reserve_max(void **items, size_t *cap, size_t need, size_t elem_size, size_t first, size_t limit);

/* The same, limited only by what a size_t counts in bytes: 0 or -ENOMEM. */
int pf_array_reserve(void **items, size_t *cap, size_t need, size_t elem_size, size_t first);

/* pf_array_reserve on a typed array: arr is a pointer to the elements (their size is taken from it), cap its
 * size_t capacity; both lvalues without side effects.  Evaluates to 0 or -ENOMEM. */
#define PF_ARRAY_RESERVE(arr, cap, need, first)                                                                 \
	__extension__({                                                                                         \
		void *pf_array_p_ = (arr);                                                                      \
		int pf_array_rc_ = pf_array_reserve(&pf_array_p_, &(cap), (need), sizeof(*(arr)), (first));     \
		(arr) = pf_array_p_;                                                                            \
		pf_array_rc_;                                                                                   \
	})

#endif
