#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetch-reorder on a real, aged ext4 image: --check figures, reorder, e2fsck -fn clean, every file's
# content unchanged, fewer discontinuities afterwards, a second run moves nothing, the time budget
# stops and the next run continues, files changed since the layout are skipped, and the refusals
# (mounted rw/ro, unclean, another filesystem, writable layout, unsupported feature, usage).  And a disk that
# stores wrong bytes for a data write (below the page cache) is caught by the read-back: the unit is abandoned,
# the filesystem stays clean and every file intact.
# On one CPU, and the 1 KiB fixture without delayed allocation: ext4 places small files in a per-CPU
# preallocation chosen where the blocks are allocated (with delalloc, in a flusher thread on any CPU), so files
# could land apart or together by chance; the fixtures need the deleted files' holes between the kept ones
# (else the planner rightly finds them near enough and moves nothing: seen once in a busy full run).
source "$TOP/tests/lib.sh"
pf_one_cpu "$@" # the fixtures need the holes between their files
pf_require_root
MKLAYOUT=$TOOLS/pf_mklayout
[ -x "$MKLAYOUT" ] || pf_skip "needs $MKLAYOUT (make tools)"
command -v debugfs >/dev/null || pf_skip "needs debugfs"

T=$(pf_tmpdir)
IMG=$T/root.img
pf_mkfs "$IMG" 96M -b 4096
M=$T/mnt
pf_mount_loop "$IMG" "$M"
DEV=$PF_DEV

# Age it: boot files written interleaved with junk that is deleted, then appended to in another order.
mkdir -p "$M/usr/lib" "$M/etc" "$M/var"
for i in $(seq 1 60); do
	head -c $(( (i * 7919) % 90000 + 3000 )) /dev/urandom >"$M/usr/lib/lib$i.so"
	head -c 40000 /dev/urandom >"$M/var/junk$i"
	sync
done
rm -f "$M"/var/junk*
for i in $(seq 60 -1 1); do head -c 20000 /dev/urandom >>"$M/usr/lib/lib$i.so"; sync; done
# edge cases: a sparse file, a preallocated (unwritten) range, a hard link, an immutable file, a small dir
truncate -s 1M "$M/etc/sparse"; printf 'head' | dd of="$M/etc/sparse" conv=notrunc 2>/dev/null
printf 'tail' | dd of="$M/etc/sparse" bs=1 seek=900000 conv=notrunc 2>/dev/null
head -c 50000 /dev/urandom >"$M/etc/prealloc"; fallocate -o 50000 -l 200000 -n "$M/etc/prealloc" 2>/dev/null || true
ln "$M/usr/lib/lib5.so" "$M/etc/link5"
head -c 30000 /dev/urandom >"$M/etc/frozen"
chattr +i "$M/etc/frozen" 2>/dev/null || true
echo "will change" >"$M/etc/changed"
# four extents kept apart by holes: its in-inode extent root is full, and moving pieces out of the middle of
# two of them needs a leaf block (grown copy-on-write)
head -c $((148 * 4096)) /dev/urandom >"$T/four"
for s in 0 40 80 120; do dd if="$T/four" of="$M/etc/four" bs=4096 skip=$s seek=$s count=28 conv=notrunc,fsync status=none; done
sync

# The layout: a boot order unrelated to creation order, as prefetchd would record it.
{
	echo "$M/usr/lib"
	for i in $(seq 1 2 60) $(seq 2 2 60); do echo "$M/usr/lib/lib$i.so"; done
	echo "$M/etc/sparse"; echo "$M/etc/prealloc"; echo "$M/etc/link5"; echo "$M/etc/frozen"; echo "$M/etc/changed"
	echo "$M/usr/lib/lib7.so 0 8192" # again: blocks are laid out once
	echo "$M/etc/four $((100 * 4096)) $((3 * 4096))"; echo "$M/etc/four $((10 * 4096)) $((3 * 4096))"
} >"$T/list"
L=$T/layout
"$MKLAYOUT" "$L" "$T/list" >/dev/null || pf_fail "pf_mklayout"
chmod 0644 "$L"
echo "changed after the layout" >>"$M/etc/changed"

