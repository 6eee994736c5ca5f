#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 60-reorder-crash: prefetch-reorder loses nothing, whenever the power goes.
# (--min-gain off: these small aged images need not promise a faster replay; this test wants the writes.)
#
# The real prefetch-reorder binary runs on its own I/O path (libext2fs' unix_io, write-back, its own fsyncs and
# its O_DIRECT read-back) with tests/tools/shim/crash_shim.c preloaded: the shim numbers the writes to the
# image, keeps what each write since the last fsync overwrote, and at write k cuts the power.  Cut modes (what
# the disk's volatile write cache does with the writes since the last flush):
#   clean    all stored in order            drop     all lost
#   reorder  a random subset stored in random order, a quarter of those torn at a sector boundary
#   torn     all stored, and write k itself stored up to a random sector boundary
#   half     as torn, the tear at a boundary of half the filesystem block
# Tears (torn, reorder) are at CRASH_TORN_SECTOR bytes, default 512, on every filesystem, metadata_csum
# included: the metadata goes through the journal and the superblock is written so that no tear breaks it
# (reorder/journal_io.h); ext2 keeps its ordered writes.
#
# Series (TYPE:BS:FILL:ORDER:MB:LAYOUT_PERCENT[:BLOCKS_PER_GROUP], the last given to mke2fs -g for a small
# image of several groups; the label says how many groups the image has):
#   CRASH_EVERY   every write is a cut point; the mode rotates with k (CRASH_EVERY_MODES=all: every mode at every k)
#   CRASH_SPREAD  CRASH_POINTS points spread evenly plus the first and last three, modes rotating, plus
#                 CRASH_MODE_POINTS pseudo-random points in each of drop, reorder and torn
#   CRASH_ROOM    as CRASH_SPREAD, on an image where the reorder makes room first (REORDER_MAKE_ROOM: other
#                 files moved out of a window, then the layout into it; reorder/evacuate.h): SPEC is
#                 FILL:MB:TRACE, tests/mkbootset.sh --fill FILL --size MB with the boot set of TRACE, the layout
#                 the boot's reads (pf_mklayout); the full run must say it made room, so cuts fall in both parts
#   CRASH_ERROR   not a cut: write k fails with EIO (shim mode eio) and the run goes on to its error path, at
#                 every write (CRASH_ERROR_POINTS=N: N spread points); several units in one group (chunks of 64 blocks),
#                 so the failure can fall inside a group's pointer switch.  Checked: the run exits with an error
#                 (never 0: no failed write goes unnoticed) and one message; no block a file still names is
#                 left marked free (e2fsck -fn's "+" bitmap differences), then as after a cut
#   CRASH_FLASH   as CRASH_SPREAD, on slow flash (PREFETCH_MEDIUM=slow-flash, 64 KiB erase blocks): destinations
#                 in whole erase blocks, and the discard of the freed blocks (a hole punched in the image: a
#                 write to the shim) after the run, so cuts fall among the discards too
# For each: a full run twice (same write digest: deterministic, or the cut points mean nothing), e2fsck -fn clean,
# every file the same (contents, size, mode, links, inode, mtime); after every cut: exit 99 (cut), e2fsck -p
# repairs without asking (exit 0 or 1), e2fsck -fn then clean, every file the same; then the resumed run
# (prefetch-reorder again, no shim) exits 0, e2fsck -fn clean, every file the same (CRASH_RESUME_CHECK_EVERY=N:
# the files after the resume at every N-th cut only).  Prints a summary table; PF_KEEP=1 keeps failing images.
# CRASH_EVERY_STRIDE=S: the every-write series cut every S-th write only (k = 1 + i mod S, S+1+i mod S, ... for the
# i-th series, so that the series together cover every position); 4 in make check (a sample, for time), 1 in
# the long mode.  CRASH_KERNEL_EVERY=N: at every N-th cut of a filesystem with a journal the kernel mounts the
# image first (its replay of the journal, as a boot without fsck would), then the checks as above.
# CRASH_LONG=1 (make check-long): every write of the same small series cut in every mode, and 1 GiB images of the same
# kinds (ext4 4 KiB and 1 KiB blocks, 50 % and 95 % full; ext3; ext2) at spread points.
set -u
# Mounts in a private mount namespace: a namespace another process creates meanwhile (other tests and
# benchmarks do) would otherwise copy ours and keep the device claimed after our umount.
# (Not as a normal user, e.g. a package build's make check: pf_require_root below skips with its reason.)
if [ -z "${PF_PRIVATE_MNT_NS:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
	PF_PRIVATE_MNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
source "$TOP/tests/lib.sh"
pf_require_root

if [ -n "${CRASH_LONG:-}" ]; then
	CRASH_EVERY_MODES=${CRASH_EVERY_MODES:-all}
	CRASH_EVERY_STRIDE=${CRASH_EVERY_STRIDE:-1}
	CRASH_SPREAD=${CRASH_SPREAD-"ext4:4096:50:random:1024:20 ext4:4096:95:reverse:1024:20 ext4:1024:50:random:1024:20
		ext4:1024:95:reverse:1024:20 ext3:4096:50:reverse:1024:20 ext2:4096:50:random:1024:20"}
	CRASH_POINTS=${CRASH_POINTS:-40}
	CRASH_MODE_POINTS=${CRASH_MODE_POINTS:-4}
	CRASH_RESUME_CHECK_EVERY=${CRASH_RESUME_CHECK_EVERY:-4}
fi
case $BUILD in *asan*) CRASH_POINTS=${CRASH_POINTS:-3} CRASH_ERROR_POINTS=${CRASH_ERROR_POINTS:-6} ;; esac
# mke2fs's default ext4 (metadata_csum, 64bit) with 4 KiB and 1 KiB blocks, one group and several, 50 % and 95 %
# full; ext3; ext2
# (95 % full at 4 KiB: 32 MB, one group or four, so that the few free blocks left always hold a unit)
CRASH_EVERY=${CRASH_EVERY-"ext4:4096:50:random:16:25 ext4:4096:95:reverse:32:25 ext4:4096:50:random:16:25:1024
	ext4:4096:95:random:32:25:2048 ext4:1024:50:random:8:25 ext4:1024:95:reverse:8:25 ext4:1024:50:random:16:25:2048
	ext4:1024:95:forward:16:25:2048 ext3:1024:50:reverse:16:12 ext2:4096:50:random:16:8"}
CRASH_EVERY_MODES=${CRASH_EVERY_MODES:-rotate}
CRASH_EVERY_STRIDE=${CRASH_EVERY_STRIDE:-4}
CRASH_KERNEL_EVERY=${CRASH_KERNEL_EVERY:-5}
CRASH_SPREAD=${CRASH_SPREAD-"ext4:4096:10:random:32:40 ext4:4096:50:forward:32:40 ext4:4096:95:reverse:32:40"}
CRASH_FLASH=${CRASH_FLASH-"ext4:4096:50:random:32:40 ext3:1024:50:reverse:16:30"}
CRASH_ROOM=${CRASH_ROOM-"90:512:boot2"}
CRASH_ERROR=${CRASH_ERROR-"ext4:4096:30:random:16:25 ext3:1024:50:reverse:16:12"}
CRASH_POINTS=${CRASH_POINTS:-6}
CRASH_MODE_POINTS=${CRASH_MODE_POINTS:-1}
CRASH_RESUME_CHECK_EVERY=${CRASH_RESUME_CHECK_EVERY:-4}
MODES=(clean drop reorder torn half)
SHIM=${SHIM:-$TOOLS/crash_shim.so}
[ -f "$SHIM" ] || pf_skip "$SHIM not built (make tools)"
[ -x "$TOOLS/mklayout" ] && [ -x "$TOOLS/pf_mklayout" ] && [ -x "$TOOLS/mkbootset" ] ||
	pf_skip "$TOOLS/mklayout, pf_mklayout or mkbootset not built (make tools)"
[ -x "$REORDER" ] || pf_skip "$REORDER not built"
# A preloaded library comes before the sanitizer runtime: tell ASan that is intended.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# Images on tmpfs when there is one: thousands of copies and fscks.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
work=$(pf_tmpdir)
# Private copies: a rebuild of the tree while this runs must not pull the programs away mid-series.
cp "$SHIM" "$work/crash_shim.so" && cp "$REORDER" "$work/prefetch-reorder" || pf_fail "copying the programs"
SHIM=$work/crash_shim.so REORDER=$work/prefetch-reorder
mnt=$work/mnt
mkdir -p "$mnt"
pf_cleanup_add "umount '$mnt'"
failures=0 start_s=$(date +%s) nseries=0
summary=()

manifest() { pf_manifest "$1" "$2" "$work" "$mnt"; }

# run_cut K MODE SEED: the real binary on $cimg, power cut at write K; the shim's report line in $work/rep
run_cut() {
	local m=$2 sec=$sector
	[ "$m" = half ] && m=torn sec=$((bs / 2))
	rm -f "$work/rep"
	CRASH_SHIM_TARGET=$cimg CRASH_SHIM_CUT=$1 CRASH_SHIM_MODE=$m CRASH_SHIM_SEED=$3 CRASH_SHIM_SECTOR=$sec \
		CRASH_SHIM_REPORT=$work/rep LD_PRELOAD=$SHIM \
		"$REORDER" --config "$cfg" --min-gain off --layout "$layout" "$cimg" >/dev/null 2>"$work/run.err"
}

fail_point() { # label, message; keeps the image with PF_KEEP
	echo "FAIL: $1: $2" >&2
	echo "      reproduce: CRASH_EVERY= CRASH_SPREAD=$spec CRASH_POINTS=all PF_KEEP=1 make check TESTS_ONLY=60-reorder-crash" \
		"(or: CRASH_SHIM_TARGET=IMG CRASH_SHIM_CUT=${k:-K} CRASH_SHIM_MODE=${mode:-clean} CRASH_SHIM_SEED=${seed:-1}" \
		"CRASH_SHIM_SECTOR=$sector LD_PRELOAD=crash_shim.so prefetch-reorder --config CFG --min-gain off --layout LAYOUT IMG on a copy of $base)" >&2
	failures=$((failures + 1))
	s_fail=$((s_fail + 1))
	if [ -n "${PF_KEEP:-}" ]; then cp --sparse=always "$cimg" "$work/failed-$(echo "$1" | tr ' /=' '___').img"; fi
}

# check_after LABEL: e2fsck -p repairs without asking, -fn is clean, files are the same.
check_after() {
	local label=$1 out rc
	if [ "$journaled" = 1 ] && [ $((s_cuts % CRASH_KERNEL_EVERY)) -eq 0 ]; then
		s_kernel=$((s_kernel + 1))
		if ! out=$(mount -t "$type" -o loop "$cimg" "$mnt" 2>&1) || ! umount "$mnt"; then
			s_manual=$((s_manual + 1)); fail_point "$label" "the kernel cannot mount it: $out $(dmesg | tail -2 | tr '\n' ' ')"; return 1
		fi
	fi
	out=$(e2fsck -p "$cimg" 2>&1); rc=$?
	if [ $rc -gt 1 ]; then s_manual=$((s_manual + 1)); fail_point "$label" "e2fsck -p exit $rc: $(echo "$out" | tail -3 | tr '\n' ' ')"; return 1; fi
	out=$(e2fsck -fn "$cimg" 2>&1); rc=$?
	if [ $rc -ne 0 ]; then
		s_unfixed=$((s_unfixed + 1))
		fail_point "$label" "e2fsck -fn exit $rc after e2fsck -p: $(echo "$out" | grep -v '^e2fsck\|^Pass\|^$' | head -5 | tr '\n' ' ')"
		return 1
	fi
	files_same "$label"
}

files_same() {
	if ! manifest "$cimg" "$work/m.cur"; then fail_point "$1" "cannot mount/read the image"; return 1; fi
	if ! cmp -s "$work/m.ref" "$work/m.cur"; then
		s_lost=$((s_lost + 1))
		fail_point "$1" "files differ: $(diff "$work/m.ref" "$work/m.cur" | grep '^[<>]' | head -4 | tr '\n' ' ')"
		return 1
	fi
}

# rep FIELD: a number from the shim's report line
rep() { sed -n "s/.* $1 \([0-9]*\) .*/\1/p; s/^$1 \([0-9]*\) .*/\1/p" "$work/rep" 2>/dev/null | head -1; }

# cut_point K MODE SEED: one cut, its checks, then the resume and its checks
cut_point() {
	k=$1 mode=$2 seed=$3
	local label="$slabel k=$k/$w $mode seed=$seed" rc
	cp --sparse=always "$base" "$cimg"
	run_cut "$k" "$mode" "$seed"; rc=$?
	if [ $rc -ne 99 ]; then fail_point "$label" "no cut (exit $rc): $(tail -2 "$work/run.err" | tr '\n' ' ')"; return; fi
	s_cuts=$((s_cuts + 1))
	eval "s_m_$mode=\$((s_m_$mode + 1))"
	[ "$(rep unflushed)" -gt 0 ] 2>/dev/null && s_cached=$((s_cached + 1))
	s_torn=$((s_torn + $(rep torn || echo 0)))
	[ "$mode" = drop ] || [ "$mode" = reorder ] && s_lostw=$((s_lostw + $(rep unflushed) - $(rep kept)))
	check_after "$label" && resume "$label"
}

# resume LABEL: the real command, run again, finishes the job: exit 0, e2fsck -fn clean (and, every
# CRASH_RESUME_CHECK_EVERY-th point, every file the same)
resume() {
	local label=$1 out
	if ! out=$("$REORDER" --config "$cfg" --min-gain off --layout "$layout" "$cimg" 2>&1); then
		s_resume=$((s_resume + 1))
		fail_point "$label resume" "prefetch-reorder run again failed: $(echo "$out" | tail -2 | tr '\n' ' ')"
		return
	fi
	if ! out=$(e2fsck -fn "$cimg" 2>&1); then
		s_resume=$((s_resume + 1))
		fail_point "$label resume" "e2fsck -fn after the resumed run: $(echo "$out" | grep -v '^e2fsck\|^Pass\|^$' | head -5 | tr '\n' ' ')"
		return
	fi
	s_resumed=$((s_resumed + 1))
	if [ $((s_cuts % CRASH_RESUME_CHECK_EVERY)) -eq 0 ]; then files_same "$label resumed" || s_resume=$((s_resume + 1)); fi
}

# error_point K: write K fails with EIO; the run must notice, free nothing still in use, leave what a cut
# leaves (e2fsck -p repairs it, every file the same), and the next run must finish the job
error_point() {
	k=$1 mode=eio seed=1
	local label="$slabel k=$k/$w eio" rc out
	cp --sparse=always "$base" "$cimg"
	run_cut "$k" eio 1; rc=$?
	s_cuts=$((s_cuts + 1))
	if [ $rc -eq 0 ] || [ $rc -ge 99 ]; then
		fail_point "$label" "the failed write went unnoticed or the run crashed (exit $rc): $(tail -2 "$work/run.err" | tr '\n' ' ')"
		return
	fi
	[ -s "$work/run.err" ] || fail_point "$label" "exit $rc without a message"
	out=$(e2fsck -fn "$cimg" 2>&1)
	if echo "$out" | grep -q 'Block bitmap differences:.*+[0-9(]'; then
		s_lost=$((s_lost + 1))
		fail_point "$label" "blocks in use left marked free: $(echo "$out" | grep 'Block bitmap differences' | cut -c1-160)"
		return
	fi
	check_after "$label" && resume "$label"
}

# pick_points W N: the k to cut at
pick_points() {
	local w=$1 n=$2 k
	if [ "$n" = all ] || [ "$w" -le $((n + 6)) ]; then seq 1 "$w"; return; fi
	{
		seq 1 3
		for ((k = 1; k <= n; k++)); do echo $((k * w / (n + 1))); done
		seq $((w - 2)) "$w"
	} | awk '$1 >= 1' | sort -nu
}

# room_image FILL MB TRACE: $base and $layout for a room series (see CRASH_ROOM)
room_image() {
	local fill=$1 mb=$2 trace=$3
	"$TOP/tests/mkbootset.sh" --no-host --fill "$fill" --ratio 1 --tsv "$TOP/tests/data/debian12-boot/$trace.tsv" \
		--seed 1 --size "$mb" "$base" >"$work/mkbootset.out" 2>&1 || pf_fail "mkbootset $slabel: $(tail -3 "$work/mkbootset.out")"
	pf_note "image $slabel: $(tail -1 "$work/mkbootset.out")"
	mount -o loop,ro "$base" "$mnt" || pf_fail "mount $base"
	awk -F'\t' -v m="$mnt" '{ p = $2; while (sub(/\/[^\/]*$/, "", p) && p != "") if (!(p in d)) { d[p]; print m p } }' \
		"$base.workload" | sort -u >"$work/room.lines"
	awk -F'\t' -v m="$mnt" '{ print m $2 " 0 " $1 }' "$base.workload" >>"$work/room.lines"
	"$TOOLS/pf_mklayout" "$layout" "$work/room.lines" >"$work/mklayout.out" 2>&1 && chmod 0644 "$layout" ||
		{ umount "$mnt"; pf_fail "pf_mklayout $slabel"; }
	umount "$mnt" || pf_fail "umount $mnt"
}

# series KIND SPEC: KIND every|spread|flash, SPEC TYPE:BS:FILL:ORDER:MB:LAYOUT_PERCENT; KIND room, SPEC FILL:MB:TRACE
series() {
	local kind=$1 type bs fill order mb pct bpg="" s0 m i k0 full out trace
	spec=$2
	if [ "$kind" = room ]; then
		IFS=: read -r fill mb trace <<<"$spec"
		type=ext4 bs=4096 order=$trace pct=-
	else
		IFS=: read -r type bs fill order mb pct bpg <<<"$spec"
	fi
	local mkfs_args=() ; [ -n "${bpg:-}" ] && mkfs_args=(-g "$bpg")
	s0=$(date +%s)
	slabel="$type-$bs ${mb}M $fill% $order"
	[ "$kind" = flash ] && slabel="$slabel flash"
	[ "$kind" = room ] && slabel="$slabel room"
	[ "$kind" = error ] && slabel="$slabel eio"
	base=$work/aged-$type-$bs-$fill-$mb-${bpg:-0}.img
	[ "$kind" = room ] && base=$work/room-$fill-$mb-$trace.img layout=$work/layout-room-$fill-$mb-$trace
	if [ "$kind" = room ]; then
		[ -f "$base" ] || room_image "$fill" "$mb" "$trace"
	elif [ ! -f "$base" ]; then
		"$TOP/tests/mkaged.sh" "$base" "$mb" "$type" "$bs" "$fill" $((fill + 11)) "${mkfs_args[@]}" >"$work/mkaged.out" ||
			pf_fail "mkaged.sh $slabel: $(cat "$work/mkaged.out")"
		pf_note "image $slabel: $(cat "$work/mkaged.out")"
	fi
	manifest "$base" "$work/m.ref" || pf_fail "cannot read $base"
	# Nearly full: let reorder use what free space there is, in small chunks (a chunk moves whole or not at all).
	local reserve=5 chunk=2000
	[ "$fill" -ge 90 ] && reserve=1 chunk=32
	[ "$kind" = every ] || [ "$kind" = error ] && chunk=64 # several units, so cuts fall between and inside them
	[ "$kind" = room ] && chunk=2000 # the default: making room is for chunks the scattered free space splits
	cfg=$work/config-$type-$bs-$fill-$mb
	printf 'REORDER_FREE_RESERVE_PERCENT=%s\nCHUNK_SIZE_BLOCKS=%s\nREORDER_TIME_BUDGET=3600\n' "$reserve" "$chunk" >"$cfg"
	[ "$kind" = flash ] && printf 'PREFETCH_MEDIUM=slow-flash\nREORDER_ERASE_BLOCK_KB=64\n' >>"$cfg"
	sector=${CRASH_TORN_SECTOR:-512}
	local groups
	groups=$(dumpe2fs -h "$base" 2>/dev/null | awk -F: '/^Block count/ { n = $2 } /^Blocks per group/ { g = $2 }
		/^First block/ { f = $2 } END { printf "%d", (n - f + g - 1) / g }')
	slabel="$slabel ${groups}g"
	if [ "$kind" != room ]; then
		layout=$work/layout-$type-$bs-$fill-$order
		local extra=(); [ "$order" = random ] && extra=(--partial)
		"$TOOLS/mklayout" --order "$order" --seed "$((fill * 10 + mb))" --percent "$pct" --dirs --special "${extra[@]}" -o "$layout" "$base" \
			>"$work/mklayout.out" || pf_fail "mklayout $slabel"
	fi
	cimg=$work/cut.img
	s_fail=0 s_manual=0 s_unfixed=0 s_lost=0 s_resume=0 s_resumed=0 s_cuts=0 s_cached=0 s_torn=0 s_lostw=0
	s_m_clean=0 s_m_drop=0 s_m_reorder=0 s_m_torn=0 s_m_half=0 s_kernel=0 journaled=0
	dumpe2fs -h "$base" 2>/dev/null | grep -q '^Filesystem features:.*has_journal' && journaled=1

	# full run, counted, twice
	k="" mode="" seed=""
	cp --sparse=always "$base" "$cimg"
	run_cut 0 clean 1 || pf_fail "$slabel: full run failed: $(tail -3 "$work/run.err")"
	full=$(cat "$work/rep") w=$(rep writes) flushes=$(rep flushes)
	[ -n "$w" ] && [ "$w" -gt 0 ] || pf_fail "$slabel: no writes counted (is the shim preloaded?): $full"
	[ "$(rep direct_reads)" -gt 0 ] || fail_point "$slabel full run" "the O_DIRECT read-back never read: $full"
	out=$(e2fsck -fn "$cimg" 2>&1) || fail_point "$slabel full run" "e2fsck -fn not clean: $(echo "$out" | head -8 | tr '\n' ' ')"
	if [ "$kind" = room ] && ! grep -q "making room: .*; moved [1-9][0-9]*$" "$work/run.err"; then
		fail_point "$slabel full run" "no room made: $(grep -i room "$work/run.err" | head -2)"
	fi
	if [ "$kind" = flash ] && ! grep -q "discarded [1-9]" "$work/run.err"; then
		fail_point "$slabel full run" "no discard on slow flash: $(tail -1 "$work/run.err")"
	fi
	files_same "$slabel full run" || true
	cp --sparse=always "$base" "$cimg"
	run_cut 0 clean 1
	[ "$(sed -n 's/.* digest \([0-9a-f]*\) .*/\1/p' "$work/rep")" = "$(echo "$full" | sed -n 's/.* digest \([0-9a-f]*\) .*/\1/p')" ] ||
		fail_point "$slabel" "two full runs wrote different sequences (non-deterministic): '$full' vs '$(cat "$work/rep")'"

	if [ "$kind" = error ]; then
		for k0 in $(pick_points "$w" "${CRASH_ERROR_POINTS:-all}"); do error_point "$k0"; done
	elif [ "$kind" = every ]; then
		for ((k0 = 1 + nseries % CRASH_EVERY_STRIDE; k0 <= w; k0 += CRASH_EVERY_STRIDE)); do
			if [ "$CRASH_EVERY_MODES" = all ]; then
				for m in "${MODES[@]}"; do cut_point "$k0" "$m" "$k0"; done
			else
				cut_point "$k0" "${MODES[k0 % 5]}" "$k0"
			fi
		done
	else
		i=0
		for k0 in $(pick_points "$w" "$CRASH_POINTS"); do cut_point "$k0" "${MODES[i++ % 5]}" "$k0"; done
		for m in drop reorder torn half; do
			for ((i = 1; i <= CRASH_MODE_POINTS; i++)); do
				k0=$(( (fill * 7919 + i * 104729 + ${#m} * 15485863) % w + 1 ))
				cut_point "$k0" "$m" "$((fill * 100 + i))"
			done
		done
	fi
	summary+=("$(printf '%-30s %-8s %6s %6s %5s %4s/%-4s/%-4s/%-4s/%-4s %6s %5s %5s %6s %7s %5s %5s %5s %5s %5s %5s' \
		"$slabel" "$order" "$w" "$flushes" "$s_cuts" "$s_m_clean" "$s_m_drop" "$s_m_reorder" "$s_m_torn" "$s_m_half" "$s_cached" \
		"$s_lostw" "$s_torn" "$sector" "$s_resumed" "$s_kernel" "$s_manual" "$s_unfixed" "$s_lost" "$s_resume" "$(( $(date +%s) - s0 ))")")
	echo "${summary[-1]}"
	nseries=$((nseries + 1))
}
for spec in $CRASH_EVERY; do series every "$spec"; done
for spec in $CRASH_SPREAD; do series spread "$spec"; done
for spec in $CRASH_FLASH; do series flash "$spec"; done
for spec in $CRASH_ROOM; do series room "$spec"; done
for spec in $CRASH_ERROR; do series error "$spec"; done

echo
printf '%-30s %-8s %6s %6s %5s %-24s %6s %5s %5s %6s %7s %5s %5s %5s %5s %5s %5s\n' series layout writes flush cuts \
	'clean/drop/reo/torn/half' cached lostw tornw sector resumed kern fsckp fsckn files resum secs
printf '%s\n' "${summary[@]}"
echo "cuts: power cuts made (exit 99); cached: cuts with unflushed writes in the cache; lostw: unflushed writes the"
echo "drop/reorder cuts lost; tornw: writes stored in part (at sector bytes; half: at half the block); resumed: resumed"
echo "runs completed and clean; kern: cuts the kernel's mount replayed first; fsckp: e2fsck -p could not repair alone"
echo "(or the kernel could not mount); fsckn: errors left after e2fsck -p; files: a file reads back different;"
echo "resum: resumed run failed or changed a file.  Every series: the real prefetch-reorder, LD_PRELOAD crash_shim.so."
echo "eio series: cuts are failed writes (EIO, the run going on to its error path), files also counts blocks in use left free."
echo "CRASH_EVERY_MODES=$CRASH_EVERY_MODES CRASH_EVERY_STRIDE=$CRASH_EVERY_STRIDE CRASH_KERNEL_EVERY=$CRASH_KERNEL_EVERY CRASH_POINTS=$CRASH_POINTS CRASH_MODE_POINTS=$CRASH_MODE_POINTS" \
	"CRASH_RESUME_CHECK_EVERY=$CRASH_RESUME_CHECK_EVERY; $(( $(date +%s) - start_s )) s"
[ "$failures" -eq 0 ] || pf_fail "$failures failed checks"
echo "PASS: every cut repaired by e2fsck -p alone, no file changed, every resumed run completed"
