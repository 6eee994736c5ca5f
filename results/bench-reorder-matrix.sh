#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The reorder must never make a boot slower (issue #13): a matrix of boot traces x image builders on the
# simulated 7200 rpm disk in count mode (model seconds summed per request: exact, one run per case).
#
# Traces: tests/data/debian12-boot/bootN.tsv.  Builders (tests/mkbootset.sh, seed SEED, SIZE MiB):
#   plain    mkbootset's aged image: the boot files scattered among 8 times as much other data (--ratio 8)
#   package  package-install order: boot files in path order with siblings between them (--package-order
#            --ratio 2), 30 % of the siblings deleted
#   fresh    a fresh install: the boot files alone, written in path order, no ageing (--fresh)
#   aged90   90 % full, heavily aged: mkaged's churn, then the boot set with twice its data among the holes
#            (--fill 90 --ratio 2)
# Each cell: the layout learnt by the daemon (`prefetchd trace` while wlrun replays the boot's reads, then
# `prefetchd aggregate`); cold boots: none, replay; then ROUNDS reorders, each forced (--min-gain off) so that
# "after" can be measured, its default decision read first from a --dry-run; after each, the replay measured
# against the --check prediction; after round 1 also the boot without replay.  Before round K > 1 the boot is
# traced again on the reordered image and all traces so far aggregated again (the daemon's way), and the replay
# of that layout measured before the reorder against the dry run's prediction.
# Limits: "limit" = the layout's data blocks / the disk's rate; "limit+meta" adds one metadata sweep: the
# replay's metadata pass as the model predicts it (the cheaper of now and after the plan: inode tables do not move);
# "free-space limit": the data in the largest free extents (before round 1) read in one sweep, + that metadata
# sweep: what a reorder that moves nothing but the set can reach (free_estimate).
# Verdicts per cell (PASS/FAIL lines; the default decisions rule: where the gate refuses, the boot replays the layout
# on the image as it was):
#   never-worse             each reorder the default runs: reorder + replay <= the same layout's replay just
#                           before it (1 ms of slack)
#   never-worse-than-first  the boot as the default leaves it, every round, <= the first replay (round 1's)
#   near-limit              where the default reorder ran: reorder + replay <= 1.25 x limit+meta (each such round)
#   replay-limit            package only: replay alone (round 1, before any reorder) <= 1.3 x limit+meta
#   prediction              every predicted replay within 10 % of the replay alone as measured (before and after)
# A boot with a replay is measured twice: the replay alone (its requests counted once the disk is idle) and the
# boot's reads after it; when those cost more than 20 ms (after a full replay they should cost nothing) the boot is
# run again, up to 3 times, and the cheapest kept: another process on this machine may have dropped the caches.
#
# Environment: TRACES ("boot1 boot2 boot3"), BUILDERS ("plain package fresh aged90"), ROUNDS (3), SEED (1),
# SIZE (1024), JOBS (1: cells at once; count mode's figures do not depend on it), OUT=FILE (the report there too),
# KEEP=DIR (each cell's logs, traces and layouts kept there).  PREFETCH_TRACE_PAGES=mincore (prefetchd's) traces
# the page ranges by residency instead of the page-cache tracepoints.  Exit: 0 all cells PASS, 1 a cell FAILs or could not be set up.
# Internal: --cell TRACE BUILDER RESULT runs one cell and writes "key value" lines to RESULT.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
pf_private_mount_ns "$@"

TRACES=${TRACES:-boot1 boot2 boot3} BUILDERS=${BUILDERS:-plain package fresh aged90} ROUNDS=${ROUNDS:-3}
SEED=${SEED:-1} SIZE=${SIZE:-1024} JOBS=${JOBS:-1}

builder_args() {
	case $1 in
	plain) echo --ratio 8 ;;
	package) echo --package-order --ratio 2 ;;
	fresh) echo --fresh ;;
	aged90) echo --fill 90 --ratio 2 ;;
	*) return 1 ;;
	esac
}

