#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the journal costs a reorder (issue 27): the same images reordered by two builds of prefetch-reorder,
# BEFORE (metadata in place, no journal) and AFTER (this tree: metadata through the journal, journal_io.h).
#   counted  the writes, flushes and bytes each run sends to the image (tests/tools/shim/crash_shim.so in count
#            mode: exact, the same every run)
#   timed    wall seconds of the run on a copy of the image on a disk filesystem (fsyncs reach the disk), the copy
#            made and synced before the clock starts; avg/stddev/min/max over RUNS, BEFORE and AFTER alternating
# Images (tests/mkaged.sh, layouts by tests/tools/mklayout) are made once and shared by both builds.
# Usage: BEFORE=/path/to/old/prefetch-reorder results/bench-reorder-journal.sh   (RUNS=5, BIG=1 adds a 1 GiB
# ext4 image 90 % full, DIR=/var/tmp for the timed copies).  Run under flock /var/tmp/prefetch-bench.lock.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/tests/lib.sh"
pf_require_root
# mounts (mkaged) in a namespace of our own: one another process copies would keep the image mounted
pf_private_mount_ns "$@"
RUNS=${RUNS:-5} BIG=${BIG:-0} DIR=${DIR:-/var/tmp}
AFTER=${AFTER:-$REORDER}
[ -x "${BEFORE:-}" ] || pf_fail "BEFORE=path to the prefetch-reorder to compare with"
SHIM=$TOOLS/crash_shim.so
[ -f "$SHIM" ] || pf_fail "$SHIM not built (make tools)"
work=$(pf_tmpdir)
cp "$BEFORE" "$work/before" && cp "$AFTER" "$work/after" || pf_fail "copying the programs"
timed=$(mktemp -d "$DIR/pf-bench-journal.XXXXXX") || pf_fail "no directory in $DIR"
pf_cleanup_add "rm -rf '$timed'"

# TYPE:BS:FILL:ORDER:MB:LAYOUT_PERCENT
SPECS="ext4:4096:50:random:64:40 ext4:1024:50:random:64:40 ext3:1024:50:reverse:64:40 ext2:4096:50:random:64:40"
[ "$BIG" = 1 ] && SPECS="$SPECS ext4:4096:90:random:1024:20"

stats() { awk '{ s += $1; q += $1 * $1; if (NR == 1 || $1 < mn) mn = $1; if ($1 > mx) mx = $1 }
	END { m = s / NR; v = q / NR - m * m; printf "%.3f %.3f %.3f %.3f", m, (v > 0 ? sqrt(v) : 0), mn, mx }'; }

printf '| image | build | writes | flushes | MB written | wall s avg | stddev | min | max | moved blocks |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for spec in $SPECS; do
	IFS=: read -r type bs fill order mb pct <<<"$spec"
	img=$work/$type-$bs-$fill-$mb.img lay=$work/layout-$type-$bs-$fill-$mb
	"$TOP/tests/mkaged.sh" "$img" "$mb" "$type" "$bs" "$fill" $((fill + 11)) >"$work/mkaged.out" ||
		pf_fail "mkaged $spec: $(cat "$work/mkaged.out")"
	"$TOOLS/mklayout" --order "$order" --seed "$((fill * 10 + mb))" --percent "$pct" --dirs --special -o "$lay" "$img" \
		>/dev/null || pf_fail "mklayout $spec"
	chmod 0644 "$lay"
	printf 'REORDER_FREE_RESERVE_PERCENT=5\nCHUNK_SIZE_BLOCKS=2000\nREORDER_TIME_BUDGET=3600\n' >"$work/cfg"
	for b in before after; do
		cp --sparse=always "$img" "$work/cnt.img"
		rm -f "$work/rep.$b" # the shim appends its line
		CRASH_SHIM_TARGET=$work/cnt.img CRASH_SHIM_REPORT=$work/rep.$b LD_PRELOAD=$SHIM \
			"$work/$b" --config "$work/cfg" --min-gain off --layout "$lay" "$work/cnt.img" >/dev/null 2>"$work/err.$b" ||
			pf_fail "$b on $spec: $(tail -2 "$work/err.$b")"
		e2fsck -fn "$work/cnt.img" >/dev/null 2>&1 || pf_fail "$b on $spec: e2fsck -fn not clean"
		: >"$work/t.$b"
	done
	for ((i = 0; i < RUNS; i++)); do
		for b in before after; do
			cp --sparse=always "$img" "$timed/t.img" && sync
			t0=$(date +%s.%N)
			"$work/$b" --config "$work/cfg" --min-gain off --layout "$lay" "$timed/t.img" >/dev/null 2>&1 ||
				pf_fail "$b timed on $spec"
			t1=$(date +%s.%N)
			echo "$t1 - $t0" | bc >>"$work/t.$b"
		done
	done
	for b in before after; do
		r=$(cat "$work/rep.$b")
		f() { echo "$r" | sed -n "s/.*$1 \([0-9]*\) .*/\1/p; s/^$1 \([0-9]*\) .*/\1/p" | head -1; }
		moved=$(sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' "$work/err.$b" | tail -1)
		read -r avg sd mn mx < <(stats <"$work/t.$b")
		printf '| %s %s %s%% %s MB | %s | %s | %s | %.1f | %s | %s | %s | %s | %s |\n' "$type" "$bs" "$fill" "$mb" "$b" \
			"$(f writes)" "$(f flushes)" "$(echo "$(f bytes) / 1048576" | bc -l)" "$avg" "$sd" "$mn" "$mx" "$moved"
	done
done
echo "RUNS=$RUNS, timed copies in $DIR ($(findmnt -no FSTYPE,SOURCE --target "$DIR" | tr '\n' ' '))"
