# SPDX-License-Identifier: GPL-2.0-or-later
# Simulated disk for tests and benchmarks (one per script): a 7200 rpm disk, or with SIM_MODEL=sd|ssd an A1 SD
# card or a SATA SSD (lib/disk_model.h).  Source it (after or without tests/lib.sh; tests call
# pf_require_simdisk), then
#
#   sim_available                            true if /dev/fuse exists and simdisk is built (make -C tests/simdisk:
#                                            $SIM_BIN, and the workload runner $WLRUN, in build/simdisk/)
#   dir=$(sim_tmpfs_dir [MB])                a tmpfs directory with MB MiB free (the image must live there; a
#                                            tmpfs of its own when /dev/shm is too small), removed at exit
#   sim_start IMAGE [count|sleep]            simdisk --model $SIM_MODEL (hdd) --stretch $SIM_STRETCH (1: sleep
#                                            mode waits that many times the model) on IMAGE + loop device (direct
#                                            I/O, rotational=1 (0 for sd and ssd),
#                                            scheduler $SIM_SCHED (none), read_ahead_kb $SIM_RA_KB (128));
#                                            sets SIM_DEV, SIM_FUSE (FUSE mount: disk, stats), SIM_CTL
#   sim_mount DIR [mount options]            mount the file system on SIM_DEV (default: -o ro); SIM_FS=DIR
#   sim_umount                               unmount it
#   sim_reset                                zero the disk's counters, head to 0
#   sim_stat KEY                             one counter: requests reads writes seeks read_bytes write_bytes
#                                            model_ns wall_ns mode head span rate model request_ns
#   sim_seconds                              disk time since the reset: model (count mode) or served (sleep)
#   sim_mode count|sleep                     timing mode; sleep also keeps the CPUs awake (idle-priority spinners)
#   sim_log FILE|off                         request log: "R|W offset length cost_us start_ms" per request
#   sim_describe                             one line: disk model, scheduler, readahead, rotational, dio
#   sim_stop                                 everything above, in order (also runs at exit, on every path)
#   sim_trace_workload FS WL TRACE WORKDIR   drop caches, run the workload WL (wlrun, $WLRUN) on the mounted FS
#                                            under `prefetchd trace --mount FS`, write TRACE (summary in
#                                            WORKDIR/trace.out); SIM_WL_OPT=-r: with readahead on
#   sim_workload_layout IMAGE MNT LAYOUT [LINES]  a layout of IMAGE.workload (mkbootset's boot reads) made with
#                                            IMAGE mounted read-only at MNT: the directories on the paths
#                                            first (the boot looks them up), then every read in boot order;
#                                            the pf_mklayout input is kept in LINES when given (to map the same
#                                            reads again later)
#   sim_cold_boot FS WL [LAYOUT]             one cold boot on the mounted FS: drop caches, reset the counters,
#                                            with LAYOUT `prefetchd replay --medium rotational` first, then the
#                                            workload WL; prints "total_s replay_s requests seeks" (replay_s:
#                                            the replay's reads, counted once the disk is idle: readahead(2)
#                                            returns while its requests are still queued)
#   sim_settle                               wait until the disk has served no request for 0.1 s (5 s at most)
#   sim_reorder OUT ARGS...                  $REORDER ARGS... on the unmounted SIM_DEV, its output in OUT
#                                            (retried while the device is still busy after an unmount)
#   sim_reorder_predicted OUT                the "replay: predicted" figures of a --dry-run / --check output:
#                                            "now after" (seconds)
#
# Facts behind it (notes/measuring): the image stays on tmpfs so drop_caches cannot evict it; the loop
# device claims rotational=0 unless told; the daemon runs single-threaded at real-time priority; in sleep mode
# VM wake-up latency would add ~18 % unless the CPUs are kept busy at idle priority.  On a shared machine run
# a benchmark in a mount namespace of its own (unshare -m --propagation private): tracers elsewhere that
# walk every mounted file system then cannot read it mid-run (results/bench-prefetch.sh does).
if ! declare -F pf_cleanup_add >/dev/null; then
	# shellcheck source=tests/lib.sh
	source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/lib.sh"
