#!/usr/bin/env bash
# Runs the cmocka unit binaries given as arguments, then every tests/integration/*.sh, and prints one closing
# line "N passed, N failed, N skipped".  An integration script passes with exit 0, is skipped with exit 77.
# TESTS_UNIT_ONLY=1 skips the integration scripts; TESTS_ONLY=pattern runs the matching scripts only.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOP=$top BUILD=${BUILD:-build/default}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
export PREFETCHD=$BUILD/prefetchd REORDER=$BUILD/prefetch-reorder TOOLS=$BUILD/tests/tools
passed=0 failed=0 skipped=0 failures=()

for bin in "$@"; do
	out=$("$bin" 2>&1); rc=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ] && [ -z "$f" ]; then failed=$((failed + 1)); fi
	[ "$rc" -ne 0 ] && failures+=("$(basename "$bin")")
done

if [ -z "${TESTS_UNIT_ONLY:-}" ]; then
	for t in "$top"/tests/integration/*.sh; do
		[ -e "$t" ] || continue
		name=$(basename "$t" .sh)
		if [ -n "${TESTS_ONLY:-}" ] && [[ $name != *${TESTS_ONLY}* ]]; then continue; fi
		start=$(date +%s)
		log=$(mktemp)
		bash "$t" >"$log" 2>&1; rc=$?
		secs=$(( $(date +%s) - start ))
		if [ $rc -eq 0 ]; then
			passed=$((passed + 1)); echo "PASS: $name (${secs}s)"
		elif [ $rc -eq 77 ]; then
			skipped=$((skipped + 1)); echo "SKIP: $name: $(tail -1 "$log")"
		else
			failed=$((failed + 1)); failures+=("$name"); echo "FAIL: $name (exit $rc, ${secs}s)"
			sed 's/^/    | /' "$log" | tail -40
		fi
		rm -f "$log"
	done
fi

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
