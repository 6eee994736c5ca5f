#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 53-reorder-flash: prefetch-reorder on slow flash (issue #17), on real images.
#
#  1. Erase blocks and the write budget, on a 1 KiB-block ext4 with 64 KiB erase blocks and a 4 KiB-block ext4
#     with 1 MiB erase blocks (PREFETCH_MEDIUM=slow-flash, REORDER_ERASE_BLOCK_KB): --dry-run names the SD
#     model and the erase block and writes nothing; a run with --write-budget smaller than the plan stops with
#     exit 3 having copied at most the budget (the summary's MB, and the blocks newly holding data counted on
#     the disk); the next run finishes (exit 0) and the one after moves nothing.  After each: every run of
#     data blocks that was free space before that run (filefrag of every file, against dumpe2fs's free blocks) starts
#     on an erase-block boundary, and all but one (the layout's last, shorter chunk) end on one; e2fsck -fn
#     clean; every file the same.
#  2. The erase block from the filesystem's RAID stripe width (mke2fs -E stripe_width=) when the key is 0.
#  3. Discard on a loop device over a sparse file on a filesystem that punches holes (/var/tmp): after a run
#     every block that was in use before and is free after reads back as zeroes from the backing file, the
#     summary says how many blocks were discarded (at least those), every file is the same and e2fsck -fn is
#     clean.  (The backing file's size on disk stays about the same: the copies filled holes the old blocks
#     left.)  With --no-discard, and on PREFETCH_MEDIUM=rotational, nothing
#     is discarded (the freed blocks keep their bytes); nor under a read-only mount (--final-shutdown), where the
#     kernel may still read the old copies until the reboot.
# (The refusal on fast flash is 51-reorder-refusals'; cuts during a slow-flash run are 60-reorder-crash's
# CRASH_FLASH series.)
set -u
source "$TOP/tests/lib.sh"
pf_require_root
pf_private_mount_ns "$@"
[ -x "$TOOLS/mklayout" ] || pf_skip "test tools not built (make tools)"
for c in filefrag dumpe2fs losetup fallocate; do command -v $c >/dev/null || pf_skip "needs $c"; done

work=$(pf_tmpdir)
mnt=$work/mnt
mkdir -p "$mnt"
pf_cleanup_add "umount '$mnt' 2>/dev/null"

# free_ranges IMAGE: the free blocks, one "first last" line per range (dumpe2fs, group by group)
free_ranges() {
	dumpe2fs "$1" 2>/dev/null | sed -n 's/^  Free blocks: //p' | tr ',' '\n' |
		awk 'NF { n = split($1, a, "-"); print a[1], (n > 1 ? a[2] : a[1]) }'
}

# data_extents IMAGE: every file's data extents as "first last" (filefrag -e through a read-only mount of a
# private copy: a loop device's cache must not answer for the image)
data_extents() {
	local snap="$work/snap.img"
	cp --sparse=always "$1" "$snap" && mount -o loop,ro "$snap" "$mnt" || return 1
	find "$mnt" -xdev -type f -size +0 -exec filefrag -e {} + 2>/dev/null |
		awk -F: '$1 ~ /^ *[0-9]+$/ { split($3, p, /\.\./); s = p[1] + 0; e = p[2] + 0; print s, e }'
	umount "$mnt"
	rm -f "$snap"
}

# new_runs FREE_BEFORE EXTENTS_AFTER: the runs of data blocks now that were free before, "start length"
new_runs() {
	awk 'FNR == NR { for (b = $1; b <= $2; b++) free[b] = 1; next }
	     { for (b = $1; b <= $2; b++) if (b in free) used[b] = 1 }
	     END { for (b in used) print b }' "$1" "$2" | sort -n |
		awk 'NR > 1 && $1 == prev + 1 { prev = $1; next }
		     NR > 1 { print start, prev - start + 1 }
		     { start = $1; prev = $1 }
		     END { if (NR) print start, prev - start + 1 }'
}

# check_aligned RUNS EB_BLOCKS LABEL: every run starts on a boundary, all but one end on one
check_aligned() {
	local bad
	[ -s "$1" ] || pf_fail "$3: no data was moved into free space"
	bad=$(awk -v eb="$2" '$1 % eb { s++ } ($1 + $2) % eb { e++ } END { print s + 0, e + 0, NR }' "$1")
	read -r s e n <<<"$bad"
	[ "$s" -eq 0 ] || pf_fail "$3: $s of $n runs of moved blocks start off an erase-block boundary ($2 blocks): $(awk -v eb="$2" '$1 % eb' "$1" | head -3 | tr '\n' ' ')"
	[ "$e" -le 1 ] || pf_fail "$3: $e of $n runs of moved blocks end off an erase-block boundary: $(awk -v eb="$2" '($1 + $2) % eb' "$1" | head -3 | tr '\n' ' ')"
	pf_note "$3: $n runs of moved blocks, all starting on a $2-block erase-block boundary, $e ending off one"
}

