#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Prefetch benchmark on simulated flash (issue #17): the cold read of a real boot's file set (tests/mkbootset.sh)
# on each flash model of lib/disk_model.h (simdisk --model sd|ssd), in count mode (the models' sums: exact), with
#   none        no prefetch: the workload alone, cold
#   parallel    prefetchd replay --medium fast-flash: REPLAY_THREADS (4) readers in first-touch order, then the
#               workload (what every non-rotational disk got before the flash classes)
#   slow-flash  prefetchd replay --medium slow-flash: metadata pass, merged ranges in first-touch order, two
#               readers, then the workload
#   limit       the medium's limit for what the boot reads from the disk (the none case's reads, overlaps
#               counted once): bytes / rate + the fewest requests those bytes allow (their runs of adjacent
#               bytes, each cut at the largest request the device was sent) * the per-request cost
# The layout comes from the real pipeline: prefetchd trace while the workload runs cold (on the sd model),
# prefetchd aggregate.  Time = disk time of the replay and the workload together.  The replay's CPU (user +
# system seconds of prefetchd replay) is measured too: what fast flash asks of the replay is to be cheap.
#
# Environment: RUNS (3) runs per case and model; MODELS ("sd ssd"); SCALE (1); RATIO (8); SEED (1); TRACES (3).
# Needs root, /dev/fuse, the default build, tools and build/simdisk (make -C tests/simdisk).
set -u -o pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${BENCH_PRIVATE_NS:-}" ] && command -v unshare >/dev/null; then # see bench-prefetch.sh
	BENCH_PRIVATE_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
RUNS=${RUNS:-3} MODELS=${MODELS:-sd ssd} SCALE=${SCALE:-1} RATIO=${RATIO:-8} SEED=${SEED:-1} TRACES=${TRACES:-3}
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
for b in "$PREFETCHD" "$WLRUN" "$TOOLS/mkbootset"; do [ -x "$b" ] || pf_fail "$b missing (make all tools; make -C tests/simdisk)"; done

sim_build_bootset "$SCALE" "$RATIO" "$SEED"
tmp=$SIM_BOOTSET_DIR
work=$(pf_tmpdir)
wl=$tmp/img.workload
fs=$work/fs

# One case, cold; prints "seconds replay_seconds requests replay_requests replay_cpu_s".
run_case() {
	local c=$1 rs=0 rq=0 cpu=0
	pf_drop_caches
	sim_reset
	if [ "$c" != none ]; then
		local TIMEFORMAT='%U %S'
		{ time "$PREFETCHD" replay --medium "$c" "$work/layout" >"$work/replay.out"; } 2>"$work/cpu" ||
			pf_fail "replay ($c)"
		cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$work/cpu")
		rs=$(sim_seconds) rq=$(sim_stat requests)
	fi
	"$WLRUN" -q -C "$fs" "$wl" >/dev/null || pf_fail "workload ($c)"
	echo "$(sim_seconds) $rs $(sim_stat requests) $rq $cpu"
}

# The limit of the none case's reads (request log "R offset length ..."): prints "seconds bytes requests".
limit_of() {
	sort -n -k2,2 "$1" | awk -v per="$(sim_stat request_ns)" -v rate="$(sim_stat rate)" '
		$1 == "R" { if ($3 > big) big = $3
			s = $2; e = $2 + $3
			if (n && s <= end) { if (e > end) end = e; next }
			if (n) run[n] = end - start
			n++; start = s; end = e }
		END { run[n] = end - start
			for (i = 1; i <= n; i++) { bytes += run[i]; req += int((run[i] + big - 1) / big) }
			printf "%.6f %d %d\n", bytes / rate + req * per / 1e9, bytes, req }'
}

log=$work/runs
: >"$log"
traced=''
for model in $MODELS; do
	SIM_MODEL=$model
	sim_start "$tmp/img" count
	sim_mount "$fs"
	echo "$model $(sim_describe)" >>"$work/describe"
	if [ -z "$traced" ]; then # the layout, from traces of the cold workload
		traces=()
		for ((t = 1; t <= TRACES; t++)); do
			sim_trace_workload "$fs" "$wl" "$work/trace$t" "$work"
			traces+=("$work/trace$t")
		done
		"$PREFETCHD" aggregate --max-mb 0 --max-files 0 --output "$work/layout" "${traces[@]}" | sed 's/^/-- /' ||
			pf_fail "aggregate"
		traced=1
	fi
	# the limit, from one cold run's requests
	pf_drop_caches
	sim_reset
	sim_log "$work/none.log"
	"$WLRUN" -q -C "$fs" "$wl" >/dev/null || pf_fail "workload (limit)"
	sim_log off
	echo "$model limit $(limit_of "$work/none.log")" >>"$work/limits"
	for ((r = 1; r <= RUNS; r++)); do
		for c in none fast-flash slow-flash; do
			echo "$model $r $c $(run_case "$c")" >>"$log"
		done
	done
	sim_stop
done

# ---- report ----
reads=$(wc -l <"$wl")
mib=$(awk -F'\t' '{ s += $1 } END { printf "%.1f", s / 1048576 }' "$wl")
echo
echo "Image: tests/mkbootset.sh --scale $SCALE --ratio $RATIO --seed $SEED ($(($(stat -c %s "$tmp/img") >> 20)) MiB ext4, mounted ro)"
echo "Workload: $reads files, $mib MiB (real Debian 12 boot reads, in boot order); layout from $TRACES traces"
sed 's/^/Disk: /' "$work/describe"
echo "Code: tree at $(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown)"
echo "Machine: $(nproc) CPUs, $(uname -r), load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Count mode, $RUNS runs per case (the figures of a case vary only with the readers' interleaving)."
echo
echo "| model | case | avg s | min | max | of which replay s | requests | of which replay | replay CPU s | vs none | vs limit |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
awk '
	FNR == NR { lim[$1] = $3; lbytes[$1] = $4; lreq[$1] = $5; next }
	{ k = $1 SUBSEP $3; if (!(k in n)) order[++no] = k
	  n[k]++; s[k] += $4; rp[k] += $5; rq[k] += $6; rr[k] += $7; cpu[k] += $8
	  if (!(k in mn) || $4 < mn[k]) mn[k] = $4; if (!(k in mx) || $4 > mx[k]) mx[k] = $4 }
	END {
		for (i = 1; i <= no; i++) {
			k = order[i]; split(k, a, SUBSEP); m = a[1]; c = a[2]; avg = s[k] / n[k]
			none = s[m SUBSEP "none"] / n[m SUBSEP "none"]
			printf "| %s | %s | %.3f | %.3f | %.3f | %.3f | %d | %d | %s | %.2fx | %.2fx |\n", m, c, avg, mn[k], mx[k],
				rp[k] / n[k], rq[k] / n[k], rr[k] / n[k], c == "none" ? "-" : sprintf("%.3f", cpu[k] / n[k]),
				none / avg, avg / lim[m]
			if (c == "slow-flash")
				printf "| %s | limit | %.3f | | | | %d | | | %.2fx | 1.00x |\n", m, lim[m], lreq[m], none / lim[m]
		}
	}' "$work/limits" "$log"
echo
awk '{ printf "Limit on %s: %.1f MiB read by the boot in %d requests at least\n", $1, $4 / 1048576, $5 }' "$work/limits"
[ -f "$work/replay.out" ] && echo "Last replay: $(tail -1 "$work/replay.out")"
