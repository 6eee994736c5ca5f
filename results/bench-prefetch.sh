#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Prefetch benchmark on the simulated spinning disk (tests/simdisk): the cold read of a real boot's file set
# (tests/mkbootset.sh: Debian 12 boot, scattered on an aged ext4 image) with
#   none      no prefetch: the workload alone, cold
#   access    prefetchd replay in access (first-touch) order, one reader, then the workload
#   physical  prefetchd replay for a rotational disk (metadata pass, then physical-block order), then the workload
#   warm      the workload with everything already cached
# The layout comes from the real pipeline: prefetchd trace while the workload runs cold, prefetchd aggregate.
# Time = disk time of everything the case does (replay + workload), serialized on the one disk: in count mode
# the model's sum (exact), in sleep mode the measured wall time.  Ratios are against "none" of the same run.
#
# Environment: RUNS (5) count-mode runs per case; SLEEP_RUNS (2) sleep-mode runs per case (0 = none);
# SCALE (1) boot set copies; RATIO (8) other data per boot data; SEED (1); TRACES (3) traces aggregated;
# SIM_SCHED (none); KEEP_LOG=FILE keeps the per-run figures (bench-prefetch.sh --table FILE prints their
# table again).  Needs root, /dev/fuse, the default build, tools and build/simdisk (make -C tests/simdisk).
set -u -o pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
# table LOG: the markdown table of a log of runs ("mode run case seconds replay_seconds requests seeks").
table() {
	echo "| mode | case | N | avg s | stddev | min | median | max | of which replay s | requests | seeks | speedup vs none |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	awk '
		{ k = $1 SUBSEP $3; n[k]++; s[k] += $4; ss[k] += $4 * $4; rp[k] += $5; rq[k] += $6; sk[k] += $7
		  if (!(k in mn) || $4 < mn[k]) mn[k] = $4; if (!(k in mx) || $4 > mx[k]) mx[k] = $4
		  t[$1 SUBSEP $2 SUBSEP $3] = $4 }
		END {
			nc = split(cases, cl, " ")
			for (i = 1; i <= 2 * nc; i++) {
				m = i <= nc ? "count" : "sleep"; c = cl[(i - 1) % nc + 1]; k = m SUBSEP c
				if (!(k in n)) continue
				avg = s[k] / n[k]; var = n[k] > 1 ? (ss[k] - n[k] * avg * avg) / (n[k] - 1) : 0
				# speedup: mean over runs of none/case, both from the same run
				sp = 0; np = 0
				for (r = 1; r <= n[k]; r++) if (t[m, r, c] > 0 && (m SUBSEP r SUBSEP "none") in t) {
					sp += t[m, r, "none"] / t[m, r, c]; np++ }
				# median
				nv = 0; for (r = 1; r <= n[k]; r++) if ((m SUBSEP r SUBSEP c) in t) v[++nv] = t[m, r, c]
				for (a = 2; a <= nv; a++) for (b = a; b > 1 && v[b - 1] > v[b]; b--) { x = v[b]; v[b] = v[b - 1]; v[b - 1] = x }
				med = nv % 2 ? v[(nv + 1) / 2] : (v[nv / 2] + v[nv / 2 + 1]) / 2
				printf "| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %d | %d | %s |\n", m, c, n[k], avg,
					sqrt(var > 0 ? var : 0), mn[k], med, mx[k], rp[k] / n[k], rq[k] / n[k], sk[k] / n[k],
					np ? sprintf("%.2fx", sp / np) : (c == "warm" ? "(no disk I/O)" : "-")
			}
		}' cases="none access physical warm" "$1"
}
if [ "${1:-}" = --table ] && [ $# -eq 2 ]; then # re-render a kept log
	table "$2"
	exit
fi
# In a mount namespace of its own: a tracer or scanner elsewhere on this machine that walks every mounted
# file system would otherwise read ours in the middle of a run.
if [ -z "${BENCH_PRIVATE_NS:-}" ] && command -v unshare >/dev/null; then
	BENCH_PRIVATE_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
RUNS=${RUNS:-5} SLEEP_RUNS=${SLEEP_RUNS:-2} SCALE=${SCALE:-1} RATIO=${RATIO:-8} SEED=${SEED:-1} TRACES=${TRACES:-3}
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
for b in "$PREFETCHD" "$WLRUN" "$TOOLS/mkbootset"; do [ -x "$b" ] || pf_fail "$b missing (make all tools; make -C tests/simdisk)"; done

# Which replay orders this prefetchd can do (the replay command may not exist yet).
cases=(none)
if "$PREFETCHD" replay --help >/dev/null 2>&1; then
	cases+=(access physical)
else
	pf_note "prefetchd replay not available: measuring the baseline only"
fi
cases+=(warm)
REPLAY_ACCESS=(--medium ssd --threads 1)
REPLAY_PHYSICAL=(--medium rotational)

sim_build_bootset "$SCALE" "$RATIO" "$SEED"
tmp=$SIM_BOOTSET_DIR
work=$(pf_tmpdir)
wl=$tmp/img.workload
sim_start "$tmp/img" count
fs=$work/fs
sim_mount "$fs"
describe=$(sim_describe)

# ---- the layout, from traces of the cold workload ----
if [ ${#cases[@]} -gt 2 ]; then
	traces=()
	for ((t = 1; t <= TRACES; t++)); do
		sim_trace_workload "$fs" "$wl" "$work/trace$t" "$work"
		traces+=("$work/trace$t")
	done
	pf_note "$(cat "$work/trace.out")"
	"$PREFETCHD" aggregate --max-mb 0 --max-files 0 --output "$work/layout" "${traces[@]}" | sed 's/^/-- /' ||
		pf_fail "aggregate"
fi

# Dropping slab counts too: an inode evicted from the inode cache takes its cached pages with it.

# One case, cold unless warm; prints "seconds replay_seconds requests seeks".  Others on this machine drop
# caches too (every test does): a case during which somebody else did is measured again (up to 5 times).
run_case() {
	local c=$1 t0 t1 rs try d0 rt=()
	# Sleep mode: the measured programs at real-time priority too, so that other users of a shared machine
	# delay them less (the loop device's kernel workers still compete).
	[ "$(sim_stat mode)" = sleep ] && chrt -f 40 true 2>/dev/null && rt=(chrt -f 40)
	for ((try = 1; try <= 5; try++)); do
		rs=0
		pf_drop_caches
		d0=$(pf_cache_drops slab)
		if [ "$c" = warm ]; then # filling the cache is not measured: in count mode, it is quick
			local mode; mode=$(sim_stat mode)
			sim_ctl mode count
			"$WLRUN" -q -C "$fs" "$wl" >/dev/null
			sim_ctl mode "$mode"
		fi
		sim_reset
		t0=$(date +%s%N)
		case $c in
		access) "${rt[@]}" "$PREFETCHD" replay "${REPLAY_ACCESS[@]}" "$work/layout" >"$work/replay.out" || pf_fail "replay ($c)" ;;
		physical) "${rt[@]}" "$PREFETCHD" replay "${REPLAY_PHYSICAL[@]}" "$work/layout" >"$work/replay.out" || pf_fail "replay ($c)" ;;
		esac
		case $c in access | physical) rs=$(sim_seconds) ;; esac
		"${rt[@]}" "$WLRUN" -q -C "$fs" "$wl" >"$work/wl.out" || pf_fail "workload ($c)"
		t1=$(date +%s%N)
		[ "$(pf_cache_drops slab)" = "$d0" ] && break
		echo "$c: caches dropped by someone else during the run, again" >&2
	done
	local secs
	if [ "$(sim_stat mode)" = sleep ]; then
		secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.6f", d / 1e9 }')
	else
		secs=$(sim_seconds)
	fi
	echo "$secs $rs $(sim_stat requests) $(sim_stat seeks)"
}

