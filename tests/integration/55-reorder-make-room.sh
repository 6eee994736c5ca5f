#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 55-reorder-make-room: on a 90 %-full, aged image whose free space is too scattered for the boot set,
# prefetch-reorder moves other files out of one stretch first (REORDER_MAKE_ROOM, reorder/evacuate.h), then the
# layout into it.  Checked: the dry run says so and writes nothing; --no-make-room and REORDER_MAKE_ROOM=0 plan
# without it, for a slower predicted replay; the real run makes the room, e2fsck -fn is clean and every file
# (content, inode, links, mode, mtime) is the same; the replay --check predicts afterwards is the one the dry
# run predicted, figure by figure (the evacuation, the layout's plan and the extent leaves the two runs add
# were simulated right); the next run writes nothing; a run stopped by the time budget while making room leaves
# a clean filesystem and the next run finishes the job.
# Power cuts while making room: 60-reorder-crash's room series.
set -u
if [ -z "${PF_PRIVATE_MNT_NS:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
	PF_PRIVATE_MNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
source "$TOP/tests/lib.sh"
pf_require_root
[ -x "$TOOLS/mkbootset" ] && [ -x "$TOOLS/mkaged" ] && [ -x "$TOOLS/pf_mklayout" ] || pf_skip "needs the test tools (make tools)"
[ -x "$REORDER" ] || pf_skip "$REORDER not built"

[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
T=$(pf_tmpdir)
M=$T/mnt
mkdir -p "$M"
pf_cleanup_add "umount '$M' 2>/dev/null"

# The image the matrix bench calls aged90: churned to leave room for the boot set, then the boot set and twice
# its data written into the holes (tests/mkbootset.sh --fill), filler content only.
"$TOP/tests/mkbootset.sh" --no-host --fill 90 --ratio 2 --tsv "$TOP/tests/data/debian12-boot/boot2.tsv" --seed 1 \
	--size 1024 "$T/base.img" >"$T/build.out" 2>&1 || pf_fail "mkbootset: $(tail -3 "$T/build.out")"
pf_note "$(tail -1 "$T/build.out")"
# The layout: the boot's reads, after their directories, as pf_mklayout records them on the mounted image.
mount -o loop,ro "$T/base.img" "$M" || pf_fail "mount"
awk -F'\t' -v m="$M" '{ p = $2; while (sub(/\/[^\/]*$/, "", p) && p != "") if (!(p in d)) { d[p]; print m p } }' \
	"$T/base.img.workload" | sort -u >"$T/lines"
awk -F'\t' -v m="$M" '{ print m $2 " 0 " $1 }' "$T/base.img.workload" >>"$T/lines"
"$TOOLS/pf_mklayout" "$T/layout" "$T/lines" >"$T/mklayout.out" 2>&1 || pf_fail "pf_mklayout: $(tail -2 "$T/mklayout.out")"
umount "$M" || pf_fail "umount"
chmod 0644 "$T/layout"
L=$T/layout
pf_manifest "$T/base.img" "$T/m.ref" "$T" "$M" || pf_fail "cannot read the image"
CFG=$T/cfg
printf 'REORDER_TIME_BUDGET=3600\n' >"$CFG"
reorder() { "$REORDER" --config "$CFG" --layout "$L" "$@" 2>&1; }
field() { sed -n "s/^plan: .* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
same_files() { # LABEL IMAGE
	pf_manifest "$2" "$T/m.cur" "$T" "$M" || pf_fail "$1: cannot read the image"
	cmp -s "$T/m.ref" "$T/m.cur" || pf_fail "$1: files differ: $(diff "$T/m.ref" "$T/m.cur" | grep '^[<>]' | head -4 | tr '\n' ' ')"
}

# 1. The dry run: it would make room, and writes nothing.
IMG=$T/run.img
cp --sparse=always "$T/base.img" "$IMG"
sum=$(sha256sum <"$IMG")
out=$(reorder --dry-run "$IMG") || pf_fail "dry run: $out"
dry=$out
echo "$out" | grep -E '^(making room|not making room|replay: predicted|plan:)'
[ "$(sha256sum <"$IMG")" = "$sum" ] || pf_fail "the dry run wrote to the image"
grep -q '^making room: [1-9][0-9]* blocks of [1-9][0-9]* other files out of blocks' <<<"$out" ||
	pf_fail "the dry run does not make room: $(grep -i room <<<"$out")"
room=$(field room_blocks "$out") with=$(field replay_after "$out")
[ "${room:-0}" -gt 0 ] || pf_fail "plan line: room_blocks=${room:-none}"

# 2. Without it (option, config): no room, and a slower predicted replay.
out=$(reorder --dry-run --no-make-room "$IMG") || pf_fail "dry run --no-make-room: $out"
[ "$(field room_blocks "$out")" = 0 ] && ! grep -q '^making room' <<<"$out" || pf_fail "--no-make-room made room: $out"
without=$(field replay_after "$out")
awk -v a="$with" -v b="$without" 'BEGIN { exit !(a < 0.9 * b) }' ||
	pf_fail "making room predicted $with s, without it $without s: not the 10 % it must gain"
pf_note "predicted replay after the reorder: $with s making room, $without s without"
printf 'REORDER_MAKE_ROOM=0\n' >"$T/cfg0"
out=$("$REORDER" --config "$T/cfg0" --layout "$L" --dry-run "$IMG" 2>&1) || pf_fail "dry run, REORDER_MAKE_ROOM=0: $out"
[ "$(field room_blocks "$out")" = 0 ] || pf_fail "REORDER_MAKE_ROOM=0 made room: $out"

# 3. The run: room made, then the layout; clean, nothing lost, and the replay the dry run predicted.
out=$(reorder "$IMG") || pf_fail "reorder failed: $out"
echo "$out"
grep -q 'making room: .*; moved [1-9][0-9]*$' <<<"$out" || pf_fail "the run did not make room: $out"
grep -q 'moved [1-9][0-9]* blocks' <<<"$out" || pf_fail "the layout was not moved: $out"
pf_fsck_clean "$IMG"
same_files "after the run" "$IMG"
out=$(reorder --check "$IMG") || pf_fail "--check after: $out"
now=$(awk '$1 == "replay:" && $2 == "predicted" { sub("s", "", $3); print $3 }' <<<"$out")
# Exactly, every figure of the replay (data sweep, metadata blocks, seeks, requests): the run moves what the
# dry run planned, and the extent leaves it adds (files whose extents outgrow their inode, while out of the
# window or once in it) are the ones the dry run simulated, where it placed them.  Whether there are such
# files depends on the image (its placement is the kernel's and varies from build to build): seen on about one
# build in three, 1 to 4 leaves, up to 5 % of the replay, when the prediction left them out.
[ -n "$(pf_replay_figs "$out" 1)" ] && [ "$(pf_replay_figs "$dry" 2)" = "$(pf_replay_figs "$out" 1)" ] ||
	pf_fail "the replay --check predicts now is not the one the dry run predicted (< dry run, > --check): $(
		diff <(pf_replay_figs "$dry" 2) <(pf_replay_figs "$out" 1) | grep '^[<>]' | tr '\n' ' ')"
pf_note "--check after the run: replay $now s (the dry run predicted $with s, every figure the same)"

# 4. The next run: nothing written; nothing to move, or a plan that would gain next to nothing (at most 2 %),
# which the gate holds back.  The latter on about one build in ten: where the window's fixed blocks cut the
# free space left for the layout's last chunk into pieces shorter than the planner keeps in place, its plan
# without making room would take them out of the window again, for a slower replay (seen: -4 to -0 %), or a
# few blocks would move alone for next to nothing (seen: 20 blocks, +0.2 %; once in a stability series under
# load, +1 %: 0.59 s against 0.58 s).
sum=$(sha256sum <"$IMG")
out=$(reorder "$IMG") || pf_fail "second run: $out"
if ! grep -q 'nothing to move' <<<"$out"; then
	gain=$(sed -n 's/^prefetch-reorder: not moving: .* (gain \(-\{0,1\}[0-9.]*\) %.*/\1/p' <<<"$out")
	[ -n "$gain" ] && awk -v g="$gain" 'BEGIN { exit !(g <= 2) }' || pf_fail "the second run is not a no-op: $out"
	pf_note "second run: $(head -1 <<<"$out")"
fi
[ "$(sha256sum <"$IMG")" = "$sum" ] || pf_fail "the second run wrote to the image"

# 5. Stopped by the time budget while making room: clean, nothing lost; the next run finishes.
cp --sparse=always "$T/base.img" "$IMG"
out=$(reorder --time-budget 0.001 "$IMG"); rc=$?
[ $rc -eq 3 ] || pf_fail "budget run: exit $rc, not 3: $out"
grep -q 'making room: .*stopped by the time budget before the layout' <<<"$out" || pf_fail "budget run: $out"
pf_fsck_clean "$IMG"
same_files "after the budget stop" "$IMG"
out=$(reorder "$IMG") || pf_fail "the run after the budget stop failed: $out"
grep -q 'moved [1-9][0-9]* blocks' <<<"$out" || pf_fail "the run after the budget stop moved nothing: $out"
pf_fsck_clean "$IMG"
same_files "after the resumed run" "$IMG"
echo "PASS: room made ($room blocks planned), the layout moved, e2fsck clean, every file the same, prediction held"
