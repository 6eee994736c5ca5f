#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The simulated disk (tests/simdisk) in count mode: the seek model charges exactly what it says, cold reads
# through loop + ext4 are charged the same way every run, writes reach the image, the control file works; a
# short sleep-mode sample really waits the model time; wlrun reads a workload; tracing reads nothing at the
# disk's far end.
source "$TOP/tests/lib.sh"
pf_require_root
[ -e /dev/fuse ] || pf_skip "no /dev/fuse"
pkg-config --exists fuse3 2>/dev/null || pf_skip "fuse3 development files missing (libfuse3-dev)"
make -s -C "$TOP/tests/simdisk" >/dev/null || pf_fail "make -C tests/simdisk"
source "$TOP/tests/simdisk/lib-sim.sh"
SIM_SKIP_UNSUPPORTED=1

dir=$(sim_tmpfs_dir)
pf_mkfs "$dir/img" 64M
mnt=$(pf_tmpdir)
mkdir -p "$mnt/w"
mount -o loop "$dir/img" "$mnt/w" || pf_fail "mount $dir/img"
pf_cleanup_add "umount '$mnt/w'"
head -c $((8 << 20)) /dev/urandom >"$mnt/w/big"
for i in $(seq 1 40); do head -c $((i * 1000)) /dev/urandom >"$mnt/w/small$i"; done
(cd "$mnt/w" && for i in $(seq 40 -1 1); do printf '%s\t/small%s\n' $((i * 1000)) "$i"; done) >"$dir/workload"
umount "$mnt/w" || pf_fail "umount"

sim_start "$dir/img" count
span=$(sim_stat span)
[ "$span" -eq $((64 << 20)) ] || pf_fail "span $span"

# The model, straight through the FUSE file: contiguous = transfer only; far = settle + seek + half a turn.
expect_ms() { # expect_ms WHAT MIN MAX: model time since reset in ms
	local ms; ms=$(awk -v ns="$(sim_stat model_ns)" 'BEGIN { printf "%.3f", ns / 1e6 }')
	awk -v v="$ms" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }' || pf_fail "$1: $ms ms, expected $2..$3"
	pf_note "$1: $ms ms"
}
sim_reset
dd if="$SIM_FUSE/disk" of=/dev/null bs=4096 count=1 iflag=direct status=none || pf_fail "read disk"
expect_ms "4 KiB at the head" 0.040 0.042
sim_reset
dd if="$SIM_FUSE/disk" of=/dev/null bs=4096 count=1 skip=$((span / 2 / 4096)) iflag=direct status=none
# 1 + 14 * sqrt(0.5) + 4.17 = 15.069 ms, + 0.041 transfer
expect_ms "4 KiB half a stroke away" 15.10 15.12
sim_reset
dd if="$SIM_FUSE/disk" of=/dev/null bs=4096 count=1 skip=4 iflag=direct status=none
expect_ms "short forward gap (16 KiB)" 0.204 0.206
[ "$(sim_stat seeks)" = 0 ] || pf_fail "a short gap counted as a seek"

# Writes reach the image and are charged.
sim_reset
printf 'SIMDISK-WRITE-TEST' | dd of="$SIM_FUSE/disk" bs=4096 seek=$((span / 4096 - 1)) conv=notrunc,sync oflag=direct \
	status=none || pf_fail "write disk"
[ "$(sim_stat writes)" = 1 ] && [ "$(sim_stat write_bytes)" = 4096 ] || pf_fail "write not counted"
tail -c 4096 "$dir/img" | grep -q SIMDISK-WRITE-TEST || pf_fail "write did not reach the image"
dd if=/dev/zero of="$SIM_FUSE/disk" bs=4096 seek=$((span / 4096 - 1)) count=1 conv=notrunc oflag=direct status=none

# Control file: a bad command is refused; reset zeroes.
printf 'bogus\n' >"$SIM_CTL" 2>/dev/null && pf_fail "bad command accepted"
sim_reset
[ "$(sim_stat requests)" = 0 ] && [ "$(sim_stat model_ns)" = 0 ] || pf_fail "reset did not zero"

# Cold reads through loop + ext4: charged, and exactly the same twice.
sim_mount "$mnt/fs"
run() { # our tests' drops wait for the lock; measured again if somebody else dropped caches meanwhile
	local try d0 d1
	for try in 1 2 3 4 5; do
		pf_drop_caches
		pf_cache_hold
		d0=$(pf_cache_drops slab)
		sim_reset
		"$WLRUN" -C "$mnt/fs" "$dir/workload" >"$dir/out" || pf_fail "wlrun"
		cat "$mnt/fs/big" >/dev/null
		d1=$(pf_cache_drops slab)
		pf_cache_release
		[ "$d1" = "$d0" ] && break
	done
	sim_stat model_ns
}
a=$(run) b=$(run)
grep -q '^files 40 missing 0 bytes 820000 ' "$dir/out" || pf_fail "wlrun: $(cat "$dir/out")"
[ "$a" = "$b" ] || pf_fail "count mode not exact: $a vs $b ns"
[ "$(sim_stat read_bytes)" -ge $((8 << 20)) ] || pf_fail "read_bytes $(sim_stat read_bytes)"
# 8 MiB at 100 MB/s is 84 ms; 40 small files read backwards cost at least a seek each.
awk -v ns="$a" 'BEGIN { exit !(ns > 84e6 + 40 * 5e6 && ns < 2e9) }' || pf_fail "implausible model time $a ns"
pf_note "cold read: $(awk -v ns="$a" 'BEGIN { print ns / 1e6 }') ms model time, $(sim_stat seeks) seeks"
# Warm: nothing reaches the disk.  A drop between the warming run and the measured one empties the cache as
# surely as one during it: the drops are counted from before the warming, our tests' drops wait for the lock.
for try in 1 2 3 4 5; do
	pf_cache_hold
	d0=$(pf_cache_drops slab)
	"$WLRUN" -q -C "$mnt/fs" "$dir/workload" >/dev/null
	sim_reset
	"$WLRUN" -q -C "$mnt/fs" "$dir/workload" >/dev/null
	d1=$(pf_cache_drops slab)
	pf_cache_release
	[ "$d1" = "$d0" ] && break
