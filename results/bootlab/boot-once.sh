#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bootlab: boot the guest once and keep what it reported.
#   boot-once.sh DISK IMAGE OUTDIR
# DISK: sim  = IMAGE (on tmpfs) behind the simulated disk (tests/simdisk, sleep mode; BOOTLAB_DISK_MODEL: hdd, the
#              7200 rpm disk, by default, sd or ssd), qemu cache=none
#       warm = IMAGE (on tmpfs) opened directly: an instant device, the lower bound
# OUTDIR gets console.log (ttyS0), report.log (ttyS1, written by the guest's bootlab-report unit), host.env and
# console-times.tsv (both serial files' lines stamped with the host's CLOCK_MONOTONIC at arrival, console-stamp.py:
# with the disk log's log_t0_ns in host.env, timeline.py puts guest events on the disk log's clock).
# A guest still running after BOOTLAB_TIMEOUT seconds is killed and recorded as failed.
# BOOTLAB_STOP_AT_END=1: the guest is killed once its report is complete (BOOTLAB-END) instead of waiting for its
# power-off: for a copy of an image that is thrown away after one boot (run-series.sh first, imaged), whose
# shutdown measures nothing (on the SD-card model it wrote for 2 of a boot's 5.5 min). stopped_at_end=1 in host.env.
# BOOTLAB_INITRD: the initramfs to boot (run-series.sh passes the golden image's own; default the base guest's).
# BOOTLAB_ICOUNT: qemu's instruction counting (image/qemu-guest.sh PFQ_ICOUNT: N for shift=N,sleep=on): the guest's
# clock then counts its instructions, not the host's wall time, so the time its vCPU waits for a host CPU on a
# loaded host stays out of its boot time (lab.sh, NOTES.md).  Empty: off.  Recorded as icount= in host.env.
# The image's root filesystem (blkid's probe of IMAGE: ext4, xfs or btrfs, build-guest.sh BOOTLAB_ROOT_FS) adds
# the kernel options it needs (lab.sh root_args_of: btrfs's rootflags=subvol=@); root_fs= in host.env.
# BOOTLAB_GUEST_ARGS: words added to this boot's kernel command line (run-series.sh tuning: prefetch=off,
# bootlab.append=KEY=VALUE,..., bootlab.report=1; guest/bootlab-report says what they do).
source "$(dirname "$0")/lab.sh"
set +e
disk_kind=$1 img=$2 out=$3
[ -f "$img" ] || die "no image $img"
root_fs=$(blkid -p -o value -s TYPE "$img" 2>/dev/null) || root_fs=
root_args=$(root_args_of "$root_fs")
mkdir -p "$out"
rm -f "$out/console.log" "$out/report.log" "$out/host.env" "$out/sim-timeline.tsv" "$out/sim-requests.log" "$out/sim-stop.watchdog" \
	"$out/console-times.tsv"
