#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 56-reorder-refusal-gaps: the refusals issue #27 found missing, on real images with the real binary.
#  1. a compatible feature this libext2fs does not know (FEATURE_C13): refused, exit 1, one line, no byte
#     changed (sha256 before and after); a --dry-run still looks;
#  2. an image shorter than its superblock says (truncated to half): refused the same way;
#  3. a layout naming inodes the filesystem itself uses above first_ino (mke2fs -O orphan_file; tune2fs -O
#     quota,project adds a project quota inode) or below it (the root directory, inode 2): their blocks stay
#     where they are, the other files move,
#     e2fsck -fn is clean and the kernel mounts the result (the orphan file case: a kernel without quota
#     support mounts no quota filesystem);
#  4. --outcome through a hard link (the outcome file linked to a root-only file elsewhere on the filesystem):
#     not written, the other file byte-identical, the run's own exit status unchanged; a symbolic link is not
#     followed either;
#  5. the default layout ($PREFETCH_DIR/layout, no --layout): a symbolic link there, or a PREFETCH_DIR of mode
#     1777, is refused in one line with the image unchanged; the same layout as a plain file in a safe
#     PREFETCH_DIR is used.
set -u
source "$TOP/tests/lib.sh"
pf_require_root
pf_private_mount_ns "$@"
[ -x "$TOOLS/mklayout" ] || pf_skip "test tools not built (make tools)"
for c in debugfs dumpe2fs; do command -v $c >/dev/null || pf_skip "needs $c"; done

