#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 61-reorder-fstypes: prefetch-reorder on every kind of ext filesystem it claims, and its refusals.
# (Moves with --min-gain off: these small aged images need not promise a faster replay; this test wants the moves.)
#
# Kinds: ext2, ext3, ext4 (with and without metadata_csum, 64bit, block-mapped files via ^extent, no
# journal), 1 KiB and 4 KiB blocks, directories in the layout.  Each: an aged image 50 % full, a random
# layout, then prefetch-reorder; e2fsck -fn must be clean, every file the same (contents and identity), the
# layout's blocks less scattered than before (tests/tools/layout_gaps, our own yardstick) and
# prefetch-reorder --check must report fewer discontinuities.  --dry-run must not write a byte.
# Refusals (non-zero exit, a message naming the reason, image untouched): the image mounted rw, an unclean
# filesystem (error state, not cleanly unmounted, journal needing recovery), a layout for another UUID,
# bigalloc.  Time budget: a 1 ms budget stops after each unit (exit 3), the filesystem is clean after every
# stop, and repeated runs finish the job.
set -u
source "$TOP/tests/lib.sh"
pf_require_root
pf_private_mount_ns "$@"
[ -x "$TOOLS/mklayout" ] && [ -x "$TOOLS/layout_gaps" ] || pf_skip "test tools not built (make tools)"
"$REORDER" --help >/dev/null 2>&1 || pf_skip "prefetch-reorder --help fails: not implemented yet"

