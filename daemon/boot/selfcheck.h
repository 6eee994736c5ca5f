/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The self-check: every boot prefetch measures what it gave, and it backs off where it does not help.
 *
 * Roles.  One boot in SELF_CHECK_INTERVAL (on average; drawn from the boot id and the number of boots judged so
 * far, so that control boots follow no weekly or daily pattern of the machine) is the minority kind of the
 * policy in force (never the first boot judged on a fresh state: a machine made from an image that prefetch-image
 * built replays its installed layout from its first boot on):
 *   policy replay or narrow: a control boot — nothing replayed, traced as usual (the built-in A/B);
 *   policy off:              a probe boot — the full layout replayed, to see whether it helps again.
 * prefetch=noreplay on the kernel command line makes one boot a control boot whatever the policy.
 *
 * The decision, after each recorded boot, from the boot log (oldest first):
 *   controls  the newest SELFCHECK_SAMPLES boots with control=1 (nothing replayed on purpose)
 *   replays   the newest SELFCHECK_SAMPLES boots that replayed under the policy in force (narrowed boots under
 *             "narrow", probes under "off", full replays under "replay")
 *   with fewer than SELFCHECK_MIN of either: no decision, the policy stays.
 *   Otherwise the boot times are compared by lib/compare.h's pf_compare (the one comparison 'prefetchd report'
 *   prints too): the difference of the medians, replays less controls, with its 95 % bootstrap interval, margin
 *   SELFCHECK_MARGIN of the controls' median —
 *     clearly lower (faster):             replay -> replay, narrow -> narrow, off -> replay
 *     clearly higher (slower):            -> off
 *     otherwise: the I/O stall (PSI some, where each boot's is known) compared the same way (same margin) —
 *       clearly lower with the replay:    as clearly faster (CPU noise hides the boot-time gain, not the stall's)
 *       else, when the boot times' verdict is "not clear" and fewer than SELFCHECK_SAMPLES of either kind were
 *       compared:                         no decision yet, wait for more boots
 *       else ("no difference" beyond the margin, or still not clear with all the samples):
 *                                         replay -> narrow, narrow -> off, off -> off
 *   So from a fresh start prefetch backs off at the earliest after SELFCHECK_MIN control boots and SELFCHECK_MIN
 *   replays (about SELFCHECK_MIN x SELF_CHECK_INTERVAL boots), and comes back after SELFCHECK_MIN probes.
 * The reorder: when the replays on a disk a reorder changed (right after it, or under its generation) cost more
 * disk time per MiB read (median of io_ms / MiB) than the replays without one, by more than SELFCHECK_MARGIN, the
 * reorder is disarmed (it stays so: the state file says why, and removing it re-arms).
 *
 * State: $PREFETCH_DIR/selfcheck, a few "key value" lines written at each boot end and read at the next boot's
 * start.  A missing or unreadable file is the default (replay, reorder armed).  Pure functions but the file's
 * load and save. */
#ifndef PREFETCH_SELFCHECK_H
#define PREFETCH_SELFCHECK_H

#include "boot_log.h"
#include "compare.h"

#include <stddef.h>

#define SELFCHECK_SAMPLES 8    /* the newest boots of each kind compared */
#define SELFCHECK_MIN PF_COMPARE_MIN /* fewer of either kind: no decision yet */
#define SELFCHECK_MARGIN PF_COMPARE_MARGIN /* a change under 3 % of the boot time does not matter */
#define SELFCHECK_NARROW_DIV 4 /* narrow: the replay reads the layout's head, a quarter of its bytes */

enum pf_policy { PF_POLICY_REPLAY = 0, PF_POLICY_NARROW, PF_POLICY_OFF };
enum pf_boot_role { PF_ROLE_REPLAY = 0, PF_ROLE_NARROW, PF_ROLE_CONTROL, PF_ROLE_PROBE };

struct pf_selfcheck {
	enum pf_policy policy;
	int reorder_disarmed;
	unsigned long boots;        /* boots judged so far (a part of the draw) */
	size_t n_control, n_replay;
	double control_s, replay_s; /* medians of the boot time, s (-1 without samples) */
	double change;              /* median(replays) / median(controls) - 1 (0 without both) */
	double allowance_s;         /* the larger of the margin and the interval's half-width, s */
	struct pf_comparison boot_cmp; /* the boot times' comparison (verdict too few without one) */
	char why[512];              /* one line: the decision and its figures */
};

const char *pf_policy_name(enum pf_policy p);
/* "replay", "narrow", "off" -> 0 and *p; else -EINVAL. */
int pf_policy_parse(const char *s, enum pf_policy *p);
const char *pf_role_name(enum pf_boot_role r);

/* This boot's role under policy (interval 0, or boots 0, the first boot judged: never a control or probe boot).
 * noreplay: the kernel command line asked for a boot without replay. */
enum pf_boot_role pf_selfcheck_role(enum pf_policy policy, int interval, const char *boot_id, unsigned long boots,
				    int noreplay);

/* The next state from the current one (*sc: policy and reorder_disarmed as they are) and the boot log; counts
 * the boot. */
void pf_selfcheck_decide(const struct pf_boot_record *recs, size_t n, struct pf_selfcheck *sc);

/* Does the kernel command line text hold the word prefetch=noreplay? */
int pf_cmdline_noreplay(const char *cmdline);
/* Does it hold word (e.g. "prefetch=off") as a whole word? */
int pf_cmdline_word(const char *cmdline, const char *word);

/* The state file: load (missing: the defaults, 0; unreadable or malformed: the defaults, the error returned)
 * and save (atomically).  Returns 0 or a negative pf error. */
int pf_selfcheck_load(const char *path, struct pf_selfcheck *sc);
int pf_selfcheck_save(const char *path, const struct pf_selfcheck *sc);

#endif
