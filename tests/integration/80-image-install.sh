#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetch-image (issue 30) on a GPT disk image file with prefetch "installed" (its prefetchd, config and state
# folder, with the state of earlier boots in it): check before anything is installed; install as root — the
# layout and its origin root-owned 0600 in the image's /var/lib/prefetch, the old self-check state and traces
# gone, e2fsck clean, partition 1 untouched — and prefetchd dump and status naming the origin; a second install
# and a second build byte-identical, check saying the root is reordered; install without root privileges
# (libext2fs through debugfs, an image the user owns); and the refusals, one line each with no byte changed:
# an image without prefetch, one without an ext2/3/4 root, an image attached to a loop device, a layout of another
# filesystem.
source "$TOP/tests/lib.sh"
pf_one_cpu "$@" # the fixtures need the holes between their files
pf_require_root
MKLAYOUT=$TOOLS/pf_mklayout
[ -x "$MKLAYOUT" ] || pf_skip "needs $MKLAYOUT (make tools)"
command -v sfdisk >/dev/null || pf_skip "needs sfdisk (package fdisk)"
command -v debugfs >/dev/null || pf_skip "needs debugfs"
PI=${PREFETCH_IMAGE:-$GEN/image/prefetch-image}
[ -x "$PI" ] || pf_skip "needs $PI (make)"
export PREFETCH_IMAGE_LIB=${PREFETCH_IMAGE_LIB:-$TOP/image/qemu-guest.sh}
STATE=/var/lib/prefetch

T=$(pf_tmpdir)
chmod 0755 "$T" # the unprivileged part below works in here too
M=$T/mnt
fs_of() { echo "$1?offset=$PF_ROOT_OFF"; }
files_same() { # IMAGE: the files other than the state folder's as they were made
	local dev; dev=$(pf_root_loop "$1" -r)
	pf_mount "$dev" "$M" -o ro
	pf_checksums "$M" | grep -v "\./var/lib/prefetch/" | diff -q - "$PF_IMAGE_SUMS" >/dev/null || pf_fail "$1: a file changed"
	umount "$M" || pf_fail "umount"
	pf_loop_release "$dev" "$(realpath "$1")"
}
state_ls() { debugfs -R "ls -p $STATE" "$(fs_of "$1")" 2>/dev/null | awk -F/ 'NF >= 6 { print $6 " " $3 " " $4 }'; }

# ---- check before, install as root ----
IMG=$T/disk.img
pf_prefetch_image "$IMG" "$M"
"$MKLAYOUT" "$T/layout" "$PF_IMAGE_LIST" >/dev/null || pf_fail "pf_mklayout"
chmod 0600 "$T/layout"
pf_image_unmount
out=$("$PI" check "$IMG" 2>&1) || pf_fail "check: $out"
[[ $out == *"layout:         none"* && $out == *"partition 2 of its gpt table"* ]] || pf_fail "check without a layout: $out"
[[ $out == *"atime:          relatime (the kernel's default: no \"/\" in the image's /etc/fstab): the first boot writes back"* ]] ||
	pf_fail "check without an fstab: not the kernel's relatime: $out"
out=$("$PI" install --layout "$T/layout" "$IMG" 2>&1) || pf_fail "install: $out"
ls=$(state_ls "$IMG")
grep -qx "layout 100600 0" <<<"$ls" && grep -qx "layout.origin 100600 0" <<<"$ls" || pf_fail "install: layout and origin not root's 0600: $ls"
grep -Eq '^(selfcheck|boottime.log) ' <<<"$ls" && pf_fail "install: the old self-check state is still there: $ls"
grep -q '^reorder-placed ' <<<"$ls" && pf_fail "install: a reorder generation for a root not reordered: $ls"
debugfs -R "ls $STATE/traces" "$(fs_of "$IMG")" 2>/dev/null | grep -q trace-1-old && pf_fail "install: an old trace is still there"
pf_fsck_clean "$(fs_of "$IMG")"
pf_p1_same "$IMG" || pf_fail "install: partition 1 changed"
files_same "$IMG"
# what prefetchd says of the installed layout: dump beside its origin, and status over that state folder
mkdir -m 0700 "$T/state"
debugfs -R "dump $STATE/layout $T/state/layout" "$(fs_of "$IMG")" >/dev/null 2>&1
debugfs -R "dump $STATE/layout.origin $T/state/layout.origin" "$(fs_of "$IMG")" >/dev/null 2>&1
cmp -s "$T/state/layout" "$T/layout" || pf_fail "the installed layout is not the one given"
out=$("$PREFETCHD" dump "$T/state/layout") || pf_fail "dump"
grep -q "^# origin: from image disk.img (installed .*, a layout given to it, root not reordered)$" <<<"$out" ||
	pf_fail "dump: no origin line: $(tail -n 3 <<<"$out")"
