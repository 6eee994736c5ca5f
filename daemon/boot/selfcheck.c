/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The self-check's roles and decision (selfcheck.h states the rule). */
#include "selfcheck.h"

#include "compare.h"
#include "error.h"
#include "safe_file.h"
#include "state_dir.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pf_policy_name(enum pf_policy p)
{
	switch (p) {
	case PF_POLICY_REPLAY: return "replay";
	case PF_POLICY_NARROW: return "narrow";
	case PF_POLICY_OFF: return "off";
	}
	return "?";
}

int pf_policy_parse(const char *s, enum pf_policy *p)
{
	for (enum pf_policy q = PF_POLICY_REPLAY; q <= PF_POLICY_OFF; q++)
		if (!strcmp(s, pf_policy_name(q)))
			return *p = q, 0;
	return -EINVAL;
}

const char *pf_role_name(enum pf_boot_role r)
{
	switch (r) {
	case PF_ROLE_REPLAY: return "replay";
	case PF_ROLE_NARROW: return "narrow replay";
	case PF_ROLE_CONTROL: return "control boot (nothing replayed)";
	case PF_ROLE_PROBE: return "probe boot (full replay)";
	}
	return "?";
}

/* FNV-1a of the boot id and the count, mixed: the boot id is random per boot, so this is a fair draw no
 * calendar can follow (the count keeps it fair where one kernel boot runs 'prefetchd boot' many times: tests). */
static uint64_t draw(const char *boot_id, unsigned long boots)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = boot_id; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (int i = 0; i < 8; i++, boots >>= 8)
		h = (h ^ (boots & 0xff)) * 1099511628211ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

enum pf_boot_role pf_selfcheck_role(enum pf_policy policy, int interval, const char *boot_id, unsigned long boots,
				    int noreplay)
{
	if (noreplay)
		return PF_ROLE_CONTROL;
	/* the first boot judged (a fresh state) is never drawn: a machine made from an image that prefetch-image
	 * built replays its installed layout from the first boot on (elsewhere that boot has no layout yet) */
	int minority = interval > 0 && boots > 0 && boot_id && strcmp(boot_id, "-") &&
		       draw(boot_id, boots) % (uint64_t)interval == 0;
	switch (policy) {
	case PF_POLICY_OFF: return minority ? PF_ROLE_PROBE : PF_ROLE_CONTROL;
	case PF_POLICY_NARROW: return minority ? PF_ROLE_CONTROL : PF_ROLE_NARROW;
	case PF_POLICY_REPLAY: break;
	}
	return minority ? PF_ROLE_CONTROL : PF_ROLE_REPLAY;
}

int pf_cmdline_word(const char *cmdline, const char *word)
{
	size_t len = strlen(word);
	for (const char *p = cmdline; (p = strstr(p, word)); p += len) {
		char after = p[len];
		if ((p == cmdline || p[-1] == ' ') && (after == '\0' || after == ' ' || after == '\n'))
			return 1;
	}
	return 0;
}

int pf_cmdline_noreplay(const char *cmdline)
{
	return pf_cmdline_word(cmdline, "prefetch=noreplay");
}

/* Median of v[0..n) (sorted in place); -1 for n == 0. */
static double median(double *v, size_t n)
{
	return pf_median_sort(v, n);
}

/* The replays that count under policy p: what p makes the majority (or, under off, the probes) replay. */
static int counts_as_replay(const struct pf_boot_record *r, enum pf_policy p)
{
	if (r->control || !r->prefetch)
		return 0;
	if (!strcmp(r->policy, "-")) /* recorded before the self-check: full replays */
		return p == PF_POLICY_REPLAY;
	return !strcmp(r->policy, pf_policy_name(p));
}

/* Disk time per MiB read of the newest replays on a disk the reorder changed (reorder 1: right after it, or under
 * its generation) or not; -1 if fewer than SELFCHECK_MIN. */
