#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The reorder at every shutdown of a series of boots, each with a re-aggregated layout — what the boot lab's
# prefetch + reorder setup does (13 shutdowns a series).  Image: tests/mkbootset.sh (the real Debian 12 boot's
# file set of tests/data/debian12-boot/boot1.tsv among RATIO times as much other data).  Boot k's layout: the
# workload's reads in the order of boot (k mod 3)+1 (tests/data/debian12-boot/bootN.tsv), each rank jittered by up
# to JITTER places (services started in parallel swap places from boot to boot), DROP files left out (others
# every boot).  After each reorder: blocks moved, and --check's seek model of reading the set as a sorted sweep
# (what prefetchd's rotational replay does) and in layout order.  Plain loop device, no simulated disk.
# Environment: BOOTS (12), RATIO (8), SEED (1), JITTER (30), DROP (3), REORDER2 (a second prefetch-reorder to
# compare on a fresh copy of the same image and layouts).
set -u
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-$TOP/build/default}
REORDER=${REORDER:-$BUILD/prefetch-reorder} TOOLS=${TOOLS:-$BUILD/tests/tools}
export TOP BUILD REORDER TOOLS
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
pf_private_mount_ns "$@"
BOOTS=${BOOTS:-12} RATIO=${RATIO:-8} SEED=${SEED:-1} JITTER=${JITTER:-30} DROP=${DROP:-3}
[ -d /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
w=$(pf_tmpdir)
m=$w/mnt
"$TOP/tests/mkbootset.sh" --ratio "$RATIO" --seed "$SEED" "$w/gold.img" >/dev/null || pf_fail "mkbootset"
# Layout k: ranks from boot (k mod 3)+1, jittered (awk's srand: the same layouts for every binary compared).
for ((k = 1; k <= BOOTS; k++)); do
	awk -F'\t' -v drop="$DROP" -v jit="$JITTER" -v k="$k" -v seed="$SEED" \
		'NR == FNR { if ($1 != "-") rank[$3] = $1 + 0; next }
		 FNR == 1 { srand(seed * 1000 + k) }
		 { r = ($2 in rank) ? rank[$2] : last + 0.001; last = r; n++
		   if ((n + 7 * k) % 131 < drop) next
		   printf "%.3f\t%d\t%s\n", r + jit * rand(), n, $0 }' \
		"$TOP/tests/data/debian12-boot/boot$((k % 3 + 1)).tsv" "$w/gold.img.workload" |
		sort -t$'\t' -k1,1g -k2,2n | cut -f3- >"$w/L$k.workload"
	cp "$w/gold.img" "$w/x.img"
	cp "$w/L$k.workload" "$w/x.img.workload"
	sim_workload_layout "$w/x.img" "$m" "$w/L$k" || pf_fail "layout $k"
	rm -f "$w/x.img" "$w/x.img.workload"
done
field() { awk -v k="$1" 'index($0, k) == 1 { print $NF == "s" ? $(NF-1) : $NF }' "$2"; }
declare -A TOTAL SWEEP
series() { # BINARY NAME
	local bin=$1 name=$2 k moved sweep lo total=0 sum=0
	cp --sparse=always "$w/gold.img" "$w/t.img"
	for ((k = 1; k <= BOOTS; k++)); do
		"$bin" --layout "$w/L$k" "$w/t.img" >"$w/$name.$k" 2>&1 || pf_fail "$name: reorder $k: $(cat "$w/$name.$k")"
		"$bin" --check --layout "$w/L$k" "$w/t.img" >"$w/$name.c$k" 2>&1 || pf_fail "$name: check $k"
		moved=$(sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' "$w/$name.$k")
		sweep=$(awk '/^read time \(sorted sweep\)/ {print $5}' "$w/$name.c$k")
		lo=$(awk '/^read time \(layout order\)/ {print $5}' "$w/$name.c$k")
		total=$((total + ${moved:-0}))
		sum=$(awk -v a="$sum" -v b="${sweep%s}" 'BEGIN { print a + b }')
		printf '| %s | %d | %s | %s | %s |%s\n' "$name" "$k" "${moved:-?}" "$sweep" "$lo" \
			"$(grep -o 'compacted' "$w/$name.$k" | head -1 | sed 's/^/ /')"
	done
	pf_fsck_clean "$w/t.img"
	TOTAL[$name]=$total SWEEP[$name]=$(awk -v a="$sum" -v n="$BOOTS" 'BEGIN { printf "%.3f", a / n }')
	echo "| $name | total / mean | $total | ${SWEEP[$name]}s | |"
}
echo "$BOOTS shutdowns, layouts from boot1-3 orders jittered by $JITTER places, $DROP files dropped per boot (tests/mkbootset.sh --ratio $RATIO --seed $SEED)"
echo "| binary | shutdown | blocks moved | sorted sweep after (s, model) | layout order after (s, model) |"
echo "|---|---|---|---|---|"
series "$REORDER" current
if [ -n "${REORDER2:-}" ]; then
	series "$REORDER2" other
	awk -v a="${TOTAL[current]}" -v b="${TOTAL[other]}" -v c="${SWEEP[current]}" -v d="${SWEEP[other]}" \
		'BEGIN { printf "current / other: blocks moved %.3f, mean sorted sweep %.3f\n", (b ? a / b : 0), (d ? c / d : 0) }'
fi
exit 0
