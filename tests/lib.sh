# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for integration tests and scripts: source it, then use pf_* functions.
# Everything a test sets up (temp dirs, loop devices, mounts, processes) is registered for cleanup, which runs
# on every exit path (success, failure, signal), in reverse order.
set -u
PF_CLEANUP=()
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-$TOP/build/default}
PREFETCHD=${PREFETCHD:-$BUILD/prefetchd}
REORDER=${REORDER:-$BUILD/prefetch-reorder}
TOOLS=${TOOLS:-$BUILD/tests/tools}

# Entries go to a file, so that those made in a subshell (d=$(pf_tmpdir), dev=$(pf_loop ...)) are not lost,
# and all run in the order they were made, reversed.
PF_CLEANUP_LOG=$(mktemp "${TMPDIR:-/tmp}/prefetch-cleanup.XXXXXX" 2>/dev/null) || PF_CLEANUP_LOG=''
pf_cleanup_add() {
	if [ -n "$PF_CLEANUP_LOG" ]; then printf '%s\n' "$1" >>"$PF_CLEANUP_LOG"; else PF_CLEANUP+=("$1"); fi
}
pf_cleanup_run() {
	local i line
	if [ -n "$PF_CLEANUP_LOG" ] && [ -f "$PF_CLEANUP_LOG" ]; then
		while IFS= read -r line; do PF_CLEANUP+=("$line"); done <"$PF_CLEANUP_LOG"
		: >"$PF_CLEANUP_LOG"
	fi
	for ((i = ${#PF_CLEANUP[@]} - 1; i >= 0; i--)); do eval "${PF_CLEANUP[$i]}" >/dev/null 2>&1 || true; done
	PF_CLEANUP=()
	[ "$BASHPID" = "$$" ] && [ -n "$PF_CLEANUP_LOG" ] && rm -f "$PF_CLEANUP_LOG"
}
trap pf_cleanup_run EXIT
trap 'exit 130' INT TERM

# The test's own prefetch configuration, state and runtime directories: prefetchd and prefetch-reorder read
# $PREFETCH_CONFIG where no --config is given, so nothing a test runs reaches the machine's /etc/default/prefetch,
# /var/lib/prefetch or /run/prefetch (tests/guard.sh fails a test that does).
# Nor do the host's boot id and kernel command line decide a test's boot roles: a test that wants other draws
# sets its own.
. "$(dirname "${BASH_SOURCE[0]}")/test_home.sh"
pf_test_home() {
	PF_TEST_HOME=$(mktemp -d "${TMPDIR:-/tmp}/prefetch-home.XXXXXX") || return 1
	pf_cleanup_add "rm -rf '$PF_TEST_HOME'"
	export PF_TEST_HOME
	pf_home_make "$PF_TEST_HOME"
}
pf_test_home || { echo "cannot make a temporary directory" >&2; exit 1; }
# pf_reexec_prepare: before a script runs itself again (exec), drop what this instance made; the new one makes
# its own.
pf_reexec_prepare() {
	[ -n "$PF_CLEANUP_LOG" ] && rm -f "$PF_CLEANUP_LOG"
	rm -rf "$PF_TEST_HOME"
	unset PF_TEST_HOME PREFETCH_CONFIG
}

pf_fail() { echo "FAIL: $*" >&2; exit 1; }
pf_skip() { echo "skipped: $*"; exit 77; }
pf_note() { echo "-- $*"; }
pf_require_root() { [ "$(id -u)" -eq 0 ] || pf_skip "needs root (loop devices, mount, fanotify)"; }

# pf_private_mount_ns "$@": run this script again, once, in a mount namespace of its own (propagation private):
# a namespace another process creates meanwhile (other tests, benchmarks) would otherwise copy our mounts and keep
# a device claimed after our umount.  Call it before setting anything up; skips where namespaces are not allowed.
pf_private_mount_ns() {
	[ -n "${PF_PRIVATE_MNT_NS:-}" ] && return 0
	command -v unshare >/dev/null || return 0
	unshare -m true 2>/dev/null || pf_skip "cannot make a mount namespace here (unshare -m not permitted)"
	pf_reexec_prepare
	PF_PRIVATE_MNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
}

# pf_require_page_events "$@" (after pf_require_root): the page-cache tracepoints (Linux 6.11+) under
# /sys/kernel/tracing, where prefetchd looks for them.  Where nothing is mounted there, the script runs again in a
# mount namespace of its own and mounts tracefs there, as prefetchd does for itself; skips naming what is missing.
pf_require_page_events() {
	local events=/sys/kernel/tracing/events/filemap
	if [ "$(stat -f -c %T /sys/kernel/tracing 2>/dev/null)" != tracefs ]; then
		grep -qw tracefs /proc/filesystems || pf_skip "the kernel has no tracefs"
		pf_private_mount_ns "$@"
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
			pf_skip "tracefs is not mounted at /sys/kernel/tracing and mounting it there failed (a container?)"
		pf_cleanup_add "umount /sys/kernel/tracing"
	fi
	[ -d $events/mm_filemap_get_pages ] && [ -d $events/mm_filemap_map_pages ] && [ -d $events/mm_filemap_fault ] ||
		pf_skip "no page-cache tracepoints in $events (a kernel before 6.11)"
}

# pf_require_simdisk: root, FUSE and the simulated disk (tests/simdisk) built, or the test is skipped; then
# the sim_* helpers (tests/simdisk/lib-sim.sh) are loaded.
pf_require_simdisk() {
	pf_require_root
	[ -e /dev/fuse ] || pf_skip "no /dev/fuse"
	pkg-config --exists fuse3 2>/dev/null || pf_skip "fuse3 development files missing (libfuse3-dev)"
	make -s -C "$TOP/tests/simdisk" simdisk >/dev/null 2>&1 || pf_skip "tests/simdisk does not build here"
	source "$TOP/tests/simdisk/lib-sim.sh"
}

# pf_tmpdir: a fresh directory removed at exit (set PF_KEEP=1 to keep it for debugging).
pf_tmpdir() {
	local d; d=$(mktemp -d "${TMPDIR:-/tmp}/prefetch-test.XXXXXX")
	[ -n "${PF_KEEP:-}" ] || pf_cleanup_add "rm -rf '$d'"
	echo "$d"
}

# pf_mkfs IMAGE SIZE [mke2fs args...]: a new ext4 (by default) image, no lazy init so no background I/O.
pf_mkfs() {
	local img=$1 size=$2; shift 2
	rm -f "$img"; truncate -s "$size" "$img"
	mke2fs -q -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 "$@" "$img" >/dev/null || pf_fail "mke2fs $img"
}

# pf_loop IMAGE [losetup args...]: attach a loop device, print it; detached at exit if it still holds IMAGE.
# (A test that detached it itself may see its number taken by another suite's test meanwhile: a plain
# "losetup -d" at exit once pulled a device from under a test beside it.)
pf_loop_release() { [ "$(losetup -nO BACK-FILE "$1" 2>/dev/null)" = "$2" ] && losetup -d "$1"; }
pf_loop() {
	local img; img=$(realpath "$1"); shift
	local dev; dev=$(losetup -f --show "$@" "$img") || pf_fail "losetup $img"
	pf_cleanup_add "pf_loop_release '$dev' '$img'"
	echo "$dev"
}

# pf_mount DEV DIR [mount args...]: mount, unmounted at exit (lazily if busy).
pf_mount() {
	local dev=$1 dir=$2; shift 2
	mkdir -p "$dir"
	mount "$@" "$dev" "$dir" || pf_fail "mount $dev $dir"
	pf_cleanup_add "umount '$dir' || umount -l '$dir'"
}

# pf_scattered_libs DIR N JUNK_BYTES: DIR/usr/lib/lib1.so .. libN.so (8-68 KB), each written and synced
# between junk files of JUNK_BYTES that are deleted at the end: boot files with holes between them, for the
# reorder tests to gather.  (Run the script on one CPU: ext4 places small files in per-CPU preallocations.)
pf_scattered_libs() {
	local dir=$1 n=$2 junk=$3 i
	mkdir -p "$dir/usr/lib" "$dir/var/junk" || pf_fail "mkdir in $dir"
	for ((i = 1; i <= n; i++)); do
		head -c $(((i * 7919) % 60000 + 8000)) /dev/urandom >"$dir/usr/lib/lib$i.so"
		head -c "$junk" /dev/urandom >"$dir/var/junk/j$i"
		sync
	done
	rm -rf "$dir/var/junk"
}

# pf_mount_loop IMAGE DIR: mount IMAGE on DIR with -o loop (the loop device clears itself when the last mount
# goes, even one that a process in another mount namespace still holds when the script ends); sets PF_DEV to
# the loop device.  Tried three times: another process setting up a loop device at the same moment can take
# the free one mount picked ("already mounted or mount point busy").
pf_mount_loop() {
	local try
	mkdir -p "$2"
	for try in 1 2 3; do
		mount -o loop "$1" "$2" 2>/dev/null && break
		[ "$try" = 3 ] && pf_fail "mount -o loop $1 $2"
		sleep 0.5
	done
	pf_cleanup_add "umount '$2' || umount -l '$2'"
	PF_DEV=$(findmnt -no SOURCE "$2")
	[ -b "$PF_DEV" ] || pf_fail "no loop device for $1"
}

# pf_one_cpu "$@" (first thing after sourcing): run the script again pinned to CPU 0.  The reorder fixtures need
# it: ext4 places small files in per-CPU preallocations chosen where the blocks are allocated, so files could
# land apart or together by chance.
pf_one_cpu() {
	[ -z "${PF_ONE_CPU:-}" ] && command -v taskset >/dev/null || return 0
	pf_reexec_prepare
	PF_ONE_CPU=1 exec taskset -c 0 bash "$0" "$@"
}

# pf_kill_later PID [SIGNAL]: at exit, send SIGNAL (default TERM) to PID if it is still the process it is now.
# A plain "kill PID" at exit could hit another process: pids are reused within minutes where tests run side by
# side, and one test killed its runner that way.  The process is known by its start time (/proc/PID/stat).
pf_starttime() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0; s=${s##*) }; set -- $s; echo "${20}"; }
pf_kill_if_same() { [ -n "$2" ] && [ "$(pf_starttime "$1")" = "$2" ] && kill -"$3" "$1" 2>/dev/null; }
pf_kill_later() { pf_cleanup_add "pf_kill_if_same $1 '$(pf_starttime "$1")' ${2:-TERM}"; }

# pf_bg CMD...: run in the background, killed at exit; sets PF_BG_PID.
pf_bg() {
	"$@" &
	PF_BG_PID=$!
	pf_cleanup_add "pf_kill_if_same $PF_BG_PID '$(pf_starttime $PF_BG_PID)' TERM; wait $PF_BG_PID"
}

# pf_wait_pidfile FILE [PID]: a tracer started with --pid-file FILE writes its pid there once its marks are in place;
# wait up to 10 s for it, else fail (at once if the process PID is gone meanwhile).
pf_wait_pidfile() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -s "$1" ] && return 0
		[ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	pf_fail "tracer did not start (no pid in $1 after 10 s)"
}

# A traced stretch.  pf_trace_start TRACE [ARGS...]: `prefetchd trace ARGS... --output TRACE --pid-file TRACE.pid`
# in the background (under the command in PF_TRACE_WRAP if set, which must exec it), its output in TRACE.out and
# TRACE.err; a TRACE or TRACE.pid left from before is removed first.  Returns once the pid file says its marks are
# in place: whatever is read after that is traced.  Fails the test in one line if it exits first or takes over
# 10 s.  Its pid in PF_TRACE_PID.  Whatever way the test ends, the tracer does not outlive it: at exit one still
# running gets SIGTERM, and SIGKILL 10 s later (stopped with SIGSTOP, it would never end).
# pf_trace_stop: the last tracer started ends as `prefetchd stop --timeout 60` ends it (its output in TRACE.stop);
# fails the test in one line unless stop and the tracer exit 0 and the trace is stored in TRACE.
pf_trace_start() {
	PF_TRACE=$1; shift
	rm -f "$PF_TRACE" "$PF_TRACE.pid"
	${PF_TRACE_WRAP:-} "$PREFETCHD" trace "$@" --output "$PF_TRACE" --pid-file "$PF_TRACE.pid" \
		>"$PF_TRACE.out" 2>"$PF_TRACE.err" &
	PF_TRACE_PID=$!
	pf_cleanup_add "pf_trace_end $PF_TRACE_PID '$(pf_starttime $PF_TRACE_PID)'"
	pf_wait_pidfile "$PF_TRACE.pid" $PF_TRACE_PID ||
		pf_fail "$PF_TRACE: the tracer exited before tracing: $(tail -n 1 "$PF_TRACE.err" 2>/dev/null)"
}
pf_trace_end() { # PID STARTTIME: at exit
	local i
	pf_kill_if_same "$1" "$2" TERM || return 0
	for ((i = 0; i < 200; i++)); do [ "$(pf_starttime "$1")" = "$2" ] || break; sleep 0.05; done
	pf_kill_if_same "$1" "$2" KILL
	wait "$1"
}
pf_trace_stop() {
	local out rc i
	out=$("$PREFETCHD" stop --pid-file "$PF_TRACE.pid" --timeout 60 2>&1)
	rc=$?
	printf '%s\n' "$out" 2>/dev/null >"$PF_TRACE.stop"
	[ $rc -eq 0 ] || pf_fail "$PF_TRACE: ${out##*$'\n'}"
	for ((i = 0; i < 200; i++)); do kill -0 "$PF_TRACE_PID" 2>/dev/null || break; sleep 0.05; done
	[ $i -lt 200 ] || pf_fail "$PF_TRACE: the tracer still runs 10 s after prefetchd stop said: ${out##*$'\n'}"
	wait "$PF_TRACE_PID"
	rc=$?
	[ $rc -eq 0 ] || pf_fail "$PF_TRACE: the tracer exited with $rc: $(tail -n 1 "$PF_TRACE.err" 2>/dev/null)"
	[ -s "$PF_TRACE" ] || pf_fail "$PF_TRACE: no trace stored"
}

# pf_fanotify_fdinfo PID: the fdinfo of PID's fanotify group (one line per mark: "fanotify ino:... ignored_mask:..."
# for an inode mark); fails when PID holds no fanotify group (gone, or closed at its file cap).
pf_fanotify_fdinfo() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[fanotify]" ] && cat "/proc/$1/fdinfo/${fd##*/}" 2>/dev/null &&
			return 0
	done
	return 1
}

# pf_drop_caches, pf_cache_hold, pf_cache_release: the machine's page cache shared with others
# shellcheck source=cache_lock.sh
. "$(dirname "${BASH_SOURCE[0]}")/cache_lock.sh"

# A scripted boot as the init scripts run it.  pf_boot_start CONF RUNDIR LOG: `prefetchd boot` in the
# background (killed at exit; under the command in PF_BOOT_WRAP if set, which must exec it), its output in LOG;
# returns once its pid file in RUNDIR says tracing is set up, fails the test if it exits first or takes over
# 10 s.  Its pid in PF_BOOT_PID.
pf_boot_start() {
	${PF_BOOT_WRAP:-} "$PREFETCHD" boot --config "$1" >"$3" 2>&1 &
	PF_BOOT_PID=$!
	pf_kill_later $PF_BOOT_PID
	local i
	for ((i = 0; i < 400; i++)); do
		[ -s "$2/prefetchd.pid" ] && return 0
		kill -0 $PF_BOOT_PID 2>/dev/null || { cat "$3"; pf_fail "$3: prefetchd boot exited early"; }
		sleep 0.025
	done
	pf_fail "$3: prefetchd boot set up no tracing within 10 s"
}
# pf_boot_stop RUNDIR LOG [STOP_OUT]: the end of that boot as the stop script makes it (`prefetchd stop`, its
# output to STOP_OUT or nowhere); fails the test unless both exit 0.
pf_boot_stop() {
	"$PREFETCHD" stop --pid-file "$1/prefetchd.pid" --timeout 60 >"${3:-/dev/null}" ||
		{ cat "$2"; pf_fail "$2: prefetchd stop exited $?"; }
	wait $PF_BOOT_PID || { cat "$2"; pf_fail "$2: prefetchd boot exited $?"; }
}

# pf_replay_figs OUTPUT COLUMN: the "replay:" table of a prefetch-reorder --dry-run or --check output, one
# "NAME VALUE" a line (metadata_pass 0.137s, metadata_blocks 184, ...); COLUMN 1 is the replay now, 2 after the plan.
pf_replay_figs() {
	awk -v c="$2" '$1 == "replay:" && $(NF - 1) ~ /^[0-9.]+s?$/ && $NF ~ /^[0-9.]+s?$/ {
		n = $2; for (i = 3; i < NF - 1; i++) n = n "_" $i; print n, (c == 1 ? $(NF - 1) : $NF) }' <<<"$1"
}

# pf_fsck_clean IMAGE_OR_DEV: e2fsck -fn must report nothing to fix.
pf_fsck_clean() {
	local out; out=$(e2fsck -fn "$1" 2>&1) || { echo "$out" >&2; pf_fail "e2fsck -fn $1 is not clean"; }
}

# pf_checksums DIR: sorted "sha256  path" of every regular file below DIR.
pf_checksums() { (cd "$1" && find . -xdev -type f -print0 | sort -z | xargs -0r sha256sum); }

# pf_manifest IMAGE OUT WORKDIR MNT: every file's identity and content in IMAGE, read through the kernel (mount -o ro).
# Mounts a private copy under a new name: `mount -o loop,ro` reuses a loop device still attached to the same
# file (udev may hold the last one open a moment after umount), and that device's cache would show the file's
# previous content — stale reads that could hide a loss or invent one.
pf_manifest() {
	local snap mnt=$4 rc
	snap=$(mktemp "$3/snap.XXXXXX") || return 1
	cp --sparse=always "$1" "$snap" || { rm -f "$snap"; return 1; }
	mount -o loop,ro "$snap" "$mnt" || { rm -f "$snap"; return 1; }
	(
		cd "$mnt" || exit 1
		# identity: type, inode, links, mode, mtime, symlink target; size of regular files
		find . -xdev ! -path ./lost+found ! -path './lost+found/*' \
			-printf '%y %i %n %m %T@ %p -> %l\n' -type f -printf 'size %s %p\n' | LC_ALL=C sort
		find . -xdev -type f ! -path './lost+found/*' -print0 | LC_ALL=C sort -z | xargs -0r sha256sum
	) >"$2"
	rc=$?
	umount "$mnt" || return 1
	rm -f "$snap"
	return $rc
}

# pf_disk_image IMAGE TABLE [MB]: a disk image file of MB MiB (default 96) with a partition table TABLE — gpt
# (partition 1 typed as an EFI system partition, 2 as the x86-64 root), dos (1 swap, 2 Linux) or none (a bare
# filesystem image) — whose partition 1 holds random bytes (PF_P1_SUM: their sha256) and whose root holds an
# empty ext4, made at its offset (mke2fs -E offset=: no loop device).  Sets PF_ROOT_OFF and PF_ROOT_SIZE (bytes).
pf_disk_image() {
	local img=$1 table=$2 mb=${3:-96} p2 p2size
	rm -f "$img"; truncate -s "${mb}M" "$img"
	p2=18432 p2size=$((mb * 2048 - 18432 - 2048))
	case $table in
	gpt) printf 'label: gpt\nstart=2048, size=16384, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B\nstart=%d, size=%d, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709\n' \
		"$p2" "$p2size" | sfdisk -q "$img" || pf_fail "sfdisk gpt $img" ;;
	dos) printf 'label: dos\nstart=2048, size=16384, type=82\nstart=%d, size=%d, type=83\n' "$p2" "$p2size" |
		sfdisk -q "$img" || pf_fail "sfdisk dos $img" ;;
	none) p2=0 p2size=$((mb * 2048)) ;;
	*) pf_fail "pf_disk_image: table gpt, dos or none" ;;
	esac
	PF_ROOT_OFF=$((p2 * 512)) PF_ROOT_SIZE=$((p2size * 512)) PF_P1_SUM=
	if [ "$table" != none ]; then
		head -c $((16384 * 512)) /dev/urandom | dd of="$img" bs=1M seek=1 conv=notrunc status=none
		PF_P1_SUM=$(dd if="$img" bs=1M skip=1 count=8 status=none | sha256sum)
	fi
	mke2fs -q -F -t ext4 -b 4096 -E offset=$PF_ROOT_OFF,lazy_itable_init=0,lazy_journal_init=0 "$img" \
		$((PF_ROOT_SIZE / 1024))k || pf_fail "mke2fs at offset $PF_ROOT_OFF of $img"
}
# pf_p1_same IMAGE: partition 1 still holds what pf_disk_image put there.
pf_p1_same() { [ -z "$PF_P1_SUM" ] || [ "$(dd if="$1" bs=1M skip=1 count=8 status=none | sha256sum)" = "$PF_P1_SUM" ]; }
# pf_root_loop IMAGE [losetup args]: a loop device on the image's root (pf_disk_image's offset and size).
pf_root_loop() { local img=$1; shift; pf_loop "$img" -o "$PF_ROOT_OFF" --sizelimit "$PF_ROOT_SIZE" "$@"; }
# pf_prefetch_image IMAGE MNT [noprefetch]: pf_disk_image's GPT image whose root holds 30 boot files scattered among
# deleted junk (pf_scattered_libs) and, unless noprefetch, prefetch as the package installs it (a stand-in
# /usr/sbin/prefetchd, /etc/default/prefetch, /var/lib/prefetch 0700) with the state of earlier boots (selfcheck,
# boottime.log, an old trace).  Leaves the root mounted on MNT (PF_IMAGE_DEV) for the caller to make a layout or
# traces of the files listed in PF_IMAGE_LIST (a boot order); pf_image_unmount then.  PF_IMAGE_SUMS: the files'
# checksums outside /var/lib/prefetch.
pf_prefetch_image() {
	local img=$1 mnt=$2 i s=/var/lib/prefetch
	pf_disk_image "$img" gpt
	PF_IMAGE=$img PF_IMAGE_MNT=$mnt PF_IMAGE_DEV=$(pf_root_loop "$img")
	pf_mount "$PF_IMAGE_DEV" "$mnt"
	pf_scattered_libs "$mnt" 30 150000
	PF_IMAGE_LIST=$img.list PF_IMAGE_SUMS=$img.sums
	{ echo "$mnt/usr/lib"; for i in $(seq 30 -2 1) $(seq 1 2 30); do echo "$mnt/usr/lib/lib$i.so"; done; } >"$PF_IMAGE_LIST"
	if [ "${3:-}" != noprefetch ]; then
		mkdir -p "$mnt/usr/sbin" "$mnt/etc/default" "$mnt$s/traces"
		printf '#!/bin/sh\n' >"$mnt/usr/sbin/prefetchd"; chmod 0755 "$mnt/usr/sbin/prefetchd"
		printf 'TRACE_AGGREGATION_COUNT=3\n' >"$mnt/etc/default/prefetch"
		chmod 0700 "$mnt$s" "$mnt$s/traces"
		echo "policy off" >"$mnt$s/selfcheck"; echo "1 2 3" >"$mnt$s/boottime.log"
		echo old >"$mnt$s/traces/trace-1-old.pf"
	fi
	pf_checksums "$mnt" | grep -v "\./var/lib/prefetch/" >"$PF_IMAGE_SUMS"
}
pf_image_unmount() {
	umount "$PF_IMAGE_MNT" || pf_fail "umount $PF_IMAGE_MNT"
	pf_loop_release "$PF_IMAGE_DEV" "$(realpath "$PF_IMAGE")"
}
