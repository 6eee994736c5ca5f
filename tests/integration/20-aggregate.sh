#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetchd aggregate on three real traces of scripted "boots" of an ext4 loop filesystem: a file read only in
# boot 1 is unstable, a file read in boots 2 and 3 enters, a file deleted before aggregation vanishes, a file
# modified in place and a file replaced by a new inode (upgrade) are handled, a small order swap is averaged out.
# Boot 2 sees the filesystem through another loop device (another st_dev): files are matched by fs UUID.
# The layout must hold exactly the expected files in the expected order; bounds, --no-check and a bad trace too.
source "$TOP/tests/lib.sh"
pf_require_root
"$PREFETCHD" trace --help >/dev/null 2>&1 || pf_skip "'prefetchd trace' is not implemented yet"
"$PREFETCHD" dump --help >/dev/null 2>&1 || pf_skip "'prefetchd dump' is not implemented yet"

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 32M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
# a second attachment of the same image, only ever mounted while the first is not
dev2=$(pf_loop "$tmp/img")
pf_cleanup_add "umount '$mnt'" # whichever device is mounted at the end, before dev2 is detached
[ "$dev" != "$dev2" ] || pf_fail "two loop attachments got the same device"

mkdir "$mnt/d"
for f in common1 common2 only1 late gone modified upgraded d/f; do head -c 20000 /dev/urandom >"$mnt/$f"; done
sync
printf 'MAX_PREFETCH_MB=256\nMAX_PREFETCH_FILES=20000\n' >"$tmp/config"

boot() { # N DEV FILE...: trace one "boot" on DEV that reads FILEs (relative to the mount) in this order
	local n=$1 bdev=$2; shift 2
	umount "$mnt" || pf_fail "umount $mnt"   # a cold cache, as at boot
	mount "$bdev" "$mnt" || pf_fail "mount $bdev $mnt"
	pf_trace_start "$tmp/t$n" --mount "$mnt"
	local f
	for f in "$@"; do cat "$mnt/$f" >/dev/null || pf_fail "boot $n: cannot read $f"; done
	pf_trace_stop
}

files_of() { # DUMP_FILES: the paths in layout order, space separated, relative to the mount ('.' = the root)
	awk -F'\t' -v m="$mnt" '!/^#/ { p = $8; if (p == m) p = "."; else sub("^" m "/", "", p); printf "%s ", p }' "$1"
}

field() { # DUMP_FILES PATH COLUMN
	awk -F'\t' -v p="$mnt/$2" -v c="$3" '!/^#/ && $8 == p { print $c }' "$1"
}

boot 1 "$dev" common1 d/f common2 only1 gone modified upgraded
boot 2 "$dev2" common1 d/f common2 late gone modified upgraded
cp "$mnt/upgraded" "$mnt/upgraded.new" && mv "$mnt/upgraded.new" "$mnt/upgraded" # a package upgrade: new inode
boot 3 "$dev" common2 common1 d/f late gone modified upgraded
for n in 1 2 3; do
	"$PREFETCHD" dump --files "$tmp/t$n" >"$tmp/t$n.files" || pf_fail "dump of trace $n"
	pf_note "boot $n: $(files_of "$tmp/t$n.files")"
done
grep -q "$mnt/only1\$" "$tmp/t1.files" || pf_fail "trace 1 lacks only1: the tracer missed a read"

# between the last boot and the aggregation: one file deleted, one modified in place
rm "$mnt/gone"
echo "appended" >>"$mnt/modified"
new_ino=$(stat -c %i "$mnt/upgraded")

out=$("$PREFETCHD" aggregate --config "$tmp/config" --output "$tmp/layout" "$tmp/t1" "$tmp/t2" "$tmp/t3" 2>&1) ||
	pf_fail "aggregate failed: $out"
pf_note "$out"
[[ $out == *"3 traces; files: 7 kept, 1 unstable, 1 vanished, 2 changed, 0 cut;"* ]] || pf_fail "summary: $out"
"$PREFETCHD" dump --files "$tmp/layout" >"$tmp/layout.files" || pf_fail "dump of the layout"
"$PREFETCHD" dump "$tmp/layout" >"$tmp/layout.dump" || pf_fail "dump of the layout extents"
grep -q '^# kind: layout$' "$tmp/layout.dump" || pf_fail "not a layout"
grep -q '^# boots: 3$' "$tmp/layout.dump" || pf_fail "boots: $(grep '^# boots' "$tmp/layout.dump")"

