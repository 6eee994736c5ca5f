/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The self-check: control and probe boots drawn fairly, the decision rule of selfcheck.h on made-up boot logs,
 * the kernel command line switch, and the state file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "host.h"
#include "selfcheck.h"
#include "support_tmpdir.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_roles(void **state)
{
	(void)state;
	assert_int_equal(pf_selfcheck_role(PF_POLICY_REPLAY, 0, "abc", 0, 0), PF_ROLE_REPLAY); /* interval 0: never */
	assert_int_equal(pf_selfcheck_role(PF_POLICY_OFF, 0, "abc", 0, 0), PF_ROLE_CONTROL);
	assert_int_equal(pf_selfcheck_role(PF_POLICY_REPLAY, 8, "abc", 0, 1), PF_ROLE_CONTROL); /* prefetch=noreplay */
	assert_int_equal(pf_selfcheck_role(PF_POLICY_OFF, 8, "abc", 0, 1), PF_ROLE_CONTROL);
	assert_int_equal(pf_selfcheck_role(PF_POLICY_REPLAY, 1, "-", 1, 0), PF_ROLE_REPLAY); /* no boot id: no draw */
	/* one in interval on average, the same boot id always the same role */
	int control = 0, probe = 0, narrow_control = 0;
	char id[40];
	for (int i = 0; i < 8000; i++) {
		snprintf(id, sizeof(id), "%08x-1234-4abc-8def-%012x", i * 2654435761u, i);
		enum pf_boot_role r = pf_selfcheck_role(PF_POLICY_REPLAY, 8, id, 1, 0);
		assert_int_equal(r, pf_selfcheck_role(PF_POLICY_REPLAY, 8, id, 1, 0));
		control += r == PF_ROLE_CONTROL;
		probe += pf_selfcheck_role(PF_POLICY_OFF, 8, id, 1, 0) == PF_ROLE_PROBE;
		narrow_control += pf_selfcheck_role(PF_POLICY_NARROW, 8, id, 1, 0) == PF_ROLE_CONTROL;
		/* the first boot judged (a fresh state) is never drawn: a built image's first boot replays */
		assert_int_equal(pf_selfcheck_role(PF_POLICY_REPLAY, 1, id, 0, 0), PF_ROLE_REPLAY);
		assert_int_equal(pf_selfcheck_role(PF_POLICY_NARROW, 1, id, 0, 0), PF_ROLE_NARROW);
	}
	assert_in_range(control, 850, 1150);
	assert_int_equal(probe, control);
	assert_int_equal(narrow_control, control);
	/* no weekly pattern: consecutive boots' draws are independent (runs of 8 with exactly one are not the rule) */
	int regular = 0;
	for (int w = 0; w < 1000; w++) {
		int k = 0;
		for (int i = 0; i < 8; i++) {
			snprintf(id, sizeof(id), "boot-%d", w * 8 + i);
			k += pf_selfcheck_role(PF_POLICY_REPLAY, 8, id, 1, 0) == PF_ROLE_CONTROL;
		}
		regular += k == 1;
	}
	assert_in_range(regular, 300, 500); /* binomial(8, 1/8): P(k = 1) = 0.39 */
	/* one kernel boot, many runs (tests): the count of boots judged varies the draw */
	int by_count = 0;
	for (unsigned long k = 1; k <= 800; k++)
		by_count += pf_selfcheck_role(PF_POLICY_REPLAY, 8, "same-boot-id", k, 0) == PF_ROLE_CONTROL;
	assert_in_range(by_count, 60, 140);
}

/* What 77-selfcheck's injected boot ids go through: 200 random boot ids given as prefetchd takes them
 * (PREFETCH_BOOT_ID), one boot each, SELF_CHECK_INTERVAL=2: about half are control boots.  The ids are random
 * but seeded, so the count is the same on every run; the band is binomial(200, 1/2)'s mean +- 5 sd. */
