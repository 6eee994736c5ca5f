/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report_svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PANEL_W 340
#define PANEL_H 260
#define MARGIN_L 60
#define MARGIN_T 50
#define BAR_W 60

static const char *const colours[PF_SETUP_COUNT] = { "#9e9e9e", "#3b7dd8", "#2e9b4f", "#d8903b" };

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

static void panel(FILE *f, int x0, const char *label, const struct pf_report_row rows[PF_SETUP_COUNT], int which)
{
	double top = 0;
	int shown[PF_SETUP_COUNT], nshown = 0;
	for (int s = 0; s < PF_SETUP_COUNT; s++) {
		const struct pf_stat *st = which ? &rows[s].io_s : &rows[s].boot_s;
		if (s == PF_SETUP_REORDER_ONLY && rows[s].boot_s.n == 0)
			continue;
		shown[nshown++] = s;
		if (st->n && st->mean + st->stddev > top)
			top = st->mean + st->stddev;
		if (st->n && st->max > top)
			top = st->max;
	}
	double step, ymax = nice_max(top, &step);
	int plot_h = PANEL_H - 40;
	fprintf(f, "<g transform=\"translate(%d,%d)\">\n", x0 + MARGIN_L, MARGIN_T);
	fprintf(f, "<text x=\"%d\" y=\"-12\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>\n",
		(PANEL_W - MARGIN_L) / 2, label);
	for (int k = 0; k * step <= ymax + step / 2; k++) {
		double y = k * step; /* not y += step: the sum drifts, and %g would print it */
		double py = plot_h - y / ymax * plot_h;
		fprintf(f, "<line x1=\"0\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", py,
			PANEL_W - MARGIN_L - 10, py);
		fprintf(f, "<text x=\"-6\" y=\"%.1f\" text-anchor=\"end\" dominant-baseline=\"middle\">%g</text>\n", py, y);
	}
	fprintf(f, "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"%d\" stroke=\"black\"/>\n", plot_h);
	fprintf(f, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", plot_h, PANEL_W - MARGIN_L - 10,
		plot_h);
	int slot = (PANEL_W - MARGIN_L - 10) / (nshown ? nshown : 1);
	for (int i = 0; i < nshown; i++) {
		int s = shown[i];
		const struct pf_stat *st = which ? &rows[s].io_s : &rows[s].boot_s;
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
		double h = st->mean / ymax * plot_h;
		int bw = BAR_W < slot - 10 ? BAR_W : slot - 10;
		fprintf(f,
			"<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\">"
			"<title>%s: mean %.2f s, stddev %.2f s, min %.2f s, max %.2f s, %zu boots</title></rect>\n",
			cx - bw / 2.0, plot_h - h, bw, h, colours[s], pf_setup_name((enum pf_setup)s), st->mean, st->stddev,
			st->min, st->max, st->n);
		double lo = st->mean - st->stddev, hi = st->mean + st->stddev;
		if (lo < 0)
			lo = 0;
		double ylo = plot_h - lo / ymax * plot_h, yhi = plot_h - hi / ymax * plot_h;
		fprintf(f,
			"<g class=\"errorbar\" stroke=\"black\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%.1f\"/></g>\n",
			cx, ylo, cx, yhi, cx - 8, ylo, cx + 8, ylo, cx - 8, yhi, cx + 8, yhi);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%.2f</text>\n", cx, yhi - 5,
			st->mean);
	}
	fputs("</g>\n", f);
}

char *pf_report_svg(const struct pf_report_row rows[PF_SETUP_COUNT], const char *title)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	if (!f)
		return NULL;
	int w = 2 * PANEL_W + 20, h = PANEL_H + MARGIN_T + 50;
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">",
		w, h, w, h, w / 2);
	text_escaped(f, title ? title : "boot time per setup");
	fputs("</text>\n", f);
	panel(f, 0, "boot time (s)", rows, 0);
	panel(f, PANEL_W + 20, "disk busy time (s)", rows, 1);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"#555555\">bars: mean; "
		   "error bars: one standard deviation</text>\n</svg>\n",
		w / 2, h - 8);
	if (fclose(f) != 0) {
		free(doc);
		return NULL;
	}
	return doc;
}