# Refusals while mounted: read-write (device and image file), read-only without --final-shutdown.
out=$("$REORDER" --layout "$L" "$DEV" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"mounted read-write"* ]] || pf_fail "mounted rw device not refused ($rc): $out"
out=$("$REORDER" --layout "$L" "$IMG" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"mounted"* ]] || pf_fail "loop-mounted image not refused ($rc): $out"
pf_checksums "$M" >"$T/sums.before"
mount -o remount,ro "$M" || pf_fail "remount ro"
out=$("$REORDER" --layout "$L" "$DEV" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"read-only"* ]] || pf_fail "read-only mount not refused ($rc): $out"
umount "$M" || pf_fail "umount"

# --check: read-only report.
sum_before=$(sha256sum <"$IMG")
out=$("$REORDER" --check --layout "$L" "$IMG" 2>&1) || pf_fail "--check failed: $out"
echo "$out"
[ "$(sha256sum <"$IMG")" = "$sum_before" ] || pf_fail "--check wrote to the image"
disc_now=$(awk '/^discontinuities/ {print $2}' <<<"$out")
disc_planned=$(awk '/^discontinuities/ {print $3}' <<<"$out")
[ -n "$disc_now" ] && [ "$disc_now" -gt 20 ] || pf_fail "aged layout should be scattered: $disc_now"
[ "$disc_planned" -lt $((disc_now / 4)) ] || pf_fail "plan does not reduce discontinuities: $disc_now -> $disc_planned"
[[ $out == *"read time (layout order)"* ]] || pf_fail "no read time estimate"
# Chunk sizes for tuning: the sizes tried (the configured 2000 among them), each with its figures, one recommended.
rows=$(awk '/^chunk blocks/ { t = 1; next } t && /^ *[0-9]+ / { n++ } /^recommended:/ { t = 0 } END { print n + 0 }' <<<"$out")
[ "$rows" -eq 7 ] || pf_fail "--check: want 7 chunk sizes tried, got $rows"
grep -q "^ *2000 .*(configured)" <<<"$out" || pf_fail "--check: the configured chunk size is not marked"
[ "$(grep -c "<- recommended" <<<"$out")" -eq 1 ] && grep -q "^recommended: CHUNK_SIZE_BLOCKS=[0-9]*" <<<"$out" ||
	pf_fail "--check: no single recommendation"
out3=$("$REORDER" --check --chunk-blocks 3000 --layout "$L" "$IMG" 2>&1) || pf_fail "--check --chunk-blocks 3000"
grep -q "^ *3000 .*(configured)" <<<"$out3" || pf_fail "--check: a configured size not in the list is tried too"

# --dry-run writes nothing either.
dry=$("$REORDER" --dry-run --layout "$L" "$IMG" 2>&1) || pf_fail "--dry-run failed: $dry"
[ "$(sha256sum <"$IMG")" = "$sum_before" ] || pf_fail "--dry-run wrote to the image"

# Refusals on the unmounted image.
cp --sparse=always "$IMG" "$T/unclean.img"
debugfs -w -R "ssv state 0" "$T/unclean.img" >/dev/null 2>&1 || pf_fail "debugfs ssv state"
out=$("$REORDER" --layout "$L" "$T/unclean.img" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"run fsck first"* ]] || pf_fail "unclean fs not refused ($rc): $out"
rm -f "$T/unclean.img"
pf_mkfs "$T/other.img" 16M
out=$("$REORDER" --layout "$L" "$T/other.img" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"another filesystem"* ]] || pf_fail "other fs not refused ($rc): $out"
pf_mkfs "$T/bigalloc.img" 64M -O bigalloc -C 16384
out=$("$REORDER" --layout "$L" "$T/bigalloc.img" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"bigalloc"* ]] || pf_fail "bigalloc not refused ($rc): $out"
cp "$L" "$T/gw"; chmod 0664 "$T/gw"
out=$("$REORDER" --layout "$T/gw" "$IMG" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"owned by root"* ]] || pf_fail "group-writable layout not refused ($rc): $out"
"$REORDER" >/dev/null 2>&1; [ $? -eq 2 ] || pf_fail "no argument: want exit 2"
"$REORDER" --chunk-blocks x "$IMG" >/dev/null 2>&1; [ $? -eq 2 ] || pf_fail "bad --chunk-blocks: want exit 2"
[ "$(sha256sum <"$IMG")" = "$sum_before" ] || pf_fail "a refused run wrote to the image"

