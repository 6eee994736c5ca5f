#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The trace's page ranges with the page-cache tracepoints, on a real ext4 loop filesystem with a large readahead:
# a few 4 KiB reads of big files leave exactly those pages in the trace (the kernel's readahead around them does
# not count), while mincore (PREFETCH_TRACE_PAGES=mincore) records the readahead windows too; reads by a task
# named like prefetchd (replay's threads) are not the boot's; the dump says which source each filesystem used;
# the trace instance is gone afterwards, and one left by a killed tracer is removed by the next; the same from
# trace_pipe_raw's records and from trace_pipe's text (PREFETCH_TRACE_RAW=0).  Skipped where
# tracefs or the events (Linux 6.11+) are missing.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root
pf_require_page_events "$@"
instances=/sys/kernel/tracing/instances

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 96M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
head -c $((16 << 20)) /dev/urandom >"$mnt/big1"
head -c $((16 << 20)) /dev/urandom >"$mnt/big2"
sync
ra=/sys/block/$(basename "$dev")/queue/read_ahead_kb
old_ra=$(cat "$ra")
pf_cleanup_add "echo $old_ra > $ra"
echo 4096 >"$ra"
# a reader that is not the boot: its task name is the tracer's own
cp "$(command -v dd)" "$tmp/prefetchd"

ranges() { # DUMP PATH: merged "offset+length ..."
	awk -F'\t' -v p="$2" '!/^#/ && $1 == p {
		if (n && $2 == end) { end = $2 + $3; len[n] += $3; next }
		n++; off[n] = $2; len[n] = $3; end = $2 + $3 }
		END { for (i = 1; i <= n; i++) printf "%s%d+%d", (i > 1 ? " " : ""), off[i], len[i] }' "$1"
}
bytes_of() { awk -F'\t' -v p="$2" '!/^#/ && $1 == p { s += $3 } END { print s + 0 }' "$1"; }

# trace_reads MODE (auto|mincore): the reads under a tracer; the dump in $tmp/dump.MODE.  The cache lock is held
# until the tracer has ended (mincore asks what is resident then: our tests' drops wait); DROPPED says whether
# someone else dropped caches meanwhile (1) or not (0).
trace_reads() {
	local mode=$1 d0
	pf_cache_hold
	d0=$(pf_cache_drops)
	umount "$mnt" && mount "$dev" "$mnt" || pf_fail "remount (cold cache)"
	PREFETCH_TRACE_PAGES=$mode pf_trace_start "$tmp/t.$mode" --mount "$mnt"
	local tracer=$PF_TRACE_PID
	# page 0 (a read at 0 starts a readahead window), pages 2000-2001 (the second read is sequential:
	# readahead again), one page of big2 in the middle (random: no readahead)
	dd if="$mnt/big1" of=/dev/null bs=4096 count=1 status=none
	dd if="$mnt/big1" of=/dev/null bs=4096 skip=2000 count=2 status=none
	dd if="$mnt/big2" of=/dev/null bs=4096 skip=7 count=1 status=none
	"$tmp/prefetchd" if="$mnt/big2" of=/dev/null bs=4096 skip=3000 count=1 status=none
	[ "$mode" = mincore ] || [ -d "$instances/prefetch-$tracer" ] || pf_fail "no instance prefetch-$tracer while tracing"
	if [ "$mode" = auto ]; then # which pipe it reads
		local pipe=trace_pipe_raw
		[ "${PREFETCH_TRACE_RAW:-}" = 0 ] && pipe=trace_pipe
		ls -l "/proc/$tracer/fd" | grep -q "/$pipe\$" || pf_fail "the tracer does not read $pipe"
	fi
	pf_trace_stop
	DROPPED=0
	[ "$(pf_cache_drops)" = "$d0" ] || DROPPED=1
	pf_cache_release
	[ ! -e "$instances/prefetch-$tracer" ] || pf_fail "instance prefetch-$tracer left behind"
	"$PREFETCHD" dump "$tmp/t.$mode" >"$tmp/dump.$mode" || pf_fail "dump"
}

# ---- tracepoints: exactly the pages read (binary records; then the text pipe, PREFETCH_TRACE_RAW=0) ----
for how in raw text; do
	[ $how = text ] && export PREFETCH_TRACE_RAW=0
	trace_reads auto
	unset PREFETCH_TRACE_RAW
	grep -q "ranges: pages read (" "$tmp/t.auto.out" || pf_fail "summary ($how): $(cat "$tmp/t.auto.out")"
	grep -q "^# filesystem 0: .*, ranges: pages read (tracepoints)$" "$tmp/dump.auto" ||
		pf_fail "filesystem line ($how): $(grep '^# filesystem' "$tmp/dump.auto")"
	got=$(ranges "$tmp/dump.auto" "$mnt/big1")
	[ "$got" = "0+4096 8192000+8192" ] || pf_fail "big1 ($how): '$got', want '0+4096 8192000+8192'"
	got=$(ranges "$tmp/dump.auto" "$mnt/big2")
	[ "$got" = "28672+4096" ] || pf_fail "big2 ($how): '$got' (the page read as 'prefetchd' must not count)"
done

# ---- mincore: the readahead windows too (traced again, up to 5 times, when someone else emptied the cache) ----
for try in 1 2 3 4 5; do
	trace_reads mincore
	[ "$DROPPED" = 0 ] && break
	pf_note "caches dropped by someone else while tracing: again"
done
grep -q "ranges: resident pages (mincore: mincore asked for)" "$tmp/t.mincore.out" ||
	pf_fail "summary: $(cat "$tmp/t.mincore.out")"
grep -q "^# filesystem 0: .*, ranges: resident pages (mincore)$" "$tmp/dump.mincore" ||
	pf_fail "filesystem line: $(grep '^# filesystem' "$tmp/dump.mincore")"
b_auto=$(bytes_of "$tmp/dump.auto" "$mnt/big1")
b_min=$(bytes_of "$tmp/dump.mincore" "$mnt/big1")
pf_note "big1: $b_auto bytes with tracepoints, $b_min with mincore"
[ "$b_min" -gt "$b_auto" ] || pf_fail "mincore holds no readahead ($b_min <= $b_auto bytes): is readahead on?"
for r in 0+4096 8192000+8192; do # and still the pages read
	awk -F'\t' -v o="${r%+*}" -v l="${r#*+}" '!/^#/ && $2 <= o && $2 + $3 >= o + l { f = 1 } END { exit !f }' \
		<(awk -F'\t' -v p="$mnt/big1" '$1 == p' "$tmp/dump.mincore") || pf_fail "mincore lost the read $r"
done

# ---- an instance left by a killed tracer goes with the next tracer ----
pf_trace_start "$tmp/t.killed" --mount "$mnt"
killed=$PF_TRACE_PID
kill -9 "$killed"
wait "$killed" 2>/dev/null
[ -d "$instances/prefetch-$killed" ] || pf_fail "no instance of the killed tracer (nothing to check)"
pf_cleanup_add "rmdir $instances/prefetch-$killed 2>/dev/null"
trace_reads auto
[ ! -e "$instances/prefetch-$killed" ] || pf_fail "the killed tracer's instance was not removed"
echo "ok"
