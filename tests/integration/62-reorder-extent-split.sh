#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 62-reorder-extent-split: a power cut while prefetch-reorder switches the block pointers of an extent-mapped
# file whose in-inode extent root is full (4 extents).  (It began as the reproducer of a bug: libext2fs
# set_bmap rewrote the inode step by step and a cut in between lost a tail extent silently - a hole where data
# was, which e2fsck cannot see - or left overlapping extents that e2fsck -p would not repair.)
#
# /f has 4 extents (logical 0-27, 40-67, 80-107, 120-147: holes keep them apart), and the layout wants
# blocks 100-102 and then 10-12 of it, so the reorder moves two 3-block pieces out of the middle of two
# extents: ext2fs_bmap2(BMAP_SET) splits them, the root overflows, libext2fs adds a leaf block and rewrites
# the inode several times (relocate.c F3).  The run is cut at every write k in turn (tests/tools/reorder_crash),
# (and once more losing a random part of the unflushed writes), then e2fsck -p, e2fsck -fn and /f's content
# are checked.  Prints one line per bad cut and a count.
set -u
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
source "$TOP/tests/lib.sh"
pf_require_root
pf_private_mount_ns "$@"
[ -x "$TOOLS/reorder_crash" ] && [ -x "$TOOLS/pf_mklayout" ] || pf_skip "test tools not built (make tools)"
[ -d /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
w=$(pf_tmpdir)
img=$w/base.img
pf_mkfs "$img" 16M -b 4096
mkdir -p "$w/mnt"
mount -o loop "$img" "$w/mnt" || pf_fail mount
pf_cleanup_add "umount '$w/mnt'"
head -c $((148 * 4096)) /dev/urandom >"$w/data"
# a filler written between the extents keeps them ~2.4 MB apart: pieces next to each other would read in one
# sweep as they are, and the planner (which judges the set as the rotational replay reads it) would keep them
for s in 0 40 80 120; do
	dd if="$w/data" of="$w/mnt/f" bs=4096 skip=$s seek=$s count=28 conv=notrunc,fsync status=none
	[ $s -lt 120 ] && head -c $((600 * 4096)) /dev/zero >"$w/mnt/filler$s" && sync
done
sync
filefrag -v "$w/mnt/f" | grep -c '^ *[0-9]*:' | sed 's/^/extents of \/f: /'
printf '%s\n' "$w/mnt/f $((100 * 4096)) $((3 * 4096))" "$w/mnt/f $((10 * 4096)) $((3 * 4096))" >"$w/lines"
"$TOOLS/pf_mklayout" "$w/layout" "$w/lines" >/dev/null || pf_fail pf_mklayout
sum=$(sha256sum <"$w/mnt/f")
umount "$w/mnt"

cp "$img" "$w/c.img"
full=$("$TOOLS/reorder_crash" --count --layout "$w/layout" "$w/c.img") || pf_fail "full run"
echo "full run: $full"
n=$(echo "$full" | awk '{ print $2 }')
moved=$(echo "$full" | sed -n 's/.* moved \([0-9]*\) .*/\1/p')
[ "${moved:-0}" -gt 0 ] || pf_fail "the reorder moved nothing: the split is not exercised"
bad=0
for ((c = 1; c <= 2 * n; c++)); do
	k=$(( (c - 1) % n + 1 )) drop=()
	[ $c -gt "$n" ] && drop=(--drop-unflushed "$k")
	cp "$img" "$w/c.img"
	"$TOOLS/reorder_crash" --stop-after "$k" "${drop[@]}" --layout "$w/layout" "$w/c.img" >/dev/null 2>&1
	e2fsck -p "$w/c.img" >"$w/p.out" 2>&1; p=$?
	e2fsck -fn "$w/c.img" >"$w/n.out" 2>&1; n2=$?
	now=''
	# a fresh name for the mount: a loop device still attached to c.img would be reused with stale cache
	cp "$w/c.img" "$w/m$k.img"
	if mount -o loop,ro "$w/m$k.img" "$w/mnt" 2>/dev/null; then now=$(sha256sum <"$w/mnt/f"); umount "$w/mnt"; fi
	rm -f "$w/m$k.img"
	if [ $p -gt 1 ] || [ $n2 -ne 0 ] || [ "$now" != "$sum" ]; then
		bad=$((bad + 1))
		echo "k=$k${drop[*]:+ (drop)}: e2fsck -p exit $p, then -fn exit $n2, /f $([ "$now" = "$sum" ] && echo same || echo DIFFERENT)" \
			"| $(grep -m2 -E 'Inode|Entry|UNEXPECTED' "$w/p.out" "$w/n.out" | cut -d: -f2- | tr '\n' ' ' | cut -c1-150)"
	fi
done
echo "$bad of $((2 * n)) cuts bad ($n cut points, each plain and losing unflushed writes)"
[ $bad -eq 0 ]
