#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetch-reorder on a disk image file (issue 30): the root partition found with libblkid in a GPT and in an MBR
# table, and a bare filesystem image, each reordered in place through libext2fs at the partition's offset —
# e2fsck -fn clean there, every file unchanged, the other partition's bytes untouched, a second run byte-identical —
# and the refusals, one line each with no byte changed: no ext2/3/4 root, --partition naming a partition without
# one or none at all.
source "$TOP/tests/lib.sh"
pf_one_cpu "$@" # the fixtures need the holes between their files
pf_require_root
MKLAYOUT=$TOOLS/pf_mklayout
[ -x "$MKLAYOUT" ] || pf_skip "needs $MKLAYOUT (make tools)"
command -v sfdisk >/dev/null || pf_skip "needs sfdisk (package fdisk)"

T=$(pf_tmpdir)
M=$T/mnt
for table in gpt dos none; do
	IMG=$T/$table.img
	pf_disk_image "$IMG" "$table"
	# boot files scattered among deleted junk, a layout in another order
	dev=$(pf_root_loop "$IMG")
	pf_mount "$dev" "$M"
	pf_scattered_libs "$M" 30 150000
	{ echo "$M/usr/lib"; for i in $(seq 30 -2 1) $(seq 1 2 30); do echo "$M/usr/lib/lib$i.so"; done; } >"$T/list"
	"$MKLAYOUT" "$T/layout-$table" "$T/list" >/dev/null || pf_fail "$table: pf_mklayout"
	chmod 0644 "$T/layout-$table"
	pf_checksums "$M" >"$T/sums-before"
	umount "$M" || pf_fail "umount"
	pf_loop_release "$dev" "$(realpath "$IMG")"

	out=$("$REORDER" --locate "$IMG") || pf_fail "$table: --locate: $out"
	[ "$(sed -n 's/^offset=//p' <<<"$out")" = "$PF_ROOT_OFF" ] || pf_fail "$table: --locate offset: $out"
	[ "$(sed -n 's/^type=//p' <<<"$out")" = ext4 ] || pf_fail "$table: --locate type: $out"
	case $table in
	gpt) [[ $out == *"why=partition 2 of its gpt table, typed as the root"* ]] || pf_fail "gpt: why: $out" ;;
	dos) [[ $out == *"why=partition 2 of its dos table, its only ext2/3/4"* ]] || pf_fail "dos: why: $out" ;;
	none) [[ $out == *"partition=0"* ]] || pf_fail "bare: $out" ;;
	esac
	out=$("$REORDER" --min-gain off --layout "$T/layout-$table" "$IMG" 2>&1) || pf_fail "$table: reorder: $out"
	moved=$(sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' <<<"$out")
	[ "${moved:-0}" -gt 0 ] || pf_fail "$table: nothing moved: $out"
	[ "$table" = none ] || [[ $out == *"ext4 filesystem at byte $PF_ROOT_OFF"* ]] || pf_fail "$table: no line naming the partition: $out"
	fs=$IMG; [ "$PF_ROOT_OFF" = 0 ] || fs="$IMG?offset=$PF_ROOT_OFF"
	pf_fsck_clean "$fs"
	pf_p1_same "$IMG" || pf_fail "$table: partition 1 changed"
	dev=$(pf_root_loop "$IMG" -r)
	pf_mount "$dev" "$M" -o ro
	pf_checksums "$M" | diff -q - "$T/sums-before" >/dev/null || pf_fail "$table: a file changed"
	umount "$M" || pf_fail "umount"
	pf_loop_release "$dev" "$(realpath "$IMG")"
	sum=$(sha256sum <"$IMG")
	out=$("$REORDER" --min-gain off --layout "$T/layout-$table" "$IMG" 2>&1) || pf_fail "$table: second run: $out"
	[ "$(sha256sum <"$IMG")" = "$sum" ] || pf_fail "$table: the second run wrote: $out"
	pf_note "$table: root at byte $PF_ROOT_OFF, $moved blocks moved, fsck clean, files and partition 1 unchanged, second run wrote nothing"
done

# Refusals: one line, exit 1, no byte changed.
refused() { # IMAGE WANT_TEXT ARGS...
	local img=$1 want=$2 sum out rc; shift 2
	sum=$(sha256sum <"$img")
	out=$("$REORDER" "$@" "$img" 2>&1); rc=$?
	[ $rc -eq 1 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && [[ $out == *"$want"* ]] || pf_fail "want one line with '$want', exit 1: exit $rc: $out"
	[ "$(sha256sum <"$img")" = "$sum" ] || pf_fail "a refusal wrote to $img"
}
# a GPT image whose partitions hold no ext2/3/4
truncate -s 32M "$T/noroot.img"
printf 'label: gpt\nstart=2048, size=8192, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B\nstart=10240, size=40960\n' | sfdisk -q "$T/noroot.img"
refused "$T/noroot.img" "no ext2/3/4 root filesystem in its gpt partition table (partitions: 1 unknown, 2 unknown): nothing changed" \
	--layout "$T/layout-gpt"
refused "$T/noroot.img" "no ext2/3/4 root filesystem" --check --layout "$T/layout-gpt"
refused "$T/gpt.img" "partition 1 holds no filesystem known, not ext2/3/4: nothing changed" --partition 1 --layout "$T/layout-gpt"
refused "$T/gpt.img" "no partition 7 (partitions: 1 unknown, 2 ext4)" --partition 7 --layout "$T/layout-gpt"
refused "$T/none.img" "no partition table, so no partition 2" --partition 2 --layout "$T/layout-none"
# a bare image that is no filesystem: the open's refusal, as before
head -c 4M /dev/zero >"$T/zero.img"
refused "$T/zero.img" "cannot open as ext2/3/4" --layout "$T/layout-none"
pf_note "refusals: no ext root (GPT), a partition without one, no such partition, no table, no filesystem: one line, nothing written"
