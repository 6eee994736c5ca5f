#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetchd replay on a loop-mounted ext4: after dropping caches, a rotational replay (metadata pass + physical
# sweep) and a solid-state replay (parallel readers) each leave every page of the layout resident and little
# else; the metadata pass leaves the inode-table and directory blocks resident in the device's page cache; a
# file changed since the layout was made is never read, a deleted one is counted as missing.
source "$TOP/tests/lib.sh"
pf_require_root
for t in mke2fs debugfs; do command -v $t >/dev/null || pf_skip "$t not installed"; done
[ -x "$TOOLS/pf_mklayout" ] && [ -x "$TOOLS/pf_mincore" ] || pf_fail "test tools not built (make tools)"

d=$(pf_tmpdir)
pf_mkfs "$d/img" 96M -b 4096
dev=$(pf_loop "$d/img")
mnt=$d/mnt
pf_mount "$dev" "$mnt"

# Files created in one order, read by the "boot" in another: scattered access.
mkdir -p "$mnt/a/b/c" "$mnt/d/e" "$mnt/x/y"
for i in $(seq 1 40); do head -c $((4096 * (i % 7 + 1) * 3)) /dev/urandom >"$mnt/a/b/c/f$i"; done
head -c $((4 << 20)) /dev/urandom >"$mnt/d/e/big"
head -c $((1 << 20)) /dev/urandom >"$mnt/d/other"
head -c 65536 /dev/urandom >"$mnt/x/y/victim"
head -c 65536 /dev/urandom >"$mnt/x/y/gone"
for i in $(seq 1 200); do echo "$i" >"$mnt/x/y/small$i"; done
# A directory of many blocks: a path lookup reads an htree index and one leaf of it, the metadata pass all.
(cd "$mnt/x/y" && seq -f "entry-with-a-longish-name-%04g" 1 2000 | xargs touch)
sync

lines=$d/lines
{
	for i in $(seq 40 -1 1); do echo "$mnt/a/b/c/f$i"; done
	echo "$mnt/d/e/big 0 65536"
	echo "$mnt/x/y/victim"
	echo "$mnt/d/e/big 1048576 131072"
	echo "$mnt/x/y/gone"
	echo "$mnt/x/y/small7"
	echo "$mnt/a/b/c"
} >"$lines"
"$TOOLS/pf_mklayout" "$d/layout" "$lines" || pf_fail "pf_mklayout"
"$TOOLS/pf_mklayout" --no-phys "$d/layout-nophys" "$lines" || pf_fail "pf_mklayout --no-phys"
grep -v -e victim -e gone "$lines" | grep ' \|/f' | awk 'NF == 1 { print $1, 0, 0; next } { print }' >"$d/ranges"

# The changed file: same name, new content and size.  The deleted one: gone.
head -c 81920 /dev/urandom >"$mnt/x/y/victim"
rm "$mnt/x/y/gone"
# Remount read-only: unmounting checkpoints the journal (whose buffers would pin metadata pages in the cache)
# and a read-only mount writes nothing (no atime) while the test measures the cache.
umount "$mnt" || pf_fail "umount"
pf_mount "$dev" "$mnt" -o ro

# Where the metadata lives (read now: debugfs itself fills the device's cache, dropped below).
ino=$(stat -c %i "$mnt/a/b/c/f1")
itab=$(debugfs -R "imap <$ino>" "$dev" 2>/dev/null | sed -n 's/.*located at block \([0-9]*\),.*/\1/p')
dblocks=$(debugfs -R "blocks /x/y" "$dev" 2>/dev/null)
dblk=${dblocks%% *}
[ "$(wc -w <<<"$dblocks")" -ge 8 ] || pf_fail "/x/y has only blocks $dblocks"
[ -n "$itab" ] && [ -n "$dblk" ] || pf_fail "debugfs: no inode-table block ($itab) or directory block ($dblk)"
pf_note "f1: inode $ino in table block $itab; /x/y's first block $dblk"