# shellcheck source=../../tests/simdisk/lib-sim.sh
source "$TOP/tests/simdisk/lib-sim.sh"   # also tests/lib.sh: cleanup on every exit path
QEMU_PID=''
kill_qemu() { [ -n "$QEMU_PID" ] && kill -9 "$QEMU_PID" 2>/dev/null; [ -n "$QEMU_PID" ] && wait "$QEMU_PID" 2>/dev/null; QEMU_PID=''; }
pf_cleanup_add kill_qemu
STAMP_PID=''
stop_stamp() { [ -n "$STAMP_PID" ] && kill "$STAMP_PID" 2>/dev/null && wait "$STAMP_PID" 2>/dev/null; STAMP_PID=''; }
pf_cleanup_add stop_stamp
# sim_stop waits for simdisk to exit, which it did not after a guest had used the loop device (umount retries
# ran out, lazy unmount, the daemon kept waiting). So: detach, wait until the loop device has let go of the FUSE
# file, unmount, end the daemon if it is still there, and only then sim_stop; a watchdog ends it 8 s later if
# all that failed. How it ended is noted in host.env (sim_stop=clean|term|watchdog).
SIM_STOP=clean
stop_sim() {
	[ -n "$SIM_PID" ] || return 0
	local p=$SIM_PID wd i dev=${SIM_DEV#/dev/} fuse=$SIM_FUSE
	if [ -n "$SIM_DEV" ]; then
		losetup -d "$SIM_DEV" 2>/dev/null
		for ((i = 0; i < 50; i++)); do
			[ "$(cat "/sys/block/$dev/loop/backing_file" 2>/dev/null)" = "$fuse/disk" ] || break
			sleep 0.1
		done
		SIM_DEV=''
	fi
	for ((i = 0; i < 30; i++)); do umount "$fuse" 2>/dev/null && break; sleep 0.1; done
	# Unmounted here, yet after a guest boot the daemon stays in its /dev/fuse read (cause not found: no other
	# mount namespace held the mount). The image is on tmpfs and every write is done: end the daemon.
	for ((i = 0; i < 10; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$p" 2>/dev/null; then echo term >"$out/sim-stop.watchdog"; kill "$p" 2>/dev/null; fi
	(sleep 8; kill -0 "$p" 2>/dev/null && echo watchdog >"$out/sim-stop.watchdog"; kill "$p" 2>/dev/null
	 sleep 3; kill -9 "$p" 2>/dev/null) 9>&- &
	wd=$!
	sim_stop
	{ pkill -P "$wd"; kill "$wd"; wait "$wd"; } 2>/dev/null
	[ -e "$out/sim-stop.watchdog" ] && SIM_STOP=$(cat "$out/sim-stop.watchdog")
	return 0
}

# drop_caches is machine-wide: one cold-cache benchmark at a time on this host (the developers' guide), the
# lock held until this boot ends.  BOOTLAB_LOCK= (empty) boots without it.  Two ways past a lock nobody will
# give back (host.env's bench_lock= says which way the boot went): every process holding it is orphaned
# (parent 1) and none is a shell or script interpreter (a 'prefetchd trace' left behind by a benchmark that
# ended keeps the lock as long as it lives), or it is still taken after BOOTLAB_LOCK_WAIT seconds (1800).
lock=${BOOTLAB_LOCK-/var/tmp/prefetch-bench.lock}
lock_note=none
# Whether every holder of the lock (a descriptor with the lock, /proc/PID/fdinfo "lock:") is a stray: orphaned,
# or the child of a holder that is, and no shell or interpreter among them.
lock_stray() {
	local fd p ino holders=' '
	ino=$(stat -c %i "$lock") || return 1
	for fd in /proc/[0-9]*/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "$lock" ] || continue
		p=${fd#/proc/}; p=${p%%/*}
		[ "$p" = $$ ] && continue
		grep -q "^lock:.*:$ino " "/proc/$p/fdinfo/${fd##*/}" 2>/dev/null && holders+="$p "
	done
	[ "$holders" != ' ' ] || return 1
	for p in $holders; do
		case $(cat "/proc/$p/comm" 2>/dev/null) in bash | sh | dash | python* | perl | make | flock) return 1 ;; esac
		case $holders in *" $(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) "*) continue ;; esac
		[ "$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)" = 1 ] || return 1
	done
}
if [ -n "$lock" ]; then
	exec 9>>"$lock"
	tl=$(date +%s)
	while :; do
		# Wait in the kernel's queue (5 s at a time, then look for strays): a poll with -n lost the lock to the
		# other benchmarks' blocking flock every time it came free (tuning-icount-20261127T1200: waits of 8 min).
		if flock -w 5 9; then lock_note="held, waited $(($(date +%s) - tl)) s"; break; fi
		if lock_stray; then
			lock_note="not held: taken by orphaned processes only (stray), after $(($(date +%s) - tl)) s"; break
		fi
		if [ $(($(date +%s) - tl)) -ge "${BOOTLAB_LOCK_WAIT:-1800}" ]; then
			lock_note="not held: still taken after $(($(date +%s) - tl)) s"; break
		fi
	done
	case $lock_note in held*) ;; *) exec 9>&- ;; esac
	[ $(($(date +%s) - tl)) -gt 1 ] || [ "${lock_note#held}" = "$lock_note" ] && log "bench lock $lock: $lock_note"
