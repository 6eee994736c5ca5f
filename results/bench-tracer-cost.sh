#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What tracing costs (issue 31, results/TRACER-COST.md): FILES small files (512 B, in DIRS directories) on a
# loop-mounted ext4 image, read once each (cat, by xargs, in creation order) with the page cache warm.
#   cpu     the tracer's own user + system time from its start to the stored trace (`prefetchd trace` under
#           /usr/bin/time; the tracer is stopped only once it has caught up, so every file is recorded), divided
#           by the files and directories it recorded: µs per recorded file; its peak RSS, and per 10,000 files
#           above an idle tracer's (one started and stopped with no file read); CPU_RUNS runs per build and page
#           source (MODES: auto = the page-cache tracepoints where the kernel has them, mincore)
#   reader  the reader's wall time with a tracer (started fresh each time) and without, PAIRS pairs alternating
#           which goes first; the median of the per-pair ratios, on the machine as it is (quiet) and with both
#           cores busy (one busy loop per CPU, at the reader's priority: the tracer's CPU is then taken from the
#           reader, as it is from a boot)
# With OLD (another prefetchd build) the cpu runs alternate OLD and this tree's, and the traces both record are
# compared (their dumps, first-touch times left out): they must be the same.  The load average is printed with
# each figure: the machine may be shared.  Takes /var/tmp/prefetch-bench.lock for the measurements.
# Environment: FILES (50000), DIRS (200), CPU_RUNS (5), PAIRS (9), MODES ("auto mincore"), LOADS ("quiet busy"),
# OLD (path of another prefetchd), KEEP_DIR (keep the dumps there).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/tests/lib.sh"
pf_require_root
pf_private_mount_ns "$@"
FILES=${FILES:-50000} DIRS=${DIRS:-200} CPU_RUNS=${CPU_RUNS:-5} PAIRS=${PAIRS:-9}
MODES=${MODES-auto mincore} LOADS=${LOADS-quiet busy} OLD=${OLD:-} KEEP_DIR=${KEEP_DIR:-}
[ -x /usr/bin/time ] || pf_fail "/usr/bin/time missing (Debian package time)"
for b in "$PREFETCHD" ${OLD:+"$OLD"}; do [ -x "$b" ] || pf_fail "$b missing (make)"; done

work=${WORK:-$(pf_tmpdir)}
mkdir -p "$work/bin" && cp "$PREFETCHD" "$work/bin/new" && { [ -z "$OLD" ] || cp "$OLD" "$work/bin/old"; } ||
	pf_fail "copying the programs"
builds="new"
[ -n "$OLD" ] && builds="old new"

# ---- the image: FILES files in DIRS directories, mounted read-only ----
src=$work/src mnt=$work/mnt
mkdir -p "$src" || pf_fail "mkdir $src"
printf -v blob '%0512d' 0
for ((d = 0; d < DIRS; d++)); do mkdir "$src/d$d"; done
for ((i = 0; i < FILES; i++)); do
	f=$src/d$((i % DIRS))/f$i
	printf '%s' "$blob" >"$f"
	printf '%s\0' "${f#"$src"}" >>"$work/rel"
done
pf_mkfs "$work/img" $(((FILES * 4 / 1024 + 64) * 2))M -b 4096 -N $((FILES + DIRS + 1024)) -d "$src"
rm -rf "$src"
pf_mount_loop "$work/img" "$mnt"
mount -o remount,ro "$mnt" || pf_fail "remount ro"
tr '\0' '\n' <"$work/rel" | sed "s|^|$mnt|" | tr '\n' '\0' >"$work/list"
reader() { xargs -0 -a "$work/list" cat >/dev/null; }
reader # the page cache warm from here on

load() { cut -d' ' -f1-3 /proc/loadavg; }
cpu_ticks() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*) }; set -- $s; echo $((${12} + ${13})); }