static void test_roles_injected_ids(void **state)
{
	(void)state;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int control = 0;
	char given[40], id[40];
	for (int i = 0; i < 200; i++) {
		uint32_t w[4];
		for (int k = 0; k < 4; k++) { /* xorshift64* */
			x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
			w[k] = (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
		}
		snprintf(given, sizeof(given), "%08x-%04x-4%03x-%04x-%04x%08x", w[0], w[1] >> 16, w[1] & 0xfff,
			 0x8000 | (w[2] >> 18), w[2] & 0xffff, w[3]);
		setenv("PREFETCH_BOOT_ID", given, 1);
		pf_boot_id(id, sizeof(id));
		assert_string_equal(id, given);
		control += pf_selfcheck_role(PF_POLICY_REPLAY, 2, id, 1, 0) == PF_ROLE_CONTROL;
	}
	unsetenv("PREFETCH_BOOT_ID");
	assert_in_range(control, 65, 135);
}

static void test_cmdline(void **state)
{
	(void)state;
	assert_true(pf_cmdline_noreplay("BOOT_IMAGE=/vmlinuz root=/dev/sda1 prefetch=noreplay quiet\n"));
	assert_true(pf_cmdline_noreplay("prefetch=noreplay"));
	assert_false(pf_cmdline_noreplay("prefetch=noreplayx quiet"));
	assert_false(pf_cmdline_noreplay("xprefetch=noreplay"));
	assert_false(pf_cmdline_noreplay("prefetch=off"));
	assert_false(pf_cmdline_noreplay(""));
}

/* A log: the boot times of control boots (c) and of replays under policy p, interleaved. */
static size_t make_log(struct pf_boot_record *recs, const double *c, size_t nc, const double *r, size_t nr,
		       const char *policy)
{
	size_t n = 0;
	for (size_t i = 0; i < nc || i < nr; i++) {
		if (i < nr) {
			pf_boot_record_init(&recs[n]);
			recs[n].boot_s = r[i];
			recs[n].prefetch = 1;
			strcpy(recs[n].policy, policy);
			n++;
		}
		if (i < nc) {
			pf_boot_record_init(&recs[n]);
			recs[n].boot_s = c[i];
			recs[n].control = 1;
			strcpy(recs[n].policy, policy);
			n++;
		}
	}
	return n;
}

static void test_decide(void **state)
{
	(void)state;
	struct pf_boot_record recs[64];
	struct pf_selfcheck sc = { .policy = PF_POLICY_REPLAY };

	/* prefetch helps: it stays, and says by how much */
	const double slow[] = { 30.1, 29.8, 31.0, 30.4 }, fast[] = { 25.2, 24.9, 25.6, 25.0, 24.7, 25.3 };
	size_t n = make_log(recs, slow, 4, fast, 6, "replay");
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_REPLAY);
	assert_int_equal(sc.n_control, 4);
	assert_int_equal(sc.n_replay, 6);
	assert_true(sc.change < -0.15 && sc.change > -0.18);
	assert_non_null(strstr(sc.why, "keep replay: replay boots clearly faster"));

	/* not enough control boots: no decision */
	n = make_log(recs, slow, 2, fast, 6, "replay");
	sc.policy = PF_POLICY_REPLAY;
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_REPLAY);
	assert_non_null(strstr(sc.why, "not enough boots"));

	/* no clear difference (a fast medium): narrow, then off */
	const double same_c[] = { 20.0, 20.3, 19.8, 20.1 }, same_r[] = { 20.2, 19.9, 20.1, 20.4 };
	n = make_log(recs, same_c, 4, same_r, 4, "replay");
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_NARROW);
	assert_non_null(strstr(sc.why, "switch to narrow"));
	/* the replays that counted were full ones: under narrow, only narrowed replays count */
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_NARROW);
	assert_int_equal(sc.n_replay, 0);
	n = make_log(recs, same_c, 4, same_r, 4, "narrow");
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_OFF);

	/* off: probes that are clearly faster bring the replay back */
	n = make_log(recs, slow, 4, fast, 3, "off");
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_REPLAY);
	assert_non_null(strstr(sc.why, "resume replay: probe boots clearly faster"));

	/* clearly slower: straight to off */
	sc.policy = PF_POLICY_REPLAY;
	n = make_log(recs, fast, 4, slow, 4, "replay");
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_OFF);

	/* noisy boots: a 5 % difference within a wide spread is no clear difference, but with fewer than 8 of each it
	 * waits for more boots rather than back off; with 8 of each it narrows */
	sc.policy = PF_POLICY_REPLAY;
	const double noisy_c[] = { 28, 34, 31, 25, 36, 30, 27, 33 }, noisy_r[] = { 27, 33, 29, 24, 34, 30, 26, 32 };
	n = make_log(recs, noisy_c, 6, noisy_r, 6, "replay");
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_REPLAY);
	assert_non_null(strstr(sc.why, "no clear difference yet within a wide spread"));
	assert_true(sc.allowance_s > 0.03 * 30.5);
	n = make_log(recs, noisy_c, 8, noisy_r, 8, "replay");
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_NARROW);

	/* the boot lab's case: boot times buried in CPU noise, the I/O stall clearly lower with the replay: keep */
	sc.policy = PF_POLICY_REPLAY;
	const double lab_c[] = { 24.7, 30.0, 33.4 }, lab_r[] = { 32.0, 28.0, 19.9, 20.5 };
	n = make_log(recs, lab_c, 3, lab_r, 4, "replay");
	for (size_t i = 0; i < n; i++)
		recs[i].psi_io_ms = recs[i].control ? 6200 : 2000;
	pf_selfcheck_decide(recs, n, &sc);
	assert_int_equal(sc.policy, PF_POLICY_REPLAY);
	assert_non_null(strstr(sc.why, "keep replay: replay boots no clear difference in boot time but a clearly lower I/O stall"));
	/* a stall larger than the boot's uptime is no boot's (PSI counts from the kernel's start): not used */
	for (size_t i = 0; i < n; i++)
		recs[i].psi_io_ms = recs[i].control ? 620000 : 200000;
	pf_selfcheck_decide(recs, n, &sc);
	assert_null(strstr(sc.why, "I/O stall"));
	assert_non_null(strstr(sc.why, "waiting for 8 of each"));
}