static double ms_per_mib(const struct pf_boot_record *recs, size_t n, int reorder)
{
	double v[SELFCHECK_SAMPLES];
	size_t k = 0;
	for (size_t i = n; i-- > 0 && k < SELFCHECK_SAMPLES;) {
		const struct pf_boot_record *r = &recs[i];
		/* on a disk the reorder changed: right after it, or later on the files it placed (a generation) */
		int reordered = r->reorder || r->generation > 0;
		if (r->control || !r->prefetch || reordered != reorder || r->io_ms < 0 || r->sectors <= 0)
			continue;
		v[k++] = (double)r->io_ms / ((double)r->sectors * 512.0 / 1048576.0);
	}
	return k >= SELFCHECK_MIN ? median(v, k) : -1.0;
}

static void judge_reorder(const struct pf_boot_record *recs, size_t n, struct pf_selfcheck *sc, char *note, size_t len)
{
	note[0] = '\0';
	if (sc->reorder_disarmed)
		return;
	double with = ms_per_mib(recs, n, 1), without = ms_per_mib(recs, n, 0);
	if (with < 0 || without <= 0 || with <= without * (1 + SELFCHECK_MARGIN))
		return;
	sc->reorder_disarmed = 1;
	snprintf(note, len, "; reorder disarmed: the replay after it took %.1f ms of disk per MiB against %.1f without",
		 with, without);
}

/* A record's I/O stall when it can be one boot's: PSI counts from the kernel's start, so a real boot's stall is at
 * most its uptime at boot end; a larger value (a run that is not a boot: tests) says nothing about the boot. */
static double stall_s(const struct pf_boot_record *r)
{
	if (r->psi_io_ms < 0 || r->psi_io_ms / 1000.0 > r->boot_s + 0.5)
		return -1.0;
	return r->psi_io_ms / 1000.0;
}

