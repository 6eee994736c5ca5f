#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Page-cache events lost in the trace instance's ring buffer never leave a trace short: with a tiny buffer
# (PREFETCH_TRACE_BUFFER_KB=4) and the tracer stopped (SIGSTOP) while a reader makes thousands of events, the
# buffer overruns; the tracer sees it in the per-CPU stats, says how many were lost, flags the filesystem
# (PF_FS_PAGES_LOST) and takes mincore's ranges, which hold every page read.  Skipped where tracefs or the
# events (Linux 6.11+) are missing.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root
pf_require_page_events "$@"

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 64M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
head -c $((8 << 20)) /dev/urandom >"$mnt/big"
sync
[ -x "$TOOLS/pf_mincore" ] || pf_fail "test tools not built (make tools)"

# one traced read of big: "summary-line<TAB>bytes recorded for big", the dump in $tmp/dump
trace_once() {
	umount "$mnt" && mount "$dev" "$mnt" || pf_fail "remount (cold cache)"
	PREFETCH_TRACE_BUFFER_KB=4 pf_trace_start "$tmp/t" --mount "$mnt"
	local tracer=$PF_TRACE_PID
	kill -STOP "$tracer"
	pf_kill_later $tracer CONT
	# 2048 read() calls of one page each: one event each, ~100 KiB of events for a 4 KiB buffer per CPU
	dd if="$mnt/big" of=/dev/null bs=4096 status=none || pf_fail "reading big"
	kill -CONT "$tracer"
	pf_trace_stop
	"$PREFETCHD" dump "$tmp/t" >"$tmp/dump" || pf_fail "dump"
}

# Another process's drop_caches (a shared machine) can evict big before mincore looks: our tests' drops wait for
# the cache lock; after anyone else's, again, 3 times.
for ((try = 1; try <= 3; try++)); do
	pf_cache_hold
	trace_once
	read -r resident total < <("$TOOLS/pf_mincore" "$mnt/big")
	pf_cache_release
	[ "$resident" = "$total" ] && break
	pf_note "big evicted meanwhile ($resident of $total pages resident): again"
done
cat "$tmp/t.out"
grep -Eq "ranges: resident pages \(mincore: [1-9][0-9]* page events lost\)" "$tmp/t.out" ||
	pf_fail "no loss reported: $(cat "$tmp/t.out")"
grep -q "^# filesystem 0: .*, ranges: resident pages (mincore; page events lost)$" "$tmp/dump" ||
	pf_fail "filesystem line: $(grep '^# filesystem' "$tmp/dump")"
got=$(awk -F'\t' -v p="$mnt/big" '!/^#/ && $1 == p { s += $3 } END { print s + 0 }' "$tmp/dump")
[ "$got" -eq $((8 << 20)) ] || pf_fail "big: $got bytes recorded, $((8 << 20)) read"
echo "ok"
