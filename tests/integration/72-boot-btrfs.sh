#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A boot's record on a btrfs root (issue 28), through scripted boots ('prefetchd boot' / 'prefetchd stop', boot
# end from the stop script's file) with the root in subvolume @ and /home in @home mounted inside it, as Fedora
# lays them out.  A subvolume's st_dev is anonymous and names no device:
#  - the record names the filesystem's disk (the loop device) with its busy time and reads, and the device's
#    medium; the boot's log line and 'prefetchd status' say them;
#  - the second boot replays, cold: its btrfs metadata pass runs and the summary counts the blocks it read;
#  - on a btrfs spanning two devices no one disk's counters are the boot's: the record says "-" and -1, as for
#    any disk it does not know.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root
grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null
command -v mkfs.btrfs >/dev/null || pf_skip "mkfs.btrfs not installed (btrfs-progs)"
grep -qw btrfs /proc/filesystems || pf_skip "the kernel has no btrfs"
pf_private_mount_ns "$@"

tmp=$(pf_tmpdir)
root=$tmp/root

# The image: @ with the boot's files and 1500 small ones it never reads (the tree grows past its root node,
# which btrfs keeps in memory: the pass has leaves to read), @home with a few; a rotational device (the
# metadata pass is for disks).
truncate -s 300M "$tmp/btrfs.img"
mkfs.btrfs -q -f "$tmp/btrfs.img" >/dev/null 2>&1 || pf_fail "mkfs.btrfs"
dev=$(pf_loop "$tmp/btrfs.img")
echo 1 >"/sys/block/$(basename "$dev")/queue/rotational" || pf_fail "cannot mark $dev rotational"
pf_mount "$dev" "$tmp/top"
btrfs subvolume create "$tmp/top/@" >/dev/null && btrfs subvolume create "$tmp/top/@home" >/dev/null ||
	pf_fail "btrfs subvolume create"
mkdir -p "$tmp/top/@/usr/lib" "$tmp/top/@/var" "$tmp/top/@/home" "$tmp/top/@home/user"
for i in $(seq 1 20); do
	head -c $((i * 9000)) /dev/urandom >"$tmp/top/@/usr/lib/lib$i.so"
	head -c $((i * 700)) /dev/urandom >"$tmp/top/@home/user/conf$i"
done
for i in $(seq 1 1500); do printf '%1000s' "$i" >"$tmp/top/@/var/unread$i"; done
umount "$tmp/top" || pf_fail "umount $tmp/top"
pf_mount "$dev" "$root" -o subvol=@
pf_mount "$dev" "$root/home" -o subvol=@home
[ "$(stat -c %Hd "$root")" = 0 ] || pf_fail "precondition: the subvolume's st_dev names a device ($(stat -c %Hd:%Ld "$root"))"

conf=$tmp/prefetch.conf
cat >"$conf" <<EOF
PREFETCH_DIR=$tmp/state
PREFETCH_RUNTIME_DIR=$tmp/run
SELF_CHECK_INTERVAL=0
TRACE_MOUNTS="$root $root/home"
LOGIN_TRACING_DELAY=0
TRACE_TIMEOUT=60
EOF
last() { grep -v '^#' "$tmp/state/boottime.log" | tail -1; }
field() { last | awk -v n="$1" '{ print $n }'; }

