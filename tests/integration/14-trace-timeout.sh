#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Tracing cut by TRACE_TIMEOUT ('prefetchd boot': 'prefetchd stop' never came) gives a trace flagged incomplete
# (timed out); 'prefetchd trace --timeout' is the length asked for, and its trace is complete.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 32M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
cat >"$tmp/conf" <<EOF
PREFETCH_DIR=$tmp/state
SELF_CHECK_INTERVAL=0
PREFETCH_RUNTIME_DIR=$tmp/run
TRACE_MOUNTS=$mnt
TRACE_TIMEOUT=1
EOF
timeout 30 "$PREFETCHD" boot --config "$tmp/conf" >"$tmp/boot.out" 2>&1 || pf_fail "prefetchd boot exited $?: $(cat "$tmp/boot.out")"
trace=$(ls "$tmp"/state/traces/*.pf 2>/dev/null | head -1)
[ -n "$trace" ] || pf_fail "no trace stored: $(cat "$tmp/boot.out")"
"$PREFETCHD" dump "$trace" >"$tmp/dump" || pf_fail "dump failed"
grep -q '^# flags: incomplete (timed out)$' "$tmp/dump" || pf_fail "boot trace: $(grep '^# flags' "$tmp/dump")"
grep -q "trace $trace is incomplete (timed out)" "$tmp/boot.out" || pf_fail "boot did not say why: $(cat "$tmp/boot.out")"

"$PREFETCHD" trace --mount "$mnt" --output "$tmp/t" --pid-file "$tmp/pid" --timeout 1 >/dev/null 2>"$tmp/t.err" ||
	pf_fail "trace --timeout failed"
"$PREFETCHD" dump "$tmp/t" >"$tmp/dump2" || pf_fail "dump failed"
grep -q '^# flags: none$' "$tmp/dump2" || pf_fail "--timeout trace: $(grep '^# flags' "$tmp/dump2")"
[ -s "$tmp/t.err" ] && pf_fail "warning for a complete trace: $(cat "$tmp/t.err")"
exit 0