log=${KEEP_LOG:-$work/runs}
: >"$log"
measure() { # MODE RUNS
	local mode=$1 n=$2 r c i
	[ "$n" -gt 0 ] || return 0
	sim_mode "$mode"
	for ((r = 1; r <= n; r++)); do
		# Rotate the case order from run to run so no case always follows the same one.
		for ((i = 0; i < ${#cases[@]}; i++)); do
			c=${cases[$(((i + r) % ${#cases[@]}))]}
			echo "$mode $r $c $(run_case "$c")" >>"$log"
		done
	done
	sim_mode count
}
pf_note "measuring: $RUNS count-mode runs, $SLEEP_RUNS sleep-mode runs of: ${cases[*]}"
measure count "$RUNS"
measure sleep "$SLEEP_RUNS"

# ---- report ----
reads=$(wc -l <"$wl")
mib=$(awk -F'\t' '{ s += $1 } END { printf "%.1f", s / 1048576 }' "$wl")
echo
echo "Image: tests/mkbootset.sh --scale $SCALE --ratio $RATIO --seed $SEED ($(($(stat -c %s "$tmp/img") >> 20)) MiB ext4, mounted ro)"
echo "Workload: $reads files, $mib MiB (real Debian 12 boot reads, in boot order); layout from $TRACES traces"
echo "Disk: $describe"
echo "Code: tree at $(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown), $PREFETCHD built $(date -u -r "$PREFETCHD" '+%F %T UTC')"
echo "Machine: $(nproc) CPUs, $(uname -r), load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Data alone at 100 MB/s: $(awk -F'\t' '{ s += $1 } END { printf "%.3f", s / 100e6 }' "$wl") s"
[ -f "$work/replay.out" ] && echo "Last replay: $(tail -1 "$work/replay.out")"
echo
table "$log"