# Sectors the disk under the files has read.  Waiting on it, not on the files' residency: opening the files
# (fincore, du) would read their tree leaves before the replay's metadata pass does, on a slow machine.
sectors() { awk '{ print $3 }' "/sys/block/$(basename "$1")/stat"; }
boot() { # N [wait-for-replay]: one scripted boot
	local i s0
	s0=$(sectors "$dev")
	pf_boot_start "$conf" "$tmp/run" "$tmp/boot$1.log"
	if [ -n "${2:-}" ]; then # the replay reads the files' data (after its metadata pass) before the boot does
		for ((i = 0; i < 400; i++)); do
			[ $((($(sectors "$dev") - s0) * 512)) -ge $((total * 9 / 10)) ] && break
			sleep 0.05
		done
	fi
	cat "$root"/usr/lib/* "$root"/home/user/* >/dev/null
	cut -d' ' -f1 /proc/uptime >"$tmp/run/boot-end"
	pf_boot_stop "$tmp/run" "$tmp/boot$1.log"
	grep -qi "error" "$tmp/boot$1.log" && { cat "$tmp/boot$1.log"; pf_fail "boot $1 logged an error"; }
	return 0
}

total=$(du -cb "$root"/usr/lib/* "$root"/home/user/* | tail -1 | cut -f1) # the boot's files' bytes

# Boot 1: traced; the record's disk is the loop device.
boot 1
disk=$(basename "$dev")
[ "$(field 7)" = "$disk" ] || pf_fail "boot 1: the record's disk is not $disk: $(last)"
[ "$(field 8)" -ge 0 ] && [ "$(field 9)" -ge 0 ] && [ "$(field 10)" -ge 0 ] ||
	pf_fail "boot 1: the record's disk counters are unknown: $(last)"
[ "$(field 24)" = rotational ] || pf_fail "boot 1: the record's medium is not the device's (rotational): $(last)"
grep -q "boot finished at .*; disk $disk busy [0-9][0-9.]* s;" "$tmp/boot1.log" ||
	pf_fail "boot 1: the log does not name the disk and its busy time: $(grep 'boot finished' "$tmp/boot1.log")"
"$PREFETCHD" status --config "$conf" >"$tmp/status" 2>&1 || pf_fail "status: $(cat "$tmp/status")"
grep -q "the boot:.*disk busy [0-9][0-9.]* s" "$tmp/status" || pf_fail "status: disk busy unknown: $(grep 'the boot:' "$tmp/status")"

# Boot 2: a cold replay of the layout; the btrfs pass read tree blocks and says how many.
pf_drop_caches
boot 2 wait
line=$(grep "replay: " "$tmp/boot2.log")
m=$(echo "$line" | sed -n 's/.*; \([0-9]*\) metadata blocks.*/\1/p')
[ "${m:-0}" -gt 0 ] || pf_fail "boot 2: the metadata pass counted nothing: $line"
echo "$line" | grep -q "(0 skipped)" || pf_fail "boot 2: the replay skipped files: $line"
[ "$(field 5)" = 1 ] && [ "$(field 7)" = "$disk" ] && [ "$(field 8)" -ge 0 ] || pf_fail "boot 2's record: $(last)"
pf_note "boot 2: $line"

# ---- two devices: no one disk's counters ----
truncate -s 256M "$tmp/m1.img" "$tmp/m2.img"
d1=$(pf_loop "$tmp/m1.img")
d2=$(pf_loop "$tmp/m2.img")
mkfs.btrfs -q -f -d single -m raid1 "$d1" "$d2" >/dev/null 2>&1 || pf_fail "mkfs.btrfs on two devices"
pf_cleanup_add "btrfs device scan --forget '$d1' '$d2'" # after the umount (cleanups run in reverse)
pf_mount "$d1" "$tmp/multi" -o "device=$d2"
mkdir -p "$tmp/multi/usr/lib"
for i in $(seq 1 5); do head -c $((i * 9000)) /dev/urandom >"$tmp/multi/usr/lib/lib$i.so"; done
sed -i "s|^TRACE_MOUNTS=.*|TRACE_MOUNTS=$tmp/multi|; s|^PREFETCH_DIR=.*|PREFETCH_DIR=$tmp/state-multi|" "$conf"
root=$tmp/multi
mkdir -p "$root/home/user" && : >"$root/home/user/conf1"
boot 3
log=$tmp/state-multi/boottime.log
rec=$(grep -v '^#' "$log" | tail -1)
[ "$(echo "$rec" | awk '{ print $7, $8, $9, $10 }')" = "- -1 -1 -1" ] ||
	pf_fail "boot 3 on two devices: want disk \"-\" and its counters -1: $rec"
pf_note "two devices: $rec"
