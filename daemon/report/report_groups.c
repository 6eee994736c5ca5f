/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report_groups.h"
#include "report_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const key_names[] = { "setup", "chunk-size", "generation", "kernel", "medium" };

int pf_report_key_parse(const char *name, enum pf_report_key *k)
{
	for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
		if (!strcmp(name, key_names[i]))
			return *k = (enum pf_report_key)i, 0;
	return -EINVAL;
}

const char *pf_report_key_name(enum pf_report_key k)
{
	return (size_t)k < sizeof(key_names) / sizeof(key_names[0]) ? key_names[k] : "?";
}

void pf_report_key_of(const struct pf_boot_record *r, enum pf_report_key k, char *buf, size_t len)
{
	switch (k) {
	case PF_BY_SETUP: snprintf(buf, len, "%s", pf_setup_name(pf_boot_record_setup(r))); return;
	case PF_BY_CHUNK:
		if (r->chunk >= 0 && r->generation != 0)
			snprintf(buf, len, "%" PRId64, r->chunk);
		else
			snprintf(buf, len, "%s", r->generation == 0 ? "none" : "-");
		return;
	case PF_BY_GENERATION:
		if (r->generation >= 0)
			snprintf(buf, len, "%" PRId64, r->generation);
		else
			snprintf(buf, len, "-");
		return;
	case PF_BY_KERNEL: snprintf(buf, len, "%s", r->kernel); return;
	case PF_BY_MEDIUM: snprintf(buf, len, "%s", r->medium); return;
	}
	snprintf(buf, len, "-");
}

/* Order of groups: "none" first, then whole numbers by value, then other names, "-" (unknown) last. */
static int rank(const char *k, long long *v)
{
	char *end;
	if (!strcmp(k, "none"))
		return 0;
	if (!strcmp(k, "-"))
		return 3;
	*v = strtoll(k, &end, 10);
	return end != k && !*end ? 1 : 2;
}

static int by_key(const void *x, const void *y)
{
	const struct pf_group *a = x, *b = y;
	long long va = 0, vb = 0;
	int ra = rank(a->key, &va), rb = rank(b->key, &vb);
	if (ra != rb)
		return ra - rb;
	if (ra == 1)
		return (va > vb) - (va < vb);
	return strcmp(a->key, b->key);
}

/* The I/O stall of a record when it can be its boot's own: PSI counts from the kernel's start, so a real boot's
 * stall is at most its uptime at boot end (as the self-check takes it). */
static double stall_s(const struct pf_boot_record *r)
{
	if (r->psi_io_ms < 0 || r->psi_io_ms / 1000.0 > r->boot_s + 0.5)
		return -1.0;
	return r->psi_io_ms / 1000.0;
}

/* Has g a group of this key? */
static int has_key(const struct pf_grouping *g, const char *key)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->g[i].key, key))
			return 1;
	return 0;
}

/* The groups' keys: every setup's for setups (off, trace and replay always), else those that occur, sorted. */
static int collect_keys(const struct pf_boot_record *recs, size_t n, struct pf_grouping *g)
{
	size_t cap = (g->key == PF_BY_SETUP ? PF_SETUP_COUNT : 0) + n + 1;
	if (!(g->g = calloc(cap, sizeof(*g->g))))
		return -ENOMEM;
	if (g->key == PF_BY_SETUP) {
		for (int s = 0; s < PF_SETUP_COUNT; s++)
			snprintf(g->g[g->n++].key, sizeof(g->g[0].key), "%s", pf_setup_name((enum pf_setup)s));
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		char k[sizeof(g->g[0].key)];
		pf_report_key_of(&recs[i], g->key, k, sizeof(k));
		if (!has_key(g, k))
			memcpy(g->g[g->n++].key, k, sizeof(k));
	}
	qsort(g->g, g->n, sizeof(*g->g), by_key);
	return 0;
}

/* The samples of group i: boot times into v (and their count), disk busy and stall into their stats. */
static size_t samples(const struct pf_boot_record *recs, size_t n, struct pf_grouping *g, size_t i, double *v,
		      double *w)
{
	size_t nv = 0, nio = 0, nst = 0;
	char k[sizeof(g->g[0].key)];
	for (size_t j = 0; j < n; j++) {
		pf_report_key_of(&recs[j], g->key, k, sizeof(k));
		if (strcmp(k, g->g[i].key) == 0)
			v[nv++] = recs[j].boot_s;
	}
	pf_stat_compute(v, nv, &g->g[i].boot_s);
	g->g[i].median_s = pf_median_sort(v, nv);
	for (size_t j = 0; j < n; j++) {
		pf_report_key_of(&recs[j], g->key, k, sizeof(k));
		if (strcmp(k, g->g[i].key) == 0 && recs[j].io_ms >= 0)
			w[nio++] = recs[j].io_ms / 1000.0;
	}
	pf_stat_compute(w, nio, &g->g[i].io_s);
	for (size_t j = 0; j < n; j++) {
		pf_report_key_of(&recs[j], g->key, k, sizeof(k));
		if (strcmp(k, g->g[i].key) == 0 && stall_s(&recs[j]) >= 0)
			w[nst++] = stall_s(&recs[j]);
	}
	pf_stat_compute(w, nst, &g->g[i].stall_s);
	return nv;
}