void pf_selfcheck_decide(const struct pf_boot_record *recs, size_t n, struct pf_selfcheck *sc)
{
	enum pf_policy was = sc->policy;
	sc->boots++;
	double c[SELFCHECK_SAMPLES], r[SELFCHECK_SAMPLES], cs[SELFCHECK_SAMPLES], rs[SELFCHECK_SAMPLES];
	size_t nc = 0, nr = 0, ncs = 0, nrs = 0;
	for (size_t i = n; i-- > 0 && (nc < SELFCHECK_SAMPLES || nr < SELFCHECK_SAMPLES);) {
		double st = stall_s(&recs[i]);
		if (recs[i].control && !recs[i].prefetch && nc < SELFCHECK_SAMPLES) {
			c[nc++] = recs[i].boot_s;
			if (st >= 0)
				cs[ncs++] = st;
		} else if (counts_as_replay(&recs[i], was) && nr < SELFCHECK_SAMPLES) {
			r[nr++] = recs[i].boot_s;
			if (st >= 0)
				rs[nrs++] = st;
		}
	}
	sc->n_control = nc;
	sc->n_replay = nr;
	sc->control_s = median(c, nc);
	sc->replay_s = median(r, nr);
	sc->change = nc && nr && sc->control_s > 0 ? sc->replay_s / sc->control_s - 1 : 0;
	sc->allowance_s = 0;
	double margin = SELFCHECK_MARGIN * (sc->control_s > 0 ? sc->control_s : 0);
	struct pf_comparison boot;
	int rc = pf_compare(c, nc, r, nr, margin, &boot);
	sc->boot_cmp = boot;
	char reorder_note[160];
	judge_reorder(recs, n, sc, reorder_note, sizeof(reorder_note));
	const char *kind = was == PF_POLICY_OFF ? "probe" : pf_policy_name(was);
	if (nc < SELFCHECK_MIN || nr < SELFCHECK_MIN) {
		snprintf(sc->why, sizeof(sc->why), "%s: not enough boots to judge yet (%zu control, %zu %s; %d of each needed)%s",
			 pf_policy_name(was), nc, nr, was == PF_POLICY_OFF ? "probe" : "replay", SELFCHECK_MIN, reorder_note);
		return;
	}
	if (rc) {
		snprintf(sc->why, sizeof(sc->why), "%s: out of memory comparing the boots", pf_policy_name(was));
		return;
	}
	sc->allowance_s = fmax(margin, (boot.hi - boot.lo) / 2);
	char stall[128] = "";
	const char *verdict;
	if (boot.verdict == PF_VERDICT_LOWER) {
		verdict = "clearly faster";
		sc->policy = was == PF_POLICY_OFF ? PF_POLICY_REPLAY : was;
	} else if (boot.verdict == PF_VERDICT_HIGHER) {
		verdict = "clearly slower";
		sc->policy = PF_POLICY_OFF;
	} else {
		/* The boot time is within its noise.  The I/O stall, which the CPU's noise hardly moves, may still
		 * show what the replay does; failing that, an unclear comparison waits for all its boots. */
		struct pf_comparison io;
		int stall_lower = 0;
		if (ncs >= SELFCHECK_MIN && nrs >= SELFCHECK_MIN && pf_compare(cs, ncs, rs, nrs, margin, &io) == 0) {
			stall_lower = io.verdict == PF_VERDICT_LOWER;
			snprintf(stall, sizeof(stall), "; I/O stall %.2f s against %.2f s, 95 %% interval %+.2f..%+.2f s",
				 io.median_b, io.median_a, io.lo, io.hi);
		}
		if (stall_lower) {
			verdict = "no clear difference in boot time but a clearly lower I/O stall";
			sc->policy = was == PF_POLICY_OFF ? PF_POLICY_REPLAY : was;
		} else if (boot.verdict == PF_VERDICT_UNCLEAR && (nc < SELFCHECK_SAMPLES || nr < SELFCHECK_SAMPLES)) {
			snprintf(sc->why, sizeof(sc->why),
				 "%s: no clear difference yet within a wide spread (median %.2f s of %zu %s boots against %.2f s "
				 "of %zu control boots, 95 %% interval %+.2f..%+.2f s%s): waiting for %d of each%s",
				 pf_policy_name(was), boot.median_b, nr, kind, boot.median_a, nc, boot.lo, boot.hi, stall,
				 SELFCHECK_SAMPLES, reorder_note);
			return;
		} else {
			verdict = "no clear difference";
			sc->policy = was == PF_POLICY_REPLAY ? PF_POLICY_NARROW : PF_POLICY_OFF;
		}
	}
	const char *action = sc->policy == was ? "keep" : sc->policy == PF_POLICY_REPLAY ? "resume" : "switch to";
	snprintf(sc->why, sizeof(sc->why),
		 "%s %s: %s boots %s (median %.2f s of %zu, against %.2f s of %zu control boots: %+.1f %%, 95 %% "
		 "interval %+.2f..%+.2f s%s)%s",
		 action, pf_policy_name(sc->policy), kind, verdict, sc->replay_s, nr, sc->control_s, nc, 100 * sc->change,
		 boot.lo, boot.hi, stall, reorder_note);
}

int pf_selfcheck_load(const char *path, struct pf_selfcheck *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->control_s = sc->replay_s = -1.0;
	char *text;
	size_t len;
	int rc = pf_read_text(path, 4096, 0, &text, &len);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	struct pf_selfcheck t = *sc;
	int ok = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		const char *v = sp + 1;
		if (!strcmp(line, "policy"))
			ok = pf_policy_parse(v, &t.policy) == 0;
		else if (!strcmp(line, "boots"))
			t.boots = strtoul(v, NULL, 10);
		else if (!strcmp(line, "reorder"))
			t.reorder_disarmed = !strcmp(v, "disarmed");
		else if (!strcmp(line, "why"))
			snprintf(t.why, sizeof(t.why), "%s", v);
	}
	free(text);
	if (!ok)
		return -EINVAL;
	*sc = t;
	return 0;
}

int pf_selfcheck_save(const char *path, const struct pf_selfcheck *sc)
{
	char buf[1024];
	int len = snprintf(buf, sizeof(buf), "policy %s\nreorder %s\nboots %lu\nwhy %s\n", pf_policy_name(sc->policy),
			   sc->reorder_disarmed ? "disarmed" : "armed", sc->boots, sc->why);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return -ENOSPC;
	return pf_state_write(path, buf, (size_t)len, 0600);
}