[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
work=$(pf_tmpdir)
mnt=$work/mnt
mkdir -p "$mnt"
pf_cleanup_add "umount '$mnt'"
failures=0
summary=()

bad() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

manifest() { pf_manifest "$1" "$2" "$work" "$mnt"; }

gaps() { "$TOOLS/layout_gaps" "$1" "$2" | sed -n 's/.* discontinuities \([0-9]*\) .*/\1/p'; }

# check_disc LAYOUT IMAGE: the discontinuity figure prefetch-reorder --check prints for now (first number after it)
check_disc() {
	"$REORDER" --check --layout "$1" "$2" 2>&1 | grep -ioE 'discontinuit[a-z]*[^0-9]*[0-9]+' | head -1 |
		grep -oE '[0-9]+$'
}

# kind NAME TYPE BLOCKSIZE [mke2fs args]
kind() {
	local name=$1 type=$2 bs=$3; shift 3
	local img=$work/$name.img layout=$work/$name.layout out rc
	"$TOP/tests/mkaged.sh" "$img" 32 "$type" "$bs" 50 17 "$@" >"$work/mkaged.out" 2>&1 ||
		{ bad "$name: mkaged.sh: $(tail -2 "$work/mkaged.out")"; return; }
	"$TOOLS/mklayout" --order random --seed 5 --percent 40 --dirs --special -o "$layout" "$img" >/dev/null ||
		{ bad "$name: mklayout"; return; }
	manifest "$img" "$work/m.ref" || { bad "$name: cannot read the image"; return; }
	local g0 c0 g1 c1
	g0=$(gaps "$layout" "$img"); c0=$(check_disc "$layout" "$img")

	# --dry-run writes nothing
	local sum0; sum0=$(sha256sum <"$img")
	out=$("$REORDER" --dry-run --layout "$layout" "$img" 2>&1) || bad "$name: --dry-run failed: $(echo "$out" | tail -2)"
	[ "$(sha256sum <"$img")" = "$sum0" ] || bad "$name: --dry-run changed the image"

	out=$("$REORDER" --min-gain off --layout "$layout" "$img" 2>&1); rc=$?
	if [ $rc -ne 0 ]; then bad "$name: prefetch-reorder exit $rc: $(echo "$out" | tail -3 | tr '\n' ' ')"; return; fi
	out=$(e2fsck -fn "$img" 2>&1) || bad "$name: e2fsck -fn not clean: $(echo "$out" | grep -v '^Pass\|^e2fsck' | head -6 | tr '\n' ' ')"
	if manifest "$img" "$work/m.cur"; then
		cmp -s "$work/m.ref" "$work/m.cur" || bad "$name: files differ: $(diff "$work/m.ref" "$work/m.cur" | grep '^[<>]' | head -4 | tr '\n' ' ')"
	else
		bad "$name: cannot mount after reorder"
	fi
	g1=$(gaps "$layout" "$img"); c1=$(check_disc "$layout" "$img")
	[ -n "$g0" ] && [ -n "$g1" ] && [ "$g1" -lt "$g0" ] || bad "$name: layout_gaps discontinuities not fewer: $g0 -> $g1"
	if [ -z "$c0" ] || [ -z "$c1" ]; then
		bad "$name: no discontinuity figure in prefetch-reorder --check output"
	elif [ "$c1" -ge "$c0" ]; then
		bad "$name: --check discontinuities not fewer: $c0 -> $c1"
	fi
	summary+=("$(printf '%-16s %-5s %5s %9s %9s %9s %9s' "$name" "$type" "$bs" "$g0" "$g1" "${c0:--}" "${c1:--}")")
}

kind ext2-1k ext2 1024
kind ext2-4k ext2 4096
kind ext3-1k ext3 1024
kind ext3-4k ext3 4096
kind ext4-1k ext4 1024
kind ext4-4k ext4 4096
kind ext4-nocsum ext4 4096 -O ^metadata_csum
kind ext4-64bit-csum ext4 4096 -O 64bit,metadata_csum
kind ext4-noextent ext4 4096 -O ^extent,^64bit
kind ext4-nojournal ext4 1024 -O ^has_journal
kind ext4-inline ext4 4096 -O inline_data

# ---- the time budget: a tiny one stops after one unit (exit 3), clean; runs again until done ----
budget_series() {
	local img=$work/budget.img layout=$work/budget.layout out rc runs=0 g0 g1 said=''
	"$TOP/tests/mkaged.sh" "$img" 32 ext4 4096 50 31 >/dev/null 2>&1 || { bad "budget: mkaged.sh"; return; }
	"$TOOLS/mklayout" --order reverse --seed 9 --percent 60 --dirs --special -o "$layout" "$img" >/dev/null || { bad "budget: mklayout"; return; }
	manifest "$img" "$work/m.ref" || { bad "budget: cannot read the image"; return; }
	g0=$(gaps "$layout" "$img")
	# what the plan moves: mkaged's image differs from build to build (where the kernel put its files), and so does
	# the plan (640-960 of 2437 blocks in four builds)
	local planned
	planned=$("$REORDER" --min-gain off --chunk-blocks 64 --dry-run --layout "$layout" "$img" 2>&1 | sed -n 's/^plan: .* blocks=\([0-9]*\) .*/\1/p')
	while :; do
		runs=$((runs + 1))
		out=$("$REORDER" --min-gain off --chunk-blocks 64 --time-budget 0.001 --layout "$layout" "$img" 2>&1); rc=$?
		said+="
    run $runs, exit $rc: $(echo "$out" | tail -1)" # each run's summary, for a failure to show
		if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then bad "budget: run $runs exit $rc: $(echo "$out" | tail -1)"; return; fi
		out=$(e2fsck -fn "$img" 2>&1) || { bad "budget: e2fsck -fn not clean after run $runs (exit $rc)"; return; }
		[ $rc -eq 0 ] && break
		[ $runs -lt 200 ] || { bad "budget: still not done after $runs runs"; return; }
	done
	[ $runs -gt 1 ] || bad "budget: a 1 ms budget with 64-block chunks did not stop the first run (nothing to split?)"
	if manifest "$img" "$work/m.cur"; then cmp -s "$work/m.ref" "$work/m.cur" || bad "budget: files differ"; fi
	g1=$(gaps "$layout" "$img")
	# the job is finished by the reorder's own measure: a dry run plans nothing more
	"$REORDER" --min-gain off --chunk-blocks 64 --dry-run --layout "$layout" "$img" 2>&1 | grep -q '^plan: decision=nothing blocks=0 ' ||
		bad "budget: the runs ended (exit 0) with blocks still to move:$said"
	# and where the plan moved blocks into the layout's order, fewer breaks in it
	[ "${planned:-0}" -lt 256 ] || [ "$g1" -lt "$g0" ] ||
		bad "budget: discontinuities not fewer: $g0 -> $g1 ($planned blocks planned); the runs said:$said"
	summary+=("$(printf 'time budget 1 ms: %d runs to finish (exit 3 then 0), clean after each, %s blocks planned, gaps %s -> %s' "$runs" "$planned" "$g0" "$g1")")
}
budget_series

# ---- refusals: non-zero exit, the reason named, the image untouched ----
# refuse NAME PATTERN IMAGE LAYOUT: prefetch-reorder must fail with a message matching PATTERN (ERE, any case)
refuse() {
	local name=$1 pat=$2 img=$3 layout=$4 sum out rc
	sum=$(sha256sum <"$img")
	out=$("$REORDER" --min-gain off --layout "$layout" "$img" 2>&1); rc=$?
	if [ $rc -eq 0 ]; then bad "refusal $name: prefetch-reorder exit 0 (output: $(echo "$out" | tail -2 | tr '\n' ' '))"
	elif ! echo "$out" | grep -qiE "$pat"; then bad "refusal $name: message does not say /$pat/: $(echo "$out" | tail -2 | tr '\n' ' ')"
	fi
	[ "$(sha256sum <"$img")" = "$sum" ] || bad "refusal $name: image changed"
	summary+=("$(printf 'refusal %-24s exit %-3s %s' "$name" "$rc" "$(echo "$out" | tail -1 | cut -c1-70)")")
}

base=$work/refuse.img
"$TOP/tests/mkaged.sh" "$base" 32 ext4 4096 30 23 >/dev/null 2>&1 || pf_fail "mkaged.sh for refusals"
"$TOOLS/mklayout" --order reverse --percent 50 -o "$work/refuse.layout" "$base" >/dev/null || pf_fail mklayout
img=$work/r.img

# mounted read-write: by the image file name and by its loop device
cp --sparse=always "$base" "$img"
mount -o loop "$img" "$mnt" || pf_fail "mount $img"
dev=$(findmnt -n -o SOURCE "$mnt")
out=$("$REORDER" --layout "$work/refuse.layout" "$img" 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -qi mounted || bad "refusal mounted (image name): exit $rc: $(echo "$out" | tail -1)"
summary+=("$(printf 'refusal %-24s exit %-3s %s' "mounted-image" "$rc" "$(echo "$out" | tail -1 | cut -c1-70)")")
out=$("$REORDER" --layout "$work/refuse.layout" "$dev" 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -qi mounted || bad "refusal mounted ($dev): exit $rc: $(echo "$out" | tail -1)"
summary+=("$(printf 'refusal %-24s exit %-3s %s' "mounted-loopdev" "$rc" "$(echo "$out" | tail -1 | cut -c1-70)")")
umount "$mnt" || pf_fail "umount $mnt"
pf_fsck_clean "$img"

# unclean: errors recorded, not cleanly unmounted, journal needing recovery
for st in "error-state:ssv state 2" "not-clean:ssv state 0" "needs-recovery:feature needs_recovery"; do
	cp --sparse=always "$base" "$img"
	debugfs -w -R "${st#*:}" "$img" >/dev/null 2>&1 || pf_fail "debugfs ${st#*:}"
	refuse "${st%%:*}" 'clean|fsck|error|recover|journal' "$img" "$work/refuse.layout"
done

# a layout for another filesystem
cp --sparse=always "$base" "$img"
"$TOOLS/mklayout" --order reverse --percent 50 --bad-uuid -o "$work/other.layout" "$base" >/dev/null || pf_fail mklayout
refuse uuid-mismatch 'uuid|another file ?system|other file ?system|not for this' "$img" "$work/other.layout"

# bigalloc (clusters): the feature must be named
"$TOP/tests/mkaged.sh" "$work/big.img" 64 ext4 4096 30 29 -O bigalloc -C 16384 >/dev/null 2>&1 ||
	pf_fail "mkaged.sh bigalloc"
"$TOOLS/mklayout" --order reverse --percent 50 -o "$work/big.layout" "$work/big.img" >/dev/null || pf_fail mklayout
refuse bigalloc 'bigalloc' "$work/big.img" "$work/big.layout"

echo
printf '%-16s %-5s %5s %9s %9s %9s %9s\n' kind type bs gaps0 gaps1 check0 check1
printf '%s\n' "${summary[@]}"
[ "$failures" -eq 0 ] || pf_fail "$failures failed checks"