# free_estimate BLOCKS: seconds to read BLOCKS placed in the largest free extents of $work/free (largest first),
# in one forward sweep on the disk model (lib/disk_model.h: a gap read through while that is cheaper than a
# seek of 1 ms + 14 ms * sqrt(distance / span) + 4.17 ms), without metadata: what the free space allows a
# reorder that moves nothing else.
free_estimate() {
	sort -k2,2nr "$work/free" | awk -v need="$1" '{ if (got < need) { print; got += $2 } }' | sort -n |
		awk -v need="$1" -v bs="$bs" -v rate="$rate" -v span="$(($(sim_stat span) / bs))" '
		{ len = $2; if (got + len > need) len = need - got; got += len
		  if (NR > 1) { g = $1 - pe; sk = 0.001 + 0.014 * sqrt(g / span) + 0.00417; t += (g * bs / rate < sk ? g * bs / rate : sk) }
		  t += len * bs / rate; pe = $1 + len }
		END { printf "%.3f %d\n", t, NR }'
}

# ---- one cell (a process of its own: its mounts, loop device and FUSE disk are cleaned up when it exits) ----
cell() {
	local trace=$1 builder=$2 res=$3 tmp work fs img wl k bs rate
	tmp=$(sim_tmpfs_dir $((SIZE + 64))) || pf_fail "no tmpfs room"
	work=$(pf_tmpdir)
	fs=$work/fs img=$tmp/img wl=$work/workload
	# Private copies of the programs: the figures belong to one build even if the tree is rebuilt meanwhile.
	mkdir -p "$work/bin" && cp "$PREFETCHD" "$REORDER" "$WLRUN" "$work/bin/" || pf_fail "copying the programs"
	PREFETCHD=$work/bin/prefetchd REORDER=$work/bin/prefetch-reorder WLRUN=$work/bin/wlrun
	# shellcheck disable=SC2046
	"$TOP/tests/mkbootset.sh" $(builder_args "$builder") --tsv "$TOP/tests/data/debian12-boot/$trace.tsv" \
		--seed "$SEED" --size "$SIZE" "$img" >"$work/build.out" 2>&1 || pf_fail "mkbootset: $(tail -3 "$work/build.out")"
	cp "$img.workload" "$wl"
	bs=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '$1 == "Block size" { print $2 + 0 }')
	{
		echo "built $(grep -h '^mkbootset' "$work/build.out" | sed 's|^mkbootset.sh: [^:]*: ||' | tr '\n' ' ')"
		echo "bs $bs"
	} >"$res"
	# the free extents before any reorder, "start length" (blocks), for the free-space estimate of round 1
	dumpe2fs "$img" 2>/dev/null | awk '/^  Free blocks: / { sub(/^  Free blocks: /, ""); n = split($0, r, ", ")
		for (i = 1; i <= n; i++) { m = split(r[i], ab, "-"); a = ab[1]; e = m == 2 ? ab[2] : a
			if (c && a == pe + 1) len[c] += e - a + 1; else { c++; st[c] = a; len[c] = e - a + 1 }; pe = e } }
		END { for (i = 1; i <= c; i++) print st[i], len[i] }' >"$work/free"
	sim_start "$img" count
	rate=$(sim_stat rate)
	echo "describe $(sim_describe)" >>"$res"
	sim_mount "$fs"
	local traces=() t0 out
	learn() { # K: trace the boot, aggregate every trace so far into layout K
		pf_drop_caches
		sim_trace_workload "$fs" "$wl" "$work/trace$1" "$work"
		traces+=("$work/trace$1")
		"$PREFETCHD" aggregate --output "$work/layout$1" "${traces[@]}" >"$work/aggregate$1.out" ||
			pf_fail "aggregate: $(tail -2 "$work/aggregate$1.out")"
		echo "layout$1 $(tail -1 "$work/aggregate$1.out")" >>"$res"
	}
	boot() { # NAME [LAYOUT]: one cold boot, its figures as NAME's line (+ the tries it took)
		local try best='' t
		for ((try = 1; try <= 3; try++)); do
			out=$(sim_cold_boot "$fs" "$wl" ${2:+"$2"}) && [ -n "$out" ] || pf_fail "cold boot $1"
			[ -n "$best" ] && [ "$(awk -v a="$out" -v b="$best" 'BEGIN { split(a, x); split(b, y); print (x[1] < y[1]) }')" = 0 ] || best=$out
			# After a replay the boot reads (nearly) nothing more: when it does, another process on this
			# machine may have dropped the caches in between; the same boot again tells (the least is kept).
			[ -n "${2:-}" ] && t=$(awk -v a="$best" 'BEGIN { split(a, x); print (x[1] - x[2] > 0.02) }') && [ "$t" = 1 ] || break
		done
		echo "$1 $best $((try > 3 ? 3 : try))" >>"$res"
	}
	learn 1
	boot none
	for ((k = 1; k <= ROUNDS; k++)); do
		t0=$(date +%s.%N)
		[ "$k" = 1 ] || learn "$k"
		boot "before$k" "$work/layout$k"
		sim_umount
		pf_drop_caches
		local o=$work/dry$k.out
		sim_reorder "$o" --dry-run --layout "$work/layout$k" || pf_fail "dry run $k: $(tail -2 "$o")"
		{
			echo "pred$k $(sim_reorder_predicted "$o")"
			awk -v k="$k" '$1 == "blocks" { print "blocks" k, $2, $3 }
				$1 == "replay:" && $2 == "metadata" && $3 == "pass" { sub("s", "", $4); sub("s", "", $5); print "meta" k, $4, $5 }
				$1 == "replay:" && $2 == "metadata" && $3 == "blocks" { print "metablocks" k, $4, $5 }' "$o"
			echo "decision$k $(grep -m1 'predicted gain of the plan' "$o" | sed 's/^predicted gain of the plan for the next replay: /gain /')"
			echo "wouldmove$k $(grep -o 'would move [0-9]* of' "$o" | awk '{ print $3 }')"
			[ "$k" != 1 ] || echo "fsest1 $(free_estimate "$(awk '$1 == "blocks" { print $2; exit }' "$o")")"
		} >>"$res"
		o=$work/reorder$k.out
		sim_reset
		sim_reorder "$o" --min-gain off --layout "$work/layout$k" || pf_fail "reorder $k: $(tail -2 "$o")"
		echo "moved$k $(grep -o 'moved [0-9]* blocks' "$o" | awk '{ print $2 }' | grep . || echo 0) $(sim_seconds)" >>"$res"
		echo "said$k $(grep -m1 -E 'nothing to move|moved [0-9]+ blocks' "$o")" >>"$res"
		pf_drop_caches
		o=$work/check$k.out
		sim_reorder "$o" --check --layout "$work/layout$k" || pf_fail "check $k: $(tail -2 "$o")"
		echo "check$k $(sim_reorder_predicted "$o")" >>"$res"
		e2fsck -fn "$SIM_DEV" >"$work/fsck$k.out" 2>&1 || pf_fail "e2fsck -fn after reorder $k: $(tail -3 "$work/fsck$k.out")"
		sim_mount "$fs"
		[ "$k" != 1 ] || boot anone
		boot "after$k" "$work/layout$k"
		echo "secs$k $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" >>"$res"
	done
	sim_umount
	echo "rate $rate" >>"$res"
	[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP/$trace-$builder" && cp "$work"/*.out "$work"/trace[0-9]* "$work"/layout[0-9]* "$res" "$KEEP/$trace-$builder/"; }
	echo "ok 1" >>"$res"
}

