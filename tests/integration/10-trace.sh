#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetchd trace / stop / dump on a real ext4 loop filesystem: the trace holds exactly the files other processes
# read, in first-touch order, with exactly the page ranges read (readahead off), parent directories before their
# files, physical blocks known; untouched files and prefetchd's own reads are absent; reading the same files 20
# times gives the same trace, and the repeated opens are not delivered as events (ignore marks); the same in fd
# mode (PREFETCH_TRACE_FID=0, the fallback where fanotify cannot name files by handle).  Also: --timeout, a second
# tracer refused, stop with none running, stop of a tracer that could not store its trace fails with the reason, bad --mount / no root / corrupt dump files give clear errors.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 64M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"

mkdir "$mnt/d" "$mnt/untouched"
head -c $((64 * 4096)) /dev/urandom >"$mnt/a"
head -c $((64 * 4096)) /dev/urandom >"$mnt/b"
head -c 10000 /dev/urandom >"$mnt/d/c"
head -c 8192 /dev/urandom >"$mnt/untouched/u"
head -c 16384 /dev/urandom >"$mnt/own"
# Not root's and private: after the tracer drops to CAP_DAC_READ_SEARCH + CAP_FOWNER it must still open p/q by
# path (parent walk) and see r's page-cache residency (to others than the owner or CAP_FOWNER, mincore claims
# every page resident).
mkdir -p "$mnt/p/q"
head -c $((16 * 4096)) /dev/urandom >"$mnt/p/q/r"
chown 65534:65534 "$mnt/p" "$mnt/p/q/r"
chmod 0700 "$mnt/p"
chmod 0600 "$mnt/p/q/r"
sync

# Reads pull exactly the pages asked for; restored before the loop device goes back to others.
ra=/sys/block/$(basename "$dev")/queue/read_ahead_kb
old_ra=$(cat "$ra")
pf_cleanup_add "echo $old_ra > $ra"
echo 0 >"$ra"

uncache() { # unmounting drops this filesystem's page cache (and only it)
	umount "$mnt" || pf_fail "umount $mnt"
	mount "$dev" "$mnt" || pf_fail "remount $mnt"
}

wait_marks() { # PID N: until the tracer's fanotify group holds N inode ignore marks (its /proc fdinfo lists them)
	local n=0 try
	for ((try = 0; try < 200; try++)); do
		n=$(pf_fanotify_fdinfo "$1" | grep -c '^fanotify ino:.* ignored_mask:[1-9a-f]')
		[ "$n" -ge "$2" ] && return 0
		sleep 0.05
	done
	pf_fail "the tracer placed no $2 ignore marks within 10 s ($n)"
}

# extents of one path from a dump, merged when adjacent: "offset+length ..."
ranges() { # DUMP PATH
	awk -F'\t' -v p="$2" '!/^#/ && $1 == p {
		if (n && $2 == end) { end = $2 + $3; len[n] += $3; next }
		n++; off[n] = $2; len[n] = $3; end = $2 + $3 }
		END { for (i = 1; i <= n; i++) printf "%s%d+%d", (i > 1 ? " " : ""), off[i], len[i] }' "$1"
}

# How this kernel's fanotify will name files: by handle (FID mode, 5.9+), else by fd (the summary says why).
fid_mode() {
	local have
	have=$(uname -r | cut -d- -f1)
	if [ "$(printf '%s\n' 5.9 "$have" | sort -V | head -1)" = 5.9 ]; then echo handles; else echo "fds ("; fi
}

