#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Early start from the initramfs:
#  - initramfs/hooks/prefetch: copies prefetchd into the initramfs only where a unit enables prefetch, and only
#    with ENABLE_PREFETCH=1 and START_FROM_INITRAMFS=1 (nothing otherwise: the initramfs stays as it was);
#  - initramfs/local-bottom/prefetch (run by dash, with a stub chroot on PATH): starts
#    'prefetchd boot --from-initramfs' chrooted into $rootmnt only where prefetch is enabled for boot (systemd
#    wants link, even an absolute one that does not resolve from the initramfs, or a sysvinit rcS link), never
#    without a root, without prefetchd, or when nothing enables it; it names no prereqs;
#    with the initramfs's own copy of prefetchd (hooks/prefetch) present, that copy runs, with --root $rootmnt;
#  - prefetchd boot --from-initramfs: exits at once with START_FROM_INITRAMFS=0; otherwise detaches (own session,
#    stdio on /dev/null), raises its descriptor limit (tracer), traces and replays like the service; the service's own
#    'prefetchd boot' then finds it running and returns at once; 'prefetchd stop' ends it with the trace stored;
#  - with --root DIR: config, state, pid file and trace are DIR's; it changes root into DIR once DIR has /proc
#    and /sys, and traces there; before that it already replays DIR's layout (paths as seen from DIR), on the
#    rotational path too (metadata pass); when DIR's installed prefetchd differs from itself in size (a stale
#    initramfs) it runs that one instead.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root
command -v dash >/dev/null || pf_skip "dash (the initramfs shell) not installed"

tmp=$(pf_tmpdir)
script=$GEN/initramfs/local-bottom/prefetch

# --- the hook (update-initramfs): the copy of prefetchd only where prefetch starts from the initramfs ---
hook=$GEN/initramfs/hooks/prefetch
mkdir -p "$tmp/hook-etc/systemd/system/sysinit.target.wants"
printf 'copy_exec() { echo "$*" >>"%s/copied"; }\n' "$tmp" >"$tmp/hook-functions"
run_hook() { # CONFIG LINES: what the hook copies, one line per copy_exec ("" for none)
	printf '%s\n' "$1" >"$tmp/hook.conf"
	rm -f "$tmp/copied"
	PREFETCHD=$PREFETCHD PREFETCH_DEFAULTS=$tmp/hook.conf PREFETCH_HOOK_ETC=$tmp/hook-etc \
		PREFETCH_HOOK_FUNCTIONS=$tmp/hook-functions dash "$hook" || pf_fail "hook exit $?"
	cat "$tmp/copied" 2>/dev/null || :
}
[ -z "$(run_hook "START_FROM_INITRAMFS=1")" ] || pf_fail "hook: copied prefetchd where no unit enables it"
ln -s /lib/systemd/system/prefetch.service "$tmp/hook-etc/systemd/system/sysinit.target.wants/prefetch.service"
[ "$(run_hook "START_FROM_INITRAMFS=1" | cut -d' ' -f1)" = "$PREFETCHD" ] || pf_fail "hook: no copy with START_FROM_INITRAMFS=1"
[ -z "$(run_hook "START_FROM_INITRAMFS=0")" ] || pf_fail "hook: copied prefetchd with START_FROM_INITRAMFS=0"
[ -z "$(run_hook "ENABLE_PREFETCH=0")" ] || pf_fail "hook: copied prefetchd with ENABLE_PREFETCH=0"

