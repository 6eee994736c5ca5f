/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report_svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOOTS_W 560
#define SUMMARY_W 420
#define PANEL_H 280
#define MARGIN_L 60
#define MARGIN_T 50

static const char *const colours[PF_SETUP_COUNT] = { "#9e9e9e", "#7a5195", "#3b7dd8", "#5fb0c8", "#2e9b4f" };

/* The setups always shown (with or without boots): off, trace and replay; the others when they have boots. */
static int always_shown(int s)
{
	return s == PF_SETUP_OFF || s == PF_SETUP_TRACE || s == PF_SETUP_REPLAY;
}

/* A round axis maximum at or above v (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 or 10 times a power of ten), and a tick
 * step that divides it into 3 to 6 intervals. */
static double nice_max(double v, double *step)
{
	static const double m[] = { 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 };
	static const double st[] = { 0.2, 0.5, 0.5, 0.5, 0.5, 1, 1, 1, 2, 2 };
	if (!(v > 0)) {
		*step = 0.2;
		return 1;
	}
	double p = pow(10, floor(log10(v)));
	size_t i = 0;
	while (i + 1 < sizeof(m) / sizeof(m[0]) && v > m[i] * p * (1 + 1e-9))
		i++;
	*step = st[i] * p;
	return m[i] * p;
}

/* XML text: titles come from the command line, so escape them. */
static void text_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* The y axis of a panel: grid lines and labels from 0 to ymax. */
static void y_axis(FILE *f, double ymax, double step, int plot_w, int plot_h)
{
	for (int k = 0; k * step <= ymax + step / 2; k++) {
		double y = k * step; /* not y += step: the sum drifts, and %g would print it */
		double py = plot_h - y / ymax * plot_h;
		fprintf(f, "<line x1=\"0\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", py, plot_w, py);
		fprintf(f, "<text x=\"-6\" y=\"%.1f\" text-anchor=\"end\" dominant-baseline=\"middle\">%g</text>\n", py, y);
	}
	fprintf(f, "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"%d\" stroke=\"black\"/>\n", plot_h);
	fprintf(f, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", plot_h, plot_w, plot_h);
}

/* Every boot as a point, in the order recorded, coloured by setup; control boots hollow. */
static void boots_panel(FILE *f, const struct pf_boot_record *recs, size_t n, double ymax, double step)
{
	int plot_w = BOOTS_W - MARGIN_L - 10, plot_h = PANEL_H - 40;
	fprintf(f, "<g transform=\"translate(%d,%d)\">\n", MARGIN_L, MARGIN_T);
	fprintf(f, "<text x=\"%d\" y=\"-12\" text-anchor=\"middle\" font-weight=\"bold\">boot time (s), boot by boot</text>\n",
		plot_w / 2);
	y_axis(f, ymax, step, plot_w, plot_h);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">boot (oldest first)</text>\n", plot_w / 2, plot_h + 30);
	for (size_t i = 0; i < n; i++) {
		enum pf_setup s = pf_boot_record_setup(&recs[i]);
		double x = n > 1 ? 12 + (double)i * (plot_w - 24) / (double)(n - 1) : plot_w / 2.0;
		double y = plot_h - recs[i].boot_s / ymax * plot_h;
		int ctl = recs[i].control != 0;
		fprintf(f, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\">"
			   "<title>boot %zu: %.2f s, %s%s</title></circle>\n",
			x, y, ctl ? "white" : colours[s], colours[s], i + 1, recs[i].boot_s, pf_setup_name(s),
			ctl ? " (control boot)" : "");
	}
	/* the legend: what the colours and the hollow points mean */
	for (int s = 0, x = 0; s < PF_SETUP_COUNT; s++) {
		fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" "
			   "dominant-baseline=\"middle\" font-size=\"11\">%s</text>\n",
			x + 6, plot_h + 48, colours[s], x + 14, plot_h + 48, pf_setup_name((enum pf_setup)s));
		x += 92;
	}
	fprintf(f, "<circle cx=\"466\" cy=\"%d\" r=\"4\" fill=\"white\" stroke=\"%s\" stroke-width=\"1.5\"/>"
		   "<text x=\"474\" y=\"%d\" dominant-baseline=\"middle\" font-size=\"11\">control boot</text>\n",
		plot_h + 48, colours[PF_SETUP_TRACE], plot_h + 48);
	fputs("</g>\n", f);
}

