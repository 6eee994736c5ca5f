#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make demo: the whole pipeline on a realistic file set, in about a minute, touching nothing outside temp dirs.
#   1. an aged ext4 image holding the files a real Debian 12 boot reads (tests/mkbootset.sh), on a simulated
#      7200 rpm disk (tests/simdisk, count mode: the disk's time is added up exactly, so the figures mean
#      something even on a fast virtual disk; without FUSE, a plain loop device on the real disk instead)
#   2. prefetchd trace while a scripted "boot" reads those files cold, prefetchd aggregate -> layout
#   3. drop caches, cold boot read without prefetch; drop caches, prefetchd replay, the same boot read again
set -u -o pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "make demo needs root (loop devices, mount, fanotify, drop_caches)" >&2; exit 1; }
[ -x "$PREFETCHD" ] || { echo "no $PREFETCHD: run make first" >&2; exit 1; }
say() { printf '%s\n' "$*"; }

say "==> building the helpers (tests/tools, tests/simdisk)"
make -s -C "$TOP" tools >/dev/null || pf_fail "make tools"
make -s -C "$TOP/tests/simdisk" wlrun >/dev/null || pf_fail "make -C tests/simdisk wlrun"
sim=1
make -s -C "$TOP/tests/simdisk" simdisk >/dev/null 2>&1 || sim=0
source "$TOP/tests/simdisk/lib-sim.sh"
[ -e /dev/fuse ] || sim=0
[ -z "${DEMO_NO_SIM:-}" ] || sim=0  # to try the fallback

work=$(pf_tmpdir)
if [ $sim = 1 ]; then img_dir=$(sim_tmpfs_dir 1100); else img_dir=$work; fi
say "==> making an aged ext4 image with the Debian 12 boot file set (419 files among ~8x other data)"
"$TOP/tests/mkbootset.sh" "$img_dir/img" | sed 's/^/    /' || pf_fail "mkbootset"
wl=$img_dir/img.workload
fs=$work/fs

if [ $sim = 1 ]; then
	sim_start "$img_dir/img" count
	sim_mount "$fs"
	disk="simulated 7200 rpm disk (count mode: modelled disk time)"
	elapsed() { sim_seconds; }
	reset() { sim_reset; }
else
	say "    FUSE (or libfuse3-dev) unavailable: using a plain loop device on the real disk; its times are"
	say "    those of this machine's disk, which may well be too fast for prefetch to matter"
	dev=$(pf_loop "$img_dir/img" --direct-io=on)
	pf_mount "$dev" "$fs" -o ro
	disk="plain loop device $dev (wall clock)"
	T0=0
	reset() { T0=$(date +%s%N); }
	elapsed() { awk -v d=$(($(date +%s%N) - T0)) 'BEGIN { printf "%.6f\n", d / 1e9 }'; }
fi

say "==> tracing a scripted boot (reads $(wc -l <"$wl") files in the real boot's order)"
sim_trace_workload "$fs" "$wl" "$work/trace" "$work"
sed 's/^/    /' "$work/trace.out"

say "==> aggregating the trace into a layout"
"$PREFETCHD" aggregate --output "$work/layout" "$work/trace" | sed 's/^/    /' || pf_fail "aggregate"

say "==> cold boot read without prefetch"
pf_drop_caches
reset
"$WLRUN" -q -C "$fs" "$wl" >/dev/null || pf_fail "boot read"
cold=$(elapsed)

say "==> cold boot read after prefetchd replay"
pf_drop_caches
reset
"$PREFETCHD" replay "$work/layout" | sed 's/^/    /' || pf_fail "replay"
replay=$(elapsed)
reset
"$WLRUN" -q -C "$fs" "$wl" >/dev/null || pf_fail "boot read"
after=$(elapsed)

awk -v c="$cold" -v r="$replay" -v a="$after" -v disk="$disk" -v mib="$(awk -F'\t' '{ s += $1 } END { printf "%.1f", s / 1048576 }' "$wl")" 'BEGIN {
	printf "\n  Reading the boot'"'"'s %s MiB on a %s\n", mib, disk
	printf "    without prefetch            %7.2f s\n", c
	printf "    prefetch (replay, sorted)   %7.2f s\n", r
	printf "    boot read after prefetch    %7.2f s\n", a
	printf "    prefetch + boot read        %7.2f s   (%.1fx faster than without)\n\n", r + a, c / (r + a > 0 ? r + a : 1)
}'
[ $sim = 1 ] && say "The times are the simulated disk's busy time (prefetchd's own summary line shows this machine's clock)."
say "Everything made for the demo is removed on exit.  The full benchmark: make bench (results/PREFETCH-BENCH.md)."