# --- the local-bottom script ---
[ -z "$(dash "$script" prereqs)" ] || pf_fail "prereqs: want none"
mkdir -p "$tmp/bin" "$tmp/root/usr/sbin" "$tmp/root/etc/systemd/system/sysinit.target.wants" "$tmp/root/etc/rcS.d"
cat >"$tmp/bin/chroot" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/chroot.calls"
EOF
chmod +x "$tmp/bin/chroot"
run_script() { # -> number of chroot calls it made
	rm -f "$tmp/chroot.calls"
	# it starts prefetchd in the background: fd 9 goes with it, so the substitution ends when that has run too
	local rc
	rc=$(PATH=$tmp/bin:$PATH rootmnt=$1 PREFETCH_INITRAMFS_COPY=${PREFETCH_INITRAMFS_COPY:-$tmp/none} \
		dash "$script" 9>&1 >&2; echo $?)
	[ "$rc" = 0 ] || pf_fail "local-bottom script exited $rc"
	[ -f "$tmp/chroot.calls" ] && wc -l <"$tmp/chroot.calls" || echo 0
}
[ "$(run_script "$tmp/root")" = 0 ] || pf_fail "started without prefetchd in the root"
printf '#!/bin/sh\n' >"$tmp/root/usr/sbin/prefetchd"; chmod +x "$tmp/root/usr/sbin/prefetchd"
[ "$(run_script "$tmp/root")" = 0 ] || pf_fail "started although prefetch is not enabled"
[ "$(run_script "")" = 0 ] || pf_fail "started without a root"
ln -s /lib/systemd/system/prefetch.service "$tmp/root/etc/systemd/system/sysinit.target.wants/prefetch.service"
[ "$(run_script "$tmp/root")" = 1 ] || pf_fail "not started with prefetch.service enabled"
grep -qx "$tmp/root /usr/sbin/prefetchd boot --from-initramfs" "$tmp/chroot.calls" ||
	pf_fail "wrong command: $(cat "$tmp/chroot.calls")"
# with the initramfs's own copy (hooks/prefetch): that runs, told the root, no chroot command
printf '#!/bin/sh\necho "$*" >>"%s/copy.calls"\n' "$tmp" >"$tmp/bin/copy"
chmod +x "$tmp/bin/copy"
rm -f "$tmp/copy.calls"
[ "$(PREFETCH_INITRAMFS_COPY=$tmp/bin/copy run_script "$tmp/root")" = 0 ] || pf_fail "chroot used despite the copy"
grep -qx "boot --from-initramfs --root $tmp/root" "$tmp/copy.calls" || pf_fail "copy: $(cat "$tmp/copy.calls" 2>&1)"
rm "$tmp/root/etc/systemd/system/sysinit.target.wants/prefetch.service"
ln -s ../init.d/prefetch "$tmp/root/etc/rcS.d/S01prefetch"
[ "$(run_script "$tmp/root")" = 1 ] || pf_fail "not started with the sysvinit script enabled"
[ "$(PREFETCH_CMDLINE='quiet prefetch=off' run_script "$tmp/root")" = 0 ] || pf_fail "started with prefetch=off"

# --- prefetchd boot --from-initramfs ---
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 32M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
for i in 1 2 3 4 5; do head -c 65536 /dev/urandom >"$mnt/f$i"; done
sync
conf=$tmp/prefetch.conf
write_conf() {
	cat >"$conf" <<EOF
PREFETCH_DIR=$tmp/state
SELF_CHECK_INTERVAL=0
PREFETCH_RUNTIME_DIR=$tmp/run
TRACE_MOUNTS=$mnt
TRACE_TIMEOUT=60
START_FROM_INITRAMFS=$1
EOF
}
write_conf 0
timeout 10 "$PREFETCHD" boot --from-initramfs --config "$conf" || pf_fail "START_FROM_INITRAMFS=0: exit $?"
[ -e "$tmp/run/prefetchd.pid" ] && pf_fail "START_FROM_INITRAMFS=0 still started"