printf 'PREFETCH_DIR=%s/state\nPREFETCH_RUNTIME_DIR=%s/run\n' "$T" "$PF_TEST_HOME" >"$T/status.conf"
out=$("$PREFETCHD" status --config "$T/status.conf") || pf_fail "status"
grep -q "^layout origin:  from image disk.img" <<<"$out" || pf_fail "status: no origin line: $out"
out=$("$PI" check "$IMG" 2>&1) || pf_fail "check: $out"
[[ $out == *"origin:         from image disk.img"* && $out == *"reordered:      no: "* && $out == *"replay now:"* ]] ||
	pf_fail "check after install: $out"
pf_note "install: layout and origin root's 0600, old state gone, fsck clean, files and partition 1 unchanged; dump, status and check name the origin"

# ---- idempotent: install again, build twice ----
sum=$(sha256sum <"$IMG")
out=$("$PI" install --layout "$T/layout" "$IMG" 2>&1) || pf_fail "second install: $out"
[ "$(sha256sum <"$IMG")" = "$sum" ] || pf_fail "the second install changed the image: $out"
[[ $out == *"already holds this layout and state: nothing changed"* ]] || pf_fail "second install: $out"
mkdir -p "$T/work"; cp "$T/layout" "$T/work/layout"
out=$("$PI" build --work "$T/work" "$IMG" 2>&1) || pf_fail "build: $out"
[[ $out == *"not learning again"* && $out == *"reordered:      yes"* ]] || pf_fail "build: $out"
# the root reordered for the layout: the deployed machine's first reorder generation, as status shows it
grep -qx "reorder-placed 100600 0" <<<"$(state_ls "$IMG")" || pf_fail "build: no root-owned reorder-placed: $(state_ls "$IMG")"
rm -f "$T/state/reorder-placed"
debugfs -R "dump $STATE/reorder-placed $T/state/reorder-placed" "$(fs_of "$IMG")" >/dev/null 2>&1
grep -Eqx "generation 1 chunk 2000 when [0-9]+" "$T/state/reorder-placed" || pf_fail "build: reorder-placed: $(cat "$T/state/reorder-placed")"
out=$("$PREFETCHD" status --config "$T/status.conf") || pf_fail "status"
grep -q "^  placed:       the layout's files by reorder generation 1 (CHUNK_SIZE_BLOCKS 2000)" <<<"$out" ||
	pf_fail "status of the built image's state: $out"
pf_fsck_clean "$(fs_of "$IMG")"
files_same "$IMG"
sum=$(sha256sum <"$IMG")
out=$("$PI" build --work "$T/work" "$IMG" 2>&1) || pf_fail "second build: $out"
[ "$(sha256sum <"$IMG")" = "$sum" ] || pf_fail "the second build changed the image: $out"
pf_note "idempotent: a second install and a second build leave the image byte-identical; check says reordered, status reorder generation 1"