fi
pf_drop_caches # waits for no test to be measuring the cache (tests/cache_lock.sh)
case "$disk_kind" in
sim)
	sim_available || die "simdisk not built: make -C $TOP/tests/simdisk"
	# 9>&-: the disk's daemon and spinners do not hold the bench lock; one left behind would look like a stray
	# holder to the next boot (lock_stray) and let it past the lock while another benchmark could start.
	SIM_MODEL=$DISK_MODEL SIM_STRETCH=$DISK_STRETCH sim_start "$img" sleep 9>&-
	pf_cleanup_add stop_sim
	sim_log "$out/sim-requests.log"   # "R|W offset length cost_us start_ms" per request, in arrival order
	pf_cleanup_add kill_qemu   # cleanup runs in reverse: qemu goes before its disk
	drive="file=$SIM_DEV,format=raw,if=virtio,cache=none,aio=native"
	disk_desc=$(sim_describe)
	;;
warm)
	# tmpfs takes O_DIRECT on recent kernels; fall back to the page cache (it is RAM either way).
	cache=none
	dd if="$img" of=/dev/null bs=4096 count=1 iflag=direct status=none 2>/dev/null || cache=writeback
	drive="file=$img,format=raw,if=virtio,cache=$cache,aio=threads"
	disk_desc="image on tmpfs, no simulated disk (instant device), cache=$cache"
	;;
*) die "disk must be sim or warm" ;;
esac