if [ "${1:-}" = --cell ]; then
	cell "$2" "$3" "$4"
	exit 0
fi

# ---- the matrix ----
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
for b in "$PREFETCHD" "$REORDER" "$WLRUN" "$TOOLS/mkbootset" "$TOOLS/mkaged"; do
	[ -x "$b" ] || pf_fail "$b missing (make all tools; make -C tests/simdisk)"
done
for b in $BUILDERS; do builder_args "$b" >/dev/null || pf_fail "BUILDERS: unknown builder $b"; done
for t in $TRACES; do [ -f "$TOP/tests/data/debian12-boot/$t.tsv" ] || pf_fail "TRACES: no $t.tsv"; done
[ "$ROUNDS" -ge 1 ] 2>/dev/null || pf_fail "ROUNDS=$ROUNDS"
results=$(pf_tmpdir)
started=$(date +%s)
cells=()
for t in $TRACES; do for b in $BUILDERS; do cells+=("$t $b"); done; done
running=0
for c in "${cells[@]}"; do
	read -r t b <<<"$c"
	if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
	pf_note "cell $t x $b"
	( PF_PRIVATE_MNT_NS=1 bash "$0" --cell "$t" "$b" "$results/$t-$b" >"$results/$t-$b.log" 2>&1 ||
		echo "cell $t x $b failed: $(grep -m1 FAIL "$results/$t-$b.log")" >&2 ) &
	running=$((running + 1))
done
wait
elapsed=$(($(date +%s) - started))