resident() { "$TOOLS/pf_mincore" "$@" | awk '{ print $1 }'; }
# check_layout_resident: every page of every range of the layout is in the page cache (readahead returns
# before its I/O completes and mincore counts only up-to-date pages: allow the reads a few seconds to land)
layout_missing() {
	local p o l r t
	while read -r p o l; do
		if [ "$l" = 0 ]; then read -r r t < <("$TOOLS/pf_mincore" "$p"); else read -r r t < <("$TOOLS/pf_mincore" "$p" "$o" "$l"); fi
		[ "$r" = "$t" ] || { echo "$p [$o +$l]: $r of $t pages resident"; return; }
	done <"$d/ranges"
}
check_layout_resident() {
	local i miss
	for i in $(seq 50); do
		miss=$(layout_missing)
		[ -n "$miss" ] || return 0
		sleep 0.1
	done
	pf_fail "$1: $miss"
}
check_cold() {
	local p o l r
	while read -r p o l; do
		r=$(resident "$p")
		[ "$r" = 0 ] || pf_fail "precondition: $p has $r pages resident after drop_caches"
	done <"$d/ranges"
	[ "$(resident "$dev" $((itab * 4096)) 4096)" = 0 ] || pf_fail "precondition: inode table block resident"
	[ "$(resident "$dev" $((dblk * 4096)) 4096)" = 0 ] || pf_fail "precondition: directory block resident"
}
# check_rest: outside the layout little or nothing was read, and never the changed file
check_rest() {
	local big other victim
	big=$(resident "$mnt/d/e/big"); other=$(resident "$mnt/d/other"); victim=$(resident "$mnt/x/y/victim")
	pf_note "$1: pages resident: big $big (layout: 48), other $other, victim $victim"
	[ "$big" -le 64 ] || pf_fail "$1: $big pages of big resident, layout has 48"
	[ "$other" -le 8 ] || pf_fail "$1: $other pages of a file not in the layout resident"
	[ "$victim" = 0 ] || pf_fail "$1: the changed file was read ($victim pages)"
}
run_replay() { # name args...
	local name=$1 out; shift
	out=$(timeout 60 "$PREFETCHD" replay "$@" --config "$d/no-config" 2>"$d/err") ||
		{ cat "$d/err" >&2; pf_fail "$name: replay exited $?"; }
	pf_note "$name: $out" >&2
	[ ! -s "$d/err" ] || { cat "$d/err" >&2; pf_fail "$name: replay wrote to stderr"; }
	# 40 f*, big, small7, the directory; victim changed, gone missing
	[[ $out == "replay: 43 files, 2 skipped (1 missing, 1 changed), "* ]] || pf_fail "$name: summary '$out'"
	echo "$out"
}

all_dir_blocks() { local b; for b in $dblocks; do [ "$(resident "$dev" $((b * 4096)) 4096)" = 1 ] || return 1; done; }

phase_rotational() {
	out=$(run_replay rotational "$d/layout" --medium rotational) || exit 1
	[[ $out == *"medium rotational"* ]] || pf_fail "rotational: '$out'"
	mblocks=$(sed -n 's/.*, \([0-9]*\) metadata blocks.*/\1/p' <<<"$out")
	[ "${mblocks:-0}" -gt 0 ] || pf_fail "rotational: no metadata blocks in '$out'"
	check_layout_resident rotational
	check_rest rotational
	[ "$(resident "$dev" $((itab * 4096)) 4096)" = 1 ] || pf_fail "metadata pass: inode table block $itab not resident"
	all_dir_blocks || pf_fail "metadata pass: blocks of /x/y not all resident ($dblocks)"
}
phase_fiemap() {
	out=$(run_replay "rotational, FIEMAP" "$d/layout-nophys" --medium rotational) || exit 1
	check_layout_resident "rotational, FIEMAP"
	check_rest "rotational, FIEMAP"
}
phase_ssd() {
	out=$(run_replay ssd "$d/layout" --medium ssd --threads 3) || exit 1
	[[ $out == *"medium fast-flash, 0 metadata blocks"* ]] || pf_fail "ssd: '$out'"
	check_layout_resident ssd
	check_rest ssd
	# no metadata pass: opening x/y/small7 read only some of /x/y's blocks (shows the check above means something)
	! all_dir_blocks || pf_fail "ssd: every block of /x/y resident without a metadata pass"
}
phase_no_timeout() { # a timeout of 0 means none
	out=$(run_replay "no timeout" "$d/layout" --medium rotational --timeout 0) || exit 1
	check_layout_resident "no timeout"
}

