#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the cmocka unit binaries and the command-line error paths under valgrind memcheck.  Any memory error or
# definite leak fails the run.  Prints "N passed, N failed".
set -u
# In a mount namespace of its own: one that another process creates meanwhile (a test suite beside this one)
# would copy the image's mount and keep its journal dirty after our umount ("needs recovery", seen).
if [ -z "${PF_PRIVATE_MNT_NS:-}" ] && [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	PF_PRIVATE_MNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build/default}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --track-fds=no)
passed=0 failed=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Nothing of the machine's prefetch (configuration, state, boot id).
. "$top/tests/test_home.sh"
# shellcheck source=cache_lock.sh
. "$top/tests/cache_lock.sh"
pf_home_make "$tmp" || exit 1

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
run "bad option" 2 "$BUILD/prefetchd" stop --frobnicate
printf 'PREFETCH_DIR=$HOME/x\nLOGIN_TRACING_DELAY=30s\nKEY = 5\nTRACE_MOUNTS="/ /usr"\n' >"$tmp/config"
run "config --check bad" 1 "$BUILD/prefetchd" config --check "$tmp/config"
run "config bad" 0 "$BUILD/prefetchd" config --config "$tmp/config"
run "config --get unknown" 2 "$BUILD/prefetchd" config --get NO_SUCH_KEY
run "reorder usage" 2 "$BUILD/prefetch-reorder" --chunk-blocks 0 "$tmp/missing"

# The whole pipeline on a real ext4 image: trace, aggregate, dump, replay (both media), reorder, check.
if [ "$(id -u)" -eq 0 ]; then
	img=$tmp/img mnt=$tmp/mnt
	mkdir -p "$mnt"
	truncate -s 64M "$img" && mke2fs -q -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 "$img"
	if mount -o loop "$img" "$mnt"; then
		trap 'umount "$mnt" 2>/dev/null; rm -rf "$tmp"' EXIT
		mkdir -p "$mnt/d"
		for i in $(seq 1 40); do head -c $((i * 7000)) /dev/urandom >"$mnt/d/f$i"; done
		pf_drop_caches
		"${vg[@]}" "$BUILD/prefetchd" trace --mount "$mnt" --output "$tmp/trace" --pid-file "$tmp/pid" \
			--timeout 20 >"$tmp/trace.out" 2>&1 &
		tracer=$!
		for _ in $(seq 1 100); do [ -s "$tmp/pid" ] && break; sleep 0.2; done
		sleep 1
		cat "$mnt"/d/f* >/dev/null
		"$BUILD/prefetchd" stop --pid-file "$tmp/pid" >/dev/null 2>&1
		wait $tracer; rc=$?
		if [ $rc -eq 0 ]; then passed=$((passed + 1)); echo "PASS: trace"; else failed=$((failed + 1)); echo "FAIL: trace (exit $rc)"; tail -20 "$tmp/trace.out"; fi
		run "aggregate" 0 "$BUILD/prefetchd" aggregate --output "$tmp/layout" "$tmp/trace"
		chmod 0644 "$tmp/layout"
		run "dump" 0 "$BUILD/prefetchd" dump "$tmp/layout"
		pf_drop_caches
		run "replay rotational" 0 "$BUILD/prefetchd" replay --medium rotational "$tmp/layout"
		run "replay ssd" 0 "$BUILD/prefetchd" replay --medium ssd "$tmp/layout"
		umount "$mnt"
		run "reorder --check" 0 "$BUILD/prefetch-reorder" --check --layout "$tmp/layout" "$img"
		run "reorder" 0 "$BUILD/prefetch-reorder" --layout "$tmp/layout" "$img"
		if e2fsck -fn "$img" >"$tmp/fsck" 2>&1; then passed=$((passed + 1)); echo "PASS: e2fsck after reorder"
		else failed=$((failed + 1)); echo "FAIL: e2fsck after reorder"; cat "$tmp/fsck"; fi
	fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
