#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Reorder benchmark on the simulated spinning disk (tests/simdisk, tests/simdisk/lib-sim.sh).
#
# Image: tests/mkbootset.sh (a real Debian 12 boot's file set scattered among RATIO times as much other data on
# an aged ext4).  Layout: exactly the workload's reads (pf_mklayout, paths in boot order, preceded by the
# directories on their way), as an aggregated trace of that workload would hold them.
# Each run takes a fresh copy of the image and measures, on the one simulated disk:
#   before/none, before/physical    cold workload, without and with `prefetchd replay --medium rotational`
#   reorder                         prefetch-reorder on the disk: disk time, bytes read/written, MB/s moved
#   copy                            dd of the same number of bytes the reorder wrote, from the start of the disk
#                                   to its middle (iflag/oflag=direct, bs 4 MiB): a plain sequential copy
#   after/none, after/physical      the cold workload again on the reordered image
# next to the physical limit: the workload's bytes at 100 MB/s.  Count mode (model time summed per request)
# is exact: runs of the same image give identical figures, which the stddev column shows.
# Then the same reorder again (nothing left to move: its disk time, bytes read and written).
# Then the time-budget check: a boot set of BIG_SCALE copies (~43 MiB read each) reordered with
# --time-budget BUDGET in sleep mode (real waiting), wall time and whether it completed.
#
# Environment: RUNS (5), SCALE (1), RATIO (8), SEED (1), BIG_SCALE (5, 0 = skip), BIG_RATIO (2),
# BIG_RUNS (1, sleep mode), BUDGET (20), SIM_SCHED (none).  OUT=FILE also writes the report there;
# REQ_LOG=FILE keeps the first run's reorder requests ("R|W offset length cost_us start_ms", tests/simdisk).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
pf_private_mount_ns "$@"
RUNS=${RUNS:-5} SCALE=${SCALE:-1} RATIO=${RATIO:-8} SEED=${SEED:-1}
BIG_SCALE=${BIG_SCALE:-5} BIG_RATIO=${BIG_RATIO:-2} BIG_RUNS=${BIG_RUNS:-1} BUDGET=${BUDGET:-20}
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
for b in "$PREFETCHD" "$REORDER" "$WLRUN" "$TOOLS/mkbootset" "$TOOLS/pf_mklayout"; do
	[ -x "$b" ] || pf_fail "$b missing (make all tools; make -C tests/simdisk)"
done
"$REORDER" --help >/dev/null 2>&1 || pf_fail "prefetch-reorder --help fails: not implemented yet"
have_replay=1
"$PREFETCHD" replay --help >/dev/null 2>&1 || { have_replay=0; pf_note "prefetchd replay unavailable: no prefetch cases"; }

tmp=$(sim_tmpfs_dir)
work=$(pf_tmpdir)
# Private copies of the programs: the figures belong to one build even if the tree is rebuilt meanwhile.
mkdir -p "$work/bin"
cp "$PREFETCHD" "$REORDER" "$WLRUN" "$work/bin/" || pf_fail "copying the programs"
PREFETCHD=$work/bin/prefetchd REORDER=$work/bin/prefetch-reorder WLRUN=$work/bin/wlrun
fs=$work/fs
log=$work/runs
: >"$log"

# reorder_on DEV OUT ARGS...: prefetch-reorder on the simulated disk.  Right after an unmount the device can
# still be claimed for a moment (the open is exclusive): retry a busy device a few times.
reorder_on() {
	local dev=$1 out=$2 i rc; shift 2
	for ((i = 0; i < 20; i++)); do
		"$REORDER" "$@" "$dev" >"$out" 2>&1; rc=$?
		grep -q 'busy' "$out" || return $rc
		sleep 0.25
	done
	return $rc
}

drops() { awk '$1 == "drop_pagecache" || $1 == "drop_slab" { s = s " " $2 } END { print s }' /proc/vmstat; } # echo 2 (slab only) matters too

# make_set NAME SCALE RATIO: golden image + workload + layout in $tmp
make_set() {
	# The layout records absolute paths: make it with the image mounted where the benchmark mounts it.
	local name=$1 scale=$2 ratio=$3 m=$fs
	"$TOP/tests/mkbootset.sh" --scale "$scale" --ratio "$ratio" --seed "$SEED" "$tmp/$name.img" | sed 's/^/   /' ||
		pf_fail "mkbootset $name"
	sim_workload_layout "$tmp/$name.img" "$m" "$tmp/$name.layout" "$work/$name.lines" || pf_fail "layout of $name"
}