/* Which group each is compared with (boot_log.h's setups: see report_groups.h). */
static void choose_baselines(struct pf_grouping *g)
{
	int base = 0;
	if (g->key == PF_BY_SETUP)
		base = g->g[PF_SETUP_OFF].boot_s.n ? PF_SETUP_OFF : PF_SETUP_TRACE;
	for (size_t i = 0; i < g->n; i++)
		g->g[i].against = (int)i == base ? -1 : base;
	if (g->key == PF_BY_SETUP) {
		if (base == PF_SETUP_TRACE)
			g->g[PF_SETUP_OFF].against = -1; /* no boots */
		if (g->g[PF_SETUP_REPLAY].boot_s.n)
			g->g[PF_SETUP_REORDER].against = PF_SETUP_REPLAY;
	}
}

int pf_report_group(const struct pf_boot_record *recs, size_t n, enum pf_report_key key, struct pf_grouping *out)
{
	memset(out, 0, sizeof(*out));
	out->key = key;
	int rc = collect_keys(recs, n, out);
	double *v = malloc((n + 1) * sizeof(double)), *w = malloc((n + 1) * sizeof(double));
	double *base = malloc((n + 1) * sizeof(double));
	if (rc || !v || !w || !base) {
		free(v), free(w), free(base);
		pf_grouping_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < out->n; i++)
		samples(recs, n, out, i, v, w);
	choose_baselines(out);
	for (size_t i = 0; i < out->n && rc == 0; i++) {
		struct pf_group *gr = &out->g[i];
		if (gr->against < 0)
			continue;
		size_t nb = samples(recs, n, out, (size_t)gr->against, base, w);
		size_t nv = samples(recs, n, out, i, v, w);
		double m = out->g[gr->against].median_s; /* the margin is a share of the other's median */
		rc = pf_compare(base, nb, v, nv, m > 0 ? PF_COMPARE_MARGIN * m : 0, &gr->cmp);
	}
	free(v), free(w), free(base);
	if (rc)
		pf_grouping_free(out);
	return rc;
}

void pf_grouping_free(struct pf_grouping *g)
{
	free(g->g);
	g->g = NULL;
	g->n = 0;
}

static void stat_cells(FILE *out, const struct pf_stat *st, int all)
{
	if (!st->n) {
		fprintf(out, all ? " %7s %7s %7s %7s" : " %7s", "-", "-", "-", "-");
		return;
	}
	if (all)
		fprintf(out, " %7.2f %7.2f %7.2f %7.2f", st->mean, st->stddev, st->min, st->max);
	else
		fprintf(out, " %7.2f", st->mean);
}

static const char *words(const struct pf_grouping *g, const struct pf_group *gr, char *buf, size_t len)
{
	return pf_comparison_words(&gr->cmp, g->g[gr->against].key, gr->key, "faster", "slower", "s", buf, len);
}

void pf_report_groups_table(FILE *out, const struct pf_grouping *g)
{
	fprintf(out, "%-16s %5s %7s %7s %7s %7s %7s %7s %7s\n", pf_report_key_name(g->key), "boots", "median", "mean",
		"stddev", "min", "max", "disk s", "stall s");
	for (size_t i = 0; i < g->n; i++) {
		const struct pf_group *gr = &g->g[i];
		fprintf(out, "%-16s %5zu", gr->key, gr->boot_s.n);
		if (gr->boot_s.n)
			fprintf(out, " %7.2f", gr->median_s);
		else
			fprintf(out, " %7s", "-");
		stat_cells(out, &gr->boot_s, 1);
		stat_cells(out, &gr->io_s, 0);
		stat_cells(out, &gr->stall_s, 0);
		fputc('\n', out);
	}
	fputs("\nboot time, difference of the medians with its 95 % bootstrap interval (margin: 3 % of the other's median):\n",
	      out);
	for (size_t i = 0; i < g->n; i++) {
		const struct pf_group *gr = &g->g[i];
		if (gr->against < 0 || (!gr->boot_s.n && g->key == PF_BY_SETUP && i != PF_SETUP_REPLAY))
			continue; /* a setup never used is no question (replay is: the comparison an integrator wants) */
		char buf[256];
		fprintf(out, "  %s against %s: ", gr->key, g->g[gr->against].key);
		if (gr->cmp.verdict != PF_VERDICT_TOO_FEW)
			fprintf(out, "%+.2f s (%+.2f .. %+.2f s; %zu and %zu boots): ", gr->cmp.diff, gr->cmp.lo, gr->cmp.hi,
				gr->cmp.nb, gr->cmp.na);
		else
			fprintf(out, "%zu and %zu boots: ", gr->cmp.nb, gr->cmp.na);
		fprintf(out, "%s\n", words(g, gr, buf, sizeof(buf)));
	}
	if (g->note[0])
		fprintf(out, "  %s\n", g->note);
}

