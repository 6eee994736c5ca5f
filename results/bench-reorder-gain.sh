#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Does a reorder make the next replay faster?  Issue #13, on the simulated 7200 rpm disk in count mode (model
# seconds summed per request: exact, one run per case suffices).
#
# Image: tests/mkbootset.sh --package-order (the Debian 12 boot's 419 files of TSV written in path order, each
# followed by 2-20 siblings of lognormal size, ~RATIO times the boot data, then 30 % of the siblings deleted), SIZE
# MiB.  Layout: learnt by the daemon (`prefetchd trace` while the boot's reads run, then `prefetchd aggregate`).
# Cases, each cold: none; replay (`prefetchd replay --medium rotational`, then the boot's reads); then the
# reorder (forced with --min-gain off, so that "after" can be measured; its default decision is printed first
# from a --dry-run); after/none; after/replay.  Beside each replay, the model's prediction (prefetch-reorder
# --check / --dry-run: lib/replay_cost.h).
#
# Environment: SEED (1), RATIO (8), SIZE (1024), TSV (boot2.tsv), MIN_GAIN (default of prefetch-reorder),
# ORDER (package; plain: mkbootset's aged image, the boot files scattered among the filler, no --package-order),
# SCALE (1: mkbootset --scale, the boot set N times).  Also measured: the disk time of a second reorder right
# after the first (nothing left to move: what a shutdown costs once the set is in place).
# OUT=FILE also writes the report there.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
pf_private_mount_ns "$@"
SEED=${SEED:-1} RATIO=${RATIO:-8} SIZE=${SIZE:-1024} TSV=${TSV:-$TOP/tests/data/debian12-boot/boot2.tsv}
ORDER=${ORDER:-package} SCALE=${SCALE:-1}
case $ORDER in package) order_arg=--package-order ;; plain) order_arg='' ;; *) pf_fail "ORDER=$ORDER: package or plain" ;; esac
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
for b in "$PREFETCHD" "$REORDER" "$WLRUN" "$TOOLS/mkbootset"; do
	[ -x "$b" ] || pf_fail "$b missing (make all tools; make -C tests/simdisk)"
done
tmp=$(sim_tmpfs_dir $((SIZE + 64)))
work=$(pf_tmpdir)
# Private copies of the programs: the figures belong to one build even if the tree is rebuilt meanwhile.
mkdir -p "$work/bin" && cp "$PREFETCHD" "$REORDER" "$WLRUN" "$work/bin/" || pf_fail "copying the programs"
PREFETCHD=$work/bin/prefetchd REORDER=$work/bin/prefetch-reorder WLRUN=$work/bin/wlrun
fs=$work/fs
img=$tmp/pkg.img

pf_note "building the image ($ORDER order, seed $SEED, ratio $RATIO, $SIZE MiB)"
"$TOP/tests/mkbootset.sh" $order_arg --tsv "$TSV" --ratio "$RATIO" --seed "$SEED" --size "$SIZE" --scale "$SCALE" "$img" |
	sed 's/^/   /' || pf_fail "mkbootset"
cp "$img.workload" "$work/workload"

sim_start "$img" count
sim_mount "$fs"
describe=$(sim_describe)
sim_trace_workload "$fs" "$work/workload" "$work/trace" "$work"
"$PREFETCHD" aggregate --output "$work/layout" "$work/trace" >"$work/aggregate.out" || pf_fail "aggregate"

run_case() { sim_cold_boot "$fs" "$work/workload" ${1:+"$work/layout"}; }
reorder_on() { sim_reorder "$work/reorder.out" "$@"; }
predicted() { sim_reorder_predicted "$work/reorder.out"; }

read -r none_s _ none_rq none_sk <<<"$(run_case)"
read -r rep_s rep_rs rep_rq rep_sk <<<"$(run_case replay)"
sim_umount
pf_drop_caches
reorder_on --dry-run ${MIN_GAIN:+--min-gain "$MIN_GAIN"} --layout "$work/layout" || pf_fail "dry run: $(tail -2 "$work/reorder.out")"
read -r pred_now pred_plan <<<"$(predicted)"
decision=$(grep 'predicted gain' "$work/reorder.out" | tail -1)
cp "$work/reorder.out" "$work/dry.out"
sim_reset
reorder_on --min-gain off --layout "$work/layout" || pf_fail "reorder: $(tail -2 "$work/reorder.out")"
moved=$(grep -o 'moved [0-9]* blocks ([0-9.]* MB)[^;]*' "$work/reorder.out")
pf_drop_caches
reorder_on --check --layout "$work/layout" || pf_fail "check: $(tail -2 "$work/reorder.out")"
read -r pred_after _ <<<"$(predicted)"
pf_drop_caches
sim_reset
reorder_on --min-gain off --layout "$work/layout" || pf_fail "second reorder: $(tail -2 "$work/reorder.out")"
noop="$(sim_seconds) s, $(sim_stat requests) requests, $(sim_stat seeks) seeks, $(($(sim_stat read_bytes) / 1048576)) MiB read, $(($(sim_stat write_bytes) / 1024)) KiB written"
noop_said=$(grep -m1 -E 'nothing to move|moved [0-9]+ blocks' "$work/reorder.out")
sim_mount "$fs"
read -r anone_s _ anone_rq anone_sk <<<"$(run_case)"
read -r arep_s arep_rs arep_rq arep_sk <<<"$(run_case replay)"
sim_umount

pct() { awk -v p="$1" -v m="$2" 'BEGIN { if (m > 0) printf "%+.1f %%", (p - m) / m * 100; else print "-" }'; }
{
	echo "## bench-reorder-gain.sh ($(date -u +%Y-%m-%d), $ORDER order, seed $SEED, scale $SCALE, ratio $RATIO, $SIZE MiB, $(basename "$TSV"))"
	echo
	echo "$describe"
	echo "layout: $(tail -1 "$work/aggregate.out")"
	echo "dry run's decision: $decision"
	echo "forced reorder: $moved"
	echo "second reorder (disk time): $noop; it said: $noop_said"
	echo
	echo "| case | boot's reads + replay (s) | replay alone (s) | predicted replay (s) | prediction error | requests | seeks |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	echo "| none | $none_s | - | - | - | $none_rq | $none_sk |"
	echo "| replay | $rep_s | $rep_rs | $pred_now | $(pct "$pred_now" "$rep_rs") | $rep_rq | $rep_sk |"
	echo "| reorder, none | $anone_s | - | - | - | $anone_rq | $anone_sk |"
	echo "| reorder, replay | $arep_s | $arep_rs | $pred_after (plan: $pred_plan) | $(pct "$pred_after" "$arep_rs") | $arep_rq | $arep_sk |"
	echo
	echo "dry run (before the reorder):"
	sed 's/^/    /' "$work/dry.out"
} | tee ${OUT:+"$OUT"}