# A phase holds the cache lock from its drop to its last check (tests/cache_lock.sh), but a process that drops
# the caches without it, or memory reclaim, can still take pages (seen here: one page of a few files, and of a
# canary file, gone a second after a replay).  A phase runs in a subshell (its pf_fail ends the phase only) and
# is tried again when it fails: a bug fails every try, noise does not.  A canary read before the replay tells a
# drop from a failure; only drops on every try make it a skip.
head -c $((256 << 10)) /dev/urandom >"$d/canary"
run_phase() {
	local try rc r t dropped=0
	for try in 1 2 3 4 5 6; do
		pf_drop_caches
		pf_cache_hold
		(check_cold; cat "$d/canary" >/dev/null; "$1"); rc=$?
		pf_cache_release
		[ $rc -eq 0 ] && return 0
		read -r r t < <("$TOOLS/pf_mincore" "$d/canary")
		if [ "$r" != "$t" ]; then
			dropped=$((dropped + 1)); pf_note "$1: caches dropped or reclaimed meanwhile; again"; sleep 1
		else
			pf_note "$1: try $try failed; again, to tell noise from a bug"
		fi
	done
	[ $dropped -eq 6 ] && pf_skip "$1: caches dropped by something else on every try"
	pf_fail "$1: failed on every try"
}
# The real pipeline when it is there: a traced "boot" reading a few files, aggregated into a layout.
pipeline=0
if "$PREFETCHD" trace --help >/dev/null 2>&1 && "$PREFETCHD" aggregate --help >/dev/null 2>&1; then
	pf_drop_caches
	pf_trace_start "$d/trace" --mount "$mnt"
	for i in 3 9 27 5; do cat "$mnt/a/b/c/f$i" >/dev/null; done
	dd if="$mnt/d/e/big" of=/dev/null bs=4096 count=16 skip=256 status=none
	pf_trace_stop
	"$PREFETCHD" aggregate --output "$d/layout-traced" "$d/trace" >/dev/null 2>&1 ||
		pf_fail "pipeline: aggregate"
	pipeline=1
fi
phase_pipeline() {
	local out i
	out=$(timeout 60 "$PREFETCHD" replay "$d/layout-traced" --medium rotational --config "$d/no-config") ||
		pf_fail "pipeline: replay exited $?"
	pf_note "pipeline: $out" >&2
	[[ $out == *" 0 skipped "* ]] || pf_fail "pipeline: '$out'"
	for i in $(seq 50); do
		miss=''
		for f in 3 9 27 5; do
			read -r r t < <("$TOOLS/pf_mincore" "$mnt/a/b/c/f$f")
			[ "$r" = "$t" ] || miss="f$f: $r of $t pages"
		done
		read -r r t < <("$TOOLS/pf_mincore" "$mnt/d/e/big" $((256 * 4096)) $((16 * 4096)))
		[ "$r" = "$t" ] || miss="big: $r of $t pages"
		[ -n "$miss" ] || break
		sleep 0.1
	done
	[ -z "$miss" ] || pf_fail "pipeline: not resident after replay: $miss"
	[ "$(resident "$mnt/a/b/c/f4")" = 0 ] || pf_fail "pipeline: an untraced file was read"
}

run_phase phase_rotational
run_phase phase_fiemap
run_phase phase_ssd
run_phase phase_no_timeout
if [ $pipeline = 1 ]; then run_phase phase_pipeline; else pf_note "no prefetchd trace/aggregate: pipeline phase left out"; fi

# REPLAY_IDLE_IO=1: once init's files are in, the replaying thread asks for the idle I/O class (on a disk and on
# slow flash); without the key it never changes its class.  Seen in its system calls (strace -f).
command -v strace >/dev/null || pf_skip "needs strace for REPLAY_IDLE_IO's check (the rest passed)"
printf 'REPLAY_IDLE_IO=1\n' >"$d/idle-config"
for medium in rotational slow-flash; do
	for conf in idle-config no-config; do
		# LeakSanitizer (make check SANITIZE=1) cannot run under a tracer: no leak check for these two runs
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -e trace=ioprio_set -o "$d/strace-$conf" \
			"$PREFETCHD" replay "$d/layout" --medium $medium --config "$d/$conf" >/dev/null 2>"$d/err" ||
			pf_fail "REPLAY_IDLE_IO: replay ($medium, $conf) exited $?: $(cat "$d/err")"
	done
	grep -q 'ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) = 0' "$d/strace-idle-config" ||
		pf_fail "REPLAY_IDLE_IO=1, $medium: the replay did not take the idle I/O class: $(cat "$d/strace-idle-config")"
	! grep -q 'ioprio_set' "$d/strace-no-config" || pf_fail "no REPLAY_IDLE_IO, $medium: the replay changed its I/O class"
done
pf_note "REPLAY_IDLE_IO=1: the replay takes the idle I/O class (rotational, slow flash); without it, never"
exit 0
