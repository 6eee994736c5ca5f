#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The reorder at the second shutdown, with a re-aggregated layout (the normal case: every boot re-aggregates
# the last traces, so the order shifts a little — services started in parallel swap places, files enter and
# leave).  Image: tests/mkbootset.sh (the real Debian 12 boot's file set of tests/data/debian12-boot/boot1.tsv
# scattered among RATIO times as much other data).  Layout A: boot1's reads in boot1's order; layout B: the
# same reads in boot2's order (boot2.tsv), DROP files left out; C: boot3's order, other files left out.  Reorders
# with A, then B, B again, then C (the third shutdown), and prints what each moved and the --check figures (seek
# model) afterwards.
# Environment: RATIO (8), SEED (1), DROP (2), REORDER2 (a second prefetch-reorder binary to compare, e.g. an
# older build: the same two runs on a fresh copy of the image).  Plain loop device, no simulated disk.
set -u
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-$TOP/build/default}
REORDER=${REORDER:-$BUILD/prefetch-reorder} TOOLS=${TOOLS:-$BUILD/tests/tools}
export TOP BUILD REORDER TOOLS
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
pf_private_mount_ns "$@"
RATIO=${RATIO:-8} SEED=${SEED:-1} DROP=${DROP:-2}
[ -d /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
w=$(pf_tmpdir)
m=$w/mnt
"$TOP/tests/mkbootset.sh" --ratio "$RATIO" --seed "$SEED" "$w/gold.img" >/dev/null || pf_fail "mkbootset"
sim_workload_layout "$w/gold.img" "$m" "$w/A" || pf_fail "layout A"
# B (C): the workload's reads in boot2's (boot3's) order (paths the boot did not order keep their place after
# their predecessor), DROP files left out (C: others than B)
reordered() { # TSV SKEW OUT
	awk -F'\t' -v drop="$DROP" -v skew="$2" 'NR == FNR { if ($1 != "-") rank[$3] = $1 + 0; next }
		{ k = ($2 in rank) ? rank[$2] : last + 0.001; last = k; n++
		  if (n % 97 == 50 + skew && dropped < drop) { dropped++; next }
		  printf "%.3f\t%d\t%s\n", k, n, $0 }' \
		"$TOP/tests/data/debian12-boot/$1" "$w/gold.img.workload" | sort -t$'\t' -k1,1g -k2,2n | cut -f3- >"$3"
	cp "$w/gold.img" "$w/x.img"
	cp "$3" "$w/x.img.workload"
	sim_workload_layout "$w/x.img" "$m" "${3%.workload}" || pf_fail "layout ${3%.workload}"
	rm -f "$w/x.img" "$w/x.img.workload"
}
reordered boot2.tsv 0 "$w/B.workload"
reordered boot3.tsv 20 "$w/C.workload"
swaps=$(diff <(cut -f2 "$w/gold.img.workload") <(cut -f2 "$w/B.workload") | grep -c '^[<>]')
blocks() { sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' "$1"; }
one() { # BINARY NAME
	local bin=$1 name=$2
	cp --sparse=always "$w/gold.img" "$w/t.img"
	"$bin" --layout "$w/A" "$w/t.img" >"$w/$name.a" 2>&1 || pf_fail "$name: reorder A: $(cat "$w/$name.a")"
	"$bin" --check --layout "$w/B" "$w/t.img" >"$w/$name.cb0" 2>&1 || pf_fail "$name: check B"
	"$bin" --layout "$w/B" "$w/t.img" >"$w/$name.b" 2>&1 || pf_fail "$name: reorder B: $(cat "$w/$name.b")"
	pf_fsck_clean "$w/t.img"
	"$bin" --check --layout "$w/B" "$w/t.img" >"$w/$name.cb" 2>&1 || pf_fail "$name: check B after"
	"$bin" --layout "$w/B" "$w/t.img" >"$w/$name.b2" 2>&1 || pf_fail "$name: reorder B again"
	"$bin" --layout "$w/C" "$w/t.img" >"$w/$name.c" 2>&1 || pf_fail "$name: reorder C"
	"$bin" --check --layout "$w/C" "$w/t.img" >"$w/$name.cc" 2>&1 || pf_fail "$name: check C after"
	local d0 d1 r0 r1 s0 s1
	d0=$(awk '/^discontinuities/ {print $2}' "$w/$name.cb0"); d1=$(awk '/^discontinuities/ {print $2}' "$w/$name.cb")
	r0=$(awk '/^read time \(layout order\)/ {print $5}' "$w/$name.cb0"); r1=$(awk '/^read time \(layout order\)/ {print $5}' "$w/$name.cb")
	s0=$(awk '/^read time \(sorted sweep\)/ {print $5}' "$w/$name.cb0"); s1=$(awk '/^read time \(sorted sweep\)/ {print $5}' "$w/$name.cb")
	printf '| %s | %s | %s | %s → %s | %s → %s | %s → %s | %s | %s | %s |\n' "$name" "$(blocks "$w/$name.a")" "$(blocks "$w/$name.b")" \
		"$d0" "$d1" "$r0" "$r1" "$s0" "$s1" "$(blocks "$w/$name.b2")" \
		"$(blocks "$w/$name.c")" "$(awk '/^read time \(sorted sweep\)/ {print $5}' "$w/$name.cc")"
	sed 's/^/    /' "$w/$name.b" >&2
}
echo "layout B: boot2's order, $DROP files dropped; $swaps diff lines against A (tests/mkbootset.sh --ratio $RATIO --seed $SEED)"
echo "| binary | 1st run (A): blocks moved | 2nd run (B): blocks moved | B discontinuities before → after | B read time in layout order (model) before → after | B read time, sorted sweep (a rotational replay) before → after | 3rd run (B again): blocks moved | then C (boot3's order): blocks moved | C sorted sweep after |"
echo "|---|---|---|---|---|---|---|---|---|"
one "$REORDER" current
[ -n "${REORDER2:-}" ] && one "$REORDER2" other
exit 0
