/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report_boots.h"

#include "report_json.h"

#include <inttypes.h>
#include <time.h>

static const char *kind(const struct pf_boot_record *r)
{
	if (r->control)
		return "control";
	return pf_setup_name(pf_boot_record_setup(r));
}

static void date(int64_t when, char *buf, size_t len)
{
	time_t t = (time_t)when;
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, len, "-");
}

/* A measurement, or "-" when unknown (negative). */
static void fig(FILE *out, double v, int width)
{
	if (v < 0)
		fprintf(out, " %*s", width, "-");
	else
		fprintf(out, " %*.2f", width, v);
}

void pf_report_boots_table(FILE *out, const struct pf_boot_record *recs, size_t n)
{
	fprintf(out, "%4s  %-16s  %-16s %-7s %8s %9s %9s %9s %8s %8s\n", "boot", "date (UTC)", "kind", "policy", "boot s",
		"replay MiB", "used MiB", "own MiB", "stall s", "disk s");
	for (size_t i = 0; i < n; i++) {
		const struct pf_boot_record *r = &recs[i];
		char d[32];
		date(r->when, d, sizeof(d));
		fprintf(out, "%4zu  %-16s  %-16s %-7s %8.2f", i + 1, d, kind(r), r->policy, r->boot_s);
		fig(out, r->replay_mib, 9);
		fig(out, r->used_mib, 9);
		fig(out, r->uncovered_mib, 9);
		fig(out, r->psi_io_ms >= 0 ? r->psi_io_ms / 1000.0 : -1, 8);
		fig(out, r->io_ms >= 0 ? r->io_ms / 1000.0 : -1, 8);
		fputc('\n', out);
	}
}

void pf_report_boots_csv(FILE *out, const struct pf_boot_record *recs, size_t n)
{
	fputs("boot,boot_id,unix_time,setup,control,policy,boot_s,end_source,disk,io_ms,reads,sectors,replay_mib,"
	      "used_mib,uncovered_mib,psi_io_ms,replay_s,replay_cpu_s,replay_files,used_files,run,generation,"
	      "chunk_size_blocks,medium,kernel,layout_age,late_files,late_mib\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		const struct pf_boot_record *r = &recs[i];
		/* every text field is one word without commas or quotes (boot_log.c writes "-" otherwise) */
		fprintf(out, "%zu,%s,%" PRId64 ",%s,%d,%s,%.2f,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.2f,%.2f,%.2f,%" PRId64
			     ",%.2f,%.2f,%" PRId64 ",%" PRId64 ",%s,%" PRId64 ",%" PRId64 ",%s,%s,%" PRId64 ",%" PRId64 ",%.2f\n",
			i + 1, r->boot_id, r->when, pf_setup_name(pf_boot_record_setup(r)), r->control, r->policy, r->boot_s,
			r->end_source, r->disk, r->io_ms, r->reads, r->sectors, r->replay_mib, r->used_mib, r->uncovered_mib,
			r->psi_io_ms, r->replay_s, r->replay_cpu_s, r->replay_files, r->used_files, r->off ? "off" : "on",
			r->generation, r->chunk, r->medium, r->kernel, r->layout_age, r->late_files, r->late_mib);
	}
}

/* A measurement: null when unknown. */
static void json_num(FILE *out, double v)
{
	if (v < 0)
		fputs("null", out);
	else
		fprintf(out, "%.3f", v);
}

/* A count: null when unknown. */
static void json_int(FILE *out, int64_t v)
{
	if (v < 0)
		fputs("null", out);
	else
		fprintf(out, "%" PRId64, v);
}

