/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the fuzz targets share: the libFuzzer entry point they define, and a check that stops the run.
 *
 * Each tests/fuzz/fuzz_*.c defines LLVMFuzzerTestOneInput.  Built with clang it is linked with libFuzzer
 * (-fsanitize=fuzzer); built with gcc it is linked with tests/fuzz/driver.c, which feeds it a corpus and
 * mutations of it.  Either way ASan and UBSan watch every call, and FUZZ_CHECK turns a broken promise of a
 * parser (a value out of its documented range, a round trip that changes something) into a crash too. */
#ifndef PREFETCH_FUZZ_H
#define PREFETCH_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                             \
	do {                                                                                         \
		if (!(cond)) {                                                                       \
			fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                     \
		}                                                                                    \
	} while (0)

/* The input as a NUL-terminated string (the text parsers take one; an embedded NUL ends it early, as it
 * does for the loaders).  malloc'd; NULL when out of memory. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (s) {
		for (size_t i = 0; i < size; i++)
			s[i] = (char)data[i];
		s[size] = '\0';
	}
	return s;
}

#endif
