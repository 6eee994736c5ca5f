#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The shutdown reorder's outcome reaches the next boot (issue #14): the shutdown hook's arm step prepares
# $PREFETCH_DIR/reorder-outcome on the root ("pending"), and the run at the end of shutdown, on the read-only
# root, has prefetch-reorder --outcome overwrite it in place.  On a real ext4 image with the real programs:
# after the run the file holds the run's line, the filesystem is e2fsck -fn clean and every file identical; a
# run that never happens leaves "pending"; a root still read-write gets its line the ordinary way; a state
# directory on another filesystem gets none (the kernel log only); --outcome never writes into a hole.
source "$TOP/tests/lib.sh"
pf_one_cpu "$@" # the fixtures need the holes between their files
pf_require_root
MKLAYOUT=$TOOLS/pf_mklayout
[ -x "$MKLAYOUT" ] || pf_skip "needs $MKLAYOUT (make tools)"
HOOK=$GEN/systemd/system-shutdown/prefetch-reorder
[ -x "$HOOK" ] || pf_fail "$HOOK missing (make)"

T=$(pf_tmpdir)
IMG=$T/root.img
pf_mkfs "$IMG" 64M -b 4096
M=$T/mnt
# One loop device for the whole test: mounting the image again with -o loop right after an umount can race with
# the autoclear of the previous loop device.
DEV=$(pf_loop "$IMG")
pf_mount "$DEV" "$M"

pf_scattered_libs "$M" 40 30000 # something for the reorder to move
STATE=$M/var/lib/prefetch
mkdir -p "$STATE" && chmod 0700 "$STATE"
for i in $(seq 40 -1 1); do echo "$M/usr/lib/lib$i.so"; done >"$T/list"
"$MKLAYOUT" "$STATE/layout" "$T/list" >/dev/null || pf_fail "pf_mklayout"
chmod 0644 "$STATE/layout"
cp -p "$STATE/layout" "$T/layout"
conf=$T/prefetch.conf
cat >"$conf" <<EOF
ENABLE_FILE_REORDERING=1
PREFETCH_DIR=$STATE
PREFETCH_RUNTIME_DIR=$T/run
REORDER_MIN_GAIN_PERCENT=-100
EOF
hook() { PREFETCH_DEFAULTS=$conf PREFETCHD=$PREFETCHD PREFETCH_REORDER=$REORDER PREFETCH_ROOT=$M \
	PREFETCH_KMSG=$T/kmsg PREFETCH_NO_PLAN=1 "$HOOK" "$@" 2>>"$T/hook.err"; }
first() { head -n 1 "$STATE/reorder-outcome"; }

# 1. Arm: the outcome file is ready, "pending", 4 KiB of written blocks; the run will be told its path.
hook arm || pf_fail "arm"
[ -s "$T/run/reorder/layout" ] || pf_fail "not armed: $(cat "$T/kmsg" "$T/hook.err")"
[ "$(cat "$T/run/reorder/outcome")" = /var/lib/prefetch/reorder-outcome ] ||
	pf_fail "outcome path from the root: $(cat "$T/run/reorder/outcome")"
[ "$(stat -c %s "$STATE/reorder-outcome")" -eq 4096 ] || pf_fail "outcome file not 4 KiB"
first | grep -q '^[0-9]* pending: ' || pf_fail "outcome before the run: $(first)"
filefrag -v "$STATE/reorder-outcome" | grep -q 'unwritten' && pf_fail "outcome file preallocated, not written"

# 2. The run at the end of shutdown, on the read-only root: the line is in the file at the next mount.
pf_checksums "$M/usr" >"$T/sums.before"
mount -o remount,ro "$M" || pf_fail "remount ro"
hook reboot || pf_fail "hook reboot"
grep -q '<5>prefetch-reorder: done: .*moved [1-9]' "$T/kmsg" || pf_fail "the run did not move: $(cat "$T/kmsg")"
umount "$M" || pf_fail "umount"
pf_fsck_clean "$DEV"
pf_mount "$DEV" "$M"
first | grep -q '^[0-9]* done: moved [1-9][0-9]* blocks' || pf_fail "outcome after the run: $(first)"
[ "$(stat -c %s "$STATE/reorder-outcome")" -eq 4096 ] || pf_fail "the run changed the outcome file's size"
[ "$(pf_checksums "$M/usr")" = "$(cat "$T/sums.before")" ] || pf_fail "files changed"
pf_note "outcome kept for the next boot: $(first)"

