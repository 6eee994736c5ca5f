#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One message format for every command: a usage error is one line "PROG: COMMAND: reason" and the hint
# "Try 'PROG COMMAND --help'." on stderr, exit 2, nothing on stdout; --help prints the usage on stdout, exit 0;
# --version prints "PROG VERSION"; a number out of range states the range.
source "$TOP/tests/lib.sh"
tmp=$(pf_tmpdir)

# usage_error WHAT WANT-LINE HINT CMD...: exit 2, stderr exactly WANT-LINE and HINT, stdout empty
usage_error() {
	local what=$1 want=$2 hint=$3 rc=0; shift 3
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || pf_fail "$what: exit $rc, want 2: $(cat "$tmp/err")"
	[ "$(cat "$tmp/err")" = "$want
$hint" ] || pf_fail "$what: stderr:
$(cat "$tmp/err")
want:
$want
$hint"
	[ ! -s "$tmp/out" ] || pf_fail "$what: stdout: $(cat "$tmp/out")"
}

for cmd in trace aggregate replay dump boot stop report config; do
	usage_error "$cmd --frobnicate" "prefetchd: $cmd: unknown option '--frobnicate'" \
		"Try 'prefetchd $cmd --help'." "$PREFETCHD" "$cmd" --frobnicate
	"$PREFETCHD" "$cmd" --help >"$tmp/out" 2>"$tmp/err" || pf_fail "$cmd --help: exit $?"
	[[ $(head -1 "$tmp/out") == "Usage: prefetchd $cmd"* ]] || pf_fail "$cmd --help: $(head -1 "$tmp/out")"
	[ ! -s "$tmp/err" ] || pf_fail "$cmd --help: stderr: $(cat "$tmp/err")"
done
usage_error "no command" "prefetchd: no command given" "Try 'prefetchd --help'." "$PREFETCHD"
usage_error "unknown command" "prefetchd: unknown command 'frob'" "Try 'prefetchd --help'." "$PREFETCHD" frob
usage_error "missing value" "prefetchd: stop: option '--pid-file' needs a value" "Try 'prefetchd stop --help'." \
	"$PREFETCHD" stop --pid-file
usage_error "stop --timeout -1" "prefetchd: stop: --timeout: '-1' is not a number of seconds (0..2147483)" \
	"Try 'prefetchd stop --help'." "$PREFETCHD" stop --timeout -1
usage_error "trace without --output" "prefetchd: trace: --output FILE is required" "Try 'prefetchd trace --help'." \
	"$PREFETCHD" trace
usage_error "boot --root alone" "prefetchd: boot: --root needs --from-initramfs" "Try 'prefetchd boot --help'." \
	"$PREFETCHD" boot --root /x
usage_error "aggregate --max-mb x" "prefetchd: aggregate: --max-mb: 'x' is not a number of MiB (0..1073741824)" \
	"Try 'prefetchd aggregate --help'." "$PREFETCHD" aggregate --max-mb x
usage_error "reorder -z" "prefetch-reorder: unknown option '-z'" "Try 'prefetch-reorder --help'." "$REORDER" -z
usage_error "reorder --chunk-blocks 0" \
	"prefetch-reorder: --chunk-blocks: '0' is not a number of blocks (1..1073741824)" \
	"Try 'prefetch-reorder --help'." "$REORDER" --chunk-blocks 0 "$tmp/img"
usage_error "reorder without a device" "prefetch-reorder: no DEVICE or IMAGE given" "Try 'prefetch-reorder --help'." \
	"$REORDER"

# errors that are not usage errors: one line, no hint
out=$("$PREFETCHD" dump "$tmp/missing" 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$out" = "prefetchd: dump: $tmp/missing: No such file or directory" ] || pf_fail "dump missing: $rc $out"

for prog in "$PREFETCHD" "$REORDER"; do
	out=$("$prog" --version) || pf_fail "$prog --version: exit $?"
	[[ $out =~ ^$(basename "$prog")\ [0-9][0-9a-z.~+-]*$ ]] || pf_fail "$prog --version: '$out'"
	"$prog" --help | grep -q "^Usage: $(basename "$prog")" || pf_fail "$prog --help"
done
pf_note "usage errors, --help and --version of every command"