# ---- check: how the image's fstab mounts the root for access times ----
cp --sparse=always "$IMG" "$T/atime.img"
for opts in "noatime:noatime: a boot writes no inode" "rw,lazytime,relatime:lazytime: the inodes" \
	"defaults:relatime: the first boot writes back" "rw,strictatime:strictatime: the first boot writes back"; do
	printf '# <fs> <mount point> <type> <options> <dump> <pass>\nLABEL=boot /boot ext2 noatime 0 2\nLABEL=root / ext4 %s 0 1\n' \
		"${opts%%:*}" >"$T/fstab"
	debugfs -w -R "rm /etc/fstab" "$(fs_of "$T/atime.img")" >/dev/null 2>&1
	debugfs -w -R "write $T/fstab /etc/fstab" "$(fs_of "$T/atime.img")" >/dev/null 2>&1 || pf_fail "debugfs write /etc/fstab"
	out=$("$PI" check "$T/atime.img" 2>&1) || pf_fail "check ($opts): $out"
	[[ $out == *"atime:          ${opts#*:}"* ]] || pf_fail "check with the root mounted ${opts%%:*}: $out"
done
rm -f "$T/atime.img"
pf_note "check: the root's atime option from the image's fstab (none, noatime, lazytime, relatime, strictatime)"

# ---- without root privileges ----
command -v setpriv >/dev/null || pf_skip "needs setpriv for the unprivileged install (the rest passed)"
U=$T/user; mkdir "$U"
pf_prefetch_image "$U/disk.img" "$M"
"$MKLAYOUT" "$U/layout" "$PF_IMAGE_LIST" >/dev/null || pf_fail "pf_mklayout"
pf_image_unmount
chown -R 65534:65534 "$U"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR="$U" "$PI" install --layout "$U/layout" "$U/disk.img" 2>&1) ||
	pf_fail "unprivileged install: $out"
ls=$(state_ls "$U/disk.img")
grep -qx "layout 100600 0" <<<"$ls" && grep -qx "layout.origin 100600 0" <<<"$ls" || pf_fail "unprivileged install: not root's 0600: $ls"
pf_fsck_clean "$(fs_of "$U/disk.img")"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR="$U" "$PI" check "$U/disk.img" 2>&1) || pf_fail "unprivileged check: $out"
[[ $out == *"origin:         from image disk.img"* ]] || pf_fail "unprivileged check: $out"
pf_note "without root: install and check through libext2fs; the files in the image are root's"

# ---- refusals: one line, exit 1, nothing written ----
refused() { # WANT CMD ARGS...
	local want=$1 sum out rc; shift
	sum=$(sha256sum <"${@: -1}")
	out=$("$PI" "$@" 2>&1); rc=$?
	[ $rc -eq 1 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && [[ $out == *"$want"* ]] || pf_fail "$1: want one line with '$want', exit 1: exit $rc: $out"
	[ "$(sha256sum <"${@: -1}")" = "$sum" ] || pf_fail "$1: a refusal wrote to the image"
}
pf_prefetch_image "$T/bare.img" "$M" noprefetch
pf_image_unmount
for c in check install reorder build learn; do
	refused "prefetch is not installed in it (no /usr/sbin/prefetchd in its root filesystem, partition 2 of its gpt table, typed as the root)" \
		"$c" --layout "$T/layout" "$T/bare.img"
done
truncate -s 32M "$T/noroot.img"
printf 'label: gpt\nstart=2048, size=8192, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B\n' | sfdisk -q "$T/noroot.img"
for c in check install build; do
	refused "no ext2/3/4 root filesystem in its gpt partition table (partitions: 1 unknown): nothing changed" "$c" "$T/noroot.img"
done
dev=$(pf_root_loop "$IMG")
refused "is attached to $dev" install --layout "$T/layout" "$IMG"
refused "is attached to $dev" reorder --layout "$T/layout" "$IMG"
pf_loop_release "$dev" "$(realpath "$IMG")"
cp "$U/layout" "$T/other-layout" # root's: the user's own is refused to root before its filesystem is looked at
refused "$T/other-layout does not fit $IMG: layout is for another filesystem" install --layout "$T/other-layout" "$IMG"
pf_note "refused in one line, nothing written: no prefetch in the image (every command), no ext2/3/4 root, an image attached to a loop device, another filesystem's layout"
