#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Do tracepoint traces record every page the boot read?  (results/LAYOUT-TRIM.md, "Pages read without an event")
#
# One mkbootset image (--fill FILL: aged, fragmented files; default 90) on the simulated disk in count mode,
# traced RUNS times with `prefetchd trace` while `wlrun -r` (readahead on) reads the boot set, alternating the
# prefetchd under test with OLD (another build, e.g. from the commit before; optional), then once with
# PREFETCH_TRACE_PAGES=mincore.  Per trace: the bytes recorded (files and directories), the page events and the
# summary's "bytes read without an event".  wlrun reads every file from offset 0, so a file whose first range
# starts later lost its first pages: those are listed, with how many of them were still resident.
# Environment: FILL (90), RUNS (6), OLD (path of another prefetchd), SEED (1), RATIO (8).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
pf_private_mount_ns "$@"
FILL=${FILL:-90} RUNS=${RUNS:-6} OLD=${OLD:-} SEED=${SEED:-1} RATIO=${RATIO:-8}
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
for b in "$PREFETCHD" "$WLRUN" "$TOOLS/pf_mincore" ${OLD:+"$OLD"}; do
	[ -x "$b" ] || pf_fail "$b missing (make all tools; make -C tests/simdisk)"
done
tmp=$(sim_tmpfs_dir 1400)
work=$(pf_tmpdir)
mkdir -p "$work/new" "$work/old" && cp "$PREFETCHD" "$work/new/prefetchd" && cp "$WLRUN" "$work/" &&
	{ [ -z "$OLD" ] || cp "$OLD" "$work/old/prefetchd"; } || pf_fail "copying the programs"
WLRUN=$work/wlrun
img=$tmp/boot.img
"$TOP/tests/mkbootset.sh" --ratio "$RATIO" --seed "$SEED" --fill "$FILL" "$img" >/dev/null || pf_fail "mkbootset"
cp "$img.workload" "$work/wl" || pf_fail "the workload"
fs=$work/fs
sim_start "$img" count
sim_mount "$fs"
echo "## bench-trace-holes.sh ($(date -u +%Y-%m-%d), $(git -C "$TOP" rev-parse --short HEAD), fill $FILL, seed $SEED, ratio $RATIO, kernel $(uname -r))"
echo
echo "| trace | prefetchd | recorded (MB) | page events | bytes filled | files starting past 0 (resident/total pages before) |"
echo "|---|---|---:|---:|---:|---|"
cases=()
for ((i = 1; i <= RUNS; i++)); do
	[ -n "$OLD" ] && cases+=("old:$i")
	cases+=("new:$i")
done
cases+=("mincore:-")
for c in "${cases[@]}"; do
	who=${c%%:*} mode=auto bin=$work/new/prefetchd
	[ "$who" = old ] && bin=$work/old/prefetchd
	[ "$who" = mincore ] && mode=mincore
	PREFETCHD=$bin PREFETCH_TRACE_PAGES=$mode SIM_WL_OPT=-r sim_trace_workload "$fs" "$work/wl" "$work/t" "$work"
	"$bin" dump "$work/t" >"$work/d" || pf_fail "dump"
	late=$(awk -F'\t' '!/^#/ && !($1 in seen) { seen[$1] = 1; if ($2 != 0) print $1, $2 }' "$work/d" |
		while read -r f o; do
			printf '%s %s; ' "${f##*/}@$o" "$("$TOOLS/pf_mincore" "$f" 0 "$o" | tr ' ' /)"
		done)
	ev=$(sed -n 's/.*(\([0-9]*\) page events.*/\1/p' "$work/trace.out")
	filled=$(sed -n 's/.*, \([0-9]*\) bytes read without an event.*/\1/p' "$work/trace.out")
	printf '| %s | %s | %s | %s | %s | %s |\n' "${c#*:}" "$who" \
		"$(awk -F'\t' '!/^#/ { s += $3 } END { printf "%.3f", s / 1e6 }' "$work/d")" "${ev:--}" "${filled:--}" "${late:--}"
done
sim_umount
sim_stop
