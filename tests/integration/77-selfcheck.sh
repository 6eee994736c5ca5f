#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The self-check over scripted boot series through 'prefetchd boot' / 'prefetchd stop' (SELF_CHECK_INTERVAL=2):
#  A. where prefetch helps (the simulated 7200 rpm disk, count mode): after enough control and replay boots
#     the policy stays "replay", the log says why with the figures, 'prefetchd report' shows the gain against
#     the control boots and 'prefetchd status' the decision;
#  B. where it cannot help (the same filesystem on a tmpfs-backed loop device: the replay costs only CPU): it
#     narrows, then stops replaying, each switch at the first boot with 3 control and 3 replay boots of the
#     policy in force (selfcheck.h's rule), and logs why;
#  C. back on the slow disk it comes back: probe boots are clearly faster and the replay resumes.
# A boot's time is 1 s of "CPU" plus its disk time: the simulated disk's model seconds of the replay and the
# boot's reads (count mode, exact), or on tmpfs the wall time of the boot's reads.  Also: a corrupt boot log
# and a missing state file leave the next boot replaying, with one line saying why.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root
[ -e /dev/fuse ] || pf_skip "no /dev/fuse"
pkg-config --exists fuse3 2>/dev/null || pf_skip "fuse3 development files missing (libfuse3-dev)"
make -s -C "$TOP/tests/simdisk" >/dev/null || pf_fail "make -C tests/simdisk"
source "$TOP/tests/simdisk/lib-sim.sh"
SIM_SKIP_UNSUPPORTED=1
# The boots' roles are drawn from the boot id: each scripted boot gets its own, from PF_TEST_BOOT_SEED, so the
# series does not depend on the machine's boot id (or its kernel command line); any seed must pass.
seed=${PF_TEST_BOOT_SEED:-77-selfcheck}
export PREFETCH_CMDLINE=''

dir=$(sim_tmpfs_dir 200)
tmp=$(pf_tmpdir)
mnt=$tmp/mnt
mkdir -p "$mnt"

# The boot's files, scattered among others: 40 files (16..400 KiB), read in an order unlike their creation's.
pf_mkfs "$dir/img" 96M -b 4096
mount -o loop "$dir/img" "$mnt" || pf_fail "mount $dir/img"
mkdir -p "$mnt/usr/lib" "$mnt/var/cache"
for i in $(seq 1 40); do
	head -c $(((i * 37 % 25 + 1) * 16384)) /dev/urandom >"$mnt/usr/lib/lib$i.so"
	head -c 393216 /dev/urandom >"$mnt/var/cache/junk$i"
done
for i in $(seq 0 39); do
	k=$(((i * 17) % 40 + 1))
	printf '%s\t/usr/lib/lib%s.so\n' "$(stat -c %s "$mnt/usr/lib/lib$k.so")" "$k"
done >"$dir/workload"
umount "$mnt" || pf_fail "umount"
boot_paths=() # the workload's files under the mount point, in its order
while IFS=$'\t' read -r _ f; do boot_paths+=("$mnt$f"); done <"$dir/workload"
boot_bytes=$(awk '{ s += $1 } END { print s }' "$dir/workload")
resident() { fincore -b -n -o RES "${boot_paths[@]}" | awk '{ s += $1 } END { print s + 0 }'; }

conf=$tmp/prefetch.conf
cat >"$conf" <<EOF
PREFETCH_DIR=$tmp/state
PREFETCH_RUNTIME_DIR=$tmp/run
TRACE_MOUNTS=$mnt
LOGIN_TRACING_DELAY=0
TRACE_TIMEOUT=60
REPLAY_TIMEOUT=30
SELF_CHECK_INTERVAL=2
EOF
medium=''
loopdev=''
use_medium() { # slow | fast
	umount "$mnt" 2>/dev/null
	if [ -n "$loopdev" ]; then losetup -d "$loopdev"; loopdev=''; fi
	sim_stop
	medium=$1
	if [ "$1" = slow ]; then
		sim_start "$dir/img" count
	else
		loopdev=$(pf_loop "$dir/img")
	fi
	pf_cleanup_add "umount '$mnt' 2>/dev/null" # (cleanups run last first: before the disk goes)
}
device() { if [ "$medium" = slow ]; then echo "$SIM_DEV"; else echo "$loopdev"; fi; }

