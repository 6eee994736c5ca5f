# SPDX-License-Identifier: GPL-2.0-or-later
# prefetch's one qemu driver, sourced by prefetch-image (learn) and by the boot lab (results/bootlab/boot-once.sh):
# build a guest's command line, start it, watch its serial console for a line, stop it.  No fixed sleeps: the
# callers wait for what the guest itself prints.
#
# Settings (set before pfq_command; unset ones take the default):
#   PFQ_QEMU     the emulator (PREFETCH_IMAGE_QEMU, else qemu-system-x86_64)
#   PFQ_ACCEL    kvm | tcg (default: kvm where PFQ_KVM, /dev/kvm, opens read-write, qemu falling back to tcg where
#                KVM cannot start; else tcg with a thread per vCPU.  A KVM that starts and then fails, as in some
#                nested hosts, is the caller's to detect: pfq_kvm_failed)
#   PFQ_NAME, PFQ_MEM (MiB, 1024), PFQ_SMP (1), PFQ_CPU (max)
#   PFQ_DRIVE    qemu's -drive argument (required)
#   PFQ_KERNEL, PFQ_INITRD, PFQ_APPEND   a direct kernel boot (else the disk's own boot loader)
#   PFQ_FIRMWARE a firmware file (-bios: OVMF for an EFI image; default SeaBIOS, a BIOS boot)
#   PFQ_SERIALS  the serial ports' files, space-separated (ttyS0 first)
#   PFQ_MONITOR  a FIFO qemu reads its monitor from (pfq_powerdown writes to it), or empty: no monitor
#   PFQ_ICOUNT   TCG only: instruction counting, a load-independent guest clock.  N: -icount shift=N,sleep=on
#                (each guest instruction takes 2^N ns of guest time, so the time the vCPU waits for a host CPU
#                is not guest time; while the vCPU idles, waiting for its disk, guest time follows real time);
#                any other value is qemu's -icount argument as it is; empty (default): off.  It runs all vCPUs
#                in one host thread ("ALL CPUs/TCG"): -accel tcg without thread=multi.
# The command is in the array PFQ_CMD; pfq_start runs it in the background (PFQ_PID), its output in $1.

# pfq_accel: the -accel options, one a line (qemu tries them in order).
pfq_accel() {
	if [ -n "${PFQ_ICOUNT:-}" ]; then
		echo tcg # icount: one TCG thread for all vCPUs (qemu refuses thread=multi with it)
	elif [ -n "${PFQ_ACCEL:-}" ]; then
		case $PFQ_ACCEL in tcg) echo "tcg,thread=multi" ;; *) echo "$PFQ_ACCEL" ;; esac
	elif [ -r "${PFQ_KVM:-/dev/kvm}" ] && [ -w "${PFQ_KVM:-/dev/kvm}" ]; then
		printf 'kvm\ntcg,thread=multi\n'
	else
		echo "tcg,thread=multi"
	fi
}

pfq_command() {
	PFQ_CMD=("${PFQ_QEMU:-${PREFETCH_IMAGE_QEMU:-qemu-system-x86_64}}" -name "${PFQ_NAME:-prefetch-guest},debug-threads=on")
	local a
	while IFS= read -r a; do PFQ_CMD+=(-accel "$a"); done < <(pfq_accel)
	case ${PFQ_ICOUNT:-} in
	'') ;;
	*[!0-9]*) PFQ_CMD+=(-icount "$PFQ_ICOUNT") ;;
	*) PFQ_CMD+=(-icount "shift=$PFQ_ICOUNT,sleep=on") ;;
	esac
	PFQ_CMD+=(-cpu "${PFQ_CPU:-max}" -smp "${PFQ_SMP:-1}" -m "${PFQ_MEM:-1024}")
	[ -n "${PFQ_KERNEL:-}" ] && PFQ_CMD+=(-kernel "$PFQ_KERNEL" -append "${PFQ_APPEND:-}")
	[ -n "${PFQ_KERNEL:-}" ] && [ -n "${PFQ_INITRD:-}" ] && PFQ_CMD+=(-initrd "$PFQ_INITRD")
	[ -n "${PFQ_FIRMWARE:-}" ] && PFQ_CMD+=(-bios "$PFQ_FIRMWARE")
	PFQ_CMD+=(-drive "$PFQ_DRIVE" -nic none -display none -no-reboot)
	local s
	for s in ${PFQ_SERIALS:-}; do PFQ_CMD+=(-serial "file:$s"); done
	if [ -n "${PFQ_MONITOR:-}" ]; then PFQ_CMD+=(-monitor stdio); else PFQ_CMD+=(-monitor none); fi
}

