#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The reorder must never make a boot slower (issue #13): a matrix of boot traces x image builders on the
# simulated 7200 rpm disk in count mode (model seconds summed per request: exact, one run per case).
#
# Traces: tests/data/debian12-boot/bootN.tsv.  Builders (tests/mkbootset.sh, seed SEED, SIZE MiB):
#   plain    mkbootset's aged image: the boot files scattered among 8 times as much other data (--ratio 8)
#   package  package-install order: boot files in path order with siblings between them (--package-order
#            --ratio 2), 30 % of the siblings deleted
#   fresh    a fresh contiguous install: the boot files alone in path order, no ageing (--fresh)
#   aged90   90 % full, heavily aged: mkaged's churn, then the boot set with twice its data among the holes
#            (--fill 90 --ratio 2)
# Each cell: the layout learnt by the daemon (`prefetchd trace` while wlrun replays the boot's reads, then
# `prefetchd aggregate`); cold boots: none, replay; then ROUNDS reorders, each forced (--min-gain off) so that
# "after" can be measured, its default decision read first from a --dry-run; after each, the replay measured
# against the --check prediction; after round 1 also the boot without replay.  Before round K > 1 the boot is
# traced again on the reordered image and all traces so far aggregated again (the daemon's way), and the replay
# of that layout measured before the reorder against the dry run's prediction.
# Limits: "limit" = the layout's data blocks / the disk's rate; "limit+meta" adds one metadata sweep: the
# replay's metadata pass as the model predicts it (the cheaper of now and after the plan: inode tables do not move).
# Verdicts per cell (the default decision rules: where the gate refuses, reorder + replay = replay):
#   never-worse  every round's reorder + replay <= replay alone (1 ms of slack)
#   near-limit   where the default reorder ran: reorder + replay <= 1.25 x limit+meta (each such round)
#   replay-limit package only: replay alone <= 1.3 x limit+meta
#   prediction   every predicted replay within 10 % of the measured one (before and after each round)
# "replay" figures are the boot's reads plus the replay, cold (after a full replay the boot reads nothing more).
#
# Environment: TRACES ("boot1 boot2 boot3"), BUILDERS ("plain package fresh aged90"), ROUNDS (3), SEED (1),
# SIZE (1024), JOBS (1: cells at once; count mode's figures do not depend on it), OUT=FILE (the report there too),
# KEEP=DIR (each cell's logs kept there).  Exit: 0 all cells PASS, 1 a cell FAILs or could not be set up.
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
		echo "built $(grep -h '^mkbootset' "$work/build.out" | tr '\n' ' ')"
		echo "bs $bs"
	} >"$res"
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
	boot() { # NAME [LAYOUT]: one cold boot, its figures as NAME's line
		out=$(sim_cold_boot "$fs" "$wl" ${2:+"$2"}) && [ -n "$out" ] || pf_fail "cold boot $1"
		echo "$1 $out" >>"$res"
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
	[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP/$trace-$builder" && cp "$work"/*.out "$res" "$KEEP/$trace-$builder/"; }
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
get() { awk -v k="$2" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$1"; }
field() { get "$1" "$2" | awk -v n="$3" '{ print $n }'; }
bad=0
report() {
	local c t b r k
	echo "## bench-reorder-matrix.sh ($(date -u +%Y-%m-%d), tree $(git -C "$TOP" describe --always --dirty 2>/dev/null || echo '?'), seed $SEED, $SIZE MiB, $ROUNDS rounds, ${elapsed} s)"
	echo
	echo "Seconds of model time, cold; \"replay\" = the boot's reads plus the replay.  pred = predicted (--dry-run before, --check after)."
	echo "Gate: the default decision of the dry run (moves / refuses / nothing); \"eff.\" = reorder + replay as the default would leave it."
	echo
	echo "| trace | image | none | replay (meas. / pred.) | reorder, none | reorder + replay (meas. / pred.) | limit | limit+meta | moved | gate | eff. / limit+meta | round 2: replay before / after (pred.), moved, gate | round 3: same |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|"
	for c in "${cells[@]}"; do
		read -r t b <<<"$c"
		r=$results/$t-$b
		if [ "$(get "$r" ok 2>/dev/null)" != 1 ]; then
			echo "| $t | $b | setup failed: $(grep -m1 FAIL "$r.log" 2>/dev/null | cut -c1-120) |"
			continue
		fi
		awk -v t="$t" -v b="$b" -v rounds="$ROUNDS" '
			{ k = $1; $1 = ""; v[k] = substr($0, 2) }
			function f(k, n,   a) { split(v[k], a, " "); return a[n] }
			function gate(k) { return v["decision" k] ~ /not worth/ ? "refuses" : (f("wouldmove" k, 1) + 0 > 0 ? "moves" : "nothing") }
			END {
				bs = v["bs"]; rate = v["rate"]
				lim = f("blocks1", 1) * bs / rate
				m = f("meta1", 1); if (f("meta1", 2) < m) m = f("meta1", 2)
				eff = gate(1) == "moves" ? f("after1", 1) : f("before1", 1)
				printf "| %s | %s | %.3f | %.3f / %.3f | %.3f | %.3f / %.3f | %.3f | %.3f | %d | %s | %.2fx |", t, b,
					f("none", 1), f("before1", 1), f("pred1", 1), f("anone", 1), f("after1", 1), f("check1", 1),
					lim, lim + m, f("moved1", 1), gate(1), eff / (lim + m)
				for (k = 2; k <= 3; k++)
					if (k <= rounds)
						printf " %.3f / %.3f (%.3f), %d, %s |", f("before" k, 1), f("after" k, 1), f("check" k, 1), f("moved" k, 1), gate(k)
					else
						printf " - |"
				printf "\n"
			}' "$r"
	done
	echo
	echo "Verdicts:"
	for c in "${cells[@]}"; do
		read -r t b <<<"$c"
		r=$results/$t-$b
		if [ "$(get "$r" ok 2>/dev/null)" != 1 ]; then
			echo "$t x $b: FAIL setup: $(grep -m1 FAIL "$r.log" 2>/dev/null)"
			bad=1
			continue
		fi
		awk -v t="$t" -v b="$b" -v rounds="$ROUNDS" '
			{ k = $1; $1 = ""; v[k] = substr($0, 2) }
			function f(k, n,   a) { split(v[k], a, " "); return a[n] }
			function gate(k) { return v["decision" k] ~ /not worth/ ? "refuses" : (f("wouldmove" k, 1) + 0 > 0 ? "moves" : "nothing") }
			function err(p, m) { return m > 0 ? (p - m) / m : 0 }
			function abs(x) { return x < 0 ? -x : x }
			function verdict(name, ok, why) { printf "%s x %s: %s %s (%s)\n", t, b, ok ? "PASS" : "FAIL", name, why; if (!ok) fail = 1 }
			END {
				bs = v["bs"]; rate = v["rate"]; rep = f("before1", 1); eff = rep
				# never worse, near limit: per round, with the default decision (a refused round leaves
				# the previous state; the bench forced the move anyway, so later rounds start from it)
				nw = 1; nl = 1; why1 = ""; why2 = ""
				for (k = 1; k <= rounds; k++) {
					lim = f("blocks" k, 1) * bs / rate
					m = f("meta" k, 1); if (f("meta" k, 2) < m) m = f("meta" k, 2)
					if (gate(k) == "moves") {
						eff = f("after" k, 1)
						r = eff / (lim + m)
						why2 = why2 sprintf("%sround %d %.3f = %.2fx", why2 == "" ? "" : ", ", k, eff, r)
						if (r > 1.25) nl = 0
					}
					why1 = why1 sprintf("%sround %d %s %.3f", why1 == "" ? "" : ", ", k, gate(k), eff)
					if (eff > rep + 0.001) nw = 0
				}
				verdict("never-worse", nw, sprintf("replay %.3f; %s", rep, why1))
				verdict("near-limit", nl, why2 == "" ? "the default never moved" : "limit+meta; " why2)
				if (b == "package") {
					lim = f("blocks1", 1) * bs / rate
					m = f("meta1", 1); if (f("meta1", 2) < m) m = f("meta1", 2)
					verdict("replay-limit", rep <= 1.3 * (lim + m), sprintf("replay %.3f = %.2fx limit+meta %.3f", rep, rep / (lim + m), lim + m))
				}
				pe = 1; why = ""; worst = 0
				for (k = 1; k <= rounds; k++) {
					e1 = err(f("pred" k, 1), f("before" k, 1)); e2 = err(f("check" k, 1), f("after" k, 1))
					if (abs(e1) > worst) worst = abs(e1)
					if (abs(e2) > worst) worst = abs(e2)
					why = why sprintf("%sround %d %+.1f %% / %+.1f %%", why == "" ? "" : ", ", k, e1 * 100, e2 * 100)
				}
				verdict("prediction", worst <= 0.10, "before / after: " why)
				exit fail
			}' "$r" || bad=1
	done
	echo
	echo "Per cell (round K: default decision, reorder said, its disk time):"
	for c in "${cells[@]}"; do
		read -r t b <<<"$c"
		r=$results/$t-$b
		[ -f "$r" ] || continue
		echo "- $t x $b: $(get "$r" built)"
		for ((k = 1; k <= ROUNDS; k++)); do
			[ -n "$(get "$r" "decision$k")" ] || continue
			echo "  - round $k: gate: $(get "$r" "decision$k"); forced: $(get "$r" "said$k" | sed 's/^prefetch-reorder: //') ($(field "$r" "moved$k" 2) s); bench $(get "$r" "secs$k") s"
		done
	done
	echo
	echo "Disk: $(get "$results/${cells[0]/ /-}" describe 2>/dev/null)"
}
report | tee ${OUT:+"$OUT"}
exit $bad