done
[ "$(sim_stat reads)" = 0 ] || pf_fail "warm run reached the disk"

# Tracing names the filesystem from its superblock: nothing is read in the far end of the disk, where a full
# blkid probe looks for RAID signatures (in the boot lab ~15 full strokes while the replay swept).
pf_drop_caches
sim_reset
mono() { python3 -c 'import time; print(time.monotonic_ns())'; }
before=$(mono)
sim_log "$dir/requests"
after=$(mono) t0_log=$(sim_stat log_t0_ns)
# the log's start on CLOCK_MONOTONIC: what the boot lab puts the guest's console lines beside (timeline.py)
[ "$t0_log" -ge "$before" ] && [ "$t0_log" -le "$after" ] ||
	pf_fail "log_t0_ns $t0_log is not between $before and $after (CLOCK_MONOTONIC around the log command)"
"$PREFETCHD" trace --output "$dir/probe.pf" --mount "$mnt/fs" --timeout 1 >"$dir/trace.out" 2>&1 ||
	pf_fail "trace on the simulated disk: $(cat "$dir/trace.out")"
sim_log off
[ "$(sim_stat log_t0_ns)" = 0 ] || pf_fail "log_t0_ns is $(sim_stat log_t0_ns) without a log"
[ -s "$dir/probe.pf" ] || pf_fail "no trace written"
far=$(awk -v end=$((span - (1 << 20))) '$2 + $3 > end' "$dir/requests" | wc -l)
[ "$far" -eq 0 ] || pf_fail "setting up tracing read $far times from the last MiB of the disk"
pf_note "setting up tracing: $(wc -l <"$dir/requests") request(s), none in the last MiB"

# Sleep mode really waits the model time: the run cannot be quicker, and the daemon's own service time is close to
# the model (the run's wall clock is not bounded above: other work on a shared CI machine delays the reader).
sim_mode sleep
pf_drop_caches
pf_cache_hold # until the reads end: another process's drop would add reads to the run
sim_reset
t0=$(date +%s%N)
"$WLRUN" -C "$mnt/fs" "$dir/workload" >/dev/null
t1=$(date +%s%N)
pf_cache_release
m=$(sim_stat model_ns) w=$(sim_stat wall_ns)
sim_mode count
[ "$m" -gt 100000000 ] || pf_fail "sleep mode: only $m ns of model time"
[ $((t1 - t0)) -ge "$m" ] || pf_fail "sleep mode: the run took $((t1 - t0)) ns for $m ns of model time"
awk -v w="$w" -v m="$m" 'BEGIN { exit !(w >= m && w < 2 * m + 100e6) }' ||
	pf_fail "sleep mode: served in $w ns for $m ns of model time"
pf_note "sleep mode: served in $((w / 1000000)) ms for $((m / 1000000)) ms model (run: $(((t1 - t0) / 1000000)) ms)"

# --stretch K (the boot lab's CPU-to-disk balance under TCG): sleep mode waits K times the model, which it still
# counts as the model's time.  The model's time itself is not the unstretched run's to the nanosecond: in sleep
# mode the kernel merges what queues while a request is served, and longer waits queue more (here 283 against
# 338 ms once, beside another make check), so the stretch is checked against its own run's model time.
sim_stop
SIM_STRETCH=3 sim_start "$dir/img" sleep
sim_mount "$mnt/fs"
[ "$(sim_stat stretch)" = 3 ] || pf_fail "--stretch 3 not taken: $(cat "$SIM_CTL")"
pf_drop_caches
pf_cache_hold
sim_reset
"$WLRUN" -C "$mnt/fs" "$dir/workload" >/dev/null
pf_cache_release
m3=$(sim_stat model_ns) w3=$(sim_stat wall_ns)
sim_mode count
[ "$m3" -gt $((m / 2)) ] && [ "$m3" -lt $((2 * m)) ] || pf_fail "--stretch 3: the model's time $m3 ns, $m ns unstretched"
awk -v w="$w3" -v m="$m3" 'BEGIN { exit !(w >= 3 * m && w < 6 * m + 100e6) }' ||
	pf_fail "--stretch 3: served in $w3 ns for $m3 ns of model time"
pf_note "--stretch 3: served in $((w3 / 1000000)) ms for $((m3 / 1000000)) ms model"
