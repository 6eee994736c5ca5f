#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetch-image build end to end (issue 30), with a stand-in for qemu that "boots" the overlay the way a guest with
# prefetch would: each boot stores a real trace (made beforehand with prefetchd trace on the image's root) in the
# overlay's /var/lib/prefetch/traces and says so on the serial console, then powers off at system_powerdown.  The
# build learns from the three boots (the traces read out of the overlay, aggregated), reorders the root, installs
# the layout with its traces and origin ("3 boots learnt", reordered), and the image stays fsck-clean with every
# file unchanged; the overlay is gone and the image was not written by the boots.  A second build boots nothing
# and changes no byte.
source "$TOP/tests/lib.sh"
pf_one_cpu "$@" # the fixture needs the holes between its files
pf_require_root
for t in sfdisk qemu-img debugfs; do command -v "$t" >/dev/null || pf_skip "needs $t (fdisk, qemu-utils, e2fsprogs)"; done
PI=${PREFETCH_IMAGE:-$GEN/image/prefetch-image}
[ -x "$PI" ] || pf_skip "needs $PI (make)"
export PREFETCH_IMAGE_LIB=${PREFETCH_IMAGE_LIB:-$TOP/image/qemu-guest.sh}

T=$(pf_tmpdir)
IMG=$T/disk.img
M=$T/mnt
pf_prefetch_image "$IMG" "$M"
# one traced "boot" of the image's root: its files read in the fixture's boot order, cold
umount "$M" && mount "$PF_IMAGE_DEV" "$M" || pf_fail "remount"
pf_drop_caches
pf_trace_start "$T/trace.pf" --mount "$M"
tail -n +2 "$PF_IMAGE_LIST" | while IFS= read -r f; do cat "$f" >/dev/null; done
pf_trace_stop
pf_image_unmount

# The stand-in guest: the overlay as raw, the trace written into it with debugfs, back into the overlay (qemu-img
# convert -B: only what differs from the image), the console lines, then off at system_powerdown.
cat >"$T/qemu" <<'EOS'
#!/bin/bash
set -e
while [ $# -gt 0 ]; do case $1 in -serial) serial=${2#file:} ;; -drive) drive=${2#file=} ;; esac; shift; done
ov=${drive%%,*}
n=$(($(cat "$STUB_DIR/boots" 2>/dev/null || echo 0) + 1)); echo "$n" >"$STUB_DIR/boots"
qemu-img convert -O raw "$ov" "$STUB_DIR/guest.raw"
name=trace-$((1800000000 + n))-stub.pf
debugfs -w -R "write $STUB_DIR/trace.pf /var/lib/prefetch/traces/$name" "$STUB_DIR/guest.raw?offset=$STUB_OFF" >/dev/null 2>&1
qemu-img convert -O qcow2 -B "$STUB_BASE" -F raw "$STUB_DIR/guest.raw" "$ov.new"
mv "$ov.new" "$ov"; rm -f "$STUB_DIR/guest.raw"
echo "[  30.0] prefetchd: trace: 31 files -> /var/lib/prefetch/traces/$name" >>"$serial"
echo "[  30.1] prefetchd: layout: 3 traces, 31 files kept" >>"$serial"
while read -r line; do [ "$line" = system_powerdown ] && exit 0; done
exit 3
EOS
chmod +x "$T/qemu"
export PREFETCH_IMAGE_QEMU=$T/qemu STUB_DIR=$T STUB_OFF=$PF_ROOT_OFF STUB_BASE=$(realpath "$IMG")
fs=$IMG?offset=$PF_ROOT_OFF

out=$("$PI" build --work "$T/work" --timeout 120 "$IMG" 2>&1) || pf_fail "build: $out"
[ -n "${PF_VERBOSE:-}" ] && echo "$out"
[ "$(cat "$T/boots")" = 3 ] || pf_fail "build: $(cat "$T/boots") boots, want 3: $out"
[ -e "$T/work/overlay.qcow2" ] && pf_fail "build: the overlay was left"
[ "$(find "$T/work/traces" -name 'trace-18*-stub.pf' | wc -l)" = 3 ] || pf_fail "build: the learnt traces: $(ls "$T/work/traces")"
[[ $out == *"origin:         from image disk.img (installed "*", 3 boots learnt, root reordered for it)"* ]] ||
	pf_fail "build: the origin: $out"
[[ $out == *"reordered:      yes"* ]] || pf_fail "build: not reordered: $out"
pf_fsck_clean "$fs"
pf_p1_same "$IMG" || pf_fail "build: partition 1 changed"
traces=$(debugfs -R "ls /var/lib/prefetch/traces" "$fs" 2>/dev/null)
[ "$(grep -o 'trace-18[0-9]*-stub.pf' <<<"$traces" | sort -u | wc -l)" = 3 ] && ! grep -q trace-1-old <<<"$traces" ||
	pf_fail "build: the image's traces: $traces"
debugfs -R "dump /var/lib/prefetch/layout $T/installed" "$fs" >/dev/null 2>&1
cmp -s "$T/installed" "$T/work/layout" || pf_fail "build: the installed layout is not the learnt one"
[ "$("$PREFETCHD" dump "$T/work/layout" | sed -n 's/^# files: \([0-9]*\).*/\1/p')" -ge 30 ] || pf_fail "build: the layout lacks files"
dev=$(pf_root_loop "$IMG" -r)
pf_mount "$dev" "$M" -o ro
pf_checksums "$M" | grep -v "\./var/lib/prefetch/" | diff -q - "$PF_IMAGE_SUMS" >/dev/null || pf_fail "build: a file changed"
umount "$M" || pf_fail "umount"
pf_loop_release "$dev" "$(realpath "$IMG")"
pf_note "build: 3 boots learnt through the overlay, layout aggregated, root reordered, layout, traces and origin installed; fsck clean, files unchanged"

sum=$(sha256sum <"$IMG")
out=$("$PI" build --work "$T/work" --timeout 120 "$IMG" 2>&1) || pf_fail "second build: $out"
[ "$(cat "$T/boots")" = 3 ] || pf_fail "the second build booted the guest again"
[ "$(sha256sum <"$IMG")" = "$sum" ] || pf_fail "the second build changed the image: $out"
pf_note "a second build boots nothing and leaves the image byte-identical"
