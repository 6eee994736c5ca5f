#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 51-reorder-refusals: every refusal of prefetch-reorder touches nothing.
#
# For each reason it refuses — mounted (read-write; read-only without --final-shutdown), features (mmp, by
# image and by block device; bigalloc; journal_dev; an incompat and a read-only-compatible feature this
# libext2fs does not know), state (errors, error count, not cleanly unmounted, journal needing recovery,
# orphan list, orphan_present), the layout (for another UUID, not root's, group- or world-writable, not a
# layout), not an ext2/3/4 filesystem — an image is put in that one state (the layout matches it otherwise),
# the real binary runs, and: exit 1, one line on stderr naming the reason, the image byte-identical (sha256
# before and after), and it returned at once.  A copy of the same image and layout, in none of those states,
# is reordered (the refusals are due to the state alone).  On fast flash (PREFETCH_MEDIUM=fast-flash) it
# declines instead: exit 0, one line saying why, nothing written; --force-flash predicts on the SSD model, whose
# gate holds the move back; with --min-gain off it reorders.
set -u
source "$TOP/tests/lib.sh"
pf_require_root
pf_private_mount_ns "$@"
[ -x "$TOOLS/mklayout" ] && [ -x "$TOOLS/mkaged" ] || pf_skip "test tools not built (make tools)"
for c in debugfs tune2fs fsfreeze; do command -v $c >/dev/null || pf_skip "needs $c"; done