# ---- the main trace: workload, stop, check ----
attempt() {
	uncache
	pf_trace_start "$tmp/t" --mount "$mnt"
	# the same reads REPEAT times: the trace must not change, and (ignore marks on recorded inodes) the
	# re-opens must not reach the tracer as events
	local i
	for ((i = 0; i < REPEAT; i++)); do
		cat "$mnt/a" >/dev/null
		dd if="$mnt/b" of=/dev/null bs=4096 skip=10 count=3 2>/dev/null
		ls "$mnt/d" >/dev/null
		cat "$mnt/d/c" >/dev/null
		dd if="$mnt/p/q/r" of=/dev/null bs=4096 skip=2 count=2 2>/dev/null
		# FID mode marks a file at its second event, when the tracer gets to it: until its marks are in
		# place, a busy machine's later rounds would still be events (the count would measure scheduling)
		[ "$i" = 1 ] && wait_marks "$PF_TRACE_PID" 5
	done
	pf_trace_stop
	grep -q "finished" "$tmp/t.stop" || pf_fail "stop: $(cat "$tmp/t.stop")"
	[ ! -e "$tmp/t.pid" ] || pf_fail "pid file left behind"
	"$PREFETCHD" dump "$tmp/t" >"$tmp/dump" || pf_fail "dump of the trace failed"
	"$PREFETCHD" dump --files "$tmp/t" >"$tmp/files" || pf_fail "dump --files failed"
	# 5 opens per round; only the first round's (plus prefetchd's own directory opens) may be events
	local events
	events=$(sed -n 's/^trace: .* \([0-9]*\) events (.*/\1/p' "$tmp/t.out")
	[ -n "$events" ] || pf_fail "no event count in the summary: $(cat "$tmp/t.out")"
	[ "$events" -le 20 ] || pf_fail "$events events for $((5 * REPEAT)) opens of 5 files: re-opens not ignored"
	pf_note "$events events for $((5 * REPEAT)) opens"
}

check_order_and_flags() {
	local order
	order=$(awk -F'\t' '!/^#/ { print $8 }' "$tmp/files" | tr '\n' ' ')
	[ "$order" = "$mnt $mnt/a $mnt/b $mnt/d $mnt/d/c $mnt/p $mnt/p/q $mnt/p/q/r " ] || pf_fail "files/order: got '$order'"
	[ "$(awk -F'\t' -v p="$mnt/d" '$8 == p { print $2 }' "$tmp/files")" = "d----" ] || pf_fail "d is not a directory entry"
	[ "$(awk -F'\t' -v p="$mnt" '$8 == p { print $2 }' "$tmp/files")" = "d----" ] || pf_fail "mount root not recorded as dir"
	grep -q "untouched" "$tmp/dump" && pf_fail "an untouched file or directory is in the trace"
	grep -q "$mnt/own" "$tmp/dump" && pf_fail "a file nobody read is in the trace"
	awk -F'\t' '!/^#/ && $5 == "-" { bad = 1 } END { exit bad }' "$tmp/dump" || pf_fail "physical block unknown somewhere"
	grep -q '^# kind: trace$' "$tmp/dump" || pf_fail "kind"
	grep -q '^# flags: none$' "$tmp/dump" || pf_fail "trace flagged incomplete"
	grep -q "^# filesystem 0: uuid $(blkid -s UUID -o value "$dev"), mountpoint $mnt, medium [a-z-]*, block size 4096, ranges: .*$" \
		"$tmp/dump" || pf_fail "filesystem line: $(grep '^# filesystem' "$tmp/dump")"
	grep -q '^# files: 4 ' "$tmp/dump" || pf_fail "file count: $(grep '^# files' "$tmp/dump")"
	grep -q '^# dirs: 4$' "$tmp/dump" || pf_fail "dir count"
}

check_ranges() { # returns 1 on a range mismatch (pages evicted by someone's drop_caches: retried)
	local got ok=0
	# extent order = access order: files appear in first-touch order
	got=$(awk -F'\t' '!/^#/ && !seen[$1]++ { print $1 }' "$tmp/dump" | tr '\n' ' ')
	[ "$got" = "$mnt $mnt/a $mnt/b $mnt/d $mnt/d/c $mnt/p $mnt/p/q $mnt/p/q/r " ] || { echo "extent order: $got"; ok=1; }
	got=$(ranges "$tmp/dump" "$mnt/a"); [ "$got" = "0+262144" ] || { echo "a: $got"; ok=1; }
	got=$(ranges "$tmp/dump" "$mnt/b"); [ "$got" = "40960+12288" ] || { echo "b: $got"; ok=1; }
	got=$(ranges "$tmp/dump" "$mnt/d/c"); [ "$got" = "0+10000" ] || { echo "d/c: $got"; ok=1; }
	got=$(ranges "$tmp/dump" "$mnt/d"); [ "$got" = "0+4096" ] || { echo "d: $got"; ok=1; }
	got=$(ranges "$tmp/dump" "$mnt/p/q"); [ "$got" = "0+4096" ] || { echo "p/q: $got"; ok=1; }
	got=$(ranges "$tmp/dump" "$mnt/p/q/r"); [ "$got" = "8192+8192" ] || { echo "p/q/r: $got"; ok=1; }
	return $ok
}

