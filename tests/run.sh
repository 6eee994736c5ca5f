#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the cmocka unit binaries given as arguments, then every tests/integration/*.sh, and prints one closing
# line "N passed, N failed, N skipped": cmocka's own counts (skip() included) and one per script.  An
# integration script passes with exit 0, is skipped with exit 77; every skip's reason is listed at the end.
# TESTS_UNIT_ONLY=1 skips the integration scripts; TESTS_ONLY=pattern runs the matching scripts only;
# TESTS_SKIP, lines "NAME: REASON", does not run those scripts and counts each as skipped with its reason.
# PREFETCHD, REORDER, TOOLS and GEN given in the environment replace the build's (the installed programs and
# scripts: debian/tests/installed-tests).
# Each test runs under tests/guard.sh: it sees decoys, not the machine's /run/prefetch, /var/lib/prefetch and
# /etc/default/prefetch, and fails if it read or wrote them.
# The unit tests' scratch space (PF_TEST_SCRATCH) is on a real filesystem: some need FIEMAP or evictable pages.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOP=$top BUILD=${BUILD:-build/default}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
export PREFETCHD=${PREFETCHD:-$BUILD/prefetchd} REORDER=${REORDER:-$BUILD/prefetch-reorder}
export TOOLS=${TOOLS:-$BUILD/tests/tools}
export GEN=${GEN:-$BUILD/gen} # the units, scripts, hooks and man pages rendered from their .in templates
for v in PREFETCHD REORDER TOOLS GEN; do case ${!v} in /*) ;; *) export "$v=$top/${!v}" ;; esac; done
passed=0 failed=0 skipped=0 failures=() skips=()

# /var/tmp where it is a disk filesystem, else a folder of the build tree.
scratch_on_disk() { [ -d "$1" ] && [ -w "$1" ] && [ "$(stat -f -c %T "$1" 2>/dev/null)" != tmpfs ]; }
if [ -z "${PF_TEST_SCRATCH:-}" ]; then
	if scratch_on_disk /var/tmp; then PF_TEST_SCRATCH=/var/tmp
	else PF_TEST_SCRATCH=$BUILD/scratch; mkdir -p "$PF_TEST_SCRATCH"; fi
fi
export PF_TEST_SCRATCH
scratch_on_disk "$PF_TEST_SCRATCH" ||
	echo "note: unit scratch space $PF_TEST_SCRATCH is tmpfs or not writable: tests that need a disk filesystem skip"

# The unit tests' own prefetch configuration and stand-ins for the boot id and the kernel command line (the
# integration tests make theirs in tests/lib.sh).
. "$top/tests/test_home.sh"
unit_home=$(mktemp -d "${TMPDIR:-/tmp}/prefetch-home.XXXXXX") || exit 1
trap 'rm -rf "$unit_home"' EXIT
pf_home_make "$unit_home" || exit 1
for bin in "$@"; do
	out=$("$top/tests/guard.sh" "$bin" 2>&1); rc=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	s=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | tail -1)
	passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
	while IFS= read -r name; do skips+=("$(basename "$bin"): $name"); done < <(
		printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([^ 0-9][^ ]*\).*/\1/p' | sort -u)
	if [ "$rc" -ne 0 ] && [ -z "$f" ]; then failed=$((failed + 1)); fi
	[ "$rc" -ne 0 ] && failures+=("$(basename "$bin")")
done

if [ -z "${TESTS_UNIT_ONLY:-}" ]; then
	for t in "$top"/tests/integration/*.sh; do
		[ -e "$t" ] || continue
		name=$(basename "$t" .sh)
		if [ -n "${TESTS_ONLY:-}" ] && [[ $name != *${TESTS_ONLY}* ]]; then continue; fi
		reason=$(printf '%s\n' "${TESTS_SKIP:-}" | sed -n "s/^$name: //p" | head -1)
		if [ -n "$reason" ]; then
			skipped=$((skipped + 1)); skips+=("$name: $reason"); echo "SKIP: ${skips[-1]}"; continue
		fi
		start=$(date +%s)
		log=$(mktemp)
		"$top/tests/guard.sh" bash "$t" >"$log" 2>&1; rc=$?
		secs=$(( $(date +%s) - start ))
		if [ $rc -eq 0 ]; then
			passed=$((passed + 1)); echo "PASS: $name (${secs}s)"
		elif [ $rc -eq 77 ]; then
			skipped=$((skipped + 1)); skips+=("$name: $(tail -1 "$log")"); echo "SKIP: ${skips[-1]}"
		else
			failed=$((failed + 1)); failures+=("$name"); echo "FAIL: $name (exit $rc, ${secs}s)"
			sed 's/^/    | /' "$log" | tail -40
		fi
		rm -f "$log"
	done
fi

for s in "${skips[@]}"; do echo "skipped: $s"; done
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