void pf_report_json(FILE *out, const char *log, const struct pf_boot_record *recs, size_t n,
		    const struct pf_report_row rows[PF_SETUP_COUNT], const struct pf_grouping *groups,
		    const struct pf_control_change *cc)
{
	fputs("{\n  \"log\": ", out);
	pf_report_json_string(out, log);
	fputs(",\n  \"boots\": [", out);
	for (size_t i = 0; i < n; i++) {
		const struct pf_boot_record *r = &recs[i];
		fprintf(out, "%s\n    {\"boot\": %zu, \"boot_id\": ", i ? "," : "", i + 1);
		pf_report_json_string(out, r->boot_id);
		fprintf(out, ", \"unix_time\": %" PRId64 ", \"setup\": ", r->when);
		pf_report_json_string(out, pf_setup_name(pf_boot_record_setup(r)));
		fprintf(out, ", \"control\": %s, \"policy\": ", r->control ? "true" : "false");
		pf_report_json_string(out, r->policy);
		fprintf(out, ", \"boot_s\": %.2f, \"end_source\": ", r->boot_s);
		pf_report_json_string(out, r->end_source);
		fputs(", \"disk\": ", out);
		pf_report_json_string(out, r->disk);
		fputs(", \"io_s\": ", out);
		json_num(out, r->io_ms >= 0 ? r->io_ms / 1000.0 : -1);
		fputs(", \"read_mib\": ", out);
		json_num(out, r->sectors >= 0 ? r->sectors * 512.0 / 1048576.0 : -1);
		fputs(", \"replay_mib\": ", out);
		json_num(out, r->replay_mib);
		fputs(", \"used_mib\": ", out);
		json_num(out, r->used_mib);
		fputs(", \"uncovered_mib\": ", out);
		json_num(out, r->uncovered_mib);
		fputs(", \"io_stall_s\": ", out);
		json_num(out, r->psi_io_ms >= 0 ? r->psi_io_ms / 1000.0 : -1);
		fputs(", \"replay_s\": ", out);
		json_num(out, r->replay_s);
		fputs(", \"replay_cpu_s\": ", out);
		json_num(out, r->replay_cpu_s);
		fputs(", \"replay_files\": ", out);
		json_num(out, r->replay_files >= 0 ? (double)r->replay_files : -1);
		fputs(", \"used_files\": ", out);
		json_num(out, r->used_files >= 0 ? (double)r->used_files : -1);
		fprintf(out, ", \"run\": \"%s\", \"generation\": ", r->off ? "off" : "on");
		json_int(out, r->generation);
		fputs(", \"chunk_size_blocks\": ", out);
		json_int(out, r->chunk);
		fputs(", \"medium\": ", out);
		pf_report_json_string(out, r->medium);
		fputs(", \"kernel\": ", out);
		pf_report_json_string(out, r->kernel);
		fputs(", \"layout_age\": ", out);
		json_int(out, r->layout_age);
		fputs(", \"late_files\": ", out);
		json_int(out, r->late_files);
		fputs(", \"late_mib\": ", out);
		json_num(out, r->late_mib);
		fputc('}', out);
	}
	fputs("\n  ],\n  \"setups\": {", out);
	for (int s = 0; s < PF_SETUP_COUNT; s++) {
		fprintf(out, "%s\n    ", s ? "," : "");
		pf_report_json_string(out, pf_setup_name((enum pf_setup)s));
		fputs(": {\"boot_s\": ", out);
		pf_report_json_stat(out, &rows[s].boot_s);
		fputs(", \"io_s\": ", out);
		pf_report_json_stat(out, &rows[s].io_s);
		fputs(", \"read_mib\": ", out);
		pf_report_json_stat(out, &rows[s].read_mb);
		fputc('}', out);
	}
	fputs("\n  },\n  \"groups\": ", out);
	if (groups)
		pf_report_groups_json(out, groups);
	else
		fputs("null", out);
	fputs(",\n  \"against_control_boots\": ", out);
	if (cc && cc->n_control && cc->n_replay) {
		char words[256];
		fprintf(out, "{\"control_boots\": %zu, \"replay_boots\": %zu, \"control_median_s\": %.3f, "
			     "\"replay_median_s\": %.3f, \"change\": %.4f, \"allowance_s\": %.3f, \"diff_s\": %.3f, "
			     "\"lo_s\": %.3f, \"hi_s\": %.3f, \"verdict\": ",
			cc->n_control, cc->n_replay, cc->control_s, cc->replay_s, cc->change, cc->allowance_s, cc->cmp.diff,
			cc->cmp.lo, cc->cmp.hi);
		pf_report_json_string(out, pf_verdict_name(cc->cmp.verdict));
		fputs(", \"words\": ", out);
		pf_report_json_string(out, pf_comparison_words(&cc->cmp, "control", "replay", "faster", "slower", "s", words, sizeof(words)));
		fputc('}', out);
	} else
		fputs("null", out);
	fputs("\n}\n", out);
}