static void csv_num(FILE *out, double v, int known)
{
	if (known)
		fprintf(out, ",%.3f", v);
	else
		fputs(",", out);
}

void pf_report_groups_csv(FILE *out, const struct pf_grouping *g)
{
	fprintf(out, "%s,boots,median_s,mean_s,stddev_s,min_s,max_s,io_mean_s,stall_mean_s,against,diff_s,lo_s,hi_s,"
		     "margin_s,verdict,more_against,more_this,words\n", pf_report_key_name(g->key));
	for (size_t i = 0; i < g->n; i++) {
		const struct pf_group *gr = &g->g[i];
		const struct pf_stat *b = &gr->boot_s;
		fprintf(out, "%s,%zu", gr->key, b->n); /* keys are one word without commas (boot_log.c) */
		csv_num(out, gr->median_s, b->n > 0);
		csv_num(out, b->mean, b->n > 0);
		csv_num(out, b->stddev, b->n > 0);
		csv_num(out, b->min, b->n > 0);
		csv_num(out, b->max, b->n > 0);
		csv_num(out, gr->io_s.mean, gr->io_s.n > 0);
		csv_num(out, gr->stall_s.mean, gr->stall_s.n > 0);
		if (gr->against < 0) {
			fputs(",,,,,,,,,\n", out);
			continue;
		}
		const struct pf_comparison *c = &gr->cmp;
		char buf[256];
		fprintf(out, ",%s", g->g[gr->against].key);
		int known = c->na && c->nb;
		csv_num(out, c->diff, known);
		csv_num(out, c->lo, known);
		csv_num(out, c->hi, known);
		fprintf(out, ",%.3f,%s,%zu,%zu,\"%s\"\n", c->margin, pf_verdict_name(c->verdict), c->more_a, c->more_b,
			words(g, gr, buf, sizeof(buf)));
	}
}

void pf_report_groups_json(FILE *out, const struct pf_grouping *g)
{
	fputs("{\"by\": ", out);
	pf_report_json_string(out, pf_report_key_name(g->key));
	fputs(", \"groups\": [", out);
	for (size_t i = 0; i < g->n; i++) {
		const struct pf_group *gr = &g->g[i];
		fprintf(out, "%s\n    {\"key\": ", i ? "," : "");
		pf_report_json_string(out, gr->key);
		fprintf(out, ", \"boots\": %zu, \"median_s\": ", gr->boot_s.n);
		if (gr->boot_s.n)
			fprintf(out, "%.3f", gr->median_s);
		else
			fputs("null", out);
		fputs(", \"boot_s\": ", out);
		pf_report_json_stat(out, &gr->boot_s);
		fputs(", \"io_s\": ", out);
		pf_report_json_stat(out, &gr->io_s);
		fputs(", \"stall_s\": ", out);
		pf_report_json_stat(out, &gr->stall_s);
		fputs(", \"against\": ", out);
		if (gr->against < 0) {
			fputs("null, \"comparison\": null}", out);
			continue;
		}
		const struct pf_comparison *c = &gr->cmp;
		char buf[256];
		pf_report_json_string(out, g->g[gr->against].key);
		fputs(", \"comparison\": {", out);
		if (c->na && c->nb)
			fprintf(out, "\"diff_s\": %.3f, \"lo_s\": %.3f, \"hi_s\": %.3f, ", c->diff, c->lo, c->hi);
		else
			fputs("\"diff_s\": null, \"lo_s\": null, \"hi_s\": null, ", out);
		fprintf(out, "\"margin_s\": %.3f, \"verdict\": ", c->margin);
		pf_report_json_string(out, pf_verdict_name(c->verdict));
		fprintf(out, ", \"more_against\": %zu, \"more_this\": %zu, \"words\": ", c->more_a, c->more_b);
		pf_report_json_string(out, words(g, gr, buf, sizeof(buf)));
		fputs("}}", out);
	}
	fputs("\n  ], \"note\": ", out);
	if (g->note[0])
		pf_report_json_string(out, g->note);
	else
		fputs("null", out);
	fputc('}', out);
}