# One cold case on the mounted image; prints "seconds replay_seconds requests seeks"
run_case() {
	local c=$1 rs try d0 t0 t1 secs
	for ((try = 1; try <= 5; try++)); do
		rs=0
		pf_drop_caches
		d0=$(drops)
		sim_reset
		t0=$(date +%s%N)
		case $c in
		physical) lay=$tmp/$set.layout ;;
		physical-remapped) lay=$work/$set.remapped ;;
		*) lay='' ;;
		esac
		if [ -n "$lay" ]; then
			"$PREFETCHD" replay --medium rotational "$lay" >"$work/replay.out" 2>&1 || pf_fail "replay: $(tail -1 "$work/replay.out")"
			rs=$(sim_seconds)
		fi
		"$WLRUN" -q -C "$fs" "$tmp/$set.img.workload" >"$work/wl.out" || pf_fail "workload ($c)"
		t1=$(date +%s%N)
		[ "$(drops)" = "$d0" ] && break
		echo "$c: caches dropped by someone else during the run, again" >&2
	done
	if [ "$(sim_stat mode)" = sleep ]; then secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.6f", d / 1e9 }')
	else secs=$(sim_seconds); fi
	echo "$secs $rs $(sim_stat requests) $(sim_stat seeks)"
}

cases=(none)
[ $have_replay = 1 ] && cases+=(physical)