write_conf 1
(ulimit -Hn 4096; ulimit -Sn 1024; exec "$PREFETCHD" boot --from-initramfs --config "$conf" >"$tmp/early.out" 2>&1) &
pid=$!
pf_kill_later $pid
for ((i = 0; i < 100; i++)); do [ -s "$tmp/run/prefetchd.pid" ] && break; sleep 0.05; done
[ -s "$tmp/run/prefetchd.pid" ] || pf_fail "early prefetchd did not start tracing within 5 s"
[ "$(cat "$tmp/run/prefetchd.pid")" = "$pid" ] || pf_fail "pid file names $(cat "$tmp/run/prefetchd.pid"), not $pid"
# /proc/PID/stat: pid (comm) state ppid pgrp session ...
[ "$(awk '{ print $6 }' "/proc/$pid/stat")" = "$pid" ] || pf_fail "not detached into its own session"
# started by the initramfs it gets the kernel's 1024/4096; the tracer raises it for its event reads (no fd is
# held per traced file any more: 4096 is what it asks for)
for ((i = 0; i < 40; i++)); do # the pid file comes before the tracer is set up
	nofile=$(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits")
	[ "$nofile" -ge 4096 ] && break
	sleep 0.05
done
[ "$nofile" -ge 4096 ] || pf_fail "descriptor limit not raised: $nofile"
[ "$(cat "/proc/$pid/oom_score_adj")" = 500 ] || pf_fail "oom_score_adj $(cat "/proc/$pid/oom_score_adj")"

# What prefetch.service runs later in the boot: returns at once, leaves the early one running.
timeout 10 "$PREFETCHD" boot --config "$conf" >"$tmp/service.out" 2>&1 || pf_fail "service instance exited $?"
grep -q "already running (pid $pid" "$tmp/service.out" || { cat "$tmp/service.out"; pf_fail "service instance: no notice"; }
kill -0 "$pid" 2>/dev/null || pf_fail "the early prefetchd died"
# Under systemd (a notify socket) the unit adopts the early one: MAINPID= its pid, with READY=1, so that
# 'systemctl status prefetch' shows it running and stopping the unit stops it.
if command -v python3 >/dev/null; then
	sock=$tmp/notify.sock
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(10)
open(sys.argv[2], "w").write(s.recv(4096).decode())' "$sock" "$tmp/notify.msg" &
	listener=$!
	for ((i = 0; i < 50; i++)); do [ -S "$sock" ] && break; sleep 0.05; done
	NOTIFY_SOCKET=$sock timeout 10 "$PREFETCHD" boot --config "$conf" >"$tmp/service2.out" 2>&1 ||
		pf_fail "service instance under a notify socket exited $?"
	wait "$listener" || pf_fail "no notification from the service instance"
	grep -qx "MAINPID=$pid" "$tmp/notify.msg" && grep -qx "READY=1" "$tmp/notify.msg" ||
		pf_fail "the unit does not adopt the early prefetchd: $(cat "$tmp/notify.msg")"
	grep -q "the unit adopts it" "$tmp/service2.out" || { cat "$tmp/service2.out"; pf_fail "service instance: adoption not said"; }
else
	pf_note "python3 not installed: the notify message is not checked"
fi

cat "$mnt/f2" "$mnt/f4" >/dev/null
"$PREFETCHD" stop --pid-file "$tmp/run/prefetchd.pid" --timeout 60 >/dev/null || pf_fail "prefetchd stop"
wait "$pid" || pf_fail "early prefetchd exited $?"
[ -s "$tmp/early.out" ] && { cat "$tmp/early.out"; pf_fail "early prefetchd wrote to its (initramfs) stdio"; }
trace=$(ls "$tmp"/state/traces/trace-*.pf 2>/dev/null | head -1)
[ -n "$trace" ] || pf_fail "no trace stored"
"$PREFETCHD" dump --files "$trace" >"$tmp/trace.txt" || pf_fail "dump trace"
grep -q '/f2$' "$tmp/trace.txt" && grep -q '/f4$' "$tmp/trace.txt" || { cat "$tmp/trace.txt"; pf_fail "trace lacks f2/f4"; }
grep -q '/f3$' "$tmp/trace.txt" && pf_fail "trace holds f3, never read"

# --- --root: the initramfs's copy, changing root into the mounted filesystem itself ---
# (/dev, /proc, /sys: what initramfs-tools moves into the root, /dev in udev's init-bottom script)
mkdir -p "$mnt/usr/sbin" "$mnt/proc" "$mnt/sys" "$mnt/dev"
for d in dev proc sys; do
	mount --bind "/$d" "$mnt/$d" || pf_fail "bind /$d"
	pf_cleanup_add "umount '$mnt/$d'"
done
printf 'PREFETCH_DIR=/state\nPREFETCH_RUNTIME_DIR=/run-pf\nTRACE_MOUNTS=/\nTRACE_TIMEOUT=60\nSELF_CHECK_INTERVAL=0\n' >"$mnt/prefetch.conf"
echo "not prefetchd" >"$mnt/usr/sbin/prefetchd" # an upgraded binary the initramfs copy does not match
chmod +x "$mnt/usr/sbin/prefetchd"
timeout 10 "$PREFETCHD" boot --from-initramfs --root "$mnt" --config /prefetch.conf >"$tmp/stale.out" 2>&1 ||
	pf_fail "stale copy: exit $?"
grep -q "cannot run /usr/sbin/prefetchd in $mnt" "$tmp/stale.out" || { cat "$tmp/stale.out"; pf_fail "stale copy ran itself"; }
[ -e "$mnt/run-pf/prefetchd.pid" ] && pf_fail "stale copy started tracing"
cp "$PREFETCHD" "$mnt/usr/sbin/prefetchd"
"$PREFETCHD" boot --from-initramfs --root "$mnt" --config /prefetch.conf >"$tmp/root.out" 2>&1 &
pid=$!
pf_kill_later $pid
for ((i = 0; i < 100; i++)); do [ -s "$mnt/run-pf/prefetchd.pid" ] && break; sleep 0.05; done
[ -s "$mnt/run-pf/prefetchd.pid" ] || { cat "$tmp/root.out"; pf_fail "--root: no pid file in the new root"; }
[ "$(readlink "/proc/$pid/root")" = "$mnt" ] || pf_fail "--root: root is $(readlink "/proc/$pid/root")"
cat "$mnt/f1" "$mnt/f5" >/dev/null
"$PREFETCHD" stop --pid-file "$mnt/run-pf/prefetchd.pid" --timeout 60 >/dev/null || pf_fail "prefetchd stop (--root)"
wait "$pid" || pf_fail "--root prefetchd exited $?"
trace=$(ls "$mnt"/state/traces/trace-*.pf 2>/dev/null | head -1)
[ -n "$trace" ] || pf_fail "--root: no trace stored in the new root"
"$PREFETCHD" dump --files "$trace" >"$tmp/trace2.txt" || pf_fail "dump trace (--root)"
grep -q '[[:space:]]/f1$' "$tmp/trace2.txt" && grep -q '[[:space:]]/f5$' "$tmp/trace2.txt" ||
	{ cat "$tmp/trace2.txt"; pf_fail "--root trace lacks /f1 /f5 (paths as seen from the new root)"; }
timeout 10 "$PREFETCHD" boot --root "$mnt" >/dev/null 2>&1
[ $? = 2 ] || pf_fail "--root without --from-initramfs: want usage error"

# The replay begins before the root is complete (started right after the mount): the layout the run above
# stored (paths as seen from the root) is replayed while the root has no /proc and /sys yet, on the rotational
# path (metadata pass); then the root gets them, and prefetchd changes root into it and traces.  udev's
# init-bottom script may already have moved the initramfs's /dev into the root when prefetchd starts: in a
# mount namespace of its own /dev is hidden, so the kernel log and the device are found under the root only.
[ -s "$mnt/state/layout" ] || pf_fail "no layout stored by the --root run"
command -v unshare >/dev/null || pf_skip "unshare (util-linux) not installed"
printf 'PREFETCH_MEDIUM=rotational\n' >>"$mnt/prefetch.conf"
umount "$mnt/proc" "$mnt/sys" || pf_fail "umount proc/sys"
rm -f "$mnt/run-pf/prefetchd.pid"
pf_drop_caches
pf_cache_hold # until the residency checks below: another process's drop would undo the replay they look for
[ "$("$TOOLS/pf_mincore" "$mnt/f1" | awk '{ print $1 }')" = 0 ] || pf_fail "f1 still cached after drop_caches"
marker="73-initramfs $$ $(date +%s%N)" # this run's part of the kernel log
echo "$marker" >/dev/kmsg
mkdir -p "$tmp/nodev"
cat >"$tmp/moved-dev.sh" <<'EOF2'
# In a mount namespace: /dev as the initramfs has it once udev's script moved it (empty); no /dev/null here.
mount --bind "$tmp/nodev" /dev || exit 10
"$PREFETCHD" boot --from-initramfs --root "$mnt" --config /prefetch.conf >"$tmp/rel.out" 2>&1 &
pid=$!
res() { "$TOOLS/pf_mincore" "$1" | awk '{ print $1 }'; }
for ((i = 0; i < 600; i++)); do [ "$(res "$mnt/f1")" = 16 ] && [ "$(res "$mnt/f5")" = 16 ] && break; sleep 0.05; done
[ "$(res "$mnt/f1")" = 16 ] && [ "$(res "$mnt/f5")" = 16 ] || { kill $pid; exit 11; } # not replayed before the root was complete
[ "$(res "$mnt/f3")" = 0 ] || { kill $pid; exit 12; }                               # f3 (not in the layout) read
[ "$(readlink "/proc/$pid/root")" = / ] || { kill $pid; exit 13; }                 # changed root too early
[ -e "$mnt/run-pf/prefetchd.pid" ] && { kill $pid; exit 14; }                       # pid file too early
mount --bind /proc "$mnt/proc" && mount --bind /sys "$mnt/sys" || { kill $pid; exit 15; }
for ((i = 0; i < 100; i++)); do [ -s "$mnt/run-pf/prefetchd.pid" ] && break; sleep 0.05; done
[ -s "$mnt/run-pf/prefetchd.pid" ] || { kill $pid; exit 16; }                        # no pid file once complete
[ "$(readlink "/proc/$pid/root")" = "$mnt" ] || { kill $pid; exit 17; }
"$PREFETCHD" stop --pid-file "$mnt/run-pf/prefetchd.pid" --timeout 60 >"$tmp/stop.out" 2>&1 || exit 18
wait $pid || exit 19
EOF2
tmp=$tmp mnt=$mnt unshare -m --propagation private bash "$tmp/moved-dev.sh"
rc=$?
pf_cache_release
case $rc in
0) ;;
11) pf_fail "not replayed before the root was complete: $(cat "$tmp/rel.out")" ;;
*) pf_fail "root-first start with /dev moved: step $rc failed (see $tmp/moved-dev.sh): $(cat "$tmp/rel.out")" ;;
esac
[ -s "$tmp/rel.out" ] && { cat "$tmp/rel.out"; pf_fail "wrote to its (initramfs) stdio"; }
dmesg | sed -n "/$marker/,\$p" >"$tmp/kmsg"
grep -Eq "prefetchd: replay: [0-9]+ files .* [1-9][0-9]* metadata blocks" "$tmp/kmsg" ||
	pf_fail "no replay with a metadata pass in the kernel log: $(grep prefetchd "$tmp/kmsg")"
grep -q "prefetchd: started from the initramfs when the root was mounted (replay began at" "$tmp/kmsg" ||
	pf_fail "kernel log: no start line naming when the replay began: $(grep prefetchd "$tmp/kmsg")"
exit 0