# ---- report ----
# cell_awk MODE TRACE BUILDER RESULT: one cell's "key value" lines in; out its table row (row1), rows of rounds
# 2.. (rows), what each round said (details), or verdict lines (verdicts; exit 1 if one fails).  A boot's line: total_s replay_s requests seeks tries.
cell_awk() {
	awk -v mode="$1" -v t="$2" -v b="$3" -v rounds="$ROUNDS" '
		{ k = $1; $1 = ""; v[k] = substr($0, 2) }
		function f(k, n,   a) { split(v[k], a, " "); return a[n] }
		function gate(k) { return v["decision" k] ~ /not worth/ ? "refuses" : (f("wouldmove" k, 1) + 0 > 0 ? "moves" : "nothing") }
		function lim(k) { return f("blocks" k, 1) * v["bs"] / v["rate"] }
		function meta(k,   m) { m = f("meta" k, 1); if (f("meta" k, 2) < m) m = f("meta" k, 2); return m }
		function limm(k) { return lim(k) + meta(k) }
		function fslim() { return f("fsest1", 1) + meta(1) }
		# the boot as the default decisions leave it: the reorder ran (after), or the layout replayed on the
		# image as it was (before)
		function eff(k) { return gate(k) == "moves" ? f("after" k, 1) : f("before" k, 1) }
		function err(p, m) { return m > 0 ? (p - m) / m * 100 : 0 }
		function abs(x) { return x < 0 ? -x : x }
		function verdict(name, ok, why) { printf "%s x %s: %s %s (%s)\n", t, b, ok ? "PASS" : "FAIL", name, why; if (!ok) fail = 1 }
		END {
			if (mode == "row1") {
				printf "| %s | %s | %.3f | %.3f / %.3f / %.3f | %.3f | %.3f / %.3f / %.3f | %.3f | %.3f | %.3f (%d) | %d | %s | %.2fx |\n", t, b,
					f("none", 1), f("before1", 1), f("before1", 2), f("pred1", 1), f("anone", 1),
					f("after1", 1), f("after1", 2), f("check1", 1), lim(1), limm(1), fslim(), f("fsest1", 2),
					f("moved1", 1), gate(1), eff(1) / limm(1)
				exit 0
			}
			if (mode == "details") {
				printf "- %s x %s: %s\n", t, b, v["built"]
				for (k = 1; k <= rounds; k++)
					if (v["decision" k] != "") {
						s = v["said" k]; sub(/^prefetch-reorder: /, "", s)
						printf "  - round %d: %s; forced: %s (%.3f s); bench %s s\n", k, v["decision" k], s, f("moved" k, 2), v["secs" k]
					}
				exit 0
			}
			if (mode == "rows") {
				for (k = 2; k <= rounds; k++)
					printf "| %s | %s | %d | %d | %.3f / %.3f / %.3f | %s | %d | %.3f / %.3f / %.3f | %.3f | %.2fx |\n", t, b, k,
						f("blocks" k, 1), f("before" k, 1), f("before" k, 2), f("pred" k, 1), gate(k), f("moved" k, 1),
						f("after" k, 1), f("after" k, 2), f("check" k, 1), eff(k), eff(k) / limm(k)
				exit 0
			}
			rep = f("before1", 1)
			# never worse: each reorder the default runs leaves the boot no slower than the same layout
			# replayed before it; and the boot as the default path leaves it, round after round, no slower
			# than the first replay (a round the gate refused but the bench forced changes the image the
			# next round starts from: marked "forced before")
			ok = 1; why = ""; forced = 0
			for (k = 1; k <= rounds; k++) {
				if (gate(k) == "moves") {
					why = why sprintf("%sround %d %.3f -> %.3f", why == "" ? "" : ", ", k, f("before" k, 1), f("after" k, 1))
					if (f("after" k, 1) > f("before" k, 1) + 0.001) ok = 0
				}
			}
			verdict("never-worse", ok, why == "" ? "the default never moved" : "replay before -> after the reorder: " why)
			ok = 1; why = ""
			for (k = 1; k <= rounds; k++) {
				why = why sprintf("%sround %d %s%s %.3f", why == "" ? "" : ", ", k, forced ? "(forced before) " : "", gate(k), eff(k))
				if (eff(k) > rep + 0.001) ok = 0
				if (gate(k) == "refuses" && f("moved" k, 1) > 0) forced = 1
			}
			verdict("never-worse-than-first", ok, sprintf("first replay %.3f; %s", rep, why))
			ok = 1; why = ""
			for (k = 1; k <= rounds; k++)
				if (gate(k) == "moves") {
					why = why sprintf("%sround %d %.3f = %.2fx %.3f", why == "" ? "" : ", ", k, f("after" k, 1), f("after" k, 1) / limm(k), limm(k))
					if (f("after" k, 1) > 1.25 * limm(k)) ok = 0
				}
			verdict("near-limit", ok, why == "" ? "the default never moved" : sprintf("reorder + replay against limit+meta: %s; the free space allowed ~%.3f", why, fslim()))
			if (b == "package")
				verdict("replay-limit", rep <= 1.3 * limm(1), sprintf("replay %.3f = %.2fx limit+meta %.3f", rep, rep / limm(1), limm(1)))
			ok = 1; why = ""
			for (k = 1; k <= rounds; k++) {
				e1 = err(f("pred" k, 1), f("before" k, 2)); e2 = err(f("check" k, 1), f("after" k, 2))
				if (abs(e1) > 10 || abs(e2) > 10) ok = 0
				why = why sprintf("%sround %d %+.1f %% / %+.1f %%", why == "" ? "" : ", ", k, e1, e2)
			}
			verdict("prediction", ok, "predicted against the replay alone, before / after: " why)
			exit fail
		}' "$4"
}
ok_cell() { [ "$(awk '$1 == "ok" { print $2 }' "$1" 2>/dev/null)" = 1 ]; }
setup_error() { grep -m1 FAIL "$1.log" 2>/dev/null | cut -c1-160; }
# each_cell FN: FN TRACE BUILDER RESULT for every cell, in order
each_cell() { local c t b; for c in "${cells[@]}"; do read -r t b <<<"$c"; "$1" "$t" "$b" "$results/$t-$b"; done; }
row1() { if ok_cell "$3"; then cell_awk row1 "$@"; else echo "| $1 | $2 | setup failed: $(setup_error "$3") |"; fi; }
rows() { ! ok_cell "$3" || cell_awk rows "$@"; }
verdicts() { if ok_cell "$3"; then cell_awk verdicts "$@" || bad=1; else echo "$1 x $2: FAIL setup: $(setup_error "$3")"; bad=1; fi; }
details() { [ ! -f "$3" ] || cell_awk details "$@"; }
bad=0
report() {
	echo "## bench-reorder-matrix.sh ($(date -u +%Y-%m-%d), tree $(git -C "$TOP" describe --always --dirty 2>/dev/null || echo '?'), seed $SEED, $SIZE MiB, $ROUNDS rounds, ${elapsed} s)"
	echo
	echo "Seconds of model time, cold.  Each replay: boot + replay (the boot's reads after the replay included) / the replay"
	echo "alone / predicted (--dry-run before the reorder, --check after it).  gate: the dry run's default decision;"
	echo "eff.: the boot as the default leaves it (reorder + replay where it moves, else the replay), against limit+meta."
	echo "free-space limit: the layout's data in the largest free extents before the reorder, one sweep, + the metadata sweep."
	echo
	echo "| trace | image | none | replay | reorder, none | reorder + replay | limit | limit+meta | free-space limit (extents) | moved | gate | eff. |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
	each_cell row1
	if [ "$ROUNDS" -gt 1 ]; then
		echo
		echo "Re-traced and re-aggregated (round K: the boot traced on the image round K-1 left, all K traces aggregated):"
		echo
		echo "| trace | image | round | layout blocks | replay before | gate | moved | reorder + replay | eff. | eff. / limit+meta |"
		echo "|---|---|---:|---:|---:|---|---:|---:|---:|---:|"
		each_cell rows
	fi
	echo
	echo "Verdicts:"
	each_cell verdicts
	echo
	echo "Per cell (round K: the dry run's gain and decision; what the forced reorder said, its disk time; the bench's wall time):"
	each_cell details
	echo
	echo "Disk: $(awk '$1 == "describe" { $1 = ""; print substr($0, 2) }' "$results/${cells[0]/ /-}" 2>/dev/null)"
}
report >"$results/report.md" # not in a pipeline: report sets bad
cat "$results/report.md"
[ -z "${OUT:-}" ] || cp "$results/report.md" "$OUT" || pf_fail "writing $OUT"
exit $bad