manifest() { pf_manifest "$1" "$2" "$work" "$mnt"; }

# ---- 1. erase blocks and the write budget ----
# case BS EB_KB SIZE_MB BUDGET_MB
budget_case() {
	local bs=$1 ebkb=$2 mb=$3 budget=$4 img label out rc eb mbw
	label="ext4 ${bs} B blocks, ${ebkb} KiB erase blocks"
	img=$work/img-$bs
	"$TOP/tests/mkaged.sh" "$img" "$mb" ext4 "$bs" 30 $((bs / 100)) >/dev/null 2>&1 || pf_fail "mkaged.sh $label"
	"$TOOLS/mklayout" --order reverse --percent 60 -o "$work/layout-$bs" "$img" >/dev/null || pf_fail "mklayout"
	printf 'PREFETCH_MEDIUM=slow-flash\nREORDER_ERASE_BLOCK_KB=%s\nREORDER_TIME_BUDGET=3600\n' "$ebkb" >"$work/cfg-$bs"
	manifest "$img" "$work/m.ref" || pf_fail "cannot read $img"
	free_ranges "$img" >"$work/free0"
	eb=$((ebkb * 1024 / bs))

	local sum; sum=$(sha256sum <"$img")
	out=$("$REORDER" --config "$work/cfg-$bs" --min-gain off --dry-run --layout "$work/layout-$bs" "$img" 2>&1) ||
		pf_fail "$label: --dry-run: $out"
	[ "$(sha256sum <"$img")" = "$sum" ] || pf_fail "$label: --dry-run changed the image"
	[[ $out == *"replay model (the gain's): SD card (A1)"* ]] || pf_fail "$label: --dry-run names no SD model: $out"
	[[ $out == *"erase block: $ebkb KiB (REORDER_ERASE_BLOCK_KB)"* ]] || pf_fail "$label: --dry-run names no erase block: $out"
	local plan_mb; plan_mb=$(sed -n 's/^a reorder would write \([0-9.]*\) MB in [0-9]* erase blocks.*/\1/p' <<<"$out")
	[ -n "$plan_mb" ] || pf_fail "$label: --dry-run says nothing of the bytes and erase blocks to write: $out"
	awk -v p="$plan_mb" -v b="$budget" 'BEGIN { exit !(p > b) }' || pf_fail "$label: the plan ($plan_mb MB) fits the budget $budget MB: no test"

	# within the budget: exit 3, at most the budget written
	out=$("$REORDER" --config "$work/cfg-$bs" --min-gain off --write-budget "$budget" --layout "$work/layout-$bs" "$img" 2>&1); rc=$?
	[ $rc -eq 3 ] || pf_fail "$label: --write-budget $budget: exit $rc, want 3 (stopped by the budget): $out"
	[[ $out == *"stopped by the write budget"* ]] || pf_fail "$label: the summary does not say the write budget stopped it: $out"
	mbw=$(sed -n 's/.*; wrote \([0-9.]*\) MB in [0-9]* erase blocks of .*/\1/p' <<<"$out")
	[ -n "$mbw" ] || pf_fail "$label: the summary says nothing of the bytes written: $out"
	awk -v w="$mbw" -v b="$budget" 'BEGIN { exit !(w > 0 && w <= b) }' || pf_fail "$label: wrote $mbw MB, budget $budget MB"
	pf_fsck_clean "$img"
	manifest "$img" "$work/m.cur" && cmp -s "$work/m.ref" "$work/m.cur" || pf_fail "$label: files differ after the budgeted run"
	data_extents "$img" >"$work/ext1" || pf_fail "$label: cannot read the extents"
	new_runs "$work/free0" "$work/ext1" >"$work/runs1"
	local moved; moved=$(awk '{ s += $2 } END { print s + 0 }' "$work/runs1")
	[ $((moved * bs)) -le $((budget * 1000000)) ] || pf_fail "$label: $moved blocks newly hold data, more than the budget $budget MB"
	check_aligned "$work/runs1" "$eb" "$label, budget $budget MB"
	pf_note "$label: budget $budget MB: wrote $mbw MB ($moved blocks on the disk); $(grep -o 'wrote [^;]*' <<<"$out")"

	# the rest: its destinations are what was free after the budgeted run (it may reuse blocks that run freed)
	free_ranges "$img" >"$work/free1"
	out=$("$REORDER" --config "$work/cfg-$bs" --min-gain off --layout "$work/layout-$bs" "$img" 2>&1); rc=$?
	[ $rc -eq 0 ] || pf_fail "$label: the run after the budgeted one: exit $rc: $out"
	pf_fsck_clean "$img"
	manifest "$img" "$work/m.cur" && cmp -s "$work/m.ref" "$work/m.cur" || pf_fail "$label: files differ after the full run"
	data_extents "$img" >"$work/ext2" || pf_fail "$label: cannot read the extents"
	new_runs "$work/free1" "$work/ext2" >"$work/runs2"
	check_aligned "$work/runs2" "$eb" "$label, completed"
	out=$("$REORDER" --config "$work/cfg-$bs" --min-gain off --layout "$work/layout-$bs" "$img" 2>&1) ||
		pf_fail "$label: the third run failed: $out"
	[[ $out == *"moved 0 blocks"* ]] || pf_fail "$label: the third run moved something again: $out"
}
budget_case 1024 64 64 3
budget_case 4096 1024 128 10