# ---- the main series: before, reorder, copy, after ----
set=main
pf_note "building the image (scale $SCALE, ratio $RATIO, seed $SEED)"
make_set main "$SCALE" "$RATIO"
main_mb=$(($(stat -c %s "$tmp/main.img") >> 20))
for ((r = 1; r <= RUNS; r++)); do
	cp --sparse=always "$tmp/main.img" "$tmp/run.img"
	sim_start "$tmp/run.img" count
	[ $r = 1 ] && describe=$(sim_describe)
	q=/sys/block/${SIM_DEV#/dev/}/queue
	echo "disk $r $SIM_DEV max_sectors_kb=$(cat $q/max_sectors_kb) nr_requests=$(cat $q/nr_requests) ra=$(cat $q/read_ahead_kb) sched=$(sed 's/.*\[\(.*\)\].*/\1/' $q/scheduler) load=$(cut -d' ' -f1 /proc/loadavg)" >>"$log"
	sim_mount "$fs"
	for c in "${cases[@]}"; do echo "before $r $c $(run_case "$c")" >>"$log"; done
	sim_umount
	pf_drop_caches # the block device's cache still holds metadata the mounted filesystem read
	sim_reset
	[ $r = 1 ] && [ -n "${REQ_LOG:-}" ] && sim_log "$REQ_LOG"
	t0=$(date +%s%N)
	reorder_on "$SIM_DEV" "$work/reorder.out" --layout "$tmp/main.layout" || pf_fail "prefetch-reorder: $(tail -2 "$work/reorder.out")"
	t1=$(date +%s%N)
	[ $r = 1 ] && [ -n "${REQ_LOG:-}" ] && sim_log off
	wb=$(sim_stat write_bytes)
	echo "reorder $r $(sim_seconds) $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }') $(sim_stat read_bytes) $wb $(sim_stat requests) $(sim_stat seeks)" >>"$log"
	[ $r = 1 ] && { cp "$work/reorder.out" "$work/reorder.first"; "$REORDER" --check --layout "$tmp/main.layout" "$SIM_DEV" >"$work/check.after" 2>&1; }
	# the next shutdown's run, with nothing left to move: what it costs every time
	pf_drop_caches
	sim_reset
	reorder_on "$SIM_DEV" "$work/noop.out" --layout "$tmp/main.layout" || pf_fail "second prefetch-reorder: $(tail -2 "$work/noop.out")"
	echo "noop $r $(sim_seconds) $(sim_stat read_bytes) $(sim_stat write_bytes) $(sim_stat requests) $(sim_stat seeks)" >>"$log"
	[ $r = 1 ] && cp "$work/noop.out" "$work/noop.first"
	sim_mount "$fs"
	# The layout's physical block numbers are those of before the reorder; the same reads mapped anew show
	# what a replay gets once the layout knows where the blocks went.
	acases=("${cases[@]}")
	if [ $have_replay = 1 ]; then
		"$TOOLS/pf_mklayout" "$work/main.remapped" "$work/main.lines" >/dev/null || pf_fail "pf_mklayout (remapped)"
		acases+=(physical-remapped)
	fi
	for c in "${acases[@]}"; do echo "after $r $c $(run_case "$c")" >>"$log"; done
	sim_umount
	# a sequential copy of as many bytes as the reorder wrote (the image is thrown away after this run)
	span=$(sim_stat span)
	sim_reset
	n=$(( (wb + 4194303) / 4194304 ))
	dd if="$SIM_DEV" of="$SIM_DEV" bs=4M count="$n" seek=$(( span / 2 / 4194304 )) iflag=direct oflag=direct status=none ||
		pf_fail "dd copy"
	echo "copy $r $(sim_seconds) $(sim_stat read_bytes) $(sim_stat write_bytes) $(sim_stat requests) $(sim_stat seeks)" >>"$log"
	sim_stop
done
"$REORDER" --check --layout "$tmp/main.layout" "$tmp/main.img" >"$work/check.before" 2>&1

# ---- the time budget on a big boot set, sleep mode ----
if [ "$BIG_SCALE" -gt 0 ]; then
	pf_note "building the big image (scale $BIG_SCALE, ratio $BIG_RATIO)"
	make_set big "$BIG_SCALE" "$BIG_RATIO"
	rm -f "$tmp/main.img" "$tmp/run.img"
	for ((r = 1; r <= BIG_RUNS; r++)); do
		cp --sparse=always "$tmp/big.img" "$tmp/run.img"
		sim_start "$tmp/run.img" count
		pf_drop_caches
		sim_reset
		reorder_on "$SIM_DEV" "$work/big.dry" --dry-run --layout "$tmp/big.layout"
		sim_mode sleep
		pf_drop_caches
		sim_reset
		t0=$(date +%s%N)
		reorder_on "$SIM_DEV" "$work/big.out" --time-budget "$BUDGET" --layout "$tmp/big.layout"; rc=$?
		# exit 3: stopped by the time budget (the next run continues) -- a figure, not a failure
		[ $rc -eq 0 ] || [ $rc -eq 3 ] || pf_fail "prefetch-reorder (big): $(tail -2 "$work/big.out")"
		t1=$(date +%s%N)
		echo "big $r $(sim_seconds) $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }') $rc $(sim_stat read_bytes) $(sim_stat write_bytes) $(sim_stat requests) $(sim_stat seeks)" >>"$log"
		sim_mode count
		pf_drop_caches
		# did it finish?  A second run with nothing left to do moves nothing.
		sim_reset
		reorder_on "$SIM_DEV" "$work/big.second" --layout "$tmp/big.layout"
		echo "big2 $r $(sim_seconds) 0 $(sim_stat read_bytes) $(sim_stat write_bytes) $(sim_stat requests) $(sim_stat seeks)" >>"$log"
		sim_stop
	done
fi

# ---- report ----
report() {
	local bytes limit
	bytes=$(awk -F'\t' '{ s += $1 } END { print s }' "$tmp/main.img.workload")
	limit=$(awk -v b="$bytes" 'BEGIN { printf "%.3f", b / 100e6 }')
	echo "# prefetch-reorder on the simulated spinning disk"
	echo
	echo "Generated by results/bench-reorder.sh on $(date -u '+%Y-%m-%d %H:%M UTC') ($(git -C "$TOP" rev-parse --short HEAD 2>/dev/null))."
	echo
	echo "- Image: tests/mkbootset.sh --scale $SCALE --ratio $RATIO --seed $SEED ($main_mb MiB ext4)"
	echo "- Workload: $(wc -l <"$tmp/main.img.workload") files, $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }') MiB, cold, in boot order (wlrun); layout = the same reads + their directories (pf_mklayout)"
	echo "- Disk: $describe"
	echo "- Timing: count mode (the model's service time summed per request: exact, identical from run to run)"
	echo "- Physical limit: workload bytes at 100 MB/s = $limit s"
	echo "- Runs: $RUNS, each on a fresh copy of the image"
	echo
	echo "| phase | case | N | avg s | stddev | min | max | requests | seeks | vs before/none | vs physical limit |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	awk -v lim="$limit" '
		$1 == "before" || $1 == "after" { k = $1 " | " $3; n[k]++; s[k] += $4; ss[k] += $4 * $4; rq[k] += $6; sk[k] += $7
			if (!(k in mn) || $4 < mn[k]) mn[k] = $4; if (!(k in mx) || $4 > mx[k]) mx[k] = $4
			t[$1, $2, $3] = $4; if (!(k in seen)) { seen[k] = 1; order[++no] = k; ph[k] = $1; cs[k] = $3 } }
		END { for (i = 1; i <= no; i++) { k = order[i]; a = s[k] / n[k]; v = n[k] > 1 ? (ss[k] - n[k] * a * a) / (n[k] - 1) : 0
			sp = 0; np = 0
			for (r = 1; r <= n[k]; r++) if (t[ph[k], r, cs[k]] > 0 && ("before" SUBSEP r SUBSEP "none") in t) {
				sp += t["before", r, "none"] / t[ph[k], r, cs[k]]; np++ }
			printf "| %s | %d | %.3f | %.3f | %.3f | %.3f | %d | %d | %.2fx faster | %.2fx |\n", k, n[k], a,
				sqrt(v > 0 ? v : 0), mn[k], mx[k], rq[k] / n[k], sk[k] / n[k], np ? sp / np : 0, a / lim } }' "$log"
	echo
	echo "| reorder run | N | disk s avg | stddev | min | max | wall s avg | read MiB | written MiB | MB/s moved | copy of the same bytes s | reorder / copy |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	awk '$1 == "reorder" { n++; s += $3; ss += $3 * $3; w += $4; rb += $5; wb += $6; if (!mn || $3 < mn) mn = $3; if ($3 > mx) mx = $3; t[$2] = $3; b[$2] = $6 }
	     $1 == "copy" { c[$2] = $3; cs += $3 }
	     END { if (!n) exit; a = s / n; v = n > 1 ? (ss - n * a * a) / (n - 1) : 0; q = 0; nq = 0
		for (r in t) if ((r in c) && c[r] > 0) { q += t[r] / c[r]; nq++ }
		mbs = 0; if (a > 0) mbs = wb / n / a / 1e6
		ratio = 0; if (nq) ratio = q / nq
		sd = 0; if (v > 0) sd = sqrt(v)
		printf "| main set | %d | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f | %.1f | %.1f | %.3f | %.2fx |\n", n, a,
			sd, mn, mx, w / n, rb / n / 1048576, wb / n / 1048576, mbs, cs / n, ratio }' "$log"
	echo
	echo "Next run, nothing left to move (the same layout again right after): $(awk '$1 == "noop" { n++; s += $3; rb += $4; wb += $5; rq += $6 }
		END { if (n) printf "disk %.3f s, %.2f MiB read, %.2f MiB written, %d requests (average of %d)", s / n, rb / n / 1048576, wb / n / 1048576, rq / n, n }' "$log")"
	echo "It said: $(tail -2 "$work/noop.first" | tr '\n' ' ')"
	if grep -q '^big ' "$log"; then
		echo
		echo "Time budget: boot set x$BIG_SCALE (tests/mkbootset.sh --scale $BIG_SCALE --ratio $BIG_RATIO), layout $(awk -F'\t' '{ s += $1 } END { printf "%.0f", s / 1048576 }' "$tmp/big.img.workload") MiB, --time-budget $BUDGET, sleep mode (real waiting):"
		echo
		echo "| run | disk s (measured) | wall s | exit (3 = budget hit) | read MiB | written MiB | second run: written MiB (little = the first one finished) |"
		echo "|---|---|---|---|---|---|---|"
		awk '$1 == "big" { d[$2] = $3; w[$2] = $4; ex[$2] = $5; rb[$2] = $6; wb[$2] = $7 } $1 == "big2" { s[$2] = $6 }
		     END { for (r in d) printf "| %d | %.2f | %.2f | %d | %.1f | %.1f | %.1f |\n", r, d[r], w[r], ex[r], rb[r] / 1048576, wb[r] / 1048576, s[r] / 1048576 }' "$log" |
			sort -t'|' -k2n
		echo
		echo "| big set | N | avg s | stddev | min | max | finished within the budget |"
		echo "|---|---|---|---|---|---|---|"
		awk '$1 == "big" { n++; d += $3; dd += $3 * $3; w += $4; ww += $4 * $4; ok += ($5 == 0)
			if (n == 1 || $3 < dmn) dmn = $3; if ($3 > dmx) dmx = $3; if (n == 1 || $4 < wmn) wmn = $4; if ($4 > wmx) wmx = $4 }
		     END { if (!n) exit; a = d / n; v = 0; if (n > 1) v = (dd - n * a * a) / (n - 1); sd = 0; if (v > 0) sd = sqrt(v)
			printf "| disk busy (sleep mode) | %d | %.2f | %.2f | %.2f | %.2f | |\n", n, a, sd, dmn, dmx
			a = w / n; v = 0; if (n > 1) v = (ww - n * a * a) / (n - 1); sd = 0; if (v > 0) sd = sqrt(v)
			printf "| wall | %d | %.2f | %.2f | %.2f | %.2f | %d of %d |\n", n, a, sd, wmn, wmx, ok, n }' "$log"
		echo
		echo "Dry run (big set): $(tail -3 "$work/big.dry" | tr '\n' ' ')"
		echo "Last big run said: $(tail -3 "$work/big.out" | tr '\n' ' ')"
	fi
	echo
	echo "Per run (loop device queue, load average at the start):"
	echo
	grep '^disk' "$log" | sed 's/^disk /- run /'
	echo
	echo "prefetch-reorder output (run 1): $(tail -3 "$work/reorder.first" | tr '\n' ' ')"
	echo
	echo "--check before: $(tr '\n' ' ' <"$work/check.before" | cut -c1-400)"
	echo
	echo "--check after:  $(tr '\n' ' ' <"$work/check.after" | cut -c1-400)"
}
report | tee "${OUT:-/dev/null}"
[ -n "${KEEP_LOG:-}" ] && cp "$log" "$KEEP_LOG"
exit 0
