#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Prefetch and reorder per medium (issue #17): the cold read of a real boot's file set (tests/mkbootset.sh) on
# each disk model of lib/disk_model.h (simdisk --model hdd|sd|ssd), in count mode (the models' sums: exact):
#   none            no prefetch: the workload alone, cold
#   replay          prefetchd replay --medium M (the medium's own replay: rotational on hdd, slow-flash on sd,
#                   fast-flash on ssd), then the workload
#   reorder         after prefetch-reorder on that disk (PREFETCH_MEDIUM = the medium; the gain gate at its
#                   default, REORDER_MIN_GAIN_PERCENT 10): the workload alone
#   reorder+replay  after the reorder, the replay, then the workload
#   limit           the medium's limit for what the boot reads from the disk (the none case's reads, overlaps
#                   counted once): bytes / rate + the fewest requests those bytes allow (their runs of adjacent
#                   bytes, each cut at the largest request the device was sent) * the per-request cost
# When the gate holds the reorder back (or the medium is fast flash, which is not reordered), its predicted
# figures are reported and the reorder is run again with --min-gain off (and --force-flash on fast flash), so
# that the table still shows what it would have given: marked "forced".  Each reorder's writes are counted:
# the bytes and erase blocks its summary reports, the bytes the simulated disk saw written, and its disk time
# on the model (writes on flash charged per erase block: lib/disk_model.h).
# The layout comes from the real pipeline: prefetchd trace while the workload runs cold (on the first model),
# prefetchd aggregate.  Time = disk time of the replay and the workload together.  The replay's CPU (user +
# system seconds of prefetchd replay) is measured too.
#
# Environment: RUNS (2) runs per case and model; MODELS ("hdd sd ssd"); SCALE (1); RATIO (8); SEED (1);
# TRACES (3); BOOTSET (boot1: which real boot of tests/data/debian12-boot the image and workload come from).  Needs root, /dev/fuse, the default build, tools and build/simdisk (make -C tests/simdisk).
set -u -o pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${BENCH_PRIVATE_NS:-}" ] && command -v unshare >/dev/null; then # see bench-prefetch.sh
	BENCH_PRIVATE_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
RUNS=${RUNS:-2} MODELS=${MODELS:-hdd sd ssd} SCALE=${SCALE:-1} RATIO=${RATIO:-8} SEED=${SEED:-1} TRACES=${TRACES:-3}
BOOTSET=${BOOTSET:-boot1}
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
for b in "$PREFETCHD" "$REORDER" "$WLRUN" "$TOOLS/mkbootset"; do [ -x "$b" ] || pf_fail "$b missing (make all tools; make -C tests/simdisk)"; done

sim_build_bootset "$SCALE" "$RATIO" "$SEED" "$BOOTSET"
tmp=$SIM_BOOTSET_DIR
work=$(pf_tmpdir)
wl=$tmp/img.workload
fs=$work/fs
# Private copies: a rebuild of the tree while this runs must not change the programs mid-run.
mkdir -p "$work/bin"
cp "$PREFETCHD" "$REORDER" "$WLRUN" "$work/bin/" || pf_fail "copying the programs"
PREFETCHD=$work/bin/prefetchd REORDER=$work/bin/prefetch-reorder WLRUN=$work/bin/wlrun

medium_of() { case $1 in hdd) echo rotational ;; sd) echo slow-flash ;; ssd) echo fast-flash ;; esac; }

