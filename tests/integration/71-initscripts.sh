#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sysvinit scripts and the shutdown reorder hook against a test root (paths from env overrides):
#  - binaries missing: every action is harmless and exits 0 (status 4 / 3), bad action 3; ENABLE_PREFETCH=0:
#    the boot is recorded as an off boot, nothing traced;
#  - prefetch start: 'prefetchd boot' traces in the background, start returns once tracing is set up;
#    prefetch-stop start: notes the boot end, ends tracing LOGIN_TRACING_DELAY later -> trace, layout and a
#    boot-time record whose boot time is the noted boot end;
#  - prefetch-stop stop with ENABLE_FILE_REORDERING=1 arms the reorder in runlevels 0 and 6 only (not by hand,
#    not in runlevel 1); prefetch-reorder stop runs the hook (runlevels 0 and 6 only),
#    which refuses a root still mounted read-write and runs prefetch-reorder --final-shutdown once it is
#    read-only (a fake prefetch-reorder records its arguments), logging to the kernel log (a file here).
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 32M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
mkdir "$mnt/etc" "$mnt/bin"
for i in 1 2 3 4; do head -c 200000 /dev/urandom >"$mnt/bin/prog$i"; done
echo "conf" >"$mnt/etc/conf"
sync

init=$GEN/initscripts
hook=$GEN/systemd/system-shutdown/prefetch-reorder
export PREFETCH_FORCE_SYSV=1 PREFETCH_NO_LSB=1

# 1. Missing binaries: harmless.
for s in prefetch prefetch-stop; do
	for a in start stop restart force-reload; do
		PREFETCHD=$tmp/none PREFETCH_DEFAULTS=$tmp/none "$init/$s" $a >/dev/null 2>&1 || pf_fail "$s $a without binary: exit $?"
	done
	PREFETCHD=$tmp/none "$init/$s" status >/dev/null 2>&1
	[ $? -eq 4 ] || pf_fail "$s status without binary should exit 4"
	PREFETCHD=$tmp/none "$init/$s" bogus >/dev/null 2>&1
	[ $? -eq 3 ] || pf_fail "$s bogus action should exit 3"
done
PREFETCH_HOOK=$tmp/none "$init/prefetch-reorder" stop || pf_fail "prefetch-reorder stop without hook"
PREFETCH_REORDER=$tmp/none PREFETCH_DEFAULTS=$tmp/none "$hook" reboot || pf_fail "hook without binary"
"$hook" bogus 2>/dev/null
[ $? -eq 2 ] || pf_fail "hook with a bad argument should exit 2"
grep -q '^### BEGIN INIT INFO' "$init/prefetch" && grep -q '^# X-Stop-After: *umountroot' "$init/prefetch-reorder" &&
	grep -q '^# Default-Start: *S$' "$init/prefetch" || pf_fail "LSB headers"

# 2. Disabled: prefetchd only waits for the boot's end to record its time (no fanotify group), and the stop
# script ends it with a record of run "off".
conf=$tmp/prefetch.conf
cat >"$conf" <<EOF
ENABLE_PREFETCH=0
PREFETCH_DIR=$tmp/state
SELF_CHECK_INTERVAL=0
PREFETCH_RUNTIME_DIR=$tmp/run
EOF
export PREFETCHD PREFETCH_DEFAULTS=$conf
"$init/prefetch" start >/dev/null || pf_fail "disabled start"
pid=$(cat "$tmp/run/prefetchd.pid" 2>/dev/null) || pf_fail "disabled: nothing waits to record the boot"
pf_kill_later $pid
ls -l "/proc/$pid/fd" | grep -q "fanotify" && pf_fail "disabled: a tracer started"
"$PREFETCHD" stop --pid-file "$tmp/run/prefetchd.pid" --timeout 30 >/dev/null || pf_fail "disabled: stop"
[ "$(grep -v '^#' "$tmp/state/boottime.log" | awk '{ print $21 }')" = off ] || pf_fail "disabled: boot not recorded as off"
[ ! -e "$tmp/state/traces" ] || pf_fail "disabled: a trace was stored"
rm -rf "$tmp/state"

