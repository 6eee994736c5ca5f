/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Whole decimal numbers in a range, as the command lines and the configuration take them: an optional sign
 * and digits, nothing else ("30s", " 5", "" and "0x10" are not numbers). */
#ifndef PREFETCH_NUMBER_H
#define PREFETCH_NUMBER_H

/* Returns 0 with *out set, or (*out untouched) -EINVAL when s is not a decimal number, -ERANGE when it lies
 * outside lo..hi. */
int pf_parse_long(const char *s, long lo, long hi, long *out);

#endif