[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
work=$(pf_tmpdir)
mnt=$work/mnt
truncate -s 8M "$work/probe"
mke2fs -q -F -t ext4 -O orphan_file "$work/probe" >/dev/null 2>&1 || pf_skip "this mke2fs does not know orphan_file"

# refuse NAME PATTERN IMAGE ARGS...: exit 1, exactly one line matching PATTERN, IMAGE byte-identical
refuse() {
	local name=$1 pat=$2 img=$3; shift 3
	local before out rc
	before=$(sha256sum <"$img")
	out=$("$REORDER" "$@" 2>&1); rc=$?
	[ $rc -eq 1 ] || pf_fail "$name: exit $rc, want 1: $out"
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || pf_fail "$name: want one line: $out"
	# shellcheck disable=SC2053 # a glob on purpose
	[[ $out == $pat ]] || pf_fail "$name: message does not say $pat: $out"
	[ "$(sha256sum <"$img")" = "$before" ] || pf_fail "$name: the refused run changed $img"
	pf_note "$name: $out"
}

# An image with files worth moving: written scattered through the kernel.
base=$work/base.img
pf_mkfs "$base" 48M -b 1024 -O orphan_file
pf_mount "$base" "$mnt" -o loop
pf_scattered_libs "$mnt" 30 20000
umount "$mnt" || pf_fail "umount"
L=$work/layout
"$TOOLS/mklayout" --order reverse --percent 100 -o "$L" "$base" >/dev/null || pf_fail "mklayout"
chmod 0644 "$L"
img=$work/case.img

# 1. an unknown compatible feature
cp --sparse=always "$base" "$img"
debugfs -w -R "feature FEATURE_C13" "$img" >/dev/null 2>&1 || pf_fail "debugfs: set FEATURE_C13"
dumpe2fs -h "$img" 2>/dev/null | grep -q 'FEATURE_C13' || pf_fail "FEATURE_C13 not set"
refuse compat-unknown '*unsupported feature FEATURE_C13*' "$img" --layout "$L" "$img"

# 2. truncated to half its size
cp --sparse=always "$base" "$img"
truncate -s 24M "$img"
refuse truncated '*truncated*' "$img" --layout "$L" "$img"
refuse truncated-dry-run '*truncated*' "$img" --dry-run --layout "$L" "$img"

# 3. inodes the superblock names, above first_ino
cp --sparse=always "$base" "$work/quota.img"
tune2fs -O quota,project "$work/quota.img" >/dev/null 2>&1 || pf_fail "tune2fs -O quota,project"
field() { dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^$2: *//p"; }
orph=$(field "$base" 'Orphan file inode')
prj=$(field "$work/quota.img" 'Project quota inode')
first=$(field "$base" 'First inode')
[ -n "$orph" ] && [ -n "$prj" ] && [ "$orph" -ge "$first" ] && [ "$prj" -ge "$first" ] ||
	pf_fail "want the orphan file ($orph) and project quota ($prj) inodes at or above first_ino ($first)"
for ino in "$orph" "$prj" 2; do
	if [ "$ino" != "$prj" ]; then cp --sparse=always "$base" "$img"; else cp --sparse=always "$work/quota.img" "$img"; fi
	"$TOOLS/mklayout" --order reverse --percent 100 --inode "$ino" -o "$work/l$ino" "$img" >/dev/null ||
		pf_fail "mklayout --inode $ino"
	chmod 0644 "$work/l$ino"
	blocks_before=$(debugfs -R "blocks <$ino>" "$img" 2>/dev/null)
	[ -n "$blocks_before" ] || pf_fail "inode $ino has no blocks"
	out=$("$REORDER" -v --layout "$work/l$ino" "$img" 2>&1) || pf_fail "reorder with inode $ino: exit $?: $out"
	grep -q 'moved [1-9]' <<<"$out" || pf_fail "inode $ino: the other files did not move: $out"
	[ "$(debugfs -R "blocks <$ino>" "$img" 2>/dev/null)" = "$blocks_before" ] ||
		pf_fail "the blocks of inode $ino moved: $(grep "inode $ino" <<<"$out")"
	grep -q "inode $ino): an inode the filesystem itself uses" <<<"$out" || pf_fail "inode $ino: no skip note: $out"
	pf_fsck_clean "$img"
	if [ "$ino" = "$orph" ]; then
		mkdir -p "$mnt"
		mount -o loop,ro "$img" "$mnt" || pf_fail "the kernel does not mount the image after the reorder"
		umount "$mnt"
	fi
	pf_note "inode $ino (first_ino $first) stayed put; the rest moved; e2fsck clean"
done

# 4. --outcome through a hard link or a symbolic link
cp --sparse=always "$base" "$img"
pf_mount "$img" "$mnt" -o loop
mkdir -p "$mnt/var/lib/prefetch" "$mnt/root"
chmod 0700 "$mnt/var/lib/prefetch" "$mnt/root"
head -c 4096 /dev/zero | tr '\0' 'S' >"$mnt/root/secret"
chmod 0600 "$mnt/root/secret"
ln "$mnt/root/secret" "$mnt/var/lib/prefetch/reorder-outcome"
ln -s /root/secret "$mnt/var/lib/prefetch/outcome-symlink"
sync
umount "$mnt"
secret() { debugfs -R "cat /root/secret" "$img" 2>/dev/null | sha256sum; }
want=$(secret)
"$TOOLS/mklayout" --order reverse --percent 100 -o "$L.4" "$img" >/dev/null || pf_fail "mklayout 4"
chmod 0644 "$L.4"
for target in /var/lib/prefetch/reorder-outcome /var/lib/prefetch/outcome-symlink; do
	out=$("$REORDER" --layout "$L.4" --outcome "$target" "$img" 2>&1); rc=$?
	[ $rc -eq 0 ] || pf_fail "$target: the run's exit status changed: $rc: $out"
	grep -q "outcome not recorded in $target" <<<"$out" || pf_fail "$target: no warning: $out"
	[ "$(secret)" = "$want" ] || pf_fail "--outcome $target wrote into /root/secret"
	pf_note "--outcome $target: $(grep 'outcome not recorded' <<<"$out")"
done
pf_fsck_clean "$img"

# 5. the default layout, from PREFETCH_DIR (pf_test_home's: $PREFETCH_CONFIG names it)
state=$PF_TEST_HOME/state
cp --sparse=always "$base" "$img"
ln -s "$L" "$state/layout"
refuse default-layout-symlink "*layout $state/layout: not a regular file" "$img" "$img"
rm -f "$state/layout"
cp "$L" "$state/layout"
chmod 1777 "$state"
refuse default-layout-unsafe-dir "*layout $state/layout: refused: *writable by group/others" "$img" "$img"
chmod 0755 "$state"
out=$("$REORDER" --dry-run "$img" 2>&1) || pf_fail "the default layout in a safe PREFETCH_DIR: exit $?: $out"
exit 0
