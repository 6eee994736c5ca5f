#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cache_lock.sh, sourced by tests/lib.sh and tests/valgrind.sh: dropping the page cache without pulling it
# from under another test's measurement.
#
# The page cache is the machine's: another process's drop_caches (a test beside this one, a benchmark, the boot
# lab) can empty what a test just made resident and wants to measure.  A test depends on what is cached only while
# it holds PF_CACHE_LOCK shared (pf_cache_hold .. pf_cache_release); every drop takes it exclusively for the moment
# of the drop, so it waits until no test is inside such a window (at most 5 minutes, then drops anyway: a window
# that long is a bug, not a reason to hang; so does a drop that cannot open the lock, e.g. one another user made
# where protected_regular forbids root to open it).  The shared lock is held by a process of its own (flock
# --no-fork, then sleep, 5 minutes at most), never by a descriptor of the test's shell, which every process the
# test starts would inherit and keep.  A drop first ends the caller's own window.
PF_CACHE_LOCK=${PF_CACHE_LOCK:-/var/tmp/prefetch-cache.lock}
pf_drop_caches() {
	pf_cache_release
	sync
	flock -w 300 -E 75 -x "$PF_CACHE_LOCK" sh -c 'echo 3 >/proc/sys/vm/drop_caches' 2>/dev/null ||
		echo 3 >/proc/sys/vm/drop_caches
}
pf_cache_hold() {
	pf_cache_release
	local held
	held=$(mktemp -u "${TMPDIR:-/tmp}/prefetch-cache-held.XXXXXX")
	flock -F -s "$PF_CACHE_LOCK" sh -c ': >"$1"; exec sleep 300' - "$held" 2>/dev/null &
	PF_CACHE_PID=$!
	pf_kill_later "$PF_CACHE_PID" # also where the hold was taken in a subshell that failed
	while [ ! -e "$held" ] && kill -0 "$PF_CACHE_PID" 2>/dev/null; do sleep 0.01; done
	rm -f "$held"
}
# pf_cache_drops [slab]: the machine's drops of the page cache so far, with "slab" those of the slab (inodes,
# dentries: what a measurement of metadata reads depends on) added; a change across a measurement means someone
# dropped caches during it
pf_cache_drops() {
	awk -v slab="${1:-}" '$1 == "drop_pagecache" || (slab && $1 == "drop_slab") { n += $2 } END { print n + 0 }' /proc/vmstat
}
pf_cache_release() {
	[ -n "${PF_CACHE_PID:-}" ] || return 0
	kill "$PF_CACHE_PID" 2>/dev/null
	wait "$PF_CACHE_PID" 2>/dev/null
	PF_CACHE_PID=
}