# 3. A run that never happens (power cut before it): "pending" stays for the next boot to report.
hook arm || pf_fail "arm 2"
first | grep -q '^[0-9]* pending: ' || pf_fail "re-armed outcome: $(first)"

# 4. The root still read-write at the end of shutdown: not reordered, and the file says so.
hook reboot || pf_fail "hook reboot (rw)"
first | grep -q '^[0-9]* not moved: .* still mounted read-write' || pf_fail "rw outcome: $(first)"

# 5. --outcome refuses a file whose first block is a hole (a direct write there would land on block 0), and
# the run's own exit status is unchanged by it; not with --dry-run.
truncate -s 4096 "$STATE/hole"
umount "$M" || pf_fail "umount 2"
sum=$(sha256sum <"$DEV")
out=$("$REORDER" --layout "$T/layout" --outcome /var/lib/prefetch/hole "$DEV" 2>&1); rc=$?
[ $rc -eq 0 ] || pf_fail "reorder with an unusable outcome file: exit $rc: $out"
[[ $out == *"outcome not recorded in /var/lib/prefetch/hole: "*"a hole"* ]] || pf_fail "hole not refused: $out"
[ "$(sha256sum <"$DEV")" = "$sum" ] || pf_fail "a run with nothing to move and no outcome wrote to the image"
out=$("$REORDER" --dry-run --outcome /x "$DEV" 2>&1); rc=$?
[ $rc -eq 2 ] || pf_fail "--outcome with --dry-run: exit $rc: $out"
pf_fsck_clean "$DEV"

# 6. PREFETCH_DIR on another filesystem: no outcome file, the kernel log says where the outcome goes.
pf_mount "$DEV" "$M"
mkdir -p "$T/elsewhere" && cp -p "$T/layout" "$T/elsewhere/layout"
sed -i "s|^PREFETCH_DIR=.*|PREFETCH_DIR=$T/elsewhere|" "$conf"
hook arm || pf_fail "arm 3"
[ ! -e "$T/run/reorder/outcome" ] && [ ! -e "$T/elsewhere/reorder-outcome" ] || pf_fail "outcome off the root"
grep -q "outcome goes to the kernel log only" "$T/kmsg" || pf_fail "no word on the outcome: $(cat "$T/kmsg")"

# 7. The hook trusts PREFETCH_DIR only when it is safe (issue #27): a 1777 one is not armed from, and a
# reorder.log that is a symbolic link or a hard link is not appended through.
chmod 1777 "$T/elsewhere"
rm -f "$T/elsewhere/reorder-armed"
: >"$T/kmsg"
hook arm || pf_fail "arm 4"
[ ! -e "$T/run/reorder/layout" ] && [ ! -e "$T/elsewhere/reorder-armed" ] || pf_fail "armed from a 1777 PREFETCH_DIR"
grep -q "is not owned by uid 0 or is writable by group or others: not reordering" "$T/kmsg" ||
	pf_fail "1777 PREFETCH_DIR: $(cat "$T/kmsg")"
chmod 0700 "$T/elsewhere"
echo "root's" >"$T/victim"
for how in symlink hardlink; do
	rm -f "$T/elsewhere/reorder.log"
	if [ $how = symlink ]; then ln -s "$T/victim" "$T/elsewhere/reorder.log"; else ln "$T/victim" "$T/elsewhere/reorder.log"; fi
	hook arm || pf_fail "arm ($how reorder.log)"
	[ "$(cat "$T/victim")" = "root's" ] || pf_fail "the hook appended through a $how reorder.log"
done
pf_note "hook: a 1777 PREFETCH_DIR not armed from; reorder.log links not written through"
exit 0