fi
SIM_BIN=${SIM_BIN:-$TOP/build/simdisk/simdisk}
WLRUN=${WLRUN:-$TOP/build/simdisk/wlrun}
SIM_MODEL=${SIM_MODEL:-hdd}
SIM_SCHED=${SIM_SCHED:-none}
SIM_RA_KB=${SIM_RA_KB:-128}  # a SATA disk's default readahead (the loop device would inherit 2560 here)
SIM_PID='' SIM_FUSE='' SIM_DEV='' SIM_FS='' SIM_CTL='' SIM_SPIN=() SIM_QUEUE_SAVED=''

# What this machine cannot do (no FUSE mount, no direct I/O on it) fails the caller, or skips it (exit 77) when
# SIM_SKIP_UNSUPPORTED=1 (tests).
sim_unsupported() { if [ -n "${SIM_SKIP_UNSUPPORTED:-}" ]; then pf_skip "$*"; else pf_fail "$*"; fi; }

# True when a simulated disk can be started here (FUSE device present, simdisk built).
sim_available() { [ -e /dev/fuse ] && [ -x "$SIM_BIN" ]; }

sim_tmpfs_dir() {
	local need=${1:-0} base=/dev/shm d
	if [ "$(stat -f -c %T "$base" 2>/dev/null)" != tmpfs ] ||
		[ "$(df -m --output=avail "$base" | tail -1)" -lt "$need" ]; then
		base=$(mktemp -d "${TMPDIR:-/tmp}/simdisk-tmpfs.XXXXXX") || return 1
		pf_cleanup_add "rmdir '$base'"
		mount -t tmpfs -o size=$((need + 256))m tmpfs "$base" || return 1
		pf_cleanup_add "umount '$base'"
	fi
	d=$(mktemp -d "$base/simdisk.XXXXXX") || return 1
	pf_cleanup_add "rm -rf '$d'"
	echo "$d"
}

# sim_build_bootset SCALE RATIO SEED [BOOT]: tests/mkbootset.sh's image of the Debian 12 boot set BOOT (boot1, boot2,
# boot3 of tests/data/debian12-boot; default boot1) as DIR/img (its
# reads in DIR/img.workload), in a tmpfs directory of its own with room for it (the size mkbootset picks: the
# data fills ~55 %); sets SIM_BOOTSET_DIR.
sim_build_bootset() {
	local need tsv=$TOP/tests/data/debian12-boot/${4:-boot1}.tsv
	[ -f "$tsv" ] || pf_fail "no boot trace $tsv"
	need=$(awk -F'\t' -v n="$1" -v r="$2" '{ s += $4 } END { print int(s * n * (1 + r) / 0.55 / 1048576) + 320 }' "$tsv")
	SIM_BOOTSET_DIR=$(sim_tmpfs_dir "$need") || pf_fail "no tmpfs room for the image"
	pf_note "building the image (scale $1, ratio $2, seed $3, ${4:-boot1})"
	"$TOP/tests/mkbootset.sh" --scale "$1" --ratio "$2" --seed "$3" --tsv "$tsv" "$SIM_BOOTSET_DIR/img" | sed 's/^/   /' ||
		pf_fail "mkbootset"
}