/* Per setup: min-max whisker, mean +- one standard deviation as a bar, the mean, and the change against the
 * baseline (off, or trace when there are no off boots). */
static void summary_panel(FILE *f, int x0, const struct pf_report_row rows[PF_SETUP_COUNT], double ymax, double step)
{
	int plot_w = SUMMARY_W - MARGIN_L - 10, plot_h = PANEL_H - 40;
	int shown[PF_SETUP_COUNT], nshown = 0;
	for (int s = 0; s < PF_SETUP_COUNT; s++)
		if (always_shown(s) || rows[s].boot_s.n)
			shown[nshown++] = s;
	fprintf(f, "<g transform=\"translate(%d,%d)\">\n", x0 + MARGIN_L, MARGIN_T);
	fprintf(f, "<text x=\"%d\" y=\"-12\" text-anchor=\"middle\" font-weight=\"bold\">per setup</text>\n", plot_w / 2);
	y_axis(f, ymax, step, plot_w, plot_h);
	int b = rows[PF_SETUP_OFF].boot_s.n ? PF_SETUP_OFF : PF_SETUP_TRACE; /* the report's baseline */
	const struct pf_stat *base = &rows[b].boot_s;
	int slot = plot_w / (nshown ? nshown : 1);
	for (int i = 0; i < nshown; i++) {
		int s = shown[i];
		const struct pf_stat *st = &rows[s].boot_s;
		double cx = slot * i + slot / 2.0;
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", cx, plot_h + 16,
			pf_setup_name((enum pf_setup)s));
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">n=%zu</text>\n", cx,
			plot_h + 30, st->n);
		if (st->n == 0) {
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#888888\">no boots</text>\n", cx,
				plot_h - 8);
			continue;
		}
		double lo = st->mean - st->stddev < 0 ? 0 : st->mean - st->stddev, hi = st->mean + st->stddev;
		double Y[4] = { st->min, lo, hi, st->max };
		for (int k = 0; k < 4; k++)
			Y[k] = plot_h - Y[k] / ymax * plot_h;
		fprintf(f,
			"<g class=\"summary\"><title>%s: mean %.2f s, stddev %.2f s, min %.2f s, max %.2f s, %zu boots</title>"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>"
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"%.1f\" fill=\"%s\" opacity=\"0.8\"/>"
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"black\"/></g>\n",
			pf_setup_name((enum pf_setup)s), st->mean, st->stddev, st->min, st->max, st->n, cx, Y[0], cx, Y[3],
			cx - 6, Y[0], cx + 6, Y[0], cx - 6, Y[3], cx + 6, Y[3], cx - 8, Y[2], Y[1] - Y[2] < 1 ? 1 : Y[1] - Y[2],
			colours[s], cx, plot_h - st->mean / ymax * plot_h);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%.2f", cx, Y[3] - 18, st->mean);
		if (s != b && base->n && base->mean > 0)
			fprintf(f, "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" font-weight=\"bold\">"
				   "%+.1f %%", cx, Y[3] - 5, 100.0 * (st->mean - base->mean) / base->mean);
		fputs("</text>\n", f);
	}
	fputs("</g>\n", f);
}

char *pf_report_svg(const struct pf_report_row rows[PF_SETUP_COUNT], const struct pf_boot_record *recs, size_t n,
		    const char *title)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	if (!f)
		return NULL;
	double top = 0;
	size_t controls = 0;
	for (size_t i = 0; i < n; i++) {
		if (recs[i].boot_s > top)
			top = recs[i].boot_s;
		controls += recs[i].control != 0;
	}
	double step, ymax = nice_max(top, &step);
	int w = BOOTS_W + SUMMARY_W + 20, h = PANEL_H + MARGIN_T + 84;
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">",
		w, h, w, h, w / 2);
	text_escaped(f, title ? title : "boot time per setup");
	fputs("</text>\n", f);
	boots_panel(f, recs, n, ymax, step);
	summary_panel(f, BOOTS_W + 20, rows, ymax, step);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"#555555\">left: one point "
		   "per boot (hollow: a control boot, nothing replayed on purpose); right: min-max whisker, mean (dot) "
		   "+- one standard deviation (bar), change of the mean against off (or trace without off boots)</text>\n",
		w / 2, h - 22);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"#555555\">%zu boots, %zu of them "
		   "control boots of the self-check behind the comparison</text>\n</svg>\n",
		w / 2, h - 8, n, controls);
	if (fclose(f) != 0) {
		free(doc);
		return NULL;
	}
	return doc;
}