# order: mean normalised rank (of 9 records per trace): common1 2,2,3; d 3,3,4; common2 5,5,2; d/f 4,4,5 — the
# boot-3 swap moves common2 ahead of d/f but not of common1; the mount root and d stay before what is below them
got=$(files_of "$tmp/layout.files")
want=". common1 d common2 d/f late upgraded "
[ "$got" = "$want" ] || pf_fail "layout files: got '$got', want '$want'"
[ "$(field "$tmp/layout.files" upgraded 4)" = "$new_ino" ] || pf_fail "upgraded: not the new inode"
[ "$(field "$tmp/layout.files" upgraded 6)" = 3 ] || pf_fail "upgraded: the path's 3 boots not counted"
[ "$(field "$tmp/layout.files" late 6)" = 2 ] || pf_fail "late: boots"
[ "$(field "$tmp/layout.files" common1 6)" = 3 ] || pf_fail "common1: boots"
# first_order is the merged rank
awk -F'\t' '!/^#/ { if ($1 != ++n) bad = 1 } END { exit bad }' "$tmp/layout.files" || pf_fail "first_order is not 1..n"
# extents in layout order: grouped by file, files in layout order (a file whose pages someone else's drop_caches
# evicted during a trace may have none: a subsequence is enough), offsets increasing within a file
eorder=$(awk -F'\t' -v m="$mnt" '!/^#/ && !seen[$1]++ { p = $1; if (p == m) p = "."; else sub("^" m "/", "", p); printf "%s ", p }' \
	"$tmp/layout.dump")
[ -n "$eorder" ] || pf_fail "the layout has no extents"
awk -v e="$eorder" -v w="$want" 'BEGIN { ne = split(e, E, " "); nw = split(w, W, " "); j = 1
	for (i = 1; i <= ne; i++) { while (j <= nw && W[j] != E[i]) j++; if (j > nw) exit 1; j++ } }' ||
	pf_fail "extent order '$eorder' does not follow the file order '$want'"
awk -F'\t' '!/^#/ { if ($1 == p && $2 < end) bad = 1; p = $1; end = $2 + $3 } END { exit bad }' "$tmp/layout.dump" ||
	pf_fail "extents of a file overlap or go backwards"
pf_note "layout: $(grep '^# bytes' "$tmp/layout.dump")"

# --no-check (an image not mounted here): the deleted and the modified file stay, the superseded inode still goes
out=$("$PREFETCHD" aggregate --no-check --config "$tmp/config" -o "$tmp/layout2" "$tmp/t1" "$tmp/t2" "$tmp/t3" 2>&1) ||
	pf_fail "aggregate --no-check failed: $out"
[[ $out == *"files: 9 kept, 1 unstable, 0 vanished, 1 changed, 0 cut;"* ]] || pf_fail "--no-check summary: $out"

# bounds: the earliest three files are kept, the rest are reported cut
out=$("$PREFETCHD" aggregate --max-files 3 --config "$tmp/config" -o "$tmp/layout3" "$tmp/t1" "$tmp/t2" "$tmp/t3" 2>&1) ||
	pf_fail "aggregate --max-files failed: $out"
[[ $out == *"files: 3 kept, 1 unstable, 1 vanished, 2 changed, 4 cut;"* ]] || pf_fail "--max-files summary: $out"
"$PREFETCHD" dump --files "$tmp/layout3" >"$tmp/layout3.files" || pf_fail "dump of the bounded layout"
[ "$(files_of "$tmp/layout3.files")" = ". common1 d " ] || pf_fail "bounded layout: $(files_of "$tmp/layout3.files")"

# a bad trace among good ones: a warning naming it, the rest still aggregated
printf 'PREFETCH garbage' >"$tmp/bad"
out=$("$PREFETCHD" aggregate --config "$tmp/config" -o "$tmp/layout4" "$tmp/t1" "$tmp/bad" "$tmp/t2" "$tmp/t3" 2>&1) ||
	pf_fail "aggregate with a bad trace failed: $out"
[[ $out == *"skipping trace $tmp/bad: "* ]] || pf_fail "no warning naming the bad trace: $out"
# (the summary's "created" line differs whenever the two runs straddle a second)
cmp -s <("$PREFETCHD" dump --files "$tmp/layout4" | grep -v "^# created") <(grep -v "^# created" "$tmp/layout.files") ||
	pf_fail "the bad trace changed the layout"
# nothing usable: exit 1, and the layout in place is left alone
before=$(sha256sum <"$tmp/layout4")
"$PREFETCHD" aggregate -o "$tmp/layout4" "$tmp/bad" >/dev/null 2>&1
[ $? -eq 1 ] || pf_fail "no usable trace must exit 1"
[ "$(sha256sum <"$tmp/layout4")" = "$before" ] || pf_fail "the layout was touched"
"$PREFETCHD" aggregate "$tmp/t1" >/dev/null 2>&1
[ $? -eq 2 ] || pf_fail "missing --output must exit 2"
echo "ok"