# ---- 2. the erase block from the RAID stripe width ----
img=$work/raid.img
"$TOP/tests/mkaged.sh" "$img" 64 ext4 4096 30 7 -E stride=16,stripe_width=64 >/dev/null 2>&1 || pf_fail "mkaged.sh (raid)"
"$TOOLS/mklayout" --order reverse --percent 60 -o "$work/layout-raid" "$img" >/dev/null || pf_fail "mklayout"
printf 'PREFETCH_MEDIUM=slow-flash\n' >"$work/cfg-raid"
out=$("$REORDER" --config "$work/cfg-raid" --min-gain off --dry-run --layout "$work/layout-raid" "$img" 2>&1) ||
	pf_fail "raid --dry-run: $out"
[[ $out == *"erase block: 256 KiB (the filesystem's RAID stripe width (64 blocks))"* ]] ||
	pf_fail "REORDER_ERASE_BLOCK_KB=0 on a filesystem with stripe_width=64 (4 KiB blocks): want 256 KiB from it: $out"
pf_note "erase block from the superblock: $(grep '^erase block' <<<"$out")"

# ---- 3. discard on a loop device that punches holes ----
dir=${PF_TEST_SCRATCH:-/var/tmp}
probe=$(mktemp "$dir/prefetch-punch.XXXXXX") || pf_skip "cannot write in $dir"
pf_cleanup_add "rm -f '$probe'"
head -c 65536 /dev/urandom >"$probe"
fallocate -p -o 0 -l 65536 "$probe" 2>/dev/null && [ "$(stat -c %b "$probe")" -eq 0 ] ||
	pf_skip "$dir ($(stat -f -c %T "$dir")) does not punch holes: no discard to see"
ddir=$(mktemp -d "$dir/prefetch-53.XXXXXX") || pf_fail "mktemp"
pf_cleanup_add "rm -rf '$ddir'"

