#!/usr/bin/env bash
# Runs the cmocka unit binaries and the command-line error paths under valgrind memcheck.  Any memory error or
# definite leak fails the run.  Prints "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build/default}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --track-fds=no)
passed=0 failed=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

run() { # name, expected-exit-or-any, cmd...
	local name=$1 want=$2; shift 2
	"${vg[@]}" "$@" >"$tmp/out" 2>&1; local rc=$?
	if [ $rc -eq 99 ] || { [ "$want" != any ] && [ $rc -ne "$want" ]; }; then
		failed=$((failed + 1)); echo "FAIL: $name (exit $rc)"; tail -30 "$tmp/out"
	else
		passed=$((passed + 1)); echo "PASS: $name"
	fi
}

for bin in "$@"; do run "$(basename "$bin")" 0 "$bin"; done

# Command-line error paths: bad input must be reported cleanly, without leaks.
printf 'PREFETCH garbage' >"$tmp/corrupt"
head -c 0 /dev/null >"$tmp/empty"
run "dump corrupt" 1 "$BUILD/prefetchd" dump "$tmp/corrupt"
run "dump empty" 1 "$BUILD/prefetchd" dump "$tmp/empty"
run "dump missing" 1 "$BUILD/prefetchd" dump "$tmp/missing"
run "replay corrupt" any "$BUILD/prefetchd" replay "$tmp/corrupt"
run "replay missing" any "$BUILD/prefetchd" replay "$tmp/missing"
run "aggregate corrupt" any "$BUILD/prefetchd" aggregate --output "$tmp/layout" "$tmp/corrupt"
run "reorder missing image" any "$BUILD/prefetch-reorder" --layout "$tmp/corrupt" "$tmp/missing"
run "usage" 2 "$BUILD/prefetchd" no-such-command

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
