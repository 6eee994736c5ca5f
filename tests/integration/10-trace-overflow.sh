#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fanotify queue overflow: with a bounded queue (--bounded-queue) and the tracer stopped (SIGSTOP) while more
# files are opened than the queue holds, the tracer survives, counts the overflow, keeps what it got and writes
# a trace flagged incomplete.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root

qmax=$(cat /proc/sys/fs/fanotify/max_queued_events 2>/dev/null) || pf_skip "no /proc/sys/fs/fanotify/max_queued_events"
[ "$qmax" -le 40000 ] || pf_skip "fanotify queue limit $qmax too large to fill quickly"
nfiles=$((qmax + 1000))

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 64M -b 4096 -N $((nfiles + 1000))
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
mkdir "$mnt/many"
(cd "$mnt/many" && seq -f 'f%.0f' 1 "$nfiles" | xargs touch) || pf_fail "creating $nfiles files"

pf_trace_start "$tmp/t" --bounded-queue --mount "$mnt"
tracer=$PF_TRACE_PID
kill -STOP "$tracer"
pf_kill_later $tracer CONT
for f in "$mnt"/many/*; do : <"$f"; done
kill -CONT "$tracer"
pf_trace_stop

"$PREFETCHD" dump --files "$tmp/t" >"$tmp/files" || pf_fail "dump failed"
grep -q '^# flags: incomplete ([1-9][0-9]* events lost)$' "$tmp/files" || pf_fail "not flagged: $(grep '^# flags' "$tmp/files")"
got=$(grep -c "	$mnt/many/f" "$tmp/files")
pf_note "queue $qmax, opened $nfiles, recorded $got"
[ "$got" -ge $((qmax / 2)) ] && [ "$got" -lt "$nfiles" ] || pf_fail "recorded $got of $nfiles files"
exit 0
