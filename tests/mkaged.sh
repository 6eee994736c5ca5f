#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mkaged.sh IMAGE SIZE_MB FSTYPE BLOCKSIZE FILL_PCT SEED [mke2fs args...]
#
# Make an aged ext2/3/4 test image: mke2fs (no lazy init), loop-mount it, fill FILL_PCT % of the free space by
# interleaved writes and deletes (tests/tools/mkaged), unmount, and check it is clean.  The same arguments
# always give the same files (not the same block placement: the kernel allocator decides that).
# Layouts for it: $TOOLS/mklayout --order random|forward|reverse -o LAYOUT IMAGE.
set -u
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# shellcheck source=tests/lib.sh
source "$TOP/tests/lib.sh"

[ $# -ge 6 ] || { echo "usage: mkaged.sh IMAGE SIZE_MB FSTYPE BLOCKSIZE FILL_PCT SEED [mke2fs args...]" >&2; exit 2; }
img=$1 size=$2 type=$3 bs=$4 fill=$5 seed=$6; shift 6
[ -x "$TOOLS/mkaged" ] || pf_fail "$TOOLS/mkaged missing (make tools)"

rm -f "$img"; truncate -s "${size}M" "$img"
case $type in
	ext2) lazy=() ;;
	*) lazy=(-E lazy_itable_init=0,lazy_journal_init=0) ;;
esac
mke2fs -q -F -t "$type" -b "$bs" "${lazy[@]}" "$@" "$img" >/dev/null || pf_fail "mke2fs $type $* $img"

mnt=$(pf_tmpdir)
# Mount by hand (not pf_loop): the loop device is detached by umount (autoclear), so nothing stale stays
# registered for cleanup that could hit a loop device another test attached in the meantime.
mount -t "$type" -o loop "$img" "$mnt" || pf_fail "mount $img"
pf_cleanup_add "umount '$mnt'"
"$TOOLS/mkaged" --seed "$seed" --fill "$fill" "$mnt" || pf_fail "mkaged $img"
umount "$mnt" || pf_fail "umount $mnt"
pf_fsck_clean "$img"