main_trace() { # MODE: what the summary says of how fanotify named the files
	local ok= try
	for try in 1 2 3; do
		attempt
		check_order_and_flags
		if check_ranges; then ok=1; break; fi
		pf_note "ranges differ (try $try), retrying: another test may have dropped caches"
		cat "$tmp/dump" >&2
	done
	[ -n "$ok" ] || pf_fail "page ranges differ from what was read"
	grep -q "fanotify: $1" "$tmp/t.out" || pf_fail "not '$1': $(cat "$tmp/t.out")"
	pf_note "main trace ok ($1): $(grep -v '^#' "$tmp/dump" | wc -l) extents"
}
REPEAT=20
# fd mode first (the fallback where FID mode is refused: older kernels, filesystems without handles), then the
# default (FID mode where the kernel has it): the same trace but for the first-touch times
export PREFETCH_TRACE_FID=0
main_trace "fds (PREFETCH_TRACE_FID=0)"
unset PREFETCH_TRACE_FID
grep -v '^#' "$tmp/files" | cut -f1-4,6- >"$tmp/files.fd"
main_trace "$(fid_mode)"
grep -v '^#' "$tmp/files" | cut -f1-4,6- | diff "$tmp/files.fd" - >&2 || pf_fail "fd and FID mode traces differ"
# the physical block of b's extent is where FIEMAP puts page 10 of b
phys_b=$(awk -F'\t' -v p="$mnt/b" '$1 == p { print $5 }' "$tmp/dump")
want_b=$(filefrag -e -b4096 "$mnt/b" | awk '/^ *[0-9]+:/ { gsub(/\.\.|:/, " "); $0 = $0
	if ($2 <= 10 && 10 <= $3) print $4 + 10 - $2 }')
[ "$phys_b" = "$want_b" ] || pf_fail "physical block of b: $phys_b, filefrag says $want_b"

# ---- prefetchd's own reads (a thread of the tracing process) are not recorded; a child's are ----
uncache
"$TOOLS/trace_inproc" "$mnt" "$tmp/t2" "$mnt/own" "$mnt/a" >"$tmp/inproc.out" || pf_fail "trace_inproc failed"
# (file lists, not extents: whether pages are still resident depends on other tests' drop_caches)
"$PREFETCHD" dump --files "$tmp/t2" >"$tmp/files2" || pf_fail "dump t2"
grep -q "	$mnt/a$" "$tmp/files2" || pf_fail "the child's file is missing from the in-process trace"
grep -q "	$mnt/own$" "$tmp/files2" && pf_fail "a file read by the tracing process itself is in the trace"
grep -q "own_events=[1-9]" "$tmp/inproc.out" || pf_fail "own events not counted: $(cat "$tmp/inproc.out")"

# ---- --timeout ends tracing by itself ----
start=$(date +%s%N)
"$PREFETCHD" trace --mount "$mnt" --output "$tmp/t3" --pid-file "$tmp/pid3" --timeout 1 >"$tmp/t3.out" ||
	pf_fail "trace --timeout failed"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -ge 900 ] && [ "$ms" -lt 5000 ] || pf_fail "--timeout 1 took $ms ms"
grep -q "^trace: 0 files, 0 dirs, 0 bytes" "$tmp/t3.out" || pf_fail "summary: $(cat "$tmp/t3.out")"
"$PREFETCHD" dump "$tmp/t3" >/dev/null || pf_fail "dump of the --timeout trace"

