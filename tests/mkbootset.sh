#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mkbootset.sh [--scale N] [--ratio R] [--seed S] [--size MB] [--no-host] [--workload FILE] [--tsv FILE]
#              [--package-order | --fresh] [--fill PCT] [--fstype ext4|xfs|btrfs] IMAGE
#
# Build an aged ext4 image holding the file set of a real Debian 12 boot (tests/data/debian12-boot/boot1.tsv:
# 419 files, 62 MiB, 43 MiB read) scattered among R times as much other data (default 8), and write the
# boot's reads — "BYTES<TAB>/PATH" in boot order — to FILE (default IMAGE.workload).
#   --scale N   the boot set N times (copies below /bootK/, same access pattern, interleaved): N=4 gives
#               ~1700 files, 250 MiB (the issue's "thousands of files, 100-300 MB")
#   --size MB   image size (default: the data fills ~55 %)
#   --tsv FILE  another boot trace of tests/data/debian12-boot (e.g. boot2.tsv)
#   --package-order  the boot files in path order, each followed by 2-20 siblings of lognormal size in its
#               directory, then 30 % of the siblings deleted: a root filesystem as a package install leaves it
#               (issue #13; tests/tools/mkbootset.c)
#   --fresh     a fresh install: the boot files alone, written in path order on the new filesystem, no other
#               data, no deletions (--ratio ignored)
#   --fill PCT  a heavily aged image, PCT % full at the end: tests/tools/mkaged's churn (interleaved writes and
#               deletes) first fills the share the boot set and its other data leave, then mkbootset writes them
#               into the holes it left (combine with --size: the default size is for ~55 %)
#   --fstype T  the filesystem (default ext4): xfs, or btrfs with the files in subvolume @ (mount it with
#               -o subvol=@, as Fedora and Ubuntu mount their root); the same files written the same way
#   --no-host   filler only (by default a boot file gets the host's content when the host has the same path
#               with the same size — content does not change timings, it only looks real)
# Deterministic: the same arguments write the same files in the same order (tests/tools/mkbootset.c).
set -u
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# shellcheck source=tests/lib.sh
source "$TOP/tests/lib.sh"

scale=1 ratio=8 seed=1 size='' host=/ workload='' tsv=$TOP/tests/data/debian12-boot/boot1.tsv pkg='' fill='' fstype=ext4
usage() { sed -n '3,4p' "$0" | sed 's/^# //' >&2; exit 2; }
while [ $# -gt 1 ]; do
	case $1 in
	--scale) scale=$2; shift 2 ;;
	--ratio) ratio=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--workload) workload=$2; shift 2 ;;
	--no-host) host=''; shift ;;
	--tsv) tsv=$2; shift 2 ;;
	--package-order) pkg=--package-order; shift ;;
	--fresh) pkg=--fresh ratio=0; shift ;;
	--fill) fill=$2; shift 2 ;;
	--fstype) fstype=$2; shift 2 ;;
	*) usage ;;
	esac
done
[ $# -eq 1 ] && [[ $1 != -* ]] || usage
img=$1 workload=${workload:-$1.workload}
[ -x "$TOOLS/mkbootset" ] || pf_fail "$TOOLS/mkbootset missing (make tools)"
[ -z "$fill" ] || [ -x "$TOOLS/mkaged" ] || pf_fail "$TOOLS/mkaged missing (make tools)"

if [ -z "$size" ]; then
	size=$(awk -F'\t' -v n="$scale" -v r="$ratio" '{ s += $4 } END {
		mb = s * n * (1 + r) / 0.55 / 1048576; mb = int((mb + 63) / 64) * 64; print (mb < 256 ? 256 : mb) }' "$tsv")
fi
case $fstype in
ext4) pf_mkfs "$img" "${size}M" ;;
xfs | btrfs)
	rm -f "$img"; truncate -s "${size}M" "$img"
	"mkfs.$fstype" -q -f "$img" >/dev/null || pf_fail "mkfs.$fstype $img" ;;
*) usage ;;
esac
top=$(pf_tmpdir) mnt=''
# mount -o loop: umount detaches the loop device itself, nothing stale is left for the cleanup list.
mount -o loop "$img" "$top" || pf_fail "mount $img"
pf_cleanup_add "umount '$top'"
mnt=$top
if [ "$fstype" = btrfs ]; then
	btrfs subvolume create "$top/@" >/dev/null || pf_fail "btrfs subvolume create @"
	mnt=$top/@
fi
if [ -n "$fill" ]; then
	# mkaged fills a share of the free space it finds: the share that leaves room for the boot set and its other
	# data (ratio times the boot data; mkbootset's ageing rewrites what it deletes, so that is what stays).
	pct=$(df -B1 --output=size,avail "$mnt" | awk -v f="$fill" -v r="$ratio" -v n="$scale" -v tsv="$tsv" '
		NR == 2 { size = $1; avail = $2 }
		END { while ((getline l < tsv) > 0) { split(l, c, "\t"); if (l !~ /^#/) boot += c[4] }
		      want = size * f / 100 - (size - avail) - boot * n * (1 + r)
		      if (want <= 0) exit 1; p = want / avail * 100; printf "%.2f", (p > 100 ? 100 : p) }') ||
		pf_fail "--fill $fill: the boot set alone fills more than that ($size MiB)"
	"$TOOLS/mkaged" --seed "$seed" --fill "$pct" "$mnt" || pf_fail "mkaged $img"
fi
"$TOOLS/mkbootset" --tsv "$tsv" --workload "$workload" --seed "$seed" --scale "$scale" --ratio "$ratio" \
	${host:+--host-root "$host"} $pkg "$mnt" || pf_fail "mkbootset $img"
df -m --output=used,size "$mnt" | awk 'NR == 2 { printf "mkbootset.sh: %s: %d of %d MiB used\n", img, $1, $2 }' img="$img"
umount "$top" || pf_fail "umount $top"
[ "$fstype" != ext4 ] || pf_fsck_clean "$img"
