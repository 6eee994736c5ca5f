#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetch-reorder --check's predicted replay against the replay measured on the simulated disk (count mode),
# for a layout of fragmented files: each has a tree below its inode (ext4: more than 4 extents; ext2: indirect
# blocks).  The replay reads the trees' first level, as the inodes name it, in one sorted sweep ("tree-roots"
# in --dump-plan: one block per file here) before libext2fs walks the trees one block at a time in layout
# order; the model must follow (reorder/replay_predict.c, step 2).  Either side alone fails here: a replay that
# walked the trees cold measured 0.561 s (ext4), the model with the sweep says 0.330 s; the model of that time
# (no first-level sweep, an ordered pass) says 0.561 s against the 0.330 s measured now.
if [ -z "${PF_ONE_CPU:-}" ] && command -v taskset >/dev/null; then
	PF_ONE_CPU=1 exec taskset -c 0 bash "$0" "$@" # ext4 places small files per CPU: keep the interleaving
fi
source "$TOP/tests/lib.sh"
pf_require_simdisk
SIM_SKIP_UNSUPPORTED=1
MKLAYOUT=$TOOLS/pf_mklayout
[ -x "$MKLAYOUT" ] || pf_skip "needs $MKLAYOUT (make tools)"
[ -x "$SIM_BIN" ] && [ -x "$PREFETCHD" ] || pf_skip "needs simdisk and prefetchd (make all; make -C tests/simdisk)"

T=$(pf_tmpdir)
D=$(sim_tmpfs_dir 160) || pf_skip "no tmpfs room for the image"
M=$T/mnt
mkdir -p "$M"

# tree_case TYPE: ext4 (extent trees: more than 4 extents) or ext2 (indirect blocks: more than 12 blocks).
tree_case() {
	local type=$1 img=$D/trees-$1.img trees=0 n i c
	rm -f "$img"; truncate -s 128M "$img"
	mke2fs -q -F -t "$type" -b 4096 -E lazy_itable_init=0 "$img" >/dev/null || pf_fail "mke2fs -t $type"
	mount -o loop "$img" "$M" || pf_fail "mount $img"
	mkdir -p "$M/usr/lib"
	# Each file grows in 8 pieces, a piece of junk written and synced between two of its pieces: 8 extents
	# apart (ext4), its indirect block in its middle (ext2).
	for i in $(seq 1 30); do
		for c in 1 2 3 4 5 6 7 8; do
			head -c 16384 /dev/urandom >>"$M/usr/lib/lib$i.so"
			sync "$M/usr/lib/lib$i.so"
			head -c $((16384 * (1 + i % 5))) /dev/urandom >>"$M/junk$i"
			sync "$M/junk$i"
		done
	done
	rm -f "$M"/junk*
	for i in $(seq 1 30); do
		n=$(filefrag "$M/usr/lib/lib$i.so" | awk '{ print $2 }')
		if [ "$type" = ext2 ]; then trees=$((trees + 1)); elif [ "$n" -gt 4 ]; then trees=$((trees + 1)); fi
	done
	[ "$trees" -ge 25 ] || pf_fail "$type: only $trees of 30 files have more than 4 extents (an extent tree)"
	# The layout in an order far from the files' places: the tree reads in layout order seek back and forth.
	for i in $(seq 1 7 30) $(seq 4 7 30) $(seq 2 7 30) $(seq 6 7 30) $(seq 3 7 30) $(seq 7 7 30) $(seq 5 7 30); do
		echo "$M/usr/lib/lib$i.so"
	done >"$T/list"
	local L=$T/layout-$type
	"$MKLAYOUT" "$L" "$T/list" >/dev/null || pf_fail "pf_mklayout"
	umount "$M" || pf_fail "umount"

	sim_start "$img" count
	sim_reorder "$T/check.out" --check --layout "$L" || pf_fail "$type --check: $(cat "$T/check.out")"
	local pred meas roots out
	read -r pred _ <<<"$(sim_reorder_predicted "$T/check.out")"
	[ -n "$pred" ] || pf_fail "$type: --check prints no replay prediction: $(cat "$T/check.out")"
	sim_mount "$M"
	pf_drop_caches
	sim_reset
	out=$("$PREFETCHD" replay "$L" --medium rotational --dump-plan "$T/plan" 2>&1) || pf_fail "$type replay: $out"
	sim_settle
	meas=$(sim_seconds)
	sim_umount
	roots=$(awk '$1 == "m" && $3 == "meta" && $4 == "tree-roots" { n += $7 / 4096 } END { print n + 0 }' "$T/plan")
	[ "$roots" -ge "$trees" ] ||
		pf_fail "$type: the metadata pass read ahead $roots first-level tree blocks, want one per file with a tree ($trees)"
	pf_note "$type: replay of 30 files with trees: predicted $pred s, measured $meas s ($(sim_stat requests) requests; $roots tree blocks in the first sweep)"
	awk -v p="$pred" -v m="$meas" 'BEGIN { e = (p - m) / m; exit !(e <= 0.03 && e >= -0.03) }' ||
		pf_fail "$type: predicted replay $pred s, measured $meas s: more than 3 % apart"
	sim_stop
}
tree_case ext4
tree_case ext2
