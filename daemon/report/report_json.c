/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON pieces the report's writers share (see report_json.h). */
#include "report_json.h"

#include <math.h>
#include <stdio.h>

void pf_report_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void pf_report_json_stat(FILE *out, const struct pf_stat *st)
{
	if (!st->n) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"n\": %zu, \"mean\": %.3f, \"stddev\": %.3f, \"min\": %.3f, \"max\": %.3f}", st->n, st->mean,
		st->stddev, st->min, st->max);
}
