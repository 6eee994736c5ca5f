#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The gain gate (issue #13): prefetch-reorder predicts the next replay now and after its plan (lib/replay_cost.h)
# and moves only when the gain beats the margin.  On a small aged image whose boot files are scattered:
# --check and --dry-run print both predictions and write nothing; a margin the predicted gain does not beat
# refuses with one line and exit 0, leaving the image byte-identical; a margin it beats moves, fsck-clean, and
# the prediction after the move matches the plan's; the next run has nothing to move and writes nothing.
# No simulated disk: the prediction reads the filesystem only (count-mode checks: results/REORDER-GAIN.md).
source "$TOP/tests/lib.sh"
pf_one_cpu "$@" # the fixtures need the holes between their files
pf_require_root
MKLAYOUT=$TOOLS/pf_mklayout
[ -x "$MKLAYOUT" ] || pf_skip "needs $MKLAYOUT (make tools)"

T=$(pf_tmpdir)
IMG=$T/gain.img
pf_mkfs "$IMG" 64M -b 4096
M=$T/mnt
pf_mount "$IMG" "$M" -o loop
pf_scattered_libs "$M" 40 200000
{ for i in $(seq 40 -3 1) $(seq 2 3 40) $(seq 3 3 40); do echo "$M/usr/lib/lib$i.so"; done; } >"$T/list"
L=$T/layout
"$MKLAYOUT" "$L" "$T/list" >/dev/null || pf_fail "pf_mklayout"
chmod 0644 "$L"
umount "$M" || pf_fail "umount"

sum0=$(sha256sum <"$IMG")
out=$("$REORDER" --dry-run --layout "$L" "$IMG" 2>&1) || pf_fail "--dry-run: $out"
echo "$out"
[ "$(sha256sum <"$IMG")" = "$sum0" ] || pf_fail "--dry-run wrote to the image"
now=$(awk '$1 == "replay:" && $2 == "predicted" { sub("s", "", $3); print $3 }' <<<"$out")
planned=$(awk '$1 == "replay:" && $2 == "predicted" { sub("s", "", $4); print $4 }' <<<"$out")
gain=$(sed -n 's/^predicted gain of the plan for the next replay: \(-*[0-9.]*\) %.*/\1/p' <<<"$out")
[ -n "$now" ] && [ -n "$planned" ] && [ -n "$gain" ] || pf_fail "--dry-run prints no replay prediction"
awk -v g="$gain" 'BEGIN { exit !(g > 10) }' || pf_fail "a scattered set should predict a gain, got $gain %"
out=$("$REORDER" --check --layout "$L" "$IMG" 2>&1) || pf_fail "--check: $out"
[[ $out == *"replay: predicted"* ]] || pf_fail "--check prints no replay prediction"

# A margin above the predicted gain: a decision, not an error; nothing written.
above=$(awk -v g="$gain" 'BEGIN { printf "%d", g + 2 }')
out=$("$REORDER" --min-gain "$above" --layout "$L" "$IMG" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || pf_fail "refusal by the gate should exit 0 ($rc): $out"
[[ $out == "prefetch-reorder: not moving: predicted replay "*" s now, "*" s after the plan (gain "*", margin $above %)" ]] ||
	pf_fail "no one-line refusal: $out"
[ "$(sha256sum <"$IMG")" = "$sum0" ] || pf_fail "a run the gate held back wrote to the image"
"$REORDER" --min-gain x --layout "$L" "$IMG" >/dev/null 2>&1; [ $? -eq 2 ] || pf_fail "bad --min-gain: want exit 2"

# The default margin (10 %) is beaten: it moves, and afterwards the replay is what the plan predicted.
out=$("$REORDER" --layout "$L" "$IMG" 2>&1) || pf_fail "reorder: $out"
echo "$out"
[[ $out == *"prefetch-reorder: moving: predicted replay "*" s now, "*" s after the plan (gain "*", margin 10 %)"* ]] ||
	pf_fail "no one-line decision to move: $out"
moved=$(sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' <<<"$out")
[ -n "$moved" ] && [ "$moved" -gt 0 ] || pf_fail "nothing moved"
pf_fsck_clean "$IMG"
out=$("$REORDER" --check --layout "$L" "$IMG" 2>&1) || pf_fail "--check after: $out"
after=$(awk '$1 == "replay:" && $2 == "predicted" { sub("s", "", $3); print $3 }' <<<"$out")
[ "$after" = "$planned" ] || pf_fail "predicted after the plan $planned s, after the move $after s"

# The next run: nothing to move, nothing written.
sum1=$(sha256sum <"$IMG")
out=$("$REORDER" --layout "$L" "$IMG" 2>&1) || pf_fail "second run: $out"
[[ $out == *"nothing to move"* ]] || pf_fail "second run: $out"
[ "$(sha256sum <"$IMG")" = "$sum1" ] || pf_fail "second run wrote to the image"
pf_note "predicted replay $now s -> $planned s (gain $gain %), moved $moved blocks; after: $after s"