# The time budget stops between chunks (exit 3), consistently; the next run continues.  Here and in the reorder
# below the gate is off: this image's predicted gain lies near its 10 % margin (9.9–12 % from build to build,
# the kernel's placement of the aged files varies), and the gate has tests of its own (52-reorder-gain).
cp --sparse=always "$IMG" "$T/budget.img"
out=$("$REORDER" --layout "$L" --min-gain off --chunk-blocks 200 --time-budget 0.001 "$T/budget.img" 2>&1); rc=$?
[ $rc -eq 3 ] && [[ $out == *"next run"* ]] || pf_fail "time budget: want exit 3 ($rc): $out"
pf_fsck_clean "$T/budget.img"
out=$("$REORDER" --layout "$L" --min-gain off --chunk-blocks 200 --time-budget 0 "$T/budget.img" 2>&1) || pf_fail "continue: $out"
pf_fsck_clean "$T/budget.img"
rm -f "$T/budget.img"

# The reorder.
out=$("$REORDER" -v --layout "$L" --min-gain off "$IMG" 2>&1) || pf_fail "reorder failed: $out"
echo "$out"
[[ $out == *"changed since the layout"* ]] || pf_fail "changed file not reported as skipped"
moved=$(sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' <<<"$out")
[ -n "$moved" ] && [ "$moved" -gt 0 ] || pf_fail "nothing moved"
pf_fsck_clean "$IMG"
out=$("$REORDER" --check --layout "$L" "$IMG" 2>&1) || pf_fail "--check after: $out"
disc_after=$(awk '/^discontinuities/ {print $2}' <<<"$out")
[ "$disc_after" -lt $((disc_now / 4)) ] || pf_fail "discontinuities $disc_now -> $disc_after"
# The replay the dry run predicted is the one --check predicts now, figure by figure: the moves, and the leaf
# /etc/four's tree grew into (its in-inode extents overflowed), read by the replay's metadata pass.
debugfs -R "stat /etc/four" "$IMG" 2>/dev/null | grep -q '(ETB0)' || pf_fail "/etc/four did not grow an extent leaf"
[ -n "$(pf_replay_figs "$out" 1)" ] && [ "$(pf_replay_figs "$dry" 2)" = "$(pf_replay_figs "$out" 1)" ] ||
	pf_fail "the replay --check predicts after the run is not the one the dry run predicted (< dry run, > --check): $(
		diff <(pf_replay_figs "$dry" 2) <(pf_replay_figs "$out" 1) | grep '^[<>]' | tr '\n' ' ')"
pf_note "discontinuities $disc_now -> $disc_after (planned $disc_planned), moved $moved blocks"

# Second run: nothing to move, nothing written.  How fast it is belongs to results/REORDER-BENCH.md (the no-op
# case), not to a timed assertion that a loaded machine can break.
sum_after=$(sha256sum <"$IMG")
start=$(date +%s%N)
out=$("$REORDER" --layout "$L" "$IMG" 2>&1) || pf_fail "second run failed: $out"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[[ $out == *"moved 0 blocks"* ]] || pf_fail "second run moved blocks: $out"
secs=$(sed -n 's/.*; \([0-9.]*\) s$/\1/p' <<<"$out")
[ -n "$secs" ] || pf_fail "second run does not say how long it took: $out"
[ "$(sha256sum <"$IMG")" = "$sum_after" ] || pf_fail "second run wrote to the image"
pf_note "second run: $secs s ($ms ms with process start)"

# Every file's content is what it was.
pf_mount "$IMG" "$M" -o loop,ro
pf_checksums "$M" >"$T/sums.after"
diff "$T/sums.before" "$T/sums.after" || pf_fail "file contents changed"
umount "$M"