# One case, cold; prints "seconds replay_seconds requests replay_requests replay_cpu_s".
run_case() {
	local c=$1 medium=$2 rs=0 rq=0 cpu=0
	pf_drop_caches
	sim_reset
	if [ "$c" = replay ]; then
		local TIMEFORMAT='%U %S'
		{ time "$PREFETCHD" replay --medium "$medium" "$work/layout" >"$work/replay.out"; } 2>"$work/cpu" ||
			pf_fail "replay ($medium)"
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

# reorder_on OUT ARGS...: prefetch-reorder on the simulated disk (unmounted).  Right after an unmount the device
# can still be claimed for a moment (the open is exclusive): retry a busy device a few times.
reorder_on() {
	local out=$1 i rc; shift
	for ((i = 0; i < 20; i++)); do
		"$REORDER" "$@" "$SIM_DEV" >"$out" 2>&1; rc=$?
		grep -q 'busy' "$out" || return $rc
		sleep 0.25
	done
	return $rc
}

# The reorder on this model; appends one line to $work/reorders:
# "model forced moved_blocks summary_MB erase_blocks|blocks whole|- disk_s written_bytes write_requests discarded
#  pred_now pred_after gain"
reorder_model() {
	local model=$1 medium=$2 cfg=$work/cfg-$1 out=$work/reorder-$1 forced=no gate rc
	printf 'PREFETCH_MEDIUM=%s\nREORDER_TIME_BUDGET=3600\n' "$medium" >"$cfg"
	reorder_on "$work/dry-$model" --config "$cfg" --dry-run --layout "$work/layout" || pf_fail "dry run ($model): $(tail -2 "$work/dry-$model")"
	sim_reset
	reorder_on "$out" --config "$cfg" --layout "$work/layout"; rc=$?
	[ $rc -eq 0 ] || pf_fail "prefetch-reorder ($model): exit $rc: $(tail -2 "$out")"
	gate=$(grep -o 'moving: predicted.*\|not moving: predicted.*\|fast flash ([^)]*): no seeks to save' "$out" | head -1)
	if ! grep -q 'moved [1-9]' "$out"; then
		forced=yes
		cp "$out" "$work/gate-$model"
		local extra=(--min-gain off); [ "$medium" = fast-flash ] && extra+=(--force-flash)
		sim_reset
		reorder_on "$out" --config "$cfg" "${extra[@]}" --layout "$work/layout" ||
			pf_fail "prefetch-reorder forced ($model): $(tail -2 "$out")"
	fi
	local sum pn pa gn
	sum=$(grep 'moved [0-9]* blocks' "$out" | tail -1)
	read -r pn pa gn < <(sed -n 's/^replay: predicted *\([0-9.]*\)s *\([0-9.]*\)s$/\1 \2/p; s/^predicted gain of the plan for the next replay: \([-0-9.]*\) %.*/\1/p' \
		"$work/dry-$model" | tr '\n' ' ')
	echo "$model $forced $(sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' <<<"$sum") \
$(sed -n 's/.*; wrote \([0-9.]*\) MB in \([0-9]*\) \(erase \)\{0,1\}blocks\( of [0-9]* KiB (\([0-9]*\) whole)\)\{0,1\}.*/\1 \2 \5/p' <<<"$sum" | awk '{ print $1, $2, ($3 == "" ? "-" : $3) }') \
$(sim_seconds) $(sim_stat write_bytes) $(sim_stat writes) $(sed -n 's/.*discarded \([0-9]*\) freed.*/\1/p' <<<"$sum" | grep . || echo -) \
$pn $pa $gn" >>"$work/reorders"
	echo "$model gate: ${gate:-?}" >>"$work/gates"
	grep -h '^replay model\|^erase block' "$work/dry-$model" | sed "s/^/$model /" >>"$work/models"
}

log=$work/runs
: >"$log"
: >"$work/reorders"
: >"$work/gates"
: >"$work/models"
traced=''
for model in $MODELS; do
	SIM_MODEL=$model
	medium=$(medium_of "$model")
	cp --sparse=always "$tmp/img" "$tmp/run.img" || pf_fail "copying the image"
	sim_start "$tmp/run.img" count
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
		for c in none replay; do echo "$model $r $c $(run_case "$c" "$medium")" >>"$log"; done
	done
	sim_umount
	pf_drop_caches # the block device's cache still holds metadata the mounted filesystem read
	reorder_model "$model" "$medium"
	sim_mount "$fs"
	for ((r = 1; r <= RUNS; r++)); do
		echo "$model $r reorder $(run_case none "$medium")" >>"$log"
		echo "$model $r reorder+replay $(run_case replay "$medium")" >>"$log"
	done
	sim_stop
	rm -f "$tmp/run.img"
done

# ---- report ----
reads=$(wc -l <"$wl")
mib=$(awk -F'\t' '{ s += $1 } END { printf "%.1f", s / 1048576 }' "$wl")
echo
echo "Image: tests/mkbootset.sh --scale $SCALE --ratio $RATIO --seed $SEED --tsv $BOOTSET.tsv ($(($(stat -c %s "$tmp/img") >> 20)) MiB ext4, mounted ro)"
echo "Workload: $reads files, $mib MiB (real Debian 12 boot reads, in boot order); layout from $TRACES traces"
sed 's/^/Disk: /' "$work/describe"
echo "Code: tree at $(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown)"
echo "Machine: $(nproc) CPUs, $(uname -r), load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Count mode, $RUNS runs per case."
echo
echo "| model | case | avg s | min | max | of which replay s | requests | of which replay | replay CPU s | vs none | vs limit |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
awk '
	FILENAME ~ /limits$/ { lim[$1] = $3; lbytes[$1] = $4; lreq[$1] = $5; next }
	FILENAME ~ /reorders$/ { forced[$1] = $2; next }
	{ k = $1 SUBSEP $3; if (!(k in n)) order[++no] = k
	  n[k]++; s[k] += $4; rp[k] += $5; rq[k] += $6; rr[k] += $7; cpu[k] += $8
	  if (!(k in mn) || $4 < mn[k]) mn[k] = $4; if (!(k in mx) || $4 > mx[k]) mx[k] = $4 }
	END {
		for (i = 1; i <= no; i++) {
			k = order[i]; split(k, a, SUBSEP); m = a[1]; c = a[2]; avg = s[k] / n[k]
			none = s[m SUBSEP "none"] / n[m SUBSEP "none"]
			label = c; if (c ~ /^reorder/ && forced[m] == "yes") label = c " (forced)"
			printf "| %s | %s | %.3f | %.3f | %.3f | %.3f | %d | %d | %s | %.2fx | %.2fx |\n", m, label, avg, mn[k], mx[k],
				rp[k] / n[k], rq[k] / n[k], rr[k] / n[k], rr[k] ? sprintf("%.3f", cpu[k] / n[k]) : "-",
				none / avg, avg / lim[m]
			if (c == "reorder+replay")
				printf "| %s | limit | %.3f | | | | %d | | | %.2fx | 1.00x |\n", m, lim[m], lreq[m], none / lim[m]
		}
	}' "$work/limits" "$work/reorders" "$log"
echo
echo "Reorders (one per model, on the simulated disk; predicted = the dry run's replay on the medium's model):"
echo
echo "| model | predicted replay now s | after s | gain % | gate | moved blocks | MB written | erase blocks (whole) | disk bytes written | write requests | reorder disk s | blocks discarded |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
awk '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.1f MB | %s | %.3f | %s |\n", $1, $11, $12, $13,
	($2 == "yes" ? "held back: forced with --min-gain off" : "moved"), $3, $4,
	($6 == "-" ? "- (" $5 " blocks)" : $5 " (" $6 ")"), $8 / 1e6, $9, $7, $10 }' "$work/reorders"
echo
sed 's/^/Gate on /' "$work/gates"
sed 's/^/Model on /' "$work/models" | sort -u
awk '{ printf "Limit on %s: %.1f MiB read by the boot in %d requests at least\n", $1, $4 / 1048576, $5 }' "$work/limits"
[ -f "$work/replay.out" ] && echo "Last replay: $(tail -1 "$work/replay.out")"
