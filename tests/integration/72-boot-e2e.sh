#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# End to end without a reboot: three scripted "boots" of a loop-mounted ext4 image through 'prefetchd boot' /
# 'prefetchd stop' (the first with no layout, the next two replaying it), then:
#  - three traces, a layout holding exactly the files the boots read, three boot-time records (prefetch 0 1 1,
#    boot end from the stop script's file), 'prefetchd report' table and SVG;
#  - prefetchd traces at nice 19 (it yields the CPU to the boot);
#  - cold read vs replay: after the replay the boot's files are resident (mincore, asserted) and the read
#    time before/after is reported;
#  - prefetch-reorder on the unmounted image (fsck clean, data unchanged, layout seeks before/after), then a
#    fourth boot with the reorder armed by the shutdown hook: recorded as replay+reorder;
#  - early-boot buffer: a boot whose PREFETCH_DIR is not writable buffers in the runtime dir, and the next
#    boot moves it over;
#  - what a boot writes (issue #17, flash wears and an SD card charges a whole erase block per write): the state
#    dir's files written per boot (new or replaced files whole, boottime.log by what it grew) and the kernel's
#    write_bytes of the boot's processes; a boot whose merged layout is the one on disk but for its creation
#    time and first-touch means leaves it as it was (same inode, not rewritten) and writes its trace and its
#    boot record only.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 96M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"

# A boot's file set: 40 files the boot reads (16..400 KiB, 6 MiB), written interleaved with files it never
# reads so that they are scattered; the boot reads them in an order unlike their creation order.
mkdir -p "$mnt/usr/lib" "$mnt/etc" "$mnt/var/cache"
boot_files=()
for i in $(seq 1 40); do
	f=$mnt/usr/lib/lib$i.so
	head -c $(((i * 37 % 25 + 1) * 16384)) /dev/urandom >"$f"
	head -c 131072 /dev/urandom >"$mnt/var/cache/junk$i"
	boot_files+=("$f")
done
echo "hostname" >"$mnt/etc/hostname"
boot_files+=("$mnt/etc/hostname")
order=()
for i in $(seq 0 40); do order+=("${boot_files[$(((i * 17) % 41))]}"); done
sync
sums=$(pf_checksums "$mnt")

