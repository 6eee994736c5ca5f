/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What both power-cut tools (shim/crash_shim.c, reorder_crash.c) share: their random choices and the digest of
 * a write sequence, so that a seed and a digest mean the same in both. */
#ifndef PF_CRASH_MODEL_H
#define PF_CRASH_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* one write since the last flush: what it wrote and what it overwrote, to play a cache out at the cut */
struct crash_pending {
	int fd;
	uint64_t off;
	size_t len;
	unsigned char *data, *old;
};

/* p->data := a copy of the LEN bytes at DATA (zeros if NULL: a discard or zero-out reads back as zeros on an
 * image file); p->old allocated for the caller to fill.  Aborts without memory: a test tool. */
static inline void crash_pending_set(struct crash_pending *p, uint64_t off, size_t len, const void *data)
{
	p->off = off;
	p->len = len;
	p->data = malloc(len ? len : 1);
	p->old = malloc(len ? len : 1);
	if (!p->data || !p->old)
		abort();
	if (data)
		memcpy(p->data, data, len);
	else
		memset(p->data, 0, len);
}

/* the N writes are on stable storage now: forget them */
static inline void crash_pending_forget(struct crash_pending *p, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		free(p[i].data);
		free(p[i].old);
	}
	*n = 0;
}

#define CRASH_DIGEST_INIT 1469598103934665603ULL

/* xorshift64*: the next random number from *state (never 0) */
static inline uint64_t crash_rnd(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545F4914F6CDD1DULL;
}

/* FNV-1a over n bytes, into *digest */
static inline void crash_digest_add(uint64_t *digest, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		*digest ^= c[i];
		*digest *= 1099511628211ULL;
	}
}

#endif