# ---- one tracer per pid file; stop with none running ----
pf_bg "$PREFETCHD" trace --mount "$mnt" --output "$tmp/t4" --pid-file "$tmp/pid4"
pf_wait_pidfile "$tmp/pid4"
cp /bin/true "$mnt/true" && "$mnt/true" || pf_fail "running a program from the test filesystem"
out=$("$PREFETCHD" trace --mount "$mnt" --output "$tmp/t5" --pid-file "$tmp/pid4" 2>&1) && pf_fail "second tracer accepted"
[[ $out == *"another tracer is running (pid $PF_BG_PID"* ]] || pf_fail "second tracer message: $out"
# a tracer that cannot finish (stopped): 'stop' gives up after --timeout with a message
t4=$PF_BG_PID
kill -STOP "$t4"
pf_kill_later $t4 CONT # runs before pf_bg's kill+wait, which would hang on a stopped process
out=$("$PREFETCHD" stop --pid-file "$tmp/pid4" --timeout 1 2>&1) && pf_fail "stop of a stuck tracer succeeded"
[[ $out == *"tracer (pid $t4) did not finish within 1 s"* ]] || pf_fail "stop timeout message: $out"
kill -CONT "$t4"  # the SIGTERM is pending: it finishes now
wait "$t4" || pf_fail "tracer t4 exited with $?"
[ -s "$tmp/t4" ] || pf_fail "stopped tracer wrote no trace"
"$PREFETCHD" dump --files "$tmp/t4" | grep -q "^[0-9]*	-x...	.*	$mnt/true$" || pf_fail "executed file not flagged x"
out=$("$PREFETCHD" stop --pid-file "$tmp/pid4") || pf_fail "stop with none running should exit 0"
[[ $out == *"no tracer running"* ]] || pf_fail "stop message: $out"

# ---- a tracer that cannot store its trace: 'stop' says so and fails (the stop unit shows it) ----
mkdir "$tmp/gone"
pf_bg "$PREFETCHD" trace --mount "$mnt" --output "$tmp/gone/t6" --pid-file "$tmp/pid6"
pf_wait_pidfile "$tmp/pid6"
t6=$PF_BG_PID
rmdir "$tmp/gone" # its output directory goes away while it traces
out=$("$PREFETCHD" stop --pid-file "$tmp/pid6" 2>&1); rc=$?
[ $rc -eq 1 ] || pf_fail "stop of a tracer that stored nothing: exit $rc, want 1 ($out)"
[[ $out == "prefetchd: stop: tracer (pid $t6) finished but stored no trace: cannot write $tmp/gone/t6: No such file or directory" ]] ||
	pf_fail "stop message for a lost trace: $out"
wait "$t6"; [ $? -eq 1 ] || pf_fail "tracer t6: want exit 1"

# ---- clear errors ----
out=$("$PREFETCHD" trace --mount "$tmp/nope" --output "$tmp/x" --pid-file "$tmp/px" 2>&1) && pf_fail "missing --mount accepted"
[[ $out == *"$tmp/nope: No such file or directory"* ]] || pf_fail "missing --mount message: $out"
out=$("$PREFETCHD" trace --mount /proc --output "$tmp/x" --pid-file "$tmp/px" 2>&1) && pf_fail "--mount /proc accepted"
[[ $out == *"not on a block-device filesystem"* ]] || pf_fail "--mount /proc message: $out"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$PREFETCHD" trace --mount / --output /tmp/x --pid-file /tmp/x 2>&1) && pf_fail "trace as nobody accepted"
[[ $out == *"needs root"* ]] || pf_fail "no-root message: $out"
"$PREFETCHD" trace --mount "$mnt" 2>/dev/null; [ $? -eq 2 ] || pf_fail "trace without --output: want exit 2"

cp "$tmp/t" "$tmp/trunc"; truncate -s 100 "$tmp/trunc"
out=$("$PREFETCHD" dump "$tmp/trunc" 2>&1) && pf_fail "truncated trace dumped"
[[ $out == *"$tmp/trunc: file is truncated"* ]] || pf_fail "truncated message: $out"
cp "$tmp/t" "$tmp/flip"; printf '\xff' | dd of="$tmp/flip" bs=1 seek=70 conv=notrunc 2>/dev/null
out=$("$PREFETCHD" dump "$tmp/flip" 2>&1) && pf_fail "corrupt trace dumped"
[[ $out == *"checksum mismatch"* ]] || pf_fail "corrupt message: $out"
out=$("$PREFETCHD" dump "$tmp/missing" 2>&1) && pf_fail "missing file dumped"
[[ $out == *"No such file or directory"* ]] || pf_fail "missing message: $out"
exit 0