# The guest's command line from prefetch's one qemu driver (image/qemu-guest.sh, prefetch-image's too): always TCG
# here (the lab's method; KVM does not work on its host), no monitor.
# shellcheck source=../../image/qemu-guest.sh
source "$TOP/image/qemu-guest.sh"
PFQ_QEMU=qemu-system-x86_64 PFQ_NAME=bootlab PFQ_ACCEL=tcg PFQ_SMP=${BOOTLAB_SMP:-1} PFQ_MEM=$GUEST_MEM
PFQ_KERNEL=$CACHE/vmlinuz PFQ_INITRD=${BOOTLAB_INITRD:-$CACHE/initrd.img} PFQ_APPEND="$KERNEL_APPEND${root_args:+ $root_args}${BOOTLAB_GUEST_ARGS:+ $BOOTLAB_GUEST_ARGS}"
PFQ_DRIVE=$drive PFQ_SERIALS="$out/console.log $out/report.log" PFQ_MONITOR= PFQ_ICOUNT=$ICOUNT
pfq_command
qemu=("${PFQ_CMD[@]}")
load0=$(cut -d' ' -f1 /proc/loadavg)
python3 "$LAB_DIR/console-stamp.py" "$out/console-times.tsv" "$out/console.log" "$out/report.log" 9>&- &
STAMP_PID=$!
t0=$(date +%s.%N)
pfq_start "$out/qemu.out" 9>&-
QEMU_PID=$PFQ_PID
status=ok
bootend_env=$out/host-bootend.env
rm -f "$bootend_env"
while kill -0 "$QEMU_PID" 2>/dev/null; do
	# The simulated disk's counters at boot end: taken when the guest's report appears (within 0.2 s).
	# Also the vCPU thread's time on a host CPU and waiting for one (schedstat): the host is shared, and under
	# TCG every second the vCPU waits for a host CPU is a second of guest uptime.
	if [ ! -e "$bootend_env" ] && grep -q BOOTLAB-BEGIN "$out/report.log" 2>/dev/null; then
		{
			# One read of the counters: each read waits for the request the disk is serving (an SD write: 0.5 s),
			# so reading them one by one let the later ones run on.
			if [ "$disk_kind" = sim ] && stats=$(cat "$SIM_CTL" 2>/dev/null); then
				for k in requests reads writes read_bytes seeks model_ns wall_ns; do
					echo "simend_$k=$(awk -v k="$k" '$1 == k { print $2 }' <<<"$stats")"
				done
			fi
			echo "host_t_bootend=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')"
			# Summed over the vCPU threads (one with -smp 1; with icount one thread runs them all).
			run=0 wait=0
			for t in /proc/"$QEMU_PID"/task/*; do
				case "$(cat "$t/comm" 2>/dev/null)" in "CPU "*"/TCG" | "ALL CPUs/TCG") ;; *) continue ;; esac
				read -r r w _ <"$t/schedstat" && run=$((run + r)) && wait=$((wait + w))
			done
			echo "vcpu_run_ns=$run"; echo "vcpu_wait_ns=$wait"
		} >"$bootend_env"
	fi
	if [ -n "${BOOTLAB_STOP_AT_END:-}" ] && grep -q BOOTLAB-END "$out/report.log" 2>/dev/null; then
		status=stopped-at-end; kill_qemu; break
	fi
	if awk -v a="$t0" -v b="$(date +%s.%N)" -v t="$BOOT_TIMEOUT" 'BEGIN { exit !(b - a > t) }'; then
		status=timeout; kill_qemu; break
	fi
	# The disk's progress over time (host seconds since qemu started ~ guest uptime): what was read when.
	[ "$disk_kind" = sim ] && awk -v t="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')" \
		'{ v[$1] = $2 } END { print t, v["requests"], v["reads"], v["read_bytes"], v["model_ns"] }' \
		"$SIM_CTL" >>"$out/sim-timeline.tsv" 2>/dev/null
	sleep 0.2
done
stopped_at_end=
case $status in
ok) wait "$QEMU_PID"; qrc=$?; QEMU_PID='' ;;
stopped-at-end) status=ok qrc=0 stopped_at_end=1 ;;
*) qrc=137 ;;
esac
t1=$(date +%s.%N)
stop_stamp
[ "$status" = ok ] && [ "$qrc" -ne 0 ] && status=qemu-rc-$qrc
[ "$status" = ok ] && ! grep -q BOOTLAB-END "$out/report.log" 2>/dev/null && status=no-report
{
	echo "status=$status"
	echo "disk=$disk_kind"
	[ "$disk_kind" = sim ] && echo "disk_model=$DISK_MODEL"
	[ "$disk_kind" = sim ] && echo "disk_stretch=$DISK_STRETCH"
	echo "wall_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
	echo "host_load1_start=$load0"
	echo "host_load1_end=$(cut -d' ' -f1 /proc/loadavg)"
	echo "disk_desc=$disk_desc"
	echo "qemu_cmd=${qemu[*]}"
	echo "guest_args=${BOOTLAB_GUEST_ARGS:-}"
	echo "icount=$ICOUNT"
	echo "root_fs=$root_fs"
	echo "bench_lock=$lock_note"
	[ -n "$stopped_at_end" ] && echo "stopped_at_end=1"
	[ -f "$bootend_env" ] && cat "$bootend_env"
	if [ "$disk_kind" = sim ]; then
		for k in requests reads writes read_bytes write_bytes seeks model_ns wall_ns log_t0_ns; do
			echo "sim_$k=$(sim_stat "$k")"
		done
	fi
} >"$out/host.env"
[ "$disk_kind" = sim ] && stop_sim && echo "sim_stop=$SIM_STOP" >>"$out/host.env"
log "boot $(basename "$out"): $status, wall $(grep ^wall_s= "$out/host.env" | cut -d= -f2) s"
[ "$status" = ok ]