nboot=0
boot() { # one scripted boot on the current medium; its time is written as the boot end
	nboot=$((nboot + 1))
	local log=$tmp/boot$nboot.log i
	umount "$mnt" 2>/dev/null
	pf_drop_caches
	pf_cache_hold # from the replay to the boot's reads: another process's drop_caches would undo the replay
	mount -o ro "$(device)" "$mnt" || pf_fail "boot $nboot: mount"
	[ "$medium" = slow ] && sim_reset
	PREFETCH_BOOT_ID=$seed-$nboot pf_boot_start "$conf" "$tmp/run" "$log"
	# The replay gets going before the boot reads (a real boot is long; this one is milliseconds): wait until
	# it has read 90 % of the boot's data (at most 30 s, REPLAY_TIMEOUT), then until the simulated disk has
	# been quiet for 0.3 s.  (Quiet disk alone was not enough with both cores busy: the replay, niced after its
	# head, starved for longer than that, went on reading among the boot's reads, and its boot came out as slow
	# as a control boot.  fincore opens the files in the workload's order: the trace learns the same from it.)
	if [ "$medium" = slow ] && ! grep -q "control boot\|first traced boot" "$log"; then
		for ((i = 0; i < 600; i++)); do
			[ "$(resident)" -ge $((boot_bytes * 9 / 10)) ] && break
			sleep 0.05
		done
		local last=-1 now quiet=0
		for ((i = 0; i < 400 && quiet < 6; i++)); do
			now=$(sim_stat reads)
			if [ "$now" = "$last" ] && [ "$now" -gt 0 ]; then quiet=$((quiet + 1)); else quiet=0; fi
			last=$now
			sleep 0.05
		done
	fi
	local t0 t1 disk
	t0=$(date +%s%N)
	"$WLRUN" -q -C "$mnt" "$dir/workload" >/dev/null || pf_fail "boot $nboot: the scripted boot's reads"
	t1=$(date +%s%N)
	pf_cache_release
	if [ "$medium" = slow ]; then disk=$(sim_seconds); else disk=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }'); fi
	awk -v d="$disk" 'BEGIN { printf "%.3f\n", 1 + d }' >"$tmp/run/boot-end"
	pf_boot_stop "$tmp/run" "$log"
	grep -q "failed\|cannot" "$log" && { cat "$log"; pf_fail "boot $nboot logged a failure"; }
	return 0
}
policy() { sed -n 's/^policy //p' "$tmp/state/selfcheck"; }
# Counts of the newest control boots and of replay boots under policy P in the log (at most 8 each).
evidence() { # P
	awk -v p="$1" '!/^#/ && NF >= 12 {
		if ($11 == 1 && $5 == 0) c++
		else if ($11 == 0 && $5 == 1 && $12 == p) r++
	} END { print (c > 8 ? 8 : c) + 0, (r > 8 ? 8 : r) + 0 }' "$tmp/state/boottime.log"
}

# ---- A: the slow disk, where prefetch helps ----
use_medium slow
# Until the comparison (lib/compare.h) decides: with 3 boots of a kind one slow boot can leave the 95 % interval
# across 0, and then the self-check waits for more (up to 8 of each) rather than judge.
for ((n = 0; n < 40; n++)); do
	boot
	read -r c r < <(evidence replay)
	[ "$c" -ge 3 ] && [ "$r" -ge 3 ] && ! grep -q "self-check: replay: no clear difference yet" "$tmp/boot$nboot.log" && break
done
[ "$c" -ge 3 ] && [ "$r" -ge 3 ] || pf_fail "A: 40 boots without 3 control and 3 replay boots ($c, $r)"
[ "$(policy)" = replay ] || { tail -n 20 "$tmp/state/boottime.log"; pf_fail "A: where prefetch helps the policy is $(policy): $(cat "$tmp/state/selfcheck")"; }
grep -q "self-check: keep replay: replay boots clearly faster" "$tmp/boot$nboot.log" ||
	{ cat "$tmp/boot$nboot.log"; pf_fail "A: the decision line"; }
pf_note "A ($nboot boots): $(grep -o 'self-check: .*' "$tmp/boot$nboot.log")"
"$PREFETCHD" report --config "$conf" >"$tmp/report.txt" || pf_fail "prefetchd report"
grep -q "^replay " "$tmp/report.txt" && grep -q "^trace " "$tmp/report.txt" || { cat "$tmp/report.txt"; pf_fail "A: report"; }
sed 's/^/    /' "$tmp/report.txt"
grep -q "^self-check, replay against control boots: median [0-9.]* s of [3-8] against [0-9.]* s of [3-8]: -[0-9.]* %; clear: [0-9.]* s faster$" "$tmp/report.txt" ||
	pf_fail "A: report's line against control boots"
"$PREFETCHD" report --config "$conf" --csv >"$tmp/report.csv" || pf_fail "report --csv"
first_control=0 # the first boot has no layout yet: setup trace, a control boot or not as drawn
grep -q ": a control boot" "$tmp/boot1.log" && first_control=1
[ "$(wc -l <"$tmp/report.csv")" -eq $((nboot + 1)) ] && grep -q "^1,$seed-1,[0-9]*,trace,$first_control,replay," "$tmp/report.csv" ||
	{ cat "$tmp/report.csv"; pf_fail "A: report --csv"; }
"$PREFETCHD" report --config "$conf" --json --svg "$tmp/report.svg" >"$tmp/report.json" || pf_fail "report --json"
if command -v python3 >/dev/null; then
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["boots"]) == int(sys.argv[2]); assert d["against_control_boots"]["change"] < -0.1' \
		"$tmp/report.json" "$nboot" || pf_fail "A: report --json: $(cat "$tmp/report.json")"