# A re-aggregated layout (what the next boot records): two adjacent swaps, a file new in the layout, one gone.
# Only what is out of place moves, not the whole set again; the result stays near-sequential.
# (the read-only loop device of the mount above clears itself a moment after umount: a read-write mount of the
# same file is refused until then)
for _ in $(seq 50); do [ -z "$(losetup -j "$IMG")" ] && break; sleep 0.1; done
pf_mount "$IMG" "$M" -o loop
head -c 40000 /dev/urandom >"$M/etc/newfile"
sync
{
	echo "$M/usr/lib"
	for i in 3 1 $(seq 5 2 19) 23 21 $(seq 25 2 31); do echo "$M/usr/lib/lib$i.so"; done
	echo "$M/etc/newfile"
	for i in $(seq 33 2 57) $(seq 2 2 60); do echo "$M/usr/lib/lib$i.so"; done # lib59 gone
	echo "$M/etc/sparse"; echo "$M/etc/prealloc"; echo "$M/etc/link5"; echo "$M/etc/frozen"
	echo "$M/usr/lib/lib7.so 0 8192"
	echo "$M/etc/four $((100 * 4096)) $((3 * 4096))"; echo "$M/etc/four $((10 * 4096)) $((3 * 4096))"
} >"$T/listB"
LB=$T/layoutB
"$MKLAYOUT" "$LB" "$T/listB" >/dev/null || pf_fail "pf_mklayout B"
chmod 0644 "$LB"
pf_checksums "$M" >"$T/sumsB.before"
umount "$M" || pf_fail "umount before B"
out=$("$REORDER" -v --layout "$LB" "$IMG" 2>&1) || pf_fail "reorder with B failed: $out"
echo "$out"
movedB=$(sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' <<<"$out")
[ -n "$movedB" ] || pf_fail "no summary line: $out"
[ "$movedB" -le $((moved * 15 / 100)) ] || pf_fail "re-aggregated layout moved $movedB of $moved blocks again"
pf_fsck_clean "$IMG"
out=$("$REORDER" --check --layout "$LB" "$IMG" 2>&1) || pf_fail "--check B: $out"
disc_b=$(awk '/^discontinuities/ {print $2}' <<<"$out")
[ -n "$disc_b" ] && [ "$disc_b" -le $((disc_after + 12)) ] || pf_fail "B not near-sequential: $disc_b (A: $disc_after)"
[[ $out == *"a reorder would move 0 of"* ]] || pf_fail "B again: would still move: $out"
pf_mount "$IMG" "$M" -o loop,ro
pf_checksums "$M" | diff "$T/sumsB.before" - || pf_fail "file contents changed by the run with B"
umount "$M"
pf_note "re-aggregated layout: moved $movedB blocks (first run $moved), discontinuities $disc_b (A: $disc_after)"

# ext3 (block-mapped files, 1 KiB blocks): the same round trip, briefly.
IMG3=$T/ext3.img
truncate -s 48M "$IMG3"
mke2fs -q -F -t ext3 -b 1024 -E lazy_itable_init=0,lazy_journal_init=0 "$IMG3" >/dev/null || pf_fail "mke2fs ext3"
pf_mount "$IMG3" "$M" -o loop
DEV3=$(findmnt -no SOURCE "$M")
for i in $(seq 1 30); do head -c $((i * 3001)) /dev/urandom >"$M/f$i"; head -c 9000 /dev/urandom >"$M/j$i"; sync; done
rm -f "$M"/j*
for i in $(seq 30 -1 1); do echo "$M/f$i"; done | "$MKLAYOUT" "$T/l3" >/dev/null || pf_fail "pf_mklayout ext3"
pf_checksums "$M" >"$T/s3.before"
# at the final shutdown step the root is still mounted read-only: allowed with --final-shutdown only
mount -o remount,ro "$M" || pf_fail "remount ext3 ro"
out=$("$REORDER" --layout "$T/l3" "$DEV3" 2>&1); rc=$?
[ $rc -eq 1 ] || pf_fail "ro mount without --final-shutdown: want exit 1 ($rc): $out"
out=$("$REORDER" --final-shutdown --layout "$T/l3" "$DEV3" 2>&1) || pf_fail "ext3 reorder: $out"
[[ $out == *"moved 0 blocks"* ]] && pf_fail "ext3: nothing moved: $out"
umount "$M"
pf_fsck_clean "$IMG3"
pf_mount "$IMG3" "$M" -o loop,ro
pf_checksums "$M" | diff "$T/s3.before" - || pf_fail "ext3 contents changed"
umount "$M"
# 1 KiB blocks on a disk with 4 KiB sectors: the O_DIRECT read-back of a unit that does not start on a 4 KiB
# boundary is refused (EINVAL); the reorder then reads it back buffered after dropping it from the cache.
IMG1=$T/k1.img
truncate -s 24M "$IMG1"
mke2fs -q -F -t ext4 -b 1024 -E lazy_itable_init=0,lazy_journal_init=0 "$IMG1" >/dev/null || pf_fail "mke2fs 1k"
pf_mount "$IMG1" "$M" -o loop,nodelalloc
for i in $(seq 1 30); do head -c $((i * 2500 + 1000)) /dev/urandom >"$M/f$i"; head -c 7000 /dev/urandom >"$M/j$i"; sync; done
rm -f "$M"/j*
for i in $(seq 30 -1 1); do echo "$M/f$i"; done | "$MKLAYOUT" "$T/l1k" >/dev/null || pf_fail "pf_mklayout 1k"
pf_checksums "$M" >"$T/s1k.before"
umount "$M"
LOOP4K=$(pf_loop "$IMG1" --sector-size 4096)
[ "$(cat "/sys/block/${LOOP4K#/dev/}/queue/logical_block_size")" = 4096 ] || pf_fail "no 4 KiB sectors on $LOOP4K"
out=$("$REORDER" --layout "$T/l1k" "$LOOP4K" 2>&1) || pf_fail "1 KiB blocks on 4 KiB sectors: $out"
[[ $out == *"moved 0 blocks"* ]] && pf_fail "1k/4k: nothing moved: $out"
losetup -d "$LOOP4K"
pf_fsck_clean "$IMG1"
cp --sparse=always "$IMG1" "$T/k1b.img"
pf_mount "$T/k1b.img" "$M" -o loop,ro
pf_checksums "$M" | diff "$T/s1k.before" - >/dev/null || pf_fail "1k/4k: contents changed"
umount "$M"

# A disk that stores other bytes than it was given: the copy of the first unit (F2, relocate.c) is corrupted in
# the loop device's backing file after its flush, below the device's page cache, which keeps the right bytes.
# Only a read-back from the disk sees it.  The write to corrupt: the first of more than one block (the metadata,
# in the journal and in place, is written block by block, the superblock as 1 KiB; see REORDER_CRASH_TRACE=1).
CRASH=$TOOLS/reorder_crash
if [ -x "$CRASH" ] && [ -x "$TOOLS/mklayout" ]; then
	"$TOP/tests/mkaged.sh" "$T/bad.img" 32 ext4 4096 50 61 >/dev/null || pf_fail "mkaged"
	"$TOOLS/mklayout" --order reverse --seed 3 --percent 40 -o "$T/lbad" "$T/bad.img" >/dev/null || pf_fail "mklayout"
	cp --sparse=always "$T/bad.img" "$T/bad-count.img"
	REORDER_CRASH_TRACE=1 "$CRASH" --count --layout "$T/lbad" "$T/bad-count.img" >/dev/null 2>"$T/trace" || pf_fail "count run"
	k=$(awk '$1 == "write" && $7 > 4096 { print $2; exit }' "$T/trace")
	[ -n "$k" ] || pf_fail "no data write in the trace"
	rm -f "$T/bad-count.img"
	pf_mount "$T/bad.img" "$M" -o loop,ro
	pf_checksums "$M" >"$T/sbad.before"
	umount "$M"
	cp --sparse=always "$T/bad.img" "$T/bad2.img"
	LOOPB=$(pf_loop "$T/bad2.img")
	out=$("$CRASH" --corrupt-write "$k" --corrupt-backing "$T/bad2.img" --layout "$T/lbad" "$LOOPB" 2>&1); rc=$?
	losetup -d "$LOOPB"
	[ $rc -eq 1 ] || pf_fail "corrupted copy not detected (exit $rc): $out"
	[[ $out == *"corrupted on the disk"* ]] || pf_fail "nothing was corrupted: $out"
	[[ $out == *"read back from the disk differs"*"abandoned"* ]] || pf_fail "no clear message: $out"
	[[ $out == *"moved 0 "* ]] || pf_fail "blocks were switched after the bad copy: $out"
	pf_fsck_clean "$T/bad2.img"
	# a fresh name: a loop device still attached to bad2.img would be reused, with its cache of the right bytes
	cp --sparse=always "$T/bad2.img" "$T/bad3.img"
	pf_mount "$T/bad3.img" "$M" -o loop,ro
	pf_checksums "$M" | diff "$T/sbad.before" - >/dev/null || pf_fail "files changed after the abandoned unit"
	umount "$M"
	pf_note "bad write on the disk: detected, unit abandoned, clean, files intact"
else
	pf_note "reorder_crash/mklayout not built: bad-write check skipped"
fi
echo "ok"
