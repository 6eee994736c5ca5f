/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Is one kind of boot faster than another?  The one comparison behind both the self-check's decision
 * (daemon/boot/selfcheck.h) and every comparison row of 'prefetchd report', so the rule that turns the replay off
 * and the table an integrator reads cannot disagree.
 *
 * The figure is the difference of the medians, b - a (a: the baseline), with a 95 % percentile bootstrap
 * interval: PF_COMPARE_ROUNDS resamples of each kind (with replacement), the difference of their medians each
 * time, the 2.5th and 97.5th percentiles of those.  The random draws come from a fixed seed, so the same boots
 * always give the same interval.  Verdicts, with margin (a difference within it does not matter):
 *   too few    fewer than PF_COMPARE_MIN boots of either kind
 *   lower      the interval lies below 0 and the difference is beyond the margin (b clearly less than a)
 *   higher     the interval lies above 0 and the difference is beyond the margin
 *   same       the whole interval lies within +-margin: clearly no difference that matters
 *   unclear    anything else; then more_a/more_b estimate the boots of each kind that would likely settle it
 *              (the interval's width shrinks with the square root of the boots: until it excludes 0, or fits
 *              within the margin, whichever comes first). */
#ifndef PREFETCH_COMPARE_H
#define PREFETCH_COMPARE_H

#include <stddef.h>

#define PF_COMPARE_MIN 3          /* fewer of either kind: no verdict */
#define PF_COMPARE_MARGIN 0.03    /* the default margin: 3 % of the baseline's median */
#define PF_COMPARE_ROUNDS 2000    /* bootstrap resamples */
#define PF_COMPARE_MORE_MAX 1000  /* "more than this many": no number of boots would likely settle it */

enum pf_verdict { PF_VERDICT_TOO_FEW = 0, PF_VERDICT_UNCLEAR, PF_VERDICT_SAME, PF_VERDICT_LOWER, PF_VERDICT_HIGHER };

struct pf_comparison {
	size_t na, nb;
	double median_a, median_b; /* -1 without samples */
	double diff;               /* median_b - median_a (0 unless both have samples) */
	double lo, hi;             /* the 95 % interval of diff (equal to diff below PF_COMPARE_MIN) */
	double margin;
	enum pf_verdict verdict;
	size_t more_a, more_b;     /* too few / unclear: boots more of each kind likely to settle it (capped at
				    * PF_COMPARE_MORE_MAX + 1: "more than PF_COMPARE_MORE_MAX") */
};

/* Compare samples a (the baseline) and b, margin in their unit (>= 0).  Returns 0, or -ENOMEM (*out then says
 * too few). */
int pf_compare(const double *a, size_t na, const double *b, size_t nb, double margin, struct pf_comparison *out);

/* The median of v[0..n), which it sorts in place; -1 for n == 0. */
double pf_median_sort(double *v, size_t n);

/* The verdict's word: "too few", "not clear", "no difference", "lower", "higher". */
const char *pf_verdict_name(enum pf_verdict v);

/* The verdict in one sentence without a final period, e.g. "clear: 2.10 s faster" or "not clear yet: about 6
 * more boots of each kind would likely settle it" or "too few boots to tell: 2 more replay boots needed";
 * name_a/name_b name the kinds of boots, lower/higher what "lower" and "higher" mean ("faster", "slower"), unit
 * the values' unit ("s").  Returns buf. */
char *pf_comparison_words(const struct pf_comparison *c, const char *name_a, const char *name_b, const char *lower,
			  const char *higher, const char *unit, char *buf, size_t len);

#endif