fi
[ "$(grep -c 'class="point"' "$tmp/report.svg")" -eq "$nboot" ] || pf_fail "A: the chart's points"
[ -n "${PF_KEEP_CHART:-}" ] && cp "$tmp/report.svg" "$PF_KEEP_CHART"
"$PREFETCHD" report --config "$conf" --boots | grep -q "^ *$nboot  .* replay " || pf_fail "A: report --boots"
"$PREFETCHD" status --config "$conf" >"$tmp/status.txt" || pf_fail "prefetchd status"
grep -q "policy replay; one boot in 2 is a control boot" "$tmp/status.txt" &&
	{ # the last boot's own line: its replay, or that it was a control boot (as drawn)
		if grep -q ": a control boot" "$tmp/boot$nboot.log"; then
			grep -q "^last boot: .*, a control boot (nothing replayed);" "$tmp/status.txt"
		else grep -q "^  replay: .* MiB in [0-9]* files read in" "$tmp/status.txt"; fi
	} || { cat "$tmp/status.txt"; pf_fail "A: status"; }
grep -q "prefetch=noreplay\|self-check: a control boot" "$tmp"/boot*.log || pf_fail "A: no boot said it was a control boot"
a_boots=$nboot

# ---- B: a medium so fast the replay only costs CPU: narrow, then off ----
mv "$tmp/state" "$tmp/state-A"
use_medium fast
seen=replay switches=''
for ((n = 0; n < 60; n++)); do
	p=$(policy 2>/dev/null || echo replay)
	read -r c r < <(evidence "$p" 2>/dev/null || echo "0 0")
	boot
	np=$(policy)
	if [ "$np" != "$p" ]; then
		# the switch comes at the first boot where the evidence for the policy in force is complete
		read -r c r < <(evidence "$p")
		[ "$c" -ge 3 ] && [ "$r" -ge 3 ] || pf_fail "B: switched $p -> $np with $c control and $r replay boots"
		grep -q "self-check: switch to $np: .*no clear difference\|self-check: switch to $np: .*clearly slower" \
			"$tmp/boot$nboot.log" || { cat "$tmp/boot$nboot.log"; pf_fail "B: the line saying why"; }
		switches="$switches $p->$np@$((nboot - a_boots))"
	fi
	[ "$np" = off ] && break
done
[ "$(policy)" = off ] || pf_fail "B: still '$(policy)' after $((nboot - a_boots)) boots on a fast medium"
pf_note "B: switches$switches (boot numbers of the series)"
grep -q "policy off" "$tmp/state/selfcheck" || pf_fail "B: state"
b_boots=$nboot

# ---- C: back on the slow disk: probe boots show the gain, the replay resumes ----
use_medium slow
for ((n = 0; n < 60; n++)); do
	boot
	[ "$(policy)" = replay ] && break
done
[ "$(policy)" = replay ] || pf_fail "C: the replay did not resume within 60 boots on the slow disk"
grep -q "self-check: resume replay: probe boots clearly faster" "$tmp/boot$nboot.log" ||
	{ cat "$tmp/boot$nboot.log"; pf_fail "C: the line saying why"; }
grep -q "probe boot (full replay)" "$tmp"/boot*.log || pf_fail "C: no probe boot said so"
pf_note "C: resumed after $((nboot - b_boots)) boots: $(grep -o 'self-check: .*' "$tmp/boot$nboot.log")"

# The series, boot by boot (results/SELF-CHECK.md records one run's).
series() { # LOG FIRST-BOOT-NUMBER
	awk -v n="$2" '!/^#/ && NF >= 18 { printf "    %3d  %-7s %-7s %-6s %6.2f %8s %8s\n", n++,
		$11 == 1 ? "control" : ($5 == 1 ? "replay" : "none"), $12, $5 == 1 && $11 == 0 && $12 == "off" ? "probe" : "",
		$3, $13, $14 }' "$1"
}
pf_note "the series (boot, kind, policy in force, probe, boot s, MiB replayed, MiB of it used):"
series "$tmp/state-A/boottime.log" 1
series "$tmp/state/boottime.log" $((a_boots + 1))

# ---- bad input: each a clear line and the default decision (replay) ----
echo "policy sometimes" >"$tmp/state/selfcheck"
boot
grep -q "self-check state .* unreadable (Invalid argument): replaying as by default" "$tmp/boot$nboot.log" ||
	{ cat "$tmp/boot$nboot.log"; pf_fail "a malformed state file: no line"; }
grep -q "replay: [1-9][0-9]* files\|control boot" "$tmp/boot$nboot.log" || pf_fail "a malformed state file stopped the boot's replay"
printf '# prefetch boottime log, format 1\n\x01\x02garbage\n' >"$tmp/state/boottime.log"
rm -f "$tmp/state/selfcheck"
boot
grep -q "self-check: replay: not enough boots to judge yet" "$tmp/boot$nboot.log" ||
	{ cat "$tmp/boot$nboot.log"; pf_fail "a corrupt boot log: want a fresh start"; }
[ "$(policy)" = replay ] || pf_fail "a corrupt boot log: policy $(policy)"
exit 0
