/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pf_stat_compute(const double *v, size_t n, struct pf_stat *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (n == 0)
		return;
	double sum = 0;
	out->min = out->max = v[0];
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] < out->min)
			out->min = v[i];
		if (v[i] > out->max)
			out->max = v[i];
	}
	out->mean = sum / (double)n;
	if (n < 2)
		return;
	/* two passes: the sum of squares minus the squared sum loses precision on close values */
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - out->mean) * (v[i] - out->mean);
	out->stddev = sqrt(ss / (double)(n - 1));
}

int pf_report_rows(const struct pf_boot_record *recs, size_t n, struct pf_report_row rows[PF_SETUP_COUNT])
{
	double *boot = malloc((n ? n : 1) * sizeof(double));
	double *io = malloc((n ? n : 1) * sizeof(double));
	double *mb = malloc((n ? n : 1) * sizeof(double));
	if (!boot || !io || !mb) {
		free(boot);
		free(io);
		free(mb);
		return -ENOMEM;
	}
	for (int s = 0; s < PF_SETUP_COUNT; s++) {
		size_t nb = 0, ni = 0, nm = 0;
		for (size_t i = 0; i < n; i++) {
			if (pf_boot_record_setup(&recs[i]) != (enum pf_setup)s)
				continue;
			boot[nb++] = recs[i].boot_s;
			if (recs[i].io_ms >= 0)
				io[ni++] = (double)recs[i].io_ms / 1000.0;
			if (recs[i].sectors >= 0)
				mb[nm++] = (double)recs[i].sectors * 512.0 / (1024.0 * 1024.0);
		}
		rows[s].setup = (enum pf_setup)s;
		pf_stat_compute(boot, nb, &rows[s].boot_s);
		pf_stat_compute(io, ni, &rows[s].io_s);
		pf_stat_compute(mb, nm, &rows[s].read_mb);
	}
	free(boot);
	free(io);
	free(mb);
	return 0;
}