# pfq_start OUTFILE: start PFQ_CMD; its stdin is the monitor FIFO (held open by fd 9, so qemu never sees EOF).
pfq_start() {
	if [ -n "${PFQ_MONITOR:-}" ]; then
		rm -f "$PFQ_MONITOR"; mkfifo -m 0600 "$PFQ_MONITOR" || return 1
		exec 9<>"$PFQ_MONITOR"
		"${PFQ_CMD[@]}" <"$PFQ_MONITOR" >"$1" 2>&1 &
	else
		"${PFQ_CMD[@]}" </dev/null >"$1" 2>&1 &
	fi
	PFQ_PID=$!
}

# pfq_kvm_failed OUTFILE SERIAL: 0 when qemu, given KVM by default (PFQ_ACCEL unset), ended without the guest
# printing anything: a KVM that opened but could not run the guest (qemu aborts, e.g. "failed to set MSR" in a
# nested host).  Its last line of complaint is in PFQ_KVM_WHY.  The caller then runs the guest again with
# PFQ_ACCEL=tcg.
pfq_kvm_failed() {
	[ -z "${PFQ_ACCEL:-}" ] && [ -z "${PFQ_ICOUNT:-}" ] && [ ! -s "$2" ] && pfq_accel | grep -qx kvm || return 1
	PFQ_KVM_WHY=$(grep -v -e '^QEMU .* monitor' -e '^(qemu) *$' "$1" 2>/dev/null | sed 's/^(qemu) //' | tail -n 1)
	return 0
}

pfq_running() { [ -n "${PFQ_PID:-}" ] && kill -0 "$PFQ_PID" 2>/dev/null; }

# pfq_wait_line FILE REGEX TIMEOUT: 0 once a line of FILE matches REGEX, 1 when qemu ended first, 2 after TIMEOUT
# seconds.  Polled every 0.2 s (the guest is not slowed by it).
pfq_wait_line() {
	local file=$1 re=$2 deadline=$((SECONDS + $3))
	while :; do
		grep -Eq -- "$re" "$file" 2>/dev/null && return 0
		pfq_running || { grep -Eq -- "$re" "$file" 2>/dev/null && return 0; return 1; }
		[ "$SECONDS" -ge "$deadline" ] && return 2
		sleep 0.2
	done
}

# pfq_wait_exit TIMEOUT: 0 when qemu has ended (its status in PFQ_RC), 1 after TIMEOUT seconds.
pfq_wait_exit() {
	local deadline=$((SECONDS + $1))
	while pfq_running; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.2
	done
	PFQ_RC=0; wait "$PFQ_PID" 2>/dev/null || PFQ_RC=$?
	PFQ_PID=
	return 0
}

# pfq_powerdown TIMEOUT: the ACPI power button (the guest shuts down cleanly), then after TIMEOUT seconds quit.
pfq_powerdown() {
	pfq_running || { pfq_wait_exit 0; return 0; }
	[ -n "${PFQ_MONITOR:-}" ] && echo system_powerdown >&9 2>/dev/null
	pfq_wait_exit "$1" && return 0
	[ -n "${PFQ_MONITOR:-}" ] && echo quit >&9 2>/dev/null
	pfq_wait_exit 5 || pfq_kill
}

# pfq_kill: end qemu at once (a hung guest, a time-out, the caller's cleanup).
pfq_kill() {
	if [ -n "${PFQ_PID:-}" ]; then
		kill -9 "$PFQ_PID" 2>/dev/null
		wait "$PFQ_PID" 2>/dev/null
		PFQ_PID=
	fi
	if [ -n "${PFQ_MONITOR:-}" ]; then exec 9>&-; rm -f "$PFQ_MONITOR"; fi
	return 0
}
