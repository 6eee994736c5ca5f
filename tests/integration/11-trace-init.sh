#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# init's own files go first: a program on the traced filesystem runs as PID 1 of a PID namespace, started
# before tracing (as init is before prefetchd's marks are in place); a tracer in that namespace never sees it
# opened, yet the trace records it first, flagged i (from /proc/1/maps), before a file the "boot" read while
# tracing.  The layout keeps it first, and the rotational replay gives it a bin of its own ahead of the rest.
# On ext4, and on a btrfs subvolume (where /proc/PID/maps names a file by the filesystem's device, not by the
# subvolume's st_dev: Fedora's root).
source "$TOP/tests/lib.sh"
pf_require_root
for t in unshare nsenter; do command -v $t >/dev/null || pf_skip "$t not installed"; done
unshare --pid --fork --mount-proc true 2>/dev/null || pf_skip "no PID namespaces here"

tmp=$(pf_tmpdir)
# init_first MNT NAME: the whole check on the filesystem mounted at MNT (files written under it)
init_first() {
	local mnt=$1 fs=$2 w=$tmp/$2 ushare init_pid exe tr first
	mkdir -p "$w"
	mkdir -p "$mnt/sbin" "$mnt/data"
	cp "$(command -v sleep)" "$mnt/sbin/init"
	head -c 200000 /dev/urandom >"$mnt/data/read-by-boot"
	sync

	# "init": PID 1 of a new PID namespace (with its own /proc), running from the traced filesystem.
	unshare --pid --fork --mount-proc "$mnt/sbin/init" 120 &
	ushare=$!
	pf_cleanup_add "wait $ushare 2>/dev/null"; pf_kill_later $ushare # (cleanups run last first: the kill, then the wait)
	init_pid=
	for _ in $(seq 50); do
		init_pid=$(pgrep -P $ushare -f "$mnt/sbin/init" | head -1)
		[ -n "$init_pid" ] && break
		sleep 0.1
	done
	[ -n "$init_pid" ] || pf_fail "$fs: the namespace's init did not start"
	pf_kill_later $init_pid KILL # an ancestor namespace can only SIGKILL its init
	inns() { nsenter --target "$init_pid" --pid --mount -- "$@"; }
	exe=$(inns readlink /proc/1/exe)
	[ "$exe" = "$mnt/sbin/init" ] || pf_fail "$fs: PID 1 of the namespace is $exe"

	pf_drop_caches
	inns "$PREFETCHD" trace --mount "$mnt" --output "$w/t" --pid-file "$w/pid" >"$w/t.out" 2>&1 &
	tr=$!
	pf_kill_later $tr
	for _ in $(seq 200); do [ -s "$w/pid" ] && break; sleep 0.05; done # written once the marks are in place
	[ -s "$w/pid" ] || pf_fail "$fs: tracing not set up within 10 s: $(cat "$w/t.out")"
	cat "$mnt/data/read-by-boot" >/dev/null
	inns "$PREFETCHD" stop --pid-file "$w/pid" --timeout 30 >/dev/null || pf_fail "$fs: stop" # its pid is the namespace's
	wait $tr || pf_fail "$fs: trace failed: $(cat "$w/t.out")"
	"$PREFETCHD" dump --files "$w/t" >"$w/files" || pf_fail "$fs: dump"
	pf_note "$fs: $(grep -v '^#' "$w/files")"
	first=$(awk -F'\t' '!/^#/ && $2 !~ /^d/ { print $2, $8; exit }' "$w/files")
	[ "$first" = "---i- $mnt/sbin/init" ] || pf_fail "$fs: first file of the trace: '$first', want init flagged ---i-"
	grep -q "	$mnt/data/read-by-boot$" "$w/files" || pf_fail "$fs: the file read while tracing is missing"
	[ "$(grep -c '^[0-9]*	...i' "$w/files")" = 1 ] || pf_fail "$fs: other files flagged i"

	# The layout keeps it first; the rotational sweep reads it in bin 0, everything else from bin 1 on.
	"$PREFETCHD" aggregate --output "$w/layout" "$w/t" >/dev/null || pf_fail "$fs: aggregate"
	first=$("$PREFETCHD" dump --files "$w/layout" | awk -F'\t' '!/^#/ && $2 !~ /^d/ { print $8; exit }')
	[ "$first" = "$mnt/sbin/init" ] || pf_fail "$fs: first file of the layout: $first, not init"
	pf_drop_caches
	"$PREFETCHD" replay --medium rotational --config "$w/none" --dump-plan "$w/plan" "$w/layout" >/dev/null ||
		pf_fail "$fs: replay"
	awk '$3 == "data" { print $1, $NF }' "$w/plan" >"$w/bins"
	pf_note "$fs: plan: $(tr '\n' ';' <"$w/bins")"
	grep -qx "0 $mnt/sbin/init" "$w/bins" || pf_fail "$fs: init's data not in bin 0"
	grep -qx "1 $mnt/data/read-by-boot" "$w/bins" || pf_fail "$fs: the boot's file not in bin 1"
	[ "$(awk '$1 == 0' "$w/bins" | grep -cv "/sbin/init$")" = 0 ] || pf_fail "$fs: other files in bin 0"
	kill -KILL "$init_pid" 2>/dev/null; wait "$ushare" 2>/dev/null # its filesystem free again
}

pf_mkfs "$tmp/img" 64M
pf_mount "$(pf_loop "$tmp/img")" "$tmp/mnt"
init_first "$tmp/mnt" ext4

if ! command -v mkfs.btrfs >/dev/null; then
	pf_note "btrfs part skipped: mkfs.btrfs not installed (btrfs-progs)"
elif ! grep -qw btrfs /proc/filesystems && ! modprobe btrfs 2>/dev/null; then
	pf_note "btrfs part skipped: the kernel has no btrfs"
else
	truncate -s 200M "$tmp/btrfs.img"
	mkfs.btrfs -q -f "$tmp/btrfs.img" >/dev/null 2>&1 || pf_fail "mkfs.btrfs"
	bdev=$(pf_loop "$tmp/btrfs.img")
	pf_mount "$bdev" "$tmp/top"
	btrfs subvolume create "$tmp/top/@" >/dev/null || pf_fail "btrfs subvolume create"
	umount "$tmp/top" || pf_fail "umount $tmp/top"
	pf_mount "$bdev" "$tmp/broot" -o subvol=@
	init_first "$tmp/broot" btrfs
fi
exit 0
