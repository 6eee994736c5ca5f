#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A traced filesystem can be unmounted while tracing goes on: the tracer holds no file of it open (files are
# reopened by handle when tracing ends), so a plain umount succeeds.  The trace then marks that filesystem gone
# (header flag, its filesystem line in the dump, the tracer's warning) and keeps the other filesystem's files with
# their page ranges.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root

tmp=$(pf_tmpdir)
pf_mkfs "$tmp/a.img" 32M -b 4096
pf_mkfs "$tmp/b.img" 32M -b 4096
deva=$(pf_loop "$tmp/a.img")
devb=$(pf_loop "$tmp/b.img")
# b's UUID now: probing the device again after the umount below has come back empty (1 run in 15 under ASan)
uuidb=$(blkid -s UUID -o value "$tmp/b.img")
[ -n "$uuidb" ] || pf_fail "no UUID on $tmp/b.img"
pf_mount "$deva" "$tmp/a"
pf_mount "$devb" "$tmp/b"
mkdir "$tmp/a/d" "$tmp/b/d"
for i in 1 2 3; do
	head -c 65536 /dev/urandom >"$tmp/a/d/f$i"
	head -c 65536 /dev/urandom >"$tmp/b/d/f$i"
done
head -c 8192 /dev/urandom >"$tmp/a/late"
sync

pf_trace_start "$tmp/t" --mount "$tmp/a" --mount "$tmp/b"
tracer=$PF_TRACE_PID

cat "$tmp"/a/d/f* "$tmp"/b/d/f* >/dev/null
# a plain umount (not lazy), tried for up to 10 s: events still queued hold the mount until the tracer reads them
ok=
for ((i = 0; i < 50; i++)); do
	if umount "$tmp/b" 2>"$tmp/umount.err"; then ok=1; break; fi
	sleep 0.2
done
[ -n "$ok" ] || pf_fail "umount of a traced filesystem failed: $(cat "$tmp/umount.err"); fds: $(ls -l /proc/$tracer/fd | grep -c "$tmp/b")"
grep -q " $tmp/b " /proc/self/mountinfo && pf_fail "$tmp/b still mounted"
cat "$tmp/a/late" >/dev/null # tracing goes on for the other filesystem

pf_trace_stop
"$PREFETCHD" dump "$tmp/t" >"$tmp/dump" || pf_fail "dump failed"
"$PREFETCHD" dump --files "$tmp/t" >"$tmp/files" || pf_fail "dump --files failed"

grep -q "^# flags: incomplete (filesystem $tmp/b gone)$" "$tmp/dump" ||
	pf_fail "flags: $(grep '^# flags' "$tmp/dump")"
grep -q "^# filesystem [01]: uuid $uuidb, mountpoint $tmp/b, .*, gone (unmounted during tracing), ranges: .*$" \
	"$tmp/dump" || pf_fail "filesystem line of b: $(grep '^# filesystem' "$tmp/dump")"
grep "^# filesystem" "$tmp/dump" | grep "mountpoint $tmp/a," | grep -q gone && pf_fail "a marked gone"
grep -q "is incomplete (filesystem $tmp/b gone)" "$tmp/t.err" || pf_fail "no warning: $(cat "$tmp/t.err")"
# a's files, with their data; none of b's (it cannot be opened again)
for f in d/f1 d/f2 d/f3 late; do
	grep -q "^[0-9]*	-[-x]---	[0-9]*	[0-9]*	.*	$tmp/a/$f$" "$tmp/files" ||
		pf_fail "a/$f missing or metadata only: $(grep "$tmp/a/" "$tmp/files" | tr '\n' ';'); tracer: $(cat "$tmp/t.out" "$tmp/t.err")"
done
grep -q "	$tmp/b/" "$tmp/files" && pf_fail "a file of the unmounted filesystem is in the trace"
pf_note "umount during tracing ok: $(grep -c "	$tmp/a/" "$tmp/files") entries of a"
exit 0