conf=$tmp/prefetch.conf
write_conf() { # extra lines
	cat >"$conf" <<EOF
PREFETCH_DIR=$tmp/state
SELF_CHECK_INTERVAL=0
PREFETCH_RUNTIME_DIR=$tmp/run
TRACE_MOUNTS=$mnt
LOGIN_TRACING_DELAY=0
TRACE_TIMEOUT=60
REPLAY_TIMEOUT=30
$*
EOF
}
write_conf
cold() { umount "$mnt" && mount "$dev" "$mnt" || pf_fail "remount (drop the page cache of $mnt)"; }
resident() { fincore -b -n -o RES "$@" | awk '{ s += $1 } END { print s + 0 }'; }
bytes() { du -cb "$@" | tail -1 | cut -f1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
total=$(bytes "${boot_files[@]}")

# The state dir's files as "inode size mtime name", and what a boot wrote between two such lists: a file that is
# new or has another inode was written whole, one that grew in place (boottime.log) by what it grew.
state_files() { find "$tmp/state" -type f -printf '%i %s %T@ %P\n' | sort -k4; }
written() { # BEFORE AFTER -> "name bytes" per written file, then "total bytes"
	awk -v before="$1" 'FILENAME == before { ino[$4] = $1; size[$4] = $2; mt[$4] = $3; next }
	     { w = 0
	       if (!($4 in ino) || ino[$4] != $1) w = $2
	       else if (mt[$4] != $3) w = $2 > size[$4] ? $2 - size[$4] : $2
	       if (w) { print $4, w; t += w } }
	     END { print "total", t + 0 }' "$1" "$2"
}
# The kernel's count of bytes this shell's reaped children dirtied for writing (page by page).
shell_write_bytes() { awk '$1 == "write_bytes:" { print $2 }' /proc/$$/io; }

boot() { # N: one scripted boot
	cold
	state_files >"$tmp/state$1.before" 2>/dev/null || :
	pf_boot_start "$conf" "$tmp/run" "$tmp/boot$1.log"
	local pid=$PF_BOOT_PID i
	# Tracing yields the CPU to the boot (the main thread's nice value, field 19 of stat).
	for ((i = 0; i < 40; i++)); do [ "$(awk '{ print $19 }' /proc/$pid/stat)" = 19 ] && break; sleep 0.05; done
	[ "$(awk '{ print $19 }' /proc/$pid/stat)" = 19 ] || pf_fail "boot $1: tracing at nice $(awk '{ print $19 }' /proc/$pid/stat)"
	# A real boot runs long enough for the replay to get going; this one is over in milliseconds, so let the
	# replay (if there is a layout) pull the files in first (bounded: other tests may drop the cache).
	if [ -s "$tmp/state/layout" ]; then
		for ((i = 0; i < 60; i++)); do
			[ "$(resident "${boot_files[@]}")" -ge $((total * 9 / 10)) ] && break
			sleep 0.05
		done
	fi
	cat "${order[@]}" >/dev/null
	cut -d' ' -f1 /proc/uptime >"$tmp/run/boot-end" # what the stop script does at the end of the runlevel
	# A child's I/O counts join its parent's when it is reaped: from here to the wait that is prefetchd boot's
	# (its log lines to bootN.log included) and prefetchd stop's (none).
	local wb0
	wb0=$(shell_write_bytes)
	pf_boot_stop "$tmp/run" "$tmp/boot$1.log"
	local wb=$(($(shell_write_bytes) - wb0))
	grep -qi "error" "$tmp/boot$1.log" && { cat "$tmp/boot$1.log"; pf_fail "boot $1 logged an error"; }
	state_files >"$tmp/state$1.after"
	written "$tmp/state$1.before" "$tmp/state$1.after" >"$tmp/written$1"
	echo "write_bytes $wb" >>"$tmp/written$1"
	return 0
}
# One line on what boot N wrote: the state dir's files and the kernel's count.
written_note() { pf_note "boot $1 wrote: $(tr '\n' ' ' <"$tmp/written$1")"; }

for n in 1 2 3; do boot $n; done
for n in 1 2 3; do written_note $n; done
# Every boot writes its trace and its boot record; from the second on the layout (new traces, new content).
for n in 1 2 3; do
	grep -q '^traces/trace-.*\.pf [1-9]' "$tmp/written$n" && grep -q '^boottime.log [1-9]' "$tmp/written$n" &&
		grep -q '^layout [1-9]' "$tmp/written$n" || pf_fail "boot $n: trace, record or layout not written: $(cat "$tmp/written$n")"
done
grep -q "first traced boot" "$tmp/boot1.log" || pf_fail "boot 1 should find no layout"
grep -q "replay: [1-9][0-9]* files" "$tmp/boot2.log" || { cat "$tmp/boot2.log"; pf_fail "boot 2 did not replay"; }
[ "$(ls "$tmp/state/traces" | grep -c '^trace-.*\.pf$')" -eq 3 ] || pf_fail "want 3 traces: $(ls "$tmp/state/traces")"
[ -s "$tmp/state/layout" ] || pf_fail "no layout"
"$PREFETCHD" dump --files "$tmp/state/layout" >"$tmp/layout.txt" || pf_fail "dump layout"
for f in "${boot_files[@]}"; do grep -q "${f#$mnt}\$" "$tmp/layout.txt" || pf_fail "layout lacks ${f#$mnt}"; done
grep -q "junk" "$tmp/layout.txt" && pf_fail "layout holds files the boots never read"
recs=$(grep -v '^#' "$tmp/state/boottime.log")
[ "$(echo "$recs" | wc -l)" -eq 3 ] || pf_fail "want 3 boot records: $recs"
[ "$(echo "$recs" | awk '{ printf "%s%s", $5, $4 == "file" ? "" : "?" }')" = "011" ] ||
	pf_fail "records: want prefetch 0 1 1, boot end from the file: $recs"
head -1 "$tmp/state/boottime.log" | grep -qx "# prefetch boottime log, format 1" || pf_fail "boottime.log header"
# where the boot still waits: unknown without a replay; with one, how many of the files it used (field 20) the
# boot opened before the replay had read them, and their MiB
[ "$(echo "$recs" | awk '{ ok = $5 ? ($27 >= 0 && $27 <= $20 && $28 >= 0 && ($27 > 0 || $28 == 0)) : ($27 == -1 && $28 == -1)
	printf "%d", ok }')" = 111 ] || pf_fail "late_files/late_mib columns: $recs"
grep -q "of the layout's files the boot opened, [0-9]* (.* MiB) before the replay had read them" "$tmp/boot2.log" ||
	pf_fail "boot 2's log does not say how many files it opened before the replay read them"

"$PREFETCHD" report --config "$conf" --svg "$tmp/report.svg" >"$tmp/report.txt" || pf_fail "prefetchd report"
grep -q "^trace  *1 " "$tmp/report.txt" && grep -q "^replay  *2 " "$tmp/report.txt" || { cat "$tmp/report.txt"; pf_fail "report table"; }
grep -q "</svg>" "$tmp/report.svg" && [ "$(grep -c 'class="point"' "$tmp/report.svg")" -eq 3 ] || pf_fail "report SVG"
pf_note "report after 3 boots:"
sed 's/^/    /' "$tmp/report.txt"

# Cold read vs read after a replay: residency is what replay guarantees; the time depends on the disk.
cold
[ "$(resident "${boot_files[@]}")" -lt $((total / 10)) ] || pf_fail "files resident after dropping the cache"
t0=$(now_ms); cat "${order[@]}" >/dev/null; cold_ms=$(($(now_ms) - t0))
# Replay issues readahead, which completes asynchronously: poll until resident.  Other tests on this machine may
# drop the page cache at any moment (vm/drop_caches is global): retry the whole cold -> replay -> check.
for try in 1 2 3 4 5 6; do
	cold
	t0=$(now_ms)
	"$PREFETCHD" replay "$tmp/state/layout" --config "$conf" >"$tmp/replay.txt" || pf_fail "prefetchd replay"
	replay_ms=$(($(now_ms) - t0))
	for ((i = 0; i < 100; i++)); do
		res=$(resident "${boot_files[@]}")
		[ "$res" -ge $((total * 95 / 100)) ] && break
		sleep 0.05
	done
	resident_ms=$(($(now_ms) - t0))
	[ "$res" -ge $((total * 95 / 100)) ] && break
done
[ "$res" -ge $((total * 95 / 100)) ] || pf_fail "after replay only $res of $total bytes resident ($(cat "$tmp/replay.txt"))"
[ "$(resident "$mnt"/var/cache/junk*)" -lt $((total / 4)) ] || pf_fail "replay read files the boot never read"
t0=$(now_ms); cat "${order[@]}" >/dev/null; warm_ms=$(($(now_ms) - t0))
pf_note "boot files $((total / 1024)) KiB: cold read ${cold_ms} ms; replay returned in ${replay_ms} ms, all resident after ${resident_ms} ms (try $try), then read ${warm_ms} ms"

# Reorder on the unmounted filesystem, when the tool is there.
seeks() { "$PREFETCHD" dump "$1" | grep -i "seek" | head -2 | tr '\n' ' '; }
if "$REORDER" --help 2>&1 | grep -q -- "--layout"; then
	before=$(seeks "$tmp/state/layout")
	umount "$mnt" || pf_fail "umount for reorder"
	"$REORDER" --config "$conf" --layout "$tmp/state/layout" --time-budget 30 "$dev" >"$tmp/reorder.txt" 2>&1
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$tmp/reorder.txt"; pf_fail "prefetch-reorder exit $rc"; }
	pf_fsck_clean "$dev"
	mount "$dev" "$mnt" || pf_fail "mount after reorder"
	[ "$(pf_checksums "$mnt")" = "$sums" ] || pf_fail "data changed by the reorder"
	pf_note "reorder (exit $rc): $(tail -1 "$tmp/reorder.txt")"
	reordered=1
else
	pf_note "prefetch-reorder not implemented here: reorder part skipped"
	reordered=0
fi

# Boot 4: the shutdown hook armed a reorder (ENABLE_FILE_REORDERING=1) -> recorded as replay+reorder.  The
# image was just reordered: asked for its plan, prefetch-reorder finds nothing worth a move and the hook does not
# arm, saying why in reorder.log; without the plan (PREFETCH_NO_PLAN, as before plans were asked) it arms.
write_conf "ENABLE_FILE_REORDERING=1"
if [ "$reordered" = 1 ]; then
	PREFETCH_DEFAULTS=$conf PREFETCH_REORDER=$REORDER PREFETCH_ROOT=$mnt PREFETCH_KMSG=$tmp/kmsg \
		"$GEN/systemd/system-shutdown/prefetch-reorder" arm 2>/dev/null || pf_fail "hook arm"
	[ ! -e "$tmp/state/reorder-armed" ] || pf_fail "armed a reorder of a layout already in place"
	grep -q "not armed .*: \(nothing to move\|not worth a move\)" "$tmp/state/reorder.log" ||
		pf_fail "reorder.log does not say why it was not armed: $(cat "$tmp/state/reorder.log")"
fi
PREFETCH_NO_PLAN=1 PREFETCH_DEFAULTS=$conf PREFETCH_REORDER=$REORDER PREFETCH_ROOT=$mnt PREFETCH_KMSG=$tmp/kmsg \
	"$GEN/systemd/system-shutdown/prefetch-reorder" arm 2>/dev/null || pf_fail "hook arm"
[ -s "$tmp/state/reorder-armed" ] || pf_fail "hook did not arm (marker missing)"
grep -q " chunk 2000$" "$tmp/state/reorder-armed" || pf_fail "the marker lacks the chunk size: $(cat "$tmp/state/reorder-armed")"
boot 4
[ "$(grep -v '^#' "$tmp/state/boottime.log" | tail -1 | awk '{ print $5 $6, $22, $23 }')" = "11 1 2000" ] ||
	pf_fail "boot 4 not recorded as replay+reorder, generation 1, chunk 2000: $(tail -1 "$tmp/state/boottime.log")"
[ ! -e "$tmp/state/reorder-armed" ] || pf_fail "the reorder marker should count for one boot only"
grep -q "recorded after reorder armed" "$tmp/state/reorder.log" || pf_fail "reorder.log"
[ "$reordered" = 1 ] && pf_note "layout seeks before reorder: $before; after boot 4: $(seeks "$tmp/state/layout")"
"$PREFETCHD" report --config "$conf" >"$tmp/report.txt" || pf_fail "report after boot 4"
grep -q "^replay+reorder  *1 " "$tmp/report.txt" || { cat "$tmp/report.txt"; pf_fail "report lacks the replay+reorder boot"; }
[ "$(ls "$tmp/state/traces" | grep -c '^trace-')" -eq 4 ] || pf_fail "traces: want 4 kept (count + 2 = 5 at most)"

# Early-boot buffer: PREFETCH_DIR not writable (a read-only bind mount) -> pending in the runtime dir; the
# next boot, with it writable, moves trace and record over.
write_conf
mkdir -p "$tmp/rostate"
mount --bind "$tmp/state" "$tmp/rostate" && pf_cleanup_add "umount '$tmp/rostate'"
mount -o remount,bind,ro "$tmp/rostate" || pf_fail "read-only bind mount"
sed -i "s|^PREFETCH_DIR=.*|PREFETCH_DIR=$tmp/rostate|" "$conf"
cold
"$PREFETCHD" boot --config "$conf" >"$tmp/boot5.log" 2>&1 &
pid=$!
pf_kill_later $pid
for ((i = 0; i < 100; i++)); do [ -s "$tmp/run/prefetchd.pid" ] && break; sleep 0.05; done
cat "${order[@]}" >/dev/null
"$PREFETCHD" stop --pid-file "$tmp/run/prefetchd.pid" --timeout 60 >/dev/null || pf_fail "boot 5 stop"
[ "$(ls "$tmp/run/pending/traces" | grep -c '^trace-')" -eq 1 ] || { cat "$tmp/boot5.log"; pf_fail "no trace buffered"; }
grep -q "not writable yet" "$tmp/boot5.log" || pf_fail "boot 5 should say it buffers"
kill "$pid" # ends its wait for the state dir
wait "$pid" || pf_fail "boot 5 exit status $?"
sed -i "s|^PREFETCH_DIR=.*|PREFETCH_DIR=$tmp/state|" "$conf"
boot 6
grep -q "moved 2 buffered item" "$tmp/boot6.log" || { cat "$tmp/boot6.log"; pf_fail "boot 6 did not move the buffer"; }
[ "$(grep -vc '^#' "$tmp/state/boottime.log")" -eq 6 ] || pf_fail "want 6 records after the buffer moved"
[ -z "$(ls "$tmp/run/pending/traces")" ] || pf_fail "buffer not emptied"

# An unchanged layout is not written again.  The replay makes the order the tracer sees vary from boot to boot
# here (the boot's reads race the replay's), so boots 7 to 9 run without it (ENABLE_REPLAY=0: the files are
# read cold in the boot's order) and merge the last 2 traces: boot 8's layout (traces 7, 8) and boot 9's
# (8, 9) hold the same files in the same order, differing only in creation time and first-touch means.  Boot
# 9 leaves the layout as it was (same inode, the log says so) and writes its trace, once and whole, and its
# record only.
write_conf "ENABLE_REPLAY=0
TRACE_AGGREGATION_COUNT=2"
boot 7
boot 8
written_note 8
layout_ino=$(stat -c %i "$tmp/state/layout")
"$PREFETCHD" dump --files "$tmp/state/layout" >"$tmp/layout8.txt" || pf_fail "dump layout"
boot 9
written_note 9
grep -q "(unchanged, not rewritten)" "$tmp/boot9.log" || {
	"$PREFETCHD" dump --files "$tmp/state/layout" | diff <(cut -f1-4,6- "$tmp/layout8.txt") <(cut -f1-4,6-) | head -20
	pf_fail "boot 9: the layout should be unchanged"
}
[ "$(stat -c %i "$tmp/state/layout")" = "$layout_ino" ] || pf_fail "boot 9 rewrote an unchanged layout"
grep -q '^layout ' "$tmp/written9" && pf_fail "boot 9 wrote layout bytes: $(cat "$tmp/written9")"
[ "$(grep -c '^traces/trace-.*\.pf [1-9]' "$tmp/written9")" -eq 1 ] || pf_fail "boot 9: want one trace written: $(cat "$tmp/written9")"
# The files it wrote are its trace and its record, nothing else (the self-check is off here).
[ "$(grep -vcE '^(traces/trace-|boottime\.log |total |write_bytes )' "$tmp/written9")" -eq 0 ] ||
	pf_fail "boot 9 wrote other files: $(cat "$tmp/written9")"
exit 0
