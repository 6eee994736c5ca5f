/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The comparison of two kinds of boots (compare.h states the method). */
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED 0x70726566657463ull /* "prefetc": any fixed value; the same boots give the same interval */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

double pf_median_sort(double *v, size_t n)
{
	if (!n)
		return -1.0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* splitmix64: small, and the same numbers on every machine */
static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The median of one resample of v (n values, drawn with replacement into tmp). */
static double resampled_median(const double *v, size_t n, double *tmp, uint64_t *s)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[next_random(s) % n];
	return pf_median_sort(tmp, n);
}

/* Boots more of each kind (beyond the smaller sample n) for the interval's half-width w to shrink to target. */
static size_t boots_to_settle(size_t n, double w, double target)
{
	if (!(target > 0) || w / target > sqrt(PF_COMPARE_MORE_MAX + 1.0 + (double)n))
		return PF_COMPARE_MORE_MAX + 1;
	double need = ceil((double)n * (w / target) * (w / target));
	size_t more = need > (double)n ? (size_t)need - n : 1;
	return more > PF_COMPARE_MORE_MAX ? PF_COMPARE_MORE_MAX + 1 : more;
}

static void verdict(struct pf_comparison *c)
{
	double m = c->margin, d = fabs(c->diff);
	if (c->lo >= -m && c->hi <= m)
		c->verdict = PF_VERDICT_SAME;
	else if (c->hi < 0 && d > m)
		c->verdict = PF_VERDICT_LOWER;
	else if (c->lo > 0 && d > m)
		c->verdict = PF_VERDICT_HIGHER;
	else {
		c->verdict = PF_VERDICT_UNCLEAR;
		/* settled when the interval excludes 0 (a difference beyond the margin) or fits within the margin */
		double w = (c->hi - c->lo) / 2, target = d > m ? d : m - d;
		size_t n = c->na < c->nb ? c->na : c->nb;
		c->more_a = c->more_b = boots_to_settle(n, w, target);
	}
}

int pf_compare(const double *a, size_t na, const double *b, size_t nb, double margin, struct pf_comparison *out)
{
	memset(out, 0, sizeof(*out));
	out->na = na;
	out->nb = nb;
	out->margin = margin > 0 ? margin : 0;
	size_t big = na > nb ? na : nb;
	double *buf = malloc((2 * big + PF_COMPARE_ROUNDS + 1) * sizeof(double));
	if (!buf) {
		out->median_a = out->median_b = -1;
		out->more_a = na < PF_COMPARE_MIN ? PF_COMPARE_MIN - na : 0;
		out->more_b = nb < PF_COMPARE_MIN ? PF_COMPARE_MIN - nb : 0;
		return -ENOMEM;
	}
	double *sa = buf, *sb = buf + big, *diffs = buf + 2 * big;
	memcpy(sa, a, na * sizeof(double));
	memcpy(sb, b, nb * sizeof(double));
	out->median_a = pf_median_sort(sa, na);
	out->median_b = pf_median_sort(sb, nb);
	out->diff = na && nb ? out->median_b - out->median_a : 0;
	out->lo = out->hi = out->diff;
	if (na < PF_COMPARE_MIN || nb < PF_COMPARE_MIN) {
		out->verdict = PF_VERDICT_TOO_FEW;
		out->more_a = na < PF_COMPARE_MIN ? PF_COMPARE_MIN - na : 0;
		out->more_b = nb < PF_COMPARE_MIN ? PF_COMPARE_MIN - nb : 0;
		free(buf);
		return 0;
	}
	/* resample from the sorted copies: the order drawn from does not matter */
	uint64_t s = SEED;
	double *tmp = malloc(big * sizeof(double));
	if (!tmp) {
		free(buf);
		out->verdict = PF_VERDICT_TOO_FEW;
		return -ENOMEM;
	}
	for (size_t k = 0; k < PF_COMPARE_ROUNDS; k++) {
		double ma = resampled_median(sa, na, tmp, &s);
		diffs[k] = resampled_median(sb, nb, tmp, &s) - ma;
	}
	free(tmp);
	qsort(diffs, PF_COMPARE_ROUNDS, sizeof(double), cmp_double);
	out->lo = diffs[PF_COMPARE_ROUNDS / 40];
	out->hi = diffs[PF_COMPARE_ROUNDS - 1 - PF_COMPARE_ROUNDS / 40];
	free(buf);
	verdict(out);
	return 0;
}

const char *pf_verdict_name(enum pf_verdict v)
{
	switch (v) {
	case PF_VERDICT_TOO_FEW: return "too few";
	case PF_VERDICT_UNCLEAR: return "not clear";
	case PF_VERDICT_SAME: return "no difference";
	case PF_VERDICT_LOWER: return "lower";
	case PF_VERDICT_HIGHER: return "higher";
	}
	return "?";
}

static const char *more_text(size_t more, char *buf, size_t len)
{
	if (more > PF_COMPARE_MORE_MAX)
		snprintf(buf, len, "more than %d", PF_COMPARE_MORE_MAX);
	else
		snprintf(buf, len, "%zu", more);
	return buf;
}

char *pf_comparison_words(const struct pf_comparison *c, const char *name_a, const char *name_b, const char *lower,
			  const char *higher, const char *unit, char *buf, size_t len)
{
	char x[32], y[32];
	switch (c->verdict) {
	case PF_VERDICT_TOO_FEW:
		if (c->more_a && c->more_b)
			snprintf(buf, len, "too few boots to tell: %s more %s and %s more %s boots needed",
				 more_text(c->more_a, x, sizeof(x)), name_a, more_text(c->more_b, y, sizeof(y)), name_b);
		else
			snprintf(buf, len, "too few boots to tell: %s more %s boot%s needed",
				 more_text(c->more_a ? c->more_a : c->more_b, x, sizeof(x)), c->more_a ? name_a : name_b,
				 (c->more_a ? c->more_a : c->more_b) == 1 ? "" : "s");
		break;
	case PF_VERDICT_UNCLEAR:
		if (c->more_a > PF_COMPARE_MORE_MAX)
			snprintf(buf, len, "not clear: too close to the margin (%.2f %s) for any likely number of boots to "
				 "settle it", c->margin, unit);
		else
			snprintf(buf, len, "not clear yet: about %s more boots of each kind would likely settle it",
				 more_text(c->more_a, x, sizeof(x)));
		break;
	case PF_VERDICT_SAME:
		snprintf(buf, len, "clear: no difference beyond %.2f %s either way", c->margin, unit);
		break;
	case PF_VERDICT_LOWER:
		snprintf(buf, len, "clear: %.2f %s %s", -c->diff, unit, lower);
		break;
	case PF_VERDICT_HIGHER:
		snprintf(buf, len, "clear: %.2f %s %s", c->diff, unit, higher);
		break;
	}
	return buf;
}
