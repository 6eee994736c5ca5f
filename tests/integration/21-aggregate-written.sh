#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Files the boot writes while it is traced (a journal, a log it appends to): three traced "boots" of an ext4 loop
# filesystem each read a library and the head and tail of a log, then append to the log.  The traces flag the
# log written (dump: w) and not the library; the layout keeps the log although its size and mtime changed
# after every trace (a file changed between boots, not while traced, is still dropped); after one more append
# (the next boot's log is longer again), a cold replay reads the log's recorded ranges and counts nothing as
# changed; the reorder leaves the log where it is, with a reason of its own.  Before, every layout dropped such files as changed and the boot read them itself.  (What tells a
# write: a modification time at the end of tracing not before its start.)
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 32M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
mkdir "$mnt/var"
head -c $((256 << 10)) /dev/urandom >"$mnt/lib"
head -c $((128 << 10)) /dev/urandom >"$mnt/var/log"
head -c $((64 << 10)) /dev/urandom >"$mnt/between" # changed between boots only: dropped as before
sync

boot() { # N: a cold mount, the tracer, the boot's reads and its appends to the log
	local n=$1
	umount "$mnt" || pf_fail "umount $mnt"
	mount "$dev" "$mnt" || pf_fail "mount $dev $mnt"
	pf_trace_start "$tmp/t$n" --mount "$mnt"
	cat "$mnt/lib" "$mnt/between" >/dev/null || pf_fail "boot $n: reads"
	# as a journal daemon does: the header, the tail, then appends
	head -c 8192 "$mnt/var/log" >/dev/null && tail -c 8192 "$mnt/var/log" >/dev/null || pf_fail "boot $n: log reads"
	head -c $((16 << 10)) /dev/urandom >>"$mnt/var/log" || pf_fail "boot $n: append"
	sync
	pf_trace_stop
	echo "changed between boots" >>"$mnt/between"
}

flags() { # DUMP_FILES PATH
	awk -F'\t' -v p="$mnt/$2" '!/^#/ && $8 == p { print $2 }' "$1"
}

for n in 1 2 3; do boot "$n"; done
"$PREFETCHD" dump --files "$tmp/t3" >"$tmp/t3.files" || pf_fail "dump of trace 3"
[ "$(flags "$tmp/t3.files" var/log)" = "----w" ] || pf_fail "trace: the log not flagged written: $(flags "$tmp/t3.files" var/log)"
[ "$(flags "$tmp/t3.files" lib)" = "-----" ] || pf_fail "trace: the library flagged: $(flags "$tmp/t3.files" lib)"
[ "$(flags "$tmp/t3.files" between)" = "-----" ] || pf_fail "trace: a file not written while traced flagged: $(flags "$tmp/t3.files" between)"

# the shutdown's last lines, after the last trace: the log's size and mtime are not the trace's any more
echo "shutdown" >>"$mnt/var/log"
out=$("$PREFETCHD" aggregate --output "$tmp/layout" "$tmp/t1" "$tmp/t2" "$tmp/t3" 2>&1) || pf_fail "aggregate: $out"
pf_note "$out"
"$PREFETCHD" dump --files "$tmp/layout" >"$tmp/layout.files" || pf_fail "dump of the layout"
[ "$(flags "$tmp/layout.files" var/log)" = "----w" ] || pf_fail "layout: the log dropped or not flagged: $(cat "$tmp/layout.files")"
[ -z "$(flags "$tmp/layout.files" between)" ] || pf_fail "layout: the file changed between boots was kept"
[[ $out == *" 1 changed,"* ]] || pf_fail "aggregate summary: $out"
"$PREFETCHD" dump "$tmp/layout" | awk -F'\t' -v p="$mnt/var/log" '$1 == p { print $2, $3 }' >"$tmp/log.ranges"
[ -s "$tmp/log.ranges" ] || pf_fail "layout: no ranges for the log"
grep -q '^0 ' "$tmp/log.ranges" || pf_fail "layout: the log's header not among its ranges: $(cat "$tmp/log.ranges")"

# the next boot: the log is longer again; a cold replay reads the log's ranges and skips nothing
head -c $((16 << 10)) /dev/urandom >>"$mnt/var/log"
umount "$mnt" || pf_fail "umount"
# the reorder leaves it where it is, and says why (what the next boot appends lands elsewhere anyway)
out=$("$REORDER" --dry-run --layout "$tmp/layout" "$dev" 2>&1) || pf_fail "reorder --dry-run: $out"
[[ $out == *"1 written by every boot (a log): left where it is"* ]] || pf_fail "reorder: the log not skipped as written: $out"
pf_drop_caches
pf_cache_hold
mount -o ro "$dev" "$mnt" || pf_fail "mount"
out=$("$PREFETCHD" replay --medium rotational "$tmp/layout" 2>&1) || pf_fail "replay: $out"
pf_note "$out"
[[ $out == *" 0 skipped (0 missing, 0 changed)"* ]] || pf_fail "replay skipped files: $out"
missing=
for i in $(seq 50); do
	missing=
	while read -r o l; do
		read -r r t < <("$TOOLS/pf_mincore" "$mnt/var/log" "$o" "$l")
		[ "$r" = "$t" ] || missing="$o+$l: $r of $t pages"
	done <"$tmp/log.ranges"
	[ -z "$missing" ] && break
	sleep 0.1
done
pf_cache_release
[ -z "$missing" ] || pf_fail "replay: the log's range $missing resident"
echo "ok"
