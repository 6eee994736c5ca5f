#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/mkbootset.sh: the image holds every boot file at its size, the workload lists the boot's reads in boot
# order, --scale replicates the set, the same seed gives the same files, and the boot files are scattered;
# --fresh writes the boot files alone (each whole), --fill 90 leaves the image ~90 % full.
source "$TOP/tests/lib.sh"
pf_require_root
[ -x "$TOOLS/mkbootset" ] || pf_fail "$TOOLS/mkbootset missing"
tsv=$TOP/tests/data/debian12-boot/boot1.tsv
# On tmpfs when it has room (about 1 GiB of images): quicker than a real disk.
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ "$(df -k --output=avail /dev/shm | tail -1)" -gt 2000000 ] &&
	export TMPDIR=/dev/shm
tmp=$(pf_tmpdir)

"$TOP/tests/mkbootset.sh" --ratio 1 --seed 7 "$tmp/a.img" >"$tmp/a.out" || pf_fail "mkbootset a"
"$TOP/tests/mkbootset.sh" --ratio 1 --seed 7 --workload "$tmp/b.wl" "$tmp/b.img" >/dev/null || pf_fail "mkbootset b"
"$TOP/tests/mkbootset.sh" --ratio 0.2 --scale 2 --seed 7 --no-host "$tmp/c.img" >/dev/null || pf_fail "mkbootset c"
grep -q '^mkbootset: 419 boot files' "$tmp/a.out" || pf_fail "summary: $(cat "$tmp/a.out")"

wl=$tmp/a.img.workload
[ "$(wc -l <"$wl")" = 419 ] || pf_fail "workload has $(wc -l <"$wl") lines"
[ "$(wc -l <"$tmp/c.img.workload")" = 838 ] || pf_fail "scaled workload lines"
grep -q $'\t/boot2/usr/lib/x86_64-linux-gnu/libc.so.6$' "$tmp/c.img.workload" || pf_fail "no /boot2 copy in the workload"
# Boot order: the traced files in the order of the trace, after the untraced ones.
diff <(awk -F'\t' '$1 != "-"' "$tsv" | sort -n -k1,1 | cut -f3) <(tail -n 255 "$wl" | cut -f2) >/dev/null ||
	pf_fail "workload not in boot order"
[ "$(cmp "$wl" "$tmp/b.wl" && echo same)" = same ] || pf_fail "workload differs between identical runs"

mnt=$tmp/mnt
mkdir -p "$mnt"
mount -o loop,ro "$tmp/a.img" "$mnt" || pf_fail "mount a"
pf_cleanup_add "umount '$mnt'"
# Every boot file exists at its traced size.
awk -F'\t' '{ print $4 "\t" $3 }' "$tsv" | while IFS=$'\t' read -r size path; do
	[ "$(stat -c %s "$mnt$path" 2>/dev/null)" = "$size" ] || { echo "$path"; break; }
done >"$tmp/bad"
[ -s "$tmp/bad" ] && pf_fail "wrong or missing boot file: $(cat "$tmp/bad")"
# Scattered: the boot's files are not in one run of blocks in boot order (physical order != access order).
cut -f2 "$wl" | head -100 | while read -r p; do
	filefrag -e "$mnt$p" 2>/dev/null | awk '/^ *0:/ { sub(/\.\..*/, "", $4); print $4; exit }'
done >"$tmp/phys"
[ "$(wc -l <"$tmp/phys")" -ge 90 ] || pf_fail "filefrag gave $(wc -l <"$tmp/phys") extents"
inv=$(awk 'NR > 1 && $1 < prev { n++ } { prev = $1 } END { print n + 0 }' "$tmp/phys")
[ "$inv" -ge 20 ] || pf_fail "boot files nearly in boot order on disk ($inv backward steps of 100)"
pf_note "first 100 boot reads: $inv backward steps on disk"
sums_a=$(pf_checksums "$mnt")
umount "$mnt" || pf_fail "umount a"
mount -o loop,ro "$tmp/b.img" "$mnt" || pf_fail "mount b"
[ "$(pf_checksums "$mnt")" = "$sums_a" ] || pf_fail "same seed, different files"
umount "$mnt" || pf_fail "umount b"

# --fresh: the boot files alone, written in path order, each file whole (ext4 still spreads the directories over
# its block groups: a fresh install is not one run).
"$TOP/tests/mkbootset.sh" --fresh --seed 7 --no-host --size 256 "$tmp/d.img" >"$tmp/d.out" || pf_fail "mkbootset --fresh"
grep -q '; 0 other files' "$tmp/d.out" || pf_fail "--fresh wrote other files: $(cat "$tmp/d.out")"
mount -o loop,ro "$tmp/d.img" "$mnt" || pf_fail "mount d"
[ "$(find "$mnt" -xdev -type f | wc -l)" = 419 ] || pf_fail "--fresh: $(find "$mnt" -xdev -type f | wc -l) files, not 419"
whole=$(cut -f3 "$tsv" | while read -r p; do filefrag "$mnt$p"; done | grep -c ': 1 extent found$')
[ "$whole" -ge 400 ] || pf_fail "--fresh: only $whole of 419 files in one extent"
umount "$mnt" || pf_fail "umount d"

# --fill 90: ~90 % full, the boot files at their sizes among mkaged's churn.
"$TOP/tests/mkbootset.sh" --fill 90 --ratio 1 --seed 7 --no-host --size 512 "$tmp/e.img" >/dev/null || pf_fail "mkbootset --fill"
mount -o loop,ro "$tmp/e.img" "$mnt" || pf_fail "mount e"
use=$(df -k --output=used,size "$mnt" | awk 'NR == 2 { printf "%d", $1 * 100 / $2 }') # of all blocks, root's reserve too
[ "$use" -ge 85 ] && [ "$use" -le 95 ] || pf_fail "--fill 90: $use % used"
[ -d "$mnt/d00" ] || pf_fail "--fill: no mkaged files"
[ "$(stat -c %s "$mnt/usr/lib/x86_64-linux-gnu/libc.so.6")" = "$(awk -F'\t' '$3 == "/usr/lib/x86_64-linux-gnu/libc.so.6" { print $4 }' "$tsv")" ] ||
	pf_fail "--fill: libc.so.6 not at its size"
pf_note "--fill 90: $use % used"
