#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# init's own files go first: a program on the traced filesystem runs as PID 1 of a PID namespace, started
# before tracing (as init is before prefetchd's marks are in place); a tracer in that namespace never sees it
# opened, yet the trace records it first, flagged i (from /proc/1/maps), before a file the "boot" read while
# tracing.  The layout keeps it first, and the rotational replay gives it a bin of its own ahead of the rest.
source "$TOP/tests/lib.sh"
pf_require_root
for t in unshare nsenter; do command -v $t >/dev/null || pf_skip "$t not installed"; done
unshare --pid --fork --mount-proc true 2>/dev/null || pf_skip "no PID namespaces here"

tmp=$(pf_tmpdir)
pf_mkfs "$tmp/img" 64M
dev=$(pf_loop "$tmp/img")
mnt=$tmp/mnt
pf_mount "$dev" "$mnt"
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
[ -n "$init_pid" ] || pf_fail "the namespace's init did not start"
pf_kill_later $init_pid KILL # an ancestor namespace can only SIGKILL its init
inns() { nsenter --target "$init_pid" --pid --mount -- "$@"; }
exe=$(inns readlink /proc/1/exe)
[ "$exe" = "$mnt/sbin/init" ] || pf_fail "PID 1 of the namespace is $exe"

pf_drop_caches
inns "$PREFETCHD" trace --mount "$mnt" --output "$tmp/t" --pid-file "$tmp/pid" >"$tmp/t.out" 2>&1 &
tr=$!
pf_kill_later $tr
for _ in $(seq 200); do [ -s "$tmp/pid" ] && break; sleep 0.05; done # written once the marks are in place
[ -s "$tmp/pid" ] || pf_fail "tracing not set up within 10 s: $(cat "$tmp/t.out")"
cat "$mnt/data/read-by-boot" >/dev/null
inns "$PREFETCHD" stop --pid-file "$tmp/pid" --timeout 30 >/dev/null || pf_fail "stop" # its pid is the namespace's
wait $tr || pf_fail "trace failed: $(cat "$tmp/t.out")"
"$PREFETCHD" dump --files "$tmp/t" >"$tmp/files" || pf_fail "dump"
pf_note "$(grep -v '^#' "$tmp/files")"
first=$(awk -F'\t' '!/^#/ && $2 !~ /^d/ { print $2, $8; exit }' "$tmp/files")
[ "$first" = "---i $mnt/sbin/init" ] || pf_fail "first file of the trace: '$first', want init flagged ---i"
grep -q "	$mnt/data/read-by-boot$" "$tmp/files" || pf_fail "the file read while tracing is missing"
[ "$(grep -c '^[0-9]*	...i' "$tmp/files")" = 1 ] || pf_fail "other files flagged i"

# The layout keeps it first; the rotational sweep reads it in bin 0, everything else from bin 1 on.
"$PREFETCHD" aggregate --output "$tmp/layout" "$tmp/t" >/dev/null || pf_fail "aggregate"
first=$("$PREFETCHD" dump --files "$tmp/layout" | awk -F'\t' '!/^#/ && $2 !~ /^d/ { print $8; exit }')
[ "$first" = "$mnt/sbin/init" ] || pf_fail "first file of the layout: $first, not init"
pf_drop_caches
"$PREFETCHD" replay --medium rotational --config "$tmp/none" --dump-plan "$tmp/plan" "$tmp/layout" >/dev/null ||
	pf_fail "replay"
awk '$3 == "data" { print $1, $NF }' "$tmp/plan" >"$tmp/bins"
pf_note "plan: $(tr '\n' ';' <"$tmp/bins")"
grep -qx "0 $mnt/sbin/init" "$tmp/bins" || pf_fail "init's data not in bin 0"
grep -qx "1 $mnt/data/read-by-boot" "$tmp/bins" || pf_fail "the boot's file not in bin 1"
[ "$(awk '$1 == 0' "$tmp/bins" | grep -cv "/sbin/init$")" = 0 ] || pf_fail "other files in bin 0"
exit 0