# discard_case NAME CONFIG_LINES REORDER_ARGS...: reorder the image on a loop device; leaves $ddir/img, free0/free1
discard_case() {
	local name=$1 conf=$2; shift 2
	"$TOP/tests/mkaged.sh" "$ddir/img" 64 ext4 4096 40 5 >/dev/null 2>&1 || pf_fail "mkaged.sh ($name)"
	"$TOOLS/mklayout" --order reverse --percent 60 -o "$ddir/layout" "$ddir/img" >/dev/null || pf_fail "mklayout"
	printf '%b' "$conf" >"$ddir/cfg"
	manifest "$ddir/img" "$work/m.ref" || pf_fail "cannot read the image ($name)"
	free_ranges "$ddir/img" >"$work/free0"
	blocks0=$(stat -c %b "$ddir/img")
	# attached and detached here (each case its own device); at exit only if still ours
	local dev; dev=$(losetup -f --show "$ddir/img") || pf_fail "losetup"
	pf_cleanup_add "[ \"\$(losetup -nO BACK-FILE '$dev' 2>/dev/null)\" = '$ddir/img' ] && losetup -d '$dev'"
	if [ "$(cat "/sys/block/${dev#/dev/}/queue/discard_max_bytes" 2>/dev/null || echo 0)" -eq 0 ]; then
		losetup -d "$dev"
		pf_skip "$dev does not support discard here"
	fi
	out=$("$REORDER" --config "$ddir/cfg" --min-gain off --layout "$ddir/layout" "$@" "$dev" 2>&1) ||
		pf_fail "$name: reorder on $dev: $out"
	losetup -d "$dev"
	pf_fsck_clean "$ddir/img"
	manifest "$ddir/img" "$work/m.cur" && cmp -s "$work/m.ref" "$work/m.cur" || pf_fail "$name: files differ"
	free_ranges "$ddir/img" >"$work/free1"
	blocks1=$(stat -c %b "$ddir/img")
	# freed: in use before, free after
	awk 'FNR == NR { for (b = $1; b <= $2; b++) f0[b] = 1; next }
	     { for (b = $1; b <= $2; b++) if (!(b in f0)) print b }' "$work/free0" "$work/free1" |
		awk 'NR > 1 && $1 == prev + 1 { prev = $1; next }
		     NR > 1 { print start, prev - start + 1 }
		     { start = $1; prev = $1 }
		     END { if (NR) print start, prev - start + 1 }' >"$work/freed"
	freed=$(awk '{ s += $2 } END { print s + 0 }' "$work/freed")
	[ "$freed" -gt 0 ] || pf_fail "$name: the run freed no block: no test"
	# how many of the freed blocks read back as zeroes from the backing file
	zero=0
	while read -r s n; do
		nz=$(dd if="$ddir/img" bs=4096 skip="$s" count="$n" 2>/dev/null | tr -d '\0' | wc -c)
		[ "$nz" -eq 0 ] && zero=$((zero + n))
	done <"$work/freed"
}

discard_case slow-flash 'PREFETCH_MEDIUM=slow-flash\nREORDER_ERASE_BLOCK_KB=64\n'
disc=$(sed -n 's/.*; discarded \([0-9]*\) freed blocks.*/\1/p' <<<"$out")
[ -n "$disc" ] || pf_fail "slow flash: the summary says nothing of a discard: $out"
[ "$disc" -ge "$freed" ] || pf_fail "slow flash: discarded $disc blocks, fewer than the $freed freed"
[ "$zero" -eq "$freed" ] || pf_fail "slow flash: only $zero of the $freed freed blocks read back as zeroes"
pf_note "discard: $freed blocks freed, $disc discarded, all read back as zeroes; backing file $blocks0 -> $blocks1 sectors"

discard_case no-discard 'PREFETCH_MEDIUM=slow-flash\nREORDER_ERASE_BLOCK_KB=64\n' --no-discard
[[ $out != *discard* ]] || pf_fail "--no-discard: the summary speaks of a discard: $out"
[ "$zero" -lt "$freed" ] || pf_fail "--no-discard: all $freed freed blocks are zeroes (punched?)"
discard_case rotational 'PREFETCH_MEDIUM=rotational\n'
[[ $out != *discard* ]] || pf_fail "rotational: the summary speaks of a discard: $out"
[ "$zero" -lt "$freed" ] || pf_fail "rotational: all $freed freed blocks are zeroes (punched?)"
pf_note "no discard with --no-discard nor on a rotational medium ($((freed - zero)) of $freed freed blocks keep their bytes)"

# ---- 4. never under a read-only mount (--final-shutdown): the kernel may still read the old copies ----
"$TOP/tests/mkaged.sh" "$ddir/img" 64 ext4 4096 40 5 >/dev/null 2>&1 || pf_fail "mkaged.sh (mounted)"
"$TOOLS/mklayout" --order reverse --percent 60 -o "$ddir/layout" "$ddir/img" >/dev/null || pf_fail "mklayout"
printf 'PREFETCH_MEDIUM=slow-flash\nREORDER_ERASE_BLOCK_KB=64\n' >"$ddir/cfg"
dev=$(losetup -f --show "$ddir/img") || pf_fail "losetup"
pf_cleanup_add "[ \"\$(losetup -nO BACK-FILE '$dev' 2>/dev/null)\" = '$ddir/img' ] && losetup -d '$dev'"
mount -o ro "$dev" "$mnt" || pf_fail "mount -o ro $dev"
out=$("$REORDER" --config "$ddir/cfg" --min-gain off --final-shutdown --layout "$ddir/layout" "$dev" 2>&1) ||
	{ umount "$mnt"; pf_fail "--final-shutdown on $dev mounted read-only: $out"; }
umount "$mnt"
losetup -d "$dev"
[[ $out == *"moved "[1-9]* ]] || pf_fail "mounted read-only: moved nothing: $out"
[[ $out == *"no discard (mounted)"* ]] || pf_fail "mounted read-only: want no discard: $out"
pf_fsck_clean "$ddir/img"
pf_note "mounted read-only: $(grep -o 'wrote [^;]*; no discard[^;]*' <<<"$out")"
echo "PASS: erase-block-aligned destinations and the write budget on 1 KiB and 4 KiB blocks, erase block from the RAID stripe width, discard of exactly the freed blocks"