# tracer BUILD MODE OUT READ: one trace; READ=1 runs the reader meanwhile (its wall seconds in $work/rt).  Waits
# until the tracer's CPU time stops moving (it has taken in every event) before stopping it.
tracer() {
	local bin=$work/bin/$1 out=$3 pid i a b
	rm -f "$work/pid" "$out"
	PREFETCH_TRACE_PAGES=$2 /usr/bin/time -f '%U %S %M' -o "$out.time" \
		"$bin" trace --mount "$mnt" --output "$out" --pid-file "$work/pid" >"$out.summary" 2>"$out.err" 9>&- &
	local timer=$!
	for ((i = 0; i < 200; i++)); do [ -s "$work/pid" ] && break; sleep 0.05; done
	pid=$(cat "$work/pid" 2>/dev/null) || pf_fail "tracer did not start: $(cat "$out.err")"
	pf_kill_later "$pid" # stopped if this script is
	if [ "$4" = 1 ]; then
		local t0=$EPOCHREALTIME
		reader
		echo "$EPOCHREALTIME - $t0" | bc -l >"$work/rt"
	fi
	a=-1 b=$(cpu_ticks "$pid")
	while [ "$a" != "$b" ]; do sleep 0.3; a=$b b=$(cpu_ticks "$pid"); done
	"$bin" stop --pid-file "$work/pid" >/dev/null || pf_fail "prefetchd stop: $(cat "$out.err")"
	wait "$timer" || pf_fail "tracer failed: $(cat "$out.err")"
}
recorded() { sed -n 's/^trace: \([0-9]*\) files, \([0-9]*\) dirs.*/\1 \2/p' "$1.summary" | awk '{ print $1 + $2 }'; }
stats() { awk '{ s += $1; q += $1 * $1; if (NR == 1 || $1 < mn) mn = $1; if ($1 > mx) mx = $1 }
	END { m = s / NR; v = q / NR - m * m; printf "%.2f | %.2f | %.2f | %.2f", m, (v > 0 ? sqrt(v) : 0), mn, mx }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# A dump without what differs between two traces of the same reads: creation time, first-touch times.  With
# mincore the ranges are the pages resident at the end, which another process's drop_caches changes (a shared
# machine): the files, their order, sizes and inodes only.
canon() {
	if [ "$3" = mincore ]; then
		"$work/bin/new" dump --files "$1" | cut -f1,3,4,6- | grep -v '^#' >"$2" || pf_fail "dump $1"
	else
		{ "$work/bin/new" dump "$1" && "$work/bin/new" dump --files "$1" | cut -f1-4,6-; } >"$2" || pf_fail "dump $1"
		sed -i '/^# created/d' "$2"
	fi
}

exec 9>/var/tmp/prefetch-bench.lock
flock 9
echo "## bench-tracer-cost.sh ($(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet HEAD -- daemon lib || echo +changes), kernel $(uname -r), $(nproc) CPUs, $FILES files in $DIRS dirs)"
echo
[ -n "$MODES" ] && {
	echo "### Tracer CPU per recorded file, RSS"
	echo
	echo "| build | pages | runs | recorded | µs/file avg | stddev | min | max | peak RSS MB | idle RSS MB | MB per 10,000 files | load before → after |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
}
for mode in $MODES; do
	for b in $builds; do
		tracer "$b" "$mode" "$work/idle-$b" 0
		: >"$work/us-$b" && : >"$work/rss-$b"
	done
	l0=$(load) ref=
	for ((r = 0; r < CPU_RUNS; r++)); do
		for b in $builds; do
			t=$work/t-$b-$mode-$r
			tracer "$b" "$mode" "$t" 1
			n=$(recorded "$t")
			[ "${n:-0}" -ge "$FILES" ] || pf_fail "$b recorded ${n:-no} files: $(cat "$t.summary" "$t.err")"
			read -r u s m <"$t.time"
			echo "($u + $s) * 1000000 / $n" | bc -l >>"$work/us-$b"
			echo "$m $n" >>"$work/rss-$b"
			canon "$t" "$t.canon" "$mode"
			[ -n "$ref" ] || ref=$t.canon
			cmp -s "$t.canon" "$ref" || pf_fail "$b's trace $r ($mode) differs from the first: diff $t.canon $ref"
		done
	done
	l1=$(load)
	for b in $builds; do
		read -r _ _ idle <"$work/idle-$b.time"
		read -r peak n < <(sort -n "$work/rss-$b" | tail -1)
		printf '| %s | %s | %s | %s | %s | %.1f | %.1f | %.2f | %s → %s |\n' "$b" "$mode" "$CPU_RUNS" "$n" \
			"$(stats <"$work/us-$b")" "$(echo "$peak / 1024" | bc -l)" "$(echo "$idle / 1024" | bc -l)" \
			"$(echo "($peak - $idle) / 1024 * 10000 / $n" | bc -l)" "$l0" "$l1"
	done
	[ -n "$KEEP_DIR" ] && cp "$work"/t-*-"$mode"-0.canon "$KEEP_DIR/"
done
echo
[ -n "$MODES" ] && {
	echo "Every trace of one mode (both builds, every run) is the same: dumps without creation and first-touch times (with"
	echo "mincore: the files, their order, sizes and inodes; the resident ranges change when others drop the page cache)."
	echo
}

[ -n "$LOADS" ] && echo "### Reader wall time with a tracer ($PREFETCHD, pages: auto) / without, median of $PAIRS alternating pairs"
[ -n "$LOADS" ] && {
	echo
	echo "| machine | without s (median) | with s (median) | ratio median | ratio min | ratio max | load before → after |"
	echo "|---|---:|---:|---:|---:|---:|---|"
}
busy=()
for l in $LOADS; do
	if [ "$l" = busy ]; then
		for ((c = 0; c < $(nproc); c++)); do
			pf_bg bash -c 'while :; do :; done' 9>&- # the lock stays with this script alone
			busy+=("$PF_BG_PID")
		done
	fi
	l0=$(load)
	: >"$work/with" && : >"$work/without" && : >"$work/ratio"
	for ((p = 0; p < PAIRS; p++)); do
		order="with without"
		((p % 2)) && order="without with"
		for o in $order; do
			if [ "$o" = with ]; then
				tracer new auto "$work/tr" 1
			else
				t0=$EPOCHREALTIME && reader && echo "$EPOCHREALTIME - $t0" | bc -l >"$work/rt"
			fi
			cat "$work/rt" >>"$work/$o"
		done
		paste "$work/with" "$work/without" | tail -1 | awk '{ printf "%.4f\n", $1 / $2 }' >>"$work/ratio"
	done
	l1=$(load)
	for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
	busy=()
	printf '| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %s → %s |\n' "$l" "$(median <"$work/without")" \
		"$(median <"$work/with")" "$(median <"$work/ratio")" "$(sort -g "$work/ratio" | head -1)" \
		"$(sort -g "$work/ratio" | tail -1)" "$l0" "$l1"
done