static void test_reorder_judged(void **state)
{
	(void)state;
	struct pf_boot_record recs[16];
	for (int i = 0; i < 12; i++) {
		pf_boot_record_init(&recs[i]);
		recs[i].prefetch = 1;
		recs[i].boot_s = 25;
		recs[i].reorder = i >= 6;
		recs[i].sectors = 100 * 2048; /* 100 MiB */
		recs[i].io_ms = i >= 6 ? 1400 : 1000; /* 14 ms/MiB after the reorder, 10 before */
	}
	struct pf_selfcheck sc = { .policy = PF_POLICY_REPLAY };
	pf_selfcheck_decide(recs, 12, &sc);
	assert_true(sc.reorder_disarmed);
	assert_non_null(strstr(sc.why, "reorder disarmed: the replay after it took 14.0 ms of disk per MiB against 10.0"));
	/* the same with the boots on the settled disk known by their generation, not by the boot after the reorder */
	for (int i = 6; i < 12; i++) {
		recs[i].reorder = i == 6;
		recs[i].generation = 1;
	}
	sc.reorder_disarmed = 0;
	pf_selfcheck_decide(recs, 12, &sc);
	assert_true(sc.reorder_disarmed);
	/* cheaper after the reorder: it stays armed */
	for (int i = 6; i < 12; i++)
		recs[i].io_ms = 700;
	sc.reorder_disarmed = 0;
	pf_selfcheck_decide(recs, 12, &sc);
	assert_false(sc.reorder_disarmed);
}

static void test_state_file(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof(path), "%s/selfcheck", pf_test_dir);
	struct pf_selfcheck sc;
	assert_int_equal(pf_selfcheck_load(path, &sc), 0); /* missing: the defaults */
	assert_int_equal(sc.policy, PF_POLICY_REPLAY);
	assert_false(sc.reorder_disarmed);
	sc.policy = PF_POLICY_OFF;
	sc.reorder_disarmed = 1;
	sc.boots = 41;
	strcpy(sc.why, "switch to off: replay boots clearly slower");
	assert_int_equal(pf_selfcheck_save(path, &sc), 0);
	struct pf_selfcheck back;
	assert_int_equal(pf_selfcheck_load(path, &back), 0);
	assert_int_equal(back.policy, PF_POLICY_OFF);
	assert_true(back.reorder_disarmed);
	assert_string_equal(back.why, sc.why);
	assert_int_equal(back.boots, sc.boots);
	FILE *f = fopen(path, "w");
	fputs("policy sometimes\n", f);
	fclose(f);
	assert_int_equal(pf_selfcheck_load(path, &back), -EINVAL); /* malformed: the defaults, and the error */
	assert_int_equal(back.policy, PF_POLICY_REPLAY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roles),       cmocka_unit_test(test_roles_injected_ids),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_decide),      cmocka_unit_test(test_reorder_judged),
		cmocka_unit_test(test_state_file),
	};
	return cmocka_run_group_tests(tests, pf_test_dir_setup, pf_test_dir_teardown);
}
