#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A replay is bounded in time even when the disk is slow: on the simulated disk slowed to 2 MB/s (sleep mode),
# a 40 MB layout would take 20 s; with --timeout 1 the replay ends (exit 0, "timed out") within a few seconds,
# on the rotational path and on the solid-state one; SIGTERM ends it as promptly.  readahead(2) blocks once the device queue is full, so
# this also checks that each call is small enough for the deadline to be seen.
source "$TOP/tests/lib.sh"
pf_require_simdisk
[ -x "$TOOLS/pf_mklayout" ] || pf_fail "test tools not built (make tools)"

dir=$(sim_tmpfs_dir)
pf_mkfs "$dir/img" 64M
w=$(pf_tmpdir)
mkdir -p "$w/fill"
mount -o loop "$dir/img" "$w/fill" || pf_fail "mount $dir/img"
pf_cleanup_add "umount '$w/fill'"
head -c $((40 << 20)) /dev/urandom >"$w/fill/big" || pf_fail "write big"
umount "$w/fill" || pf_fail "umount"

# A slow disk: simdisk at 2 MB/s (the wrapper keeps the pid lib-sim.sh waits for).
real_bin=$SIM_BIN
printf '#!/bin/sh\nexec %q --rate 2 "$@"\n' "$real_bin" >"$w/slow-simdisk"
chmod +x "$w/slow-simdisk"
SIM_BIN=$w/slow-simdisk
sim_start "$dir/img" count
# A short device queue, as on a disk: readahead blocks once it is full instead of queueing all 40 MB at once.
# Loop devices keep these settings after losetup -d and are reused by others: put them back at exit.
q=/sys/block/${SIM_DEV#/dev/}/queue
pf_cleanup_add "echo $(cat "$q/nr_requests") >'$q/nr_requests'; echo $(cat "$q/max_sectors_kb") >'$q/max_sectors_kb'"
echo 128 >"$q/max_sectors_kb" 2>/dev/null
echo 4 >"$q/nr_requests" 2>/dev/null || pf_skip "cannot shorten the queue of $SIM_DEV"
pf_note "queue: nr_requests $(cat "$q/nr_requests"), max_sectors_kb $(cat "$q/max_sectors_kb")"
sim_mount "$w/fs"
echo "$w/fs/big" | "$TOOLS/pf_mklayout" "$w/layout" || pf_fail "pf_mklayout"
# Before leaving, whatever readahead is still queued completes at once (count mode does not sleep).
pf_cleanup_add "sim_ctl mode count"

for medium in rotational ssd; do
	pf_drop_caches
	sim_ctl mode sleep # no CPU spinners: timing precision does not matter here
	start=$(date +%s%N)
	out=$(timeout 30 "$PREFETCHD" replay "$w/layout" --config "$w/no-config" --medium $medium --threads 2 \
		--timeout 1 2>"$w/err") || pf_fail "$medium: exit $? ($(cat "$w/err"))"
	ms=$((($(date +%s%N) - start) / 1000000))
	sim_ctl mode count
	pf_note "$medium, --timeout 1: ${ms} ms: $out"
	[[ $out == *", timed out" ]] || pf_fail "$medium: not timed out: '$out'"
	[ $ms -lt 4000 ] || pf_fail "$medium: took $ms ms with --timeout 1"
	[ ! -s "$w/err" ] || pf_fail "$medium: stderr: $(cat "$w/err")"
done

# A stop request (SIGTERM, as systemd sends) ends it cleanly too: exit 0, the summary says "stopped".
pf_drop_caches
sim_ctl mode sleep
sim_reset
"$PREFETCHD" replay "$w/layout" --config "$w/no-config" --medium rotational --timeout 30 >"$w/out" 2>"$w/err" &
pid=$!
# once the disk serves its reads, it is replaying (not a fixed sleep: a busy machine may start it late)
for ((i = 0; i < 200; i++)); do [ "$(sim_stat requests)" -gt 0 ] && break; sleep 0.05; done
start=$(date +%s%N)
kill -TERM $pid
rc=0; wait $pid || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
sim_ctl mode count
pf_note "SIGTERM while reading: exit $rc after ${ms} ms: $(cat "$w/out")"
[ $rc -eq 0 ] || pf_fail "stopped replay: exit $rc ($(cat "$w/err"))"
grep -q ", stopped$" "$w/out" || pf_fail "stopped replay: '$(cat "$w/out")'"
[ $ms -lt 3000 ] || pf_fail "stopped replay took $ms ms to end"
exit 0