# Where fanotify is unavailable (here: no CAP_SYS_ADMIN, as in a container), prefetchd boot says so in one line
# and exits 0.
# (its own directories, as prefetch(5) wants them: owned by the user running, not writable by others)
mkdir -m 0700 "$tmp/nobody-run" "$tmp/nobody-state" && chown 65534:65534 "$tmp/nobody-run" "$tmp/nobody-state"
printf 'PREFETCH_DIR=%s\nPREFETCH_RUNTIME_DIR=%s\nSELF_CHECK_INTERVAL=0\n' "$tmp/nobody-state" "$tmp/nobody-run" >"$tmp/nobody.conf"
chmod 0755 "$tmp"
cp "$PREFETCHD" "$tmp/prefetchd-copy" && chmod 0755 "$tmp/prefetchd-copy" # the checkout may be private to root
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/prefetchd-copy" boot --config "$tmp/nobody.conf" 2>&1) ||
	pf_fail "prefetchd boot without fanotify: exit $?"
[ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "prefetch skipped this boot" ||
	pf_fail "prefetchd boot without fanotify should log one line: $out"

# 3. A traced "boot" through the init scripts.
cat >"$conf" <<EOF
ENABLE_PREFETCH=1
PREFETCH_DIR=$tmp/state
SELF_CHECK_INTERVAL=0
PREFETCH_RUNTIME_DIR=$tmp/run
TRACE_MOUNTS=$mnt
LOGIN_TRACING_DELAY=1
TRACE_TIMEOUT=60
ENABLE_FILE_REORDERING=yes
REORDER_TIME_BUDGET=500
EOF
umount "$mnt" && mount "$dev" "$mnt" || pf_fail "remount"
start=$(date +%s%N)
"$init/prefetch" start >/dev/null || pf_fail "prefetch start"
ms=$((($(date +%s%N) - start) / 1000000))
pid=$(cat "$tmp/run/prefetchd.pid" 2>/dev/null) || pf_fail "prefetch start returned before tracing was set up"
pf_kill_later $pid
[ "$ms" -lt 2500 ] || pf_fail "prefetch start took ${ms} ms"
"$init/prefetch" status >/dev/null || pf_fail "status while tracing"
"$init/prefetch" start | grep -q "already tracing" || pf_fail "second start"
cat "$mnt/bin/prog2" "$mnt/etc/conf" "$mnt/bin/prog4" >/dev/null
"$init/prefetch-stop" start || pf_fail "prefetch-stop start"
boot_end=$(cat "$tmp/run/boot-end") || pf_fail "no boot-end noted"
"$init/prefetch-stop" status >/dev/null || pf_fail "prefetch-stop status: no stop pending"
for ((i = 0; i < 200; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && pf_fail "tracing did not end LOGIN_TRACING_DELAY after prefetch-stop start"
"$init/prefetch" status >/dev/null
[ $? -eq 3 ] || pf_fail "status after tracing ended should be 3"
ls "$tmp/state/traces/"trace-*.pf >/dev/null 2>&1 || pf_fail "no trace stored"
[ -s "$tmp/state/layout" ] || pf_fail "no layout"
"$PREFETCHD" dump --files "$tmp/state/layout" | grep -q "bin/prog4" || pf_fail "layout lacks a file the boot read"
rec=$(grep -v '^#' "$tmp/state/boottime.log")
[ "$(echo "$rec" | wc -l)" -eq 1 ] || pf_fail "boottime.log: want 1 record, got: $rec"
want=$(printf '%.2f' "$boot_end")
echo "$rec" | awk -v w="$want" '$3 == w && $4 == "file" && $5 == 0 { ok = 1 } END { exit !ok }' ||
	pf_fail "record '$rec' does not carry the boot end $want from the stop script"
pf_note "boot through the init scripts: $rec"

# 4. Shutdown: prefetch-stop stop arms the reorder (layout copied, device noted, marker left).  A fake
# prefetch-reorder records its arguments and says the budget was spent; asked for its plan when the reorder is
# armed (--dry-run), it predicts a gain.
cat >"$tmp/fake-reorder" <<EOF
#!/bin/sh
case " \$* " in *" --dry-run "*)
	echo "a reorder would move 42 of 100 blocks in 1 chunks (0 split, 0 do not fit), 58 blocks already in place"
	echo "dry run: nothing written"
	echo "plan: decision=move blocks=42 replay_now=1.000 replay_after=0.500 gain=50.0"
	exit 0 ;;
esac
echo "\$@" >"$tmp/reorder-args"
echo "moved 42 blocks"
exit 3
EOF
chmod +x "$tmp/fake-reorder"
export PREFETCH_HOOK=$hook PREFETCH_REORDER=$tmp/fake-reorder PREFETCH_ROOT=$mnt PREFETCH_KMSG=$tmp/kmsg
"$init/prefetch-stop" stop || pf_fail "prefetch-stop stop (by hand)"
[ ! -e "$tmp/run/reorder/layout" ] || pf_fail "prefetch-stop stop outside runlevels 0/6 armed the reorder"
RUNLEVEL=1 "$init/prefetch-stop" stop || pf_fail "prefetch-stop stop (runlevel 1)"
[ ! -e "$tmp/run/reorder/layout" ] || pf_fail "prefetch-stop stop in runlevel 1 armed the reorder"
RUNLEVEL=6 "$init/prefetch-stop" stop || pf_fail "prefetch-stop stop"
[ -s "$tmp/run/reorder/layout" ] || pf_fail "reorder not armed (no layout copy)"
[ "$(cat "$tmp/run/reorder/device")" = "$dev" ] || pf_fail "armed device $(cat "$tmp/run/reorder/device") != $dev"
[ "$(cat "$tmp/run/reorder/budget")" = 75 ] || pf_fail "budget not capped at 75 s"
[ -s "$tmp/state/reorder-armed" ] || pf_fail "no reorder-armed marker"
grep -q "armed $dev budget 75s chunk 2000: plan moves 42 blocks, next replay predicted 1.000 s now, 0.500 s after (gain 50.0 %)" \
	"$tmp/state/reorder.log" || pf_fail "reorder.log: no plan with the arming: $(cat "$tmp/state/reorder.log")"
"$init/prefetch-reorder" status | grep -q "armed for $dev" || pf_fail "prefetch-reorder status"

# 5. The hook at the end of shutdown, through /etc/init.d/prefetch-reorder stop.
RUNLEVEL=6 "$init/prefetch-reorder" stop 2>/dev/null || pf_fail "prefetch-reorder stop (rw root)"
[ ! -e "$tmp/reorder-args" ] || pf_fail "reorder ran on a read-write root"
grep -q "still mounted read-write" "$tmp/kmsg" || pf_fail "no kernel-log line for the refused reorder"
"$hook" arm 2>/dev/null || pf_fail "re-arm"
mount -o remount,ro "$mnt" || pf_fail "remount ro"
for rl in 1 ''; do
	RUNLEVEL=$rl "$init/prefetch-reorder" stop 2>/dev/null || pf_fail "prefetch-reorder stop (runlevel '$rl')"
	[ ! -e "$tmp/reorder-args" ] || pf_fail "reorder ran outside runlevels 0/6 (runlevel '$rl')"
done
mount -o remount,rw "$mnt" || pf_fail "remount rw"
mount -o remount,ro "$mnt" || pf_fail "remount ro"
RUNLEVEL=0 "$init/prefetch-reorder" stop 2>/dev/null || pf_fail "prefetch-reorder stop (ro root)"
args=$(cat "$tmp/reorder-args") || pf_fail "prefetch-reorder not run on the read-only root"
[ "$args" = "--final-shutdown --config $conf --layout $tmp/run/reorder/layout --time-budget 75 $dev" ] || pf_fail "reorder args: $args"
grep -q "<5>prefetch-reorder: budget spent (time or writes), continues at the next shutdown: moved 42 blocks" "$tmp/kmsg" ||
	pf_fail "kernel log lacks the outcome: $(cat "$tmp/kmsg")"
grep -q "poweroff" "$tmp/kmsg" || pf_fail "runlevel 0 should run the hook as poweroff"
[ ! -e "$tmp/run/reorder/layout" ] || pf_fail "the armed layout should be used once"
rm -f "$tmp/reorder-args"
"$hook" reboot 2>/dev/null
[ ! -e "$tmp/reorder-args" ] || pf_fail "a second hook run reordered again"
mount -o remount,rw "$mnt"
pf_note "kernel log of the hook:"
sed 's/^/    /' "$tmp/kmsg"
exit 0