sim_start() {
	local img=$1 mode=${2:-count} i
	[ -x "$SIM_BIN" ] || pf_fail "simdisk not built ($SIM_BIN): make -C tests/simdisk"
	[ "$(stat -f -c %T "$img")" = tmpfs ] || pf_fail "$img must be on tmpfs (drop_caches would evict it)"
	SIM_FUSE=$(mktemp -d "${TMPDIR:-/tmp}/simdisk-mnt.XXXXXX")
	pf_cleanup_add sim_stop
	# Real-time priority: request timing must not wait for a CPU (falls back to normal if refused).
	local rt=(chrt -f 50)
	chrt -f 50 true 2>/dev/null || rt=()
	"${rt[@]}" "$SIM_BIN" --model "$SIM_MODEL" --stretch "${SIM_STRETCH:-1}" --mode "$mode" "$img" "$SIM_FUSE" &
	SIM_PID=$!
	for ((i = 0; i < 100; i++)); do
		[ -f "$SIM_FUSE/stats" ] && break
		kill -0 "$SIM_PID" 2>/dev/null || sim_unsupported "simdisk could not mount (see above)"
		sleep 0.05
	done
	[ -f "$SIM_FUSE/stats" ] || sim_unsupported "simdisk did not come up on $SIM_FUSE"
	SIM_CTL=$SIM_FUSE/stats
	SIM_DEV=$(losetup -f --show --direct-io=on "$SIM_FUSE/disk") || pf_fail "losetup on $SIM_FUSE/disk"
	local q=/sys/block/${SIM_DEV#/dev/}
	[ "$(cat "$q/loop/dio")" = 1 ] || sim_unsupported "$SIM_DEV: direct I/O over FUSE refused (page cache would hide the disk)"
	# Queue settings outlive losetup -d: remember them for sim_stop, the next user of this loop device.
	SIM_QUEUE_SAVED="$(cat "$q/queue/rotational") $(sed 's/.*\[\(.*\)\].*/\1/' "$q/queue/scheduler") $(cat "$q/queue/read_ahead_kb")"
	local rot=1
	[ "$SIM_MODEL" = hdd ] || rot=0
	echo $rot >"$q/queue/rotational" || pf_fail "cannot set $SIM_DEV rotational=$rot"
	echo "$SIM_SCHED" >"$q/queue/scheduler" 2>/dev/null || pf_fail "I/O scheduler '$SIM_SCHED' refused by $SIM_DEV"
	echo "$SIM_RA_KB" >"$q/queue/read_ahead_kb" || pf_fail "cannot set read_ahead_kb of $SIM_DEV"
	sim_mode "$mode"
	sim_reset
}

sim_describe() {
	local q=/sys/block/${SIM_DEV#/dev/}/queue m
	case $SIM_MODEL in
	hdd) m='7200 rpm model (1 ms + 14 ms*sqrt(d/span) + 4.17 ms, 100 MB/s' ;;
	*) m="$SIM_MODEL model ($(awk -v r="$(sim_stat request_ns)" -v b="$(sim_stat rate)" \
		'BEGIN { printf "%.1f us per request, %g MB/s", r / 1e3, b / 1e6 }')" ;;
	esac
	printf 'simdisk %s, span %s MiB), %s scheduler=%s read_ahead_kb=%s rotational=%s dio=%s\n' \
		"$m" "$(($(sim_stat span) >> 20))" "${SIM_DEV}" "$(sed 's/.*\[\(.*\)\].*/\1/' "$q/scheduler")" \
		"$(cat "$q/read_ahead_kb")" "$(cat "$q/rotational")" "$(cat "$q/../loop/dio")"
}