[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
work=$(pf_tmpdir)
mnt=$work/mnt
mkdir -p "$mnt"
failures=0
summary=()
bad() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# Quick, not a benchmark: a refusal reads a superblock, descriptors and bitmaps of a 32 MB image and a small
# layout (milliseconds).  What the limit catches is a wait: opening an MMP filesystem read-write makes
# libext2fs sleep twice the MMP interval plus one second (11 s at the default 5 s) before anything else.
QUICK_MS=3000

# refuse NAME PATTERN TARGET [prefetch-reorder args...]: exit 1, one line naming PATTERN (glob), TARGET (an
# image or a block device) byte-identical, back within QUICK_MS.
refuse() {
	local name=$1 pat=$2 target=$3; shift 3
	local before after out rc start ms lines
	before=$(sha256sum <"$target")
	start=$(date +%s%N)
	out=$("$REORDER" "$@" 2>&1); rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	after=$(sha256sum <"$target")
	lines=$(printf '%s\n' "$out" | wc -l)
	[ $rc -eq 1 ] || bad "$name: exit $rc, want 1: $out"
	[ "$lines" -eq 1 ] && [[ $out == "prefetch-reorder: "* ]] && [[ $out != "prefetch-reorder: warning: "* ]] ||
		bad "$name: want exactly one line, 'prefetch-reorder: reason'; got $lines: $out"
	# shellcheck disable=SC2053 # pat is a glob on purpose
	[[ $out == $pat ]] || bad "$name: message does not say $pat: $out"
	[ "$before" = "$after" ] || bad "$name: the refused run changed $target"
	[ "$ms" -lt $QUICK_MS ] || bad "$name: took $ms ms to refuse (>= $QUICK_MS: waited for something)"
	summary+=("$(printf '%-22s exit %s %5d ms  %s' "$name" "$rc" "$ms" "$(cut -c1-100 <<<"$out")")")
}

# The image every case starts from, and a layout for it (root's, 0644) that a reorder has work to do for.
base=$work/base.img
"$TOP/tests/mkaged.sh" "$base" 32 ext4 4096 30 41 >/dev/null 2>&1 || pf_fail "mkaged.sh"
L=$work/layout
"$TOOLS/mklayout" --order reverse --percent 50 -o "$L" "$base" >/dev/null || pf_fail "mklayout"
chown 0:0 "$L"; chmod 0644 "$L"
uuid=$(dumpe2fs -h "$base" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
[ -n "$uuid" ] || pf_fail "no UUID for $base"
img=$work/case.img
fresh() { cp --sparse=always "$base" "$img" || pf_fail "cp $base"; }
# state NAME PATTERN DEBUGFS-REQUEST: a copy of base changed by debugfs -w, refused
state() {
	fresh
	debugfs -w -R "$3" "$img" >/dev/null 2>&1 || pf_fail "debugfs -w -R '$3'"
	refuse "$1" "$2" "$img" --layout "$L" "$img"
}

# ---- features ----
fresh
tune2fs -O mmp "$img" >/dev/null 2>&1 || pf_fail "tune2fs -O mmp"
interval=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^MMP update interval: *//p')
[ "${interval:-0}" -ge 1 ] || pf_fail "no MMP interval on $img"
refuse mmp '*unsupported feature mmp*' "$img" --layout "$L" "$img"
refuse mmp-dry-run '*unsupported feature mmp*' "$img" --dry-run --layout "$L" "$img"
# through a block device: libext2fs also starts MMP for an exclusive (O_EXCL) open
dev=$(pf_loop "$img")
refuse mmp-blockdev '*unsupported feature mmp*' "$dev" --layout "$L" "$dev"
losetup -d "$dev"

mke2fs -q -F -t ext4 -O bigalloc -C 16384 -U "$uuid" "$img" 32M >/dev/null 2>&1 || pf_fail "mke2fs bigalloc"
refuse bigalloc '*unsupported feature bigalloc*' "$img" --layout "$L" "$img"
mke2fs -q -F -O journal_dev -U "$uuid" "$img" 8M >/dev/null 2>&1 || pf_fail "mke2fs journal_dev"
refuse journal_dev '*unsupported feature journal_dev*' "$img" --layout "$L" "$img"
# feature bits no libext2fs knows yet: incompat (nobody may open it) and read-only compatible (it may be
# read, not written)
state unknown-incompat '*unsupported feature*' "feature FEATURE_I30"
state unknown-ro_compat '*unsupported feature*' "feature FEATURE_R30"

# ---- state: a reorder bypasses the journal, it starts only from a clean filesystem ----
state errors '*has errors: run fsck first' "ssv state 3"
state error-count '*has 2 errors recorded*fsck -f*' "ssv error_count 2"
state not-clean '*not cleanly unmounted*run fsck first' "ssv state 0"
state needs-recovery '*journal that needs recovery*' "feature needs_recovery"
state orphan-list '*orphan inodes*' "ssv last_orphan 12"
state orphan-present '*orphan inodes*' "feature orphan_present"

# ---- the layout ----
fresh
"$TOOLS/mklayout" --order reverse --percent 50 --bad-uuid -o "$work/other" "$base" >/dev/null || pf_fail "mklayout --bad-uuid"
chown 0:0 "$work/other"; chmod 0644 "$work/other"
refuse layout-other-uuid '*layout is for another filesystem*' "$img" --layout "$work/other" "$img"
cp "$L" "$work/gw"; chmod 0664 "$work/gw"
refuse layout-group-writable '*owned by root and not writable*' "$img" --layout "$work/gw" "$img"
cp "$L" "$work/ww"; chmod 0646 "$work/ww"
refuse layout-world-writable '*owned by root and not writable*' "$img" --layout "$work/ww" "$img"
cp "$L" "$work/nobody"; chown 65534 "$work/nobody"
refuse layout-not-root '*owned by root and not writable*' "$img" --layout "$work/nobody" "$img"
head -c 4096 /dev/urandom >"$work/junk"; chmod 0644 "$work/junk"
refuse layout-junk "*layout $work/junk:*" "$img" --layout "$work/junk" "$img"
refuse layout-missing "*layout $work/none:*" "$img" --layout "$work/none" "$img"

# ---- not a filesystem ----
rm -f "$work/zero.img"; truncate -s 8M "$work/zero.img"
refuse not-ext '*cannot open as ext2/3/4*' "$work/zero.img" --layout "$L" "$work/zero.img"

# ---- mounted ----
# Read-write: frozen, so that the kernel itself writes nothing while we compare (the freeze flushed it).
fresh
mount -o loop "$img" "$mnt" || pf_fail "mount $img"
pf_cleanup_add "fsfreeze -u '$mnt'; umount '$mnt'"
mdev=$(findmnt -n -o SOURCE "$mnt")
fsfreeze -f "$mnt" || pf_fail "fsfreeze $mnt"
refuse mounted-rw-image '*mounted read-write*' "$img" --layout "$L" "$img"
refuse mounted-rw-dev '*mounted read-write*' "$img" --layout "$L" "$mdev"
fsfreeze -u "$mnt"
umount "$mnt" || pf_fail "umount $mnt"
for _ in $(seq 50); do [ -z "$(losetup -j "$img")" ] && break; sleep 0.1; done
mount -o loop,ro "$img" "$mnt" || pf_fail "mount -o ro $img"
mdev=$(findmnt -n -o SOURCE "$mnt")
refuse mounted-ro '*mounted read-only*--final-shutdown*' "$img" --layout "$L" "$mdev"
umount "$mnt" || pf_fail "umount $mnt"

# ---- fast flash: a decision, not a refusal: exit 0, one line saying why, nothing written; --force-flash
# predicts on the SSD model (its gate holds the move back), and with --min-gain off reorders all the same ----
for _ in $(seq 50); do [ -z "$(losetup -j "$img")" ] && break; sleep 0.1; done
fresh
printf 'PREFETCH_MEDIUM=fast-flash\n' >"$work/flash.conf"
before=$(sha256sum <"$img")
out=$("$REORDER" --config "$work/flash.conf" --layout "$L" "$img" 2>&1); rc=$?
[ $rc -eq 0 ] || bad "fast flash: exit $rc, want 0: $out"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && [[ $out == *"fast flash (PREFETCH_MEDIUM)"*"not reordering"*"--force-flash"* ]] ||
	bad "fast flash: want one line saying why: $out"
[ "$(sha256sum <"$img")" = "$before" ] || bad "fast flash: the image changed"
summary+=("$(printf '%-22s exit %s  %s' "fast-flash" "$rc" "$(cut -c1-100 <<<"$out")")")
# forced, the gain gate judges on the SSD model: nothing a replay there would gain, nothing written
out=$("$REORDER" --config "$work/flash.conf" --force-flash --layout "$L" "$img" 2>&1) || bad "--force-flash: $out"
[[ $out == *"not moving: predicted replay"*"model: SATA SSD)"* ]] || bad "--force-flash: want the SSD model's gate to hold it back: $out"
[ "$(sha256sum <"$img")" = "$before" ] || bad "--force-flash held back by the gate: the image changed"
out=$("$REORDER" --config "$work/flash.conf" --force-flash --min-gain off --layout "$L" "$img" 2>&1) || bad "--force-flash: $out"
moved=$(sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' <<<"$out")
[ "${moved:-0}" -gt 0 ] || bad "--force-flash moved nothing: $out"
pf_fsck_clean "$img"

# ---- and in none of those states it does reorder (each refusal above was its state's doing) ----
for _ in $(seq 50); do [ -z "$(losetup -j "$img")" ] && break; sleep 0.1; done
fresh
out=$("$REORDER" --layout "$L" "$img" 2>&1) || bad "the unrefused copy: $out"
moved=$(sed -n 's/.*moved \([0-9]*\) blocks.*/\1/p' <<<"$out")
[ "${moved:-0}" -gt 0 ] || bad "the unrefused copy moved nothing: $out"
pf_fsck_clean "$img"
summary+=("$(printf '%-22s %s' "(no refusal)" "$(cut -c1-100 <<<"$out")")")

printf '%s\n' "${summary[@]}"
[ "$failures" -eq 0 ] || pf_fail "$failures failed checks"
