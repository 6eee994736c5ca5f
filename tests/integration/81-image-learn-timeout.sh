#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetch-image learn when the guest never gets to the end of its boot (issue 30), with a stand-in for qemu
# (PREFETCH_IMAGE_QEMU) so that it takes seconds: a guest that prints nothing is stopped at the time-out with one
# line naming its console log; one whose qemu ends at once (a kernel panic under -no-reboot) is reported as such;
# one that says it stored a trace is powered down through qemu's monitor (system_powerdown), and a trace it did not
# store is reported; a qemu whose KVM opens but aborts at the start (a nested host: "failed to set MSR") has the
# boot run again under TCG; and learn interrupted by TERM.  Each time: the stand-in is gone, the overlay removed, the image
# byte-identical.
source "$TOP/tests/lib.sh"
pf_require_root # the fixture's files are written through a loop mount
command -v sfdisk >/dev/null || pf_skip "needs sfdisk (package fdisk)"
command -v qemu-img >/dev/null || pf_skip "needs qemu-img (package qemu-utils)"
command -v debugfs >/dev/null || pf_skip "needs debugfs"
PI=${PREFETCH_IMAGE:-$GEN/image/prefetch-image}
[ -x "$PI" ] || pf_skip "needs $PI (make)"
export PREFETCH_IMAGE_LIB=${PREFETCH_IMAGE_LIB:-$TOP/image/qemu-guest.sh}

T=$(pf_tmpdir)
IMG=$T/disk.img
pf_disk_image "$IMG" dos
dev=$(pf_root_loop "$IMG")
pf_mount "$dev" "$T/mnt"
mkdir -p "$T/mnt/usr/sbin" "$T/mnt/var/lib/prefetch"
printf '#!/bin/sh\n' >"$T/mnt/usr/sbin/prefetchd"
umount "$T/mnt" || pf_fail "umount"
pf_loop_release "$dev" "$(realpath "$IMG")"

# The stand-in: its pid in $T/qemu.pid, its -accel options a line per start in $T/qemu.accels; MODE silent (prints
# nothing, waits), panic (ends at once, exit 1), nokvm (aborts when given KVM, else as traced) or
# traced (prints the trace line on its serial file, then ends when the monitor says system_powerdown).
cat >"$T/qemu" <<'EOS'
#!/bin/bash
echo $$ >"$STUB_DIR/qemu.pid"
serial= accel=
while [ $# -gt 0 ]; do case $1 in -serial) serial=${2#file:} ;; -accel) accel+="${accel:+ }$2" ;; esac; shift; done
echo "$accel" >>"$STUB_DIR/qemu.accels"
case $STUB_MODE in
silent) exec sleep 300 ;;
panic) echo "Kernel panic - not syncing: VFS: Unable to mount root fs" >>"$serial"; exit 1 ;;
nokvm) # KVM aborts; under TCG the guest boots as traced
	case $accel in kvm*) echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2; kill -ABRT $$ ;; esac ;&
traced)
	echo "[   9.1] prefetchd: trace: 12 files -> /var/lib/prefetch/traces/trace-x.pf" >>"$serial"
	echo "[   9.2] prefetchd: layout: 1 traces, 12 files kept" >>"$serial"
	while read -r line; do [ "$line" = system_powerdown ] && { echo powerdown >"$STUB_DIR/qemu.powerdown"; exit 0; }; done
	exit 3 ;;
esac
EOS
chmod +x "$T/qemu"
export PREFETCH_IMAGE_QEMU=$T/qemu STUB_DIR=$T
sum=$(sha256sum <"$IMG")
learn() { # MODE WANT LINES: LINES of output at most (the command line of each boot, what it stored, the error)
	local out rc pid t0=$SECONDS
	rm -f "$T/qemu.pid" "$T/qemu.powerdown"
	out=$(STUB_MODE=$1 "$PI" learn --timeout 3 --boots 2 --work "$T/work" "$IMG" 2>&1); rc=$?
	[ $rc -eq 1 ] || pf_fail "$1: exit $rc, want 1: $out"
	grep -q "$2" <<<"$out" || pf_fail "$1: want '$2': $out"
	[ "$(wc -l <<<"$out")" -le "$3" ] || pf_fail "$1: more than $3 lines: $out"
	pid=$(cat "$T/qemu.pid" 2>/dev/null) || pf_fail "$1: the stand-in never ran"
	kill -0 "$pid" 2>/dev/null && pf_fail "$1: the stand-in qemu ($pid) is still running"
	[ -e "$T/work/overlay.qcow2" ] && pf_fail "$1: the overlay was left behind"
	[ "$(sha256sum <"$IMG")" = "$sum" ] || pf_fail "$1: the image changed"
	[ $((SECONDS - t0)) -lt 30 ] || pf_fail "$1: took $((SECONDS - t0)) s"
	pf_note "$1: $(tail -n 1 <<<"$out")"
}
learn silent "learn: boot 1: no 'prefetchd: trace:' line on the serial console within 3 s: the guest did not boot, prefetch is not enabled in it, its console is not ttyS0, or its kernel log is hidden (quiet; prefetch not started from the initramfs: see prefetch-image(1)); see $T/work/console-1.log" 2
learn panic "learn: boot 1: qemu ended before the guest's prefetch stored a trace" 2
learn traced "learn: the boots stored no trace in /var/lib/prefetch/traces" 5
[ -e "$T/qemu.powerdown" ] || pf_fail "traced: the guest was not powered down through the monitor"
# A KVM that opens (PFQ_KVM: a file standing for /dev/kvm) but aborts qemu at the start: that boot again, and the
# next, under TCG; then as traced.
: >"$T/kvm"
rm -f "$T/qemu.accels"
PFQ_KVM=$T/kvm learn nokvm "learn: the boots stored no trace in /var/lib/prefetch/traces" 8
[ "$(cat "$T/qemu.accels")" = "$(printf 'kvm tcg,thread=multi\ntcg,thread=multi\ntcg,thread=multi')" ] ||
	pf_fail "nokvm: qemu's accelerators, boot by boot: $(cat "$T/qemu.accels")"
PFQ_KVM=$T/kvm STUB_MODE=nokvm "$PI" learn --timeout 3 --boots 1 --work "$T/work" "$IMG" 2>&1 |
	grep -q "learn: boot 1: qemu's KVM failed (qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69): the boots run under TCG (slower)" ||
	pf_fail "nokvm: no line saying KVM failed"
# Interrupted (TERM) while the guest runs: the guest is stopped and the overlay removed all the same.
rm -f "$T/qemu.pid"
STUB_MODE=silent "$PI" learn --timeout 300 --work "$T/work" "$IMG" >"$T/term.out" 2>&1 &
learner=$!
for ((i = 0; i < 100; i++)); do [ -s "$T/qemu.pid" ] && break; sleep 0.1; done
[ -s "$T/qemu.pid" ] || { kill "$learner"; pf_fail "TERM: the stand-in never ran"; }
kill -TERM "$learner"
wait "$learner"; rc=$?
[ $rc -ne 0 ] || pf_fail "TERM: learn exited 0"
kill -0 "$(cat "$T/qemu.pid")" 2>/dev/null && pf_fail "TERM: the stand-in qemu is still running"
[ -e "$T/work/overlay.qcow2" ] && pf_fail "TERM: the overlay was left behind"
[ "$(sha256sum <"$IMG")" = "$sum" ] || pf_fail "TERM: the image changed"
pf_note "interrupted: the guest stopped, the overlay removed (exit $rc)"