sim_mount() {
	local dir=$1; shift
	[ $# -gt 0 ] || set -- -o ro
	mkdir -p "$dir"
	mount "$@" "$SIM_DEV" "$dir" || pf_fail "mount $SIM_DEV on $dir"
	SIM_FS=$dir
}

sim_umount() {
	[ -n "$SIM_FS" ] || return 0
	umount "$SIM_FS" || umount -l "$SIM_FS"
	SIM_FS=''
}

sim_ctl() { printf '%s\n' "$*" >"$SIM_CTL"; }
sim_reset() { sim_ctl reset || pf_fail "simdisk reset"; }
sim_log() { sim_ctl log "$1"; }
sim_stat() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { exit !f }' "$SIM_CTL"; }

# Model time (count mode) or measured service time (sleep mode) in seconds since the last reset.
sim_seconds() {
	local k=model_ns
	[ "$(sim_stat mode)" = sleep ] && k=wall_ns
	awk -v ns="$(sim_stat $k)" 'BEGIN { printf "%.6f\n", ns / 1e9 }'
}

sim_mode() {
	local p
	sim_ctl mode "$1" || pf_fail "simdisk mode $1"
	for p in "${SIM_SPIN[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	SIM_SPIN=()
	if [ "$1" = sleep ]; then
		# Idle-priority busy loops: a sleeping vCPU wakes up late; these only use otherwise idle time.
		for ((p = 0; p < $(nproc); p++)); do
			chrt -i 0 bash -c 'while :; do :; done' &
			SIM_SPIN+=($!)
		done
	fi
}

sim_stop() {
	local p
	for p in "${SIM_SPIN[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	SIM_SPIN=()
	sim_umount
	if [ -n "$SIM_DEV" ]; then
		local q=/sys/block/${SIM_DEV#/dev/}/queue rot sched ra
		if [ -n "$SIM_QUEUE_SAVED" ]; then
			read -r rot sched ra <<<"$SIM_QUEUE_SAVED"
			echo "$rot" >"$q/rotational"; echo "$sched" >"$q/scheduler"; echo "$ra" >"$q/read_ahead_kb"
		fi
		losetup -d "$SIM_DEV"
		SIM_DEV='' SIM_QUEUE_SAVED=''
	fi
	if [ -n "$SIM_PID" ]; then
		# The loop device may let go of the file a moment after losetup -d returns.
		for p in 1 2 3 4 5 6 7 8 9 10; do umount "$SIM_FUSE" 2>/dev/null && break; sleep 0.1; done
		mountpoint -q "$SIM_FUSE" && umount -l "$SIM_FUSE"
		wait "$SIM_PID" 2>/dev/null
		SIM_PID=''
	fi
	if [ -n "$SIM_FUSE" ]; then rmdir "$SIM_FUSE" 2>/dev/null; SIM_FUSE=''; fi
	return 0
}

sim_workload_layout() {
	local img=$1 m=$2 layout=$3 lines=${4:-}
	[ -n "$lines" ] || { lines=$(mktemp) && pf_cleanup_add "rm -f '$lines'"; } || return 1
	mkdir -p "$m" && mount -o loop,ro "$img" "$m" || return 1
	awk -F'\t' -v m="$m" '{ p = $2; n = split(p, c, "/"); d = ""
		for (i = 2; i < n; i++) { d = d "/" c[i]; if (!(d in seen)) { seen[d] = 1; print m d } } }' \
		"$img.workload" >"$lines"
	awk -F'\t' -v m="$m" '{ print m $2 " 0 " $1 }' "$img.workload" >>"$lines"
	"$TOOLS/pf_mklayout" "$layout" "$lines" >/dev/null
	local rc=$?
	umount "$m" || rc=1
	return $rc
}

sim_trace_workload() {
	local fs=$1 wl=$2 trace=$3 work=$4
	pf_drop_caches
	pf_trace_start "$trace" --mount "$fs"
	"$WLRUN" -q ${SIM_WL_OPT:+"$SIM_WL_OPT"} -C "$fs" "$wl" >/dev/null || pf_fail "the scripted boot failed"
	pf_trace_stop
	[ "$trace.out" -ef "$work/trace.out" ] || cp "$trace.out" "$work/trace.out"
}

sim_cold_boot() {
	local fs=$1 wl=$2 layout=${3:-} rs=0 out
	pf_drop_caches
	pf_cache_hold # until the workload has read: no one else's drop in between (tests/cache_lock.sh)
	sim_reset
	if [ -n "$layout" ]; then
		out=$("$PREFETCHD" replay --medium rotational "$layout" 2>&1) || pf_fail "replay: $out"
		sim_settle
		rs=$(sim_seconds)
	fi
	"$WLRUN" -q -C "$fs" "$wl" >/dev/null || pf_fail "workload"
	pf_cache_release
	echo "$(sim_seconds) $rs $(sim_stat requests) $(sim_stat seeks)"
}

sim_settle() {
	local a b i
	a=$(sim_stat requests)
	for ((i = 0; i < 50; i++)); do
		sleep 0.1
		b=$(sim_stat requests)
		[ "$a" = "$b" ] && return 0
		a=$b
	done
}

sim_reorder() {
	local out=$1 i rc
	shift
	for ((i = 0; i < 20; i++)); do
		"$REORDER" "$@" "$SIM_DEV" >"$out" 2>&1; rc=$?
		grep -q busy "$out" || return $rc
		sleep 0.25
	done
	return $rc
}

sim_reorder_predicted() {
	awk '$1 == "replay:" && $2 == "predicted" { sub("s", "", $3); sub("s", "", $4); print $3, $4 }' "$1"
}
