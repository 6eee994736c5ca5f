#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 19-boot-log-full-disk: a boot record is a whole line or nothing (issue #27).  PREFETCH_DIR on a small tmpfs
# filled up so that the next record's line fits only in part: after a real 'prefetchd boot' (TRACE_TIMEOUT=1)
# boottime.log is byte-identical (no fragment), and 'prefetchd report' reads it as before.  Then, with room
# again and a fragment an older crash left at its end: the next boot's record is read back whole, on its own
# line, and the fragment stays a line of its own.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root
pf_private_mount_ns "$@"

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 32M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
echo data >"$mnt/file"
state=$tmp/state
mkdir -m 0700 "$state"
mount -t tmpfs -o size=256k,mode=0700 prefetch-test "$state" || pf_skip "cannot mount a tmpfs"
pf_cleanup_add "umount '$state' || umount -l '$state'"
cat >"$tmp/conf" <<EOF
PREFETCH_DIR=$state
SELF_CHECK_INTERVAL=0
PREFETCH_RUNTIME_DIR=$tmp/run
TRACE_MOUNTS=$mnt
TRACE_TIMEOUT=1
EOF
boot() {
	PREFETCH_BOOT_ID=$1 timeout 60 "$PREFETCHD" boot --config "$tmp/conf" >"$tmp/boot.out" 2>&1 ||
		pf_fail "prefetchd boot exited $?: $(cat "$tmp/boot.out")"
}

# a log of one record, padded with comment lines up to 40 bytes short of a page boundary: the next record
# (~100 bytes) needs a page more
boot first-boot
[ -s "$state/boottime.log" ] || pf_fail "no boot log: $(cat "$tmp/boot.out")"
rm -rf "$state/traces" "$state/layout"
size=$(stat -c %s "$state/boottime.log")
pad=$((8192 - 40 - size))
{ printf '#%.0s' $(seq 1 $((pad - 1))); echo; } >>"$state/boottime.log"
[ "$(stat -c %s "$state/boottime.log")" -eq $((8192 - 40)) ] || pf_fail "padding: $(stat -c %s "$state/boottime.log")"
dd if=/dev/zero of="$state/filler" bs=4k 2>/dev/null # until the tmpfs is full
before=$(sha256sum <"$state/boottime.log")
boot full-disk-boot
grep -q "cannot append to $state/boottime.log" "$tmp/boot.out" ||
	pf_fail "the record fitted after all (the test did not fill the disk): $(cat "$tmp/boot.out")"
[ "$(sha256sum <"$state/boottime.log")" = "$before" ] ||
	pf_fail "a failed append left a fragment: $(tail -c 120 "$state/boottime.log" | od -c | tail -3)"
pf_note "full disk: $(grep 'cannot append' "$tmp/boot.out")"

# room again; a fragment of a record at the end, as a crash in the middle of a write leaves it
rm -f "$state/filler"
printf 'crashed-boot 17000' >>"$state/boottime.log"
boot after-crash-boot
tail -n 1 "$state/boottime.log" | grep -q '^after-crash-boot ' ||
	pf_fail "the next record is not on a line of its own: $(tail -n 2 "$state/boottime.log")"
grep -q '^crashed-boot 17000$' "$state/boottime.log" || pf_fail "the fragment is not a line of its own"
"$PREFETCHD" report --log "$state/boottime.log" >"$tmp/report" 2>&1 || pf_fail "report: $(cat "$tmp/report")"
pf_note "after a fragment: $(tail -n 1 "$state/boottime.log" | cut -c1-60)"
exit 0
