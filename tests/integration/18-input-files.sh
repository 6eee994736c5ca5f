#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 18-input-files: bad input files get one clear line and an exit, never a hang (issue #27).
#  1. a FIFO given as the input of dump, replay, aggregate, report --log, config --check and prefetch-reorder
#     --layout: refused as "not a regular file" at once (each run under a timeout: a hang fails the test);
#  2. a missing input says "No such file or directory";
#  3. aggregate --output into a missing directory creates no directory;
#  4. replay --dump-plan writes the plan 0600, also over an existing 0644 file;
#  5. pid files: 'prefetchd stop' on a pid file holding no pid exits non-zero saying so (not "no tracer
#     running"); 'prefetchd boot' while another process holds the pid file without ever writing a pid (the
#     loser of two starts at once) exits non-zero saying so, never "pid 0".
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
tmp=$(pf_tmpdir)
mkfifo "$tmp/fifo" || pf_skip "cannot make a FIFO"

# one_line NAME PATTERN CMD...: exit 1, one line on stderr matching PATTERN, within 10 s
one_line() {
	local name=$1 pat=$2 rc=0; shift 2
	timeout 10 "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -ne 124 ] || pf_fail "$name: hung (killed after 10 s)"
	[ $rc -eq 1 ] || pf_fail "$name: exit $rc, want 1: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || pf_fail "$name: want one line: $(cat "$tmp/err")"
	# shellcheck disable=SC2053 # a glob on purpose
	[[ $(cat "$tmp/err") == $pat ]] || pf_fail "$name: want $pat: $(cat "$tmp/err")"
}

# 1. FIFOs
f=$tmp/fifo
one_line "dump FIFO" "*$f: not a regular file" "$PREFETCHD" dump "$f"
one_line "replay FIFO" "*$f: not a regular file" "$PREFETCHD" replay "$f"
one_line "report --log FIFO" "*$f: not a regular file" "$PREFETCHD" report --log "$f"
one_line "config --check FIFO" "*$f: not a regular file" "$PREFETCHD" config --check "$f"
rc=0
timeout 10 "$PREFETCHD" aggregate --output "$tmp/l" "$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] && grep -q "$f: not a regular file" "$tmp/err" || pf_fail "aggregate FIFO: exit $rc: $(cat "$tmp/err")"
truncate -s 8M "$tmp/img" && mke2fs -q -F -t ext4 "$tmp/img" >/dev/null 2>&1 || pf_fail "mke2fs"
one_line "reorder --layout FIFO" "*$f: not a regular file" "$REORDER" --layout "$f" "$tmp/img"
pf_note "FIFO inputs refused at once"

# 2. missing
one_line "dump missing" "*$tmp/missing: No such file or directory" "$PREFETCHD" dump "$tmp/missing"
one_line "config --check missing" "*$tmp/missing: No such file or directory" "$PREFETCHD" config --check "$tmp/missing"
one_line "reorder --layout missing" "*$tmp/missing: No such file or directory" "$REORDER" --layout "$tmp/missing" "$tmp/img"

# 3./4. need a trace and a layout of real files
echo hello >"$tmp/a"
"$TOOLS/pf_mklayout" --kind trace "$tmp/trace" <<<"$tmp/a" >/dev/null || pf_fail "pf_mklayout trace"
rc=0
"$PREFETCHD" aggregate --output "$tmp/nodir/sub/layout" "$tmp/trace" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || pf_fail "aggregate into a missing directory: exit $rc: $(cat "$tmp/err")"
[ ! -e "$tmp/nodir" ] || pf_fail "aggregate --output created $tmp/nodir"
if [ "$(id -u)" -eq 0 ]; then # replay takes only a root-owned layout
	"$TOOLS/pf_mklayout" "$tmp/layout" <<<"$tmp/a" >/dev/null || pf_fail "pf_mklayout layout"
	for pre in none 0644; do
		rm -f "$tmp/plan"
		[ $pre = none ] || { : >"$tmp/plan"; chmod $pre "$tmp/plan"; }
		"$PREFETCHD" replay --dump-plan "$tmp/plan" "$tmp/layout" >/dev/null 2>&1 || pf_fail "replay --dump-plan"
		grep -q "$tmp/a" "$tmp/plan" || pf_fail "the plan does not list $tmp/a"
		[ "$(stat -c %a "$tmp/plan")" = 600 ] || pf_fail "--dump-plan (before: $pre): mode $(stat -c %a "$tmp/plan")"
	done
	pf_note "--dump-plan written 0600"
fi

# 5. pid files
mkdir -m 0700 "$tmp/run"
echo garbage >"$tmp/run/prefetchd.pid"
rc=0
"$PREFETCHD" stop --pid-file "$tmp/run/prefetchd.pid" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -ne 0 ] || pf_fail "stop with a garbage pid file: exit 0: $(cat "$tmp/out" "$tmp/err")"
grep -q "holds no pid" "$tmp/err" || pf_fail "stop with a garbage pid file: $(cat "$tmp/out" "$tmp/err")"
grep -q "no tracer running" "$tmp/out" && pf_fail "stop with a garbage pid file says: $(cat "$tmp/out")"
rm -f "$tmp/run/prefetchd.pid"
printf 'PREFETCH_DIR=%s/state\nPREFETCH_RUNTIME_DIR=%s/run\nTRACE_MOUNTS=%s\n' "$tmp" "$tmp" "$tmp" >"$tmp/conf"
mkdir -m 0700 "$tmp/state"
: >"$tmp/run/prefetchd.pid"
flock "$tmp/run/prefetchd.pid" sleep 20 &
holder=$!
pf_kill_later $holder
for ((i = 0; i < 200; i++)); do flock -n "$tmp/run/prefetchd.pid" true || break; sleep 0.05; done # holder has it
rc=0
timeout 15 "$PREFETCHD" boot --config "$tmp/conf" >"$tmp/out" 2>&1 || rc=$?
kill $holder 2>/dev/null
[ $rc -ne 0 ] && [ $rc -ne 124 ] || pf_fail "boot beside a holder that wrote no pid: exit $rc: $(cat "$tmp/out")"
grep -q "pid 0" "$tmp/out" && pf_fail "boot says pid 0: $(cat "$tmp/out")"
grep -q "wrote no pid" "$tmp/out" || pf_fail "boot beside a holder that wrote no pid: $(cat "$tmp/out")"
pf_note "pid files: $(cat "$tmp/err") / $(cat "$tmp/out")"
exit 0
