#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tracer's file cap: past --max-files the trace says "file cap reached" (flag and warning), and the files
# past the cap cost nothing more (the marks are gone: re-opening them gives no events).  And the cap no longer
# comes from the fd limit: no fd is held per recorded file, so a tracer that cannot raise RLIMIT_NOFILE (no
# CAP_SYS_RESOURCE) still records more files than its limit, and its trace is complete.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root
command -v setpriv >/dev/null || pf_skip "setpriv (util-linux) missing"

nfiles=600
tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 32M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
mkdir "$mnt/many"
(cd "$mnt/many" && seq -f 'f%.0f' 1 $nfiles | xargs touch) || pf_fail "creating $nfiles files"
sync

events_of() { sed -n 's/^trace: .* \([0-9]*\) events (.*/\1/p' "$1"; }

# ---- the cap: 50 entries, 600 files each opened 10 times ----
pf_trace_start "$tmp/t" --max-files 50 --mount "$mnt"
tracer=$PF_TRACE_PID
for f in "$mnt"/many/*; do : <"$f"; done
# the tracer has caught up with the first round: at the cap it closes its fanotify group (all marks go with it)
for ((i = 0; i < 200; i++)); do
	pf_fanotify_fdinfo "$tracer" >/dev/null || break
	sleep 0.05
done
[ "$i" -lt 200 ] || pf_fail "the tracer still holds its fanotify group 10 s after the cap"
for ((r = 1; r < 10; r++)); do
	for f in "$mnt"/many/*; do : <"$f"; done
done
pf_trace_stop
"$PREFETCHD" dump "$tmp/t" >"$tmp/dump" || pf_fail "dump failed"
grep -q '^# flags: incomplete (file cap reached)$' "$tmp/dump" || pf_fail "flags: $(grep '^# flags' "$tmp/dump")"
grep -q "is incomplete (file cap reached)" "$tmp/t.err" || pf_fail "no warning: $(cat "$tmp/t.err")"
recorded=$(grep -v '^#' "$tmp/dump" | cut -f1 | sort -u | wc -l)
events=$(events_of "$tmp/t.out")
[ -n "$events" ] || pf_fail "no event count: $(cat "$tmp/t.out")"
pf_note "cap 50: $events events for $((10 * nfiles)) opens; $(cat "$tmp/t.out")"
# the first round's opens (queued before the cap was reached), and none of the 9 rounds after
[ "$events" -le $((nfiles + 20)) ] || pf_fail "$events events for $((10 * nfiles)) opens: files past the cap still cost events"

# ---- a low fd limit it cannot raise: every file recorded, trace complete ----
# (fd mode: there each event read comes with an fd; FID mode opens none)
PF_TRACE_WRAP="setpriv --bounding-set=-sys_resource --inh-caps=-sys_resource prlimit --nofile=256:256" \
	PREFETCH_TRACE_FID=0 pf_trace_start "$tmp/t2" --mount "$mnt"
for f in "$mnt"/many/*; do : <"$f"; done
pf_trace_stop
"$PREFETCHD" dump --files "$tmp/t2" >"$tmp/files2" || pf_fail "dump failed (low fd limit)"
got=$(grep -c "	$mnt/many/f" "$tmp/files2")
pf_note "fd limit 256: recorded $got of $nfiles files; $(cat "$tmp/t2.out")"
[ "$got" -eq $nfiles ] || pf_fail "with an fd limit of 256, $got of $nfiles files recorded"
grep -q '^# flags: none$' "$tmp/files2" || pf_fail "flags (low fd limit): $(grep '^# flags' "$tmp/files2")"
exit 0
