#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The pipeline on btrfs and XFS roots, with real fanotify: prefetchd trace while a "boot" reads files, aggregate,
# drop caches, replay; every page of the read files is resident afterwards (mincore).
#   btrfs: the root in subvolume @ and /home in @home, mounted apart as Fedora and Ubuntu do: both subvolumes
#          are traced (one record each, the filesystem's UUID, flagged a subvolume), the layout replays both, and
#          the replay's btrfs metadata pass asks for the tree items of their files and their data's checksums;
#          cold, its summary counts the tree blocks that read.  With @home not mounted (a replay from the
#          initramfs), its record is missing rather than taken for @, whose directory shows there.
#   XFS:   the same; the trace places the directories' blocks too (XFS_IOC_GETBMAPX: FIEMAP has no XFS
#          directories), and the replay's XFS metadata pass reads the inode clusters of the layout's files, then
#          the directories within the data sweep (the plan dump shows both kinds of step, the summary counts
#          their blocks).
# On both, prefetchd status and dump say what prefetch does there, and prefetch-reorder refuses in one line that
# says the replay still works there.  A local filesystem without a UUID (squashfs) is not traced: a trace of every
# mounted filesystem lists it with the reason, and status says it.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root
[ -x "$TOOLS/pf_mincore" ] || pf_fail "test tools not built (make tools)"
grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null
grep -qw xfs /proc/filesystems || modprobe xfs 2>/dev/null

tmp=$(pf_tmpdir)


# populate DIR TAG: a few directories of files of 8-200 KiB, written in an order unlike the reading order
populate() {
	local i
	mkdir -p "$1/usr/lib/$2" "$1/etc/$2"
	for i in $(seq 1 30); do
		head -c $(((i * 7919) % 200000 + 8192)) /dev/urandom >"$1/usr/lib/$2/lib$i.so"
		head -c $(((i * 104729) % 9000 + 100)) /dev/urandom >"$1/etc/$2/conf$i"
	done
}

# boot_reads ROOT...: the files the "boot" reads (whole), one per line
boot_reads() {
	local r i
	for r in "$@"; do
		for i in 29 3 17 8 22 1 12 26; do echo "$r/usr/lib/$(basename "$r")/lib$i.so"; echo "$r/etc/$(basename "$r")/conf$i"; done
	done
}

# run_pipeline NAME ROOT...: trace the reads of boot_reads, aggregate, replay cold; checks residency after
run_pipeline() {
	local name=$1 f r t; shift
	local w=$tmp/$name marks=()
	mkdir -p "$w"
	for r in "$@"; do marks+=(--mount "$r"); done
	boot_reads "$@" >"$w/reads"
	# The trace takes btrfs's ranges from mincore at its end (no page events there): a drop_caches by another
	# process meanwhile (every test drops caches) would empty them.  Traced again then, up to 5 times.
	local try d0
	for try in 1 2 3 4 5; do
		pf_drop_caches
		pf_cache_hold # our drops wait until the trace has taken its ranges (others' may not)
		d0=$(pf_cache_drops)
		pf_trace_start "$w/trace" "${marks[@]}"
		while read -r f; do cat "$f" >/dev/null; done <"$w/reads"
		# and a few pages in the middle of a file, where $tmp/NAME.partial lists one ("PATH SKIP COUNT", pages)
		[ ! -f "$tmp/$name.partial" ] || while read -r f o l; do
			dd if="$f" of=/dev/null bs=4096 skip="$o" count="$l" status=none
		done <"$tmp/$name.partial"
		pf_trace_stop
		pf_cache_release
		[ "$(pf_cache_drops)" = "$d0" ] && break
		pf_note "$name: caches dropped by someone else while tracing: again"
	done
	"$PREFETCHD" dump "$w/trace" >"$w/dump" || pf_fail "$name: dump of the trace"
	"$PREFETCHD" dump --files "$w/trace" >"$w/files" || pf_fail "$name: dump --files of the trace"
	while read -r f; do
		grep -q "	$f$" "$w/files" || pf_fail "$name: $f not traced ($(cat "$w/trace.out" "$w/trace.err"))"
	done <"$w/reads"
	"$PREFETCHD" aggregate --output "$w/layout" "$w/trace" >"$w/agg.out" 2>&1 || pf_fail "$name: aggregate: $(cat "$w/agg.out")"
	# the layout's ranges of the read files (the trace took them from mincore where no page events cover the
	# filesystem, as on btrfs: a drop_caches by someone else between the reads and the end of tracing shrinks them)
	"$PREFETCHD" dump "$w/layout" | awk -F'\t' 'NR == FNR { want[$1] = 1; next } !/^#/ && ($1 in want) && $3 > 0 { print $1, $2, $3 }' \
		"$w/reads" - >"$w/ranges"
	[ "$(awk '{ s += $3 } END { print s + 0 }' "$w/ranges")" -gt $((200 * 1024)) ] ||
		pf_fail "$name: the layout holds almost nothing of the files read: $(cat "$w/ranges")"
	# replay cold; every page of those ranges resident after (measured again, up to 5 times, when someone else
	# dropped caches meanwhile)
	local i miss o l
	for try in 1 2 3 4 5; do
		pf_drop_caches
		pf_cache_hold # until the replay's pages are checked
		d0=$(pf_cache_drops)
		while read -r f; do
			read -r t _ < <("$TOOLS/pf_mincore" "$f")
			[ "$t" = 0 ] || pf_fail "$name: precondition: $f has $t pages resident after drop_caches"
		done <"$w/reads"
		"$PREFETCHD" replay --medium rotational --dump-plan "$w/plan" "$w/layout" >"$w/replay.out" 2>&1 ||
			pf_fail "$name: replay: $(cat "$w/replay.out")"
		grep -q ' 0 skipped' "$w/replay.out" || pf_fail "$name: replay skipped files: $(cat "$w/replay.out")"
		for i in $(seq 50); do # readahead returns before its reads land
			miss=''
			while read -r f o l; do
				read -r r t < <("$TOOLS/pf_mincore" "$f" "$o" "$l")
				[ "$r" = "$t" ] || { miss="$f [$o +$l]: $r of $t pages"; break; }
			done <"$w/ranges"
			[ -z "$miss" ] && break
			sleep 0.1
		done
		pf_cache_release
		[ "$(pf_cache_drops)" = "$d0" ] && break
		[ -z "$miss" ] && break
		pf_note "$name: caches dropped by someone else during the replay's check: again"
	done
	[ -z "$miss" ] || [ "$(pf_cache_drops)" = "$d0" ] || pf_skip "$name: caches dropped by other processes during each of 5 replays"
	[ -z "$miss" ] || pf_fail "$name: not resident after the replay: $miss"
	# status: one line per filesystem mounted now, with what prefetch does there and its files in the layout
	cp "$w/layout" "$PF_TEST_HOME/state/layout"
	"$PREFETCHD" status >"$w/status" 2>&1 || pf_fail "$name: status: $(cat "$w/status")"
	for r in "$@"; do
		grep -q "^  $r: .*traced, replayed, .*; [1-9][0-9]* files in the layout$" "$w/status" ||
			pf_fail "$name: status does not say what happens on $r: $(cat "$w/status")"
	done
	"$PREFETCHD" dump "$w/layout" | grep -q "^#   prefetch there: $name: traced, replayed" ||
		pf_fail "$name: dump does not say what prefetch does there: $("$PREFETCHD" dump "$w/layout" | grep '^#')"
	"$REORDER" --dry-run "$w/dev" >"$w/reorder.out" 2>&1 && pf_fail "$name: prefetch-reorder accepted it"
	[ "$(wc -l <"$w/reorder.out")" = 1 ] && grep -q "$name: the reorder is ext2/3/4 only; the boot replay still works there" "$w/reorder.out" ||
		pf_fail "$name: prefetch-reorder's refusal: $(cat "$w/reorder.out")"
	pf_note "$name: $(grep -c . "$w/reads") files traced and resident after the replay; $(tail -1 "$w/replay.out")"
}

# ---- btrfs, two subvolumes mounted apart ----
# fs_usable NAME TYPE PACKAGE: 0 if mkfs.TYPE is installed and the kernel has TYPE, else a note of why not
fs_usable() {
	if ! command -v "mkfs.$2" >/dev/null; then
		pf_note "$1 part skipped: mkfs.$2 not installed ($3)"
	elif ! grep -qw "$2" /proc/filesystems; then
		pf_note "$1 part skipped: the kernel has no $2"
	else
		return 0
	fi
	return 1
}

if ! fs_usable btrfs btrfs btrfs-progs; then
	skipped_btrfs=1
else
	truncate -s 300M "$tmp/btrfs.img"
	mkfs.btrfs -q -f "$tmp/btrfs.img" >/dev/null 2>&1 || pf_fail "mkfs.btrfs"
	bdev=$(pf_loop "$tmp/btrfs.img")
	pf_mount "$bdev" "$tmp/top"
	btrfs subvolume create "$tmp/top/@" >/dev/null && btrfs subvolume create "$tmp/top/@home" >/dev/null ||
		pf_fail "btrfs subvolume create"
	populate "$tmp/top/@" root
	populate "$tmp/top/@home" home
	# and files the boot never reads, small enough to lie inline in the tree: each subvolume's tree grows past
	# its root node (which btrfs keeps in memory), so the metadata pass has tree blocks to read
	mkdir "$tmp/top/@/home" # where @home is mounted, as on Fedora
	for sv in @ @home; do
		mkdir "$tmp/top/$sv/var"
		for i in $(seq 1 1500); do printf '%1000s' "$i" >"$tmp/top/$sv/var/unread$i"; done
	done
	# read 8 pages of it in the middle; its inode number no traced file of @home has (each subvolume numbers its
	# own inodes from 256, and the page events name a file by the filesystem's device and inode number)
	head -c $((1024 * 1024)) /dev/urandom >"$tmp/top/@/partial.bin"
	umount "$tmp/top" || pf_fail "umount $tmp/top"
	echo "$tmp/b/root/partial.bin 64 8" >"$tmp/btrfs.partial"
	# root: subvol=@ at .../root, home: subvol=@home at .../root/home (boot_reads names directories after them)
	pf_mount "$bdev" "$tmp/b/root" -o subvol=@
	pf_mount "$bdev" "$tmp/b/root/home" -o subvol=@home
	uuid=$(blkid -p -o value -s UUID "$bdev")
	[ "$(stat -c %d "$tmp/b/root")" != "$(stat -c %d "$tmp/b/root/home")" ] || pf_fail "precondition: subvolumes share st_dev"
	mkdir -p "$tmp/btrfs" && ln -s "$bdev" "$tmp/btrfs/dev"
	run_pipeline btrfs "$tmp/b/root" "$tmp/b/root/home"
	# where the kernel has page-cache tracepoints the trace takes the pages read from them on btrfs too (the
	# events name the superblock's device, not a subvolume's st_dev): the partly read file holds just its 8
	# pages, not what readahead brought in around them
	if grep -q 'ranges: pages read ([1-9]' "$tmp/btrfs/trace.out"; then
		[ "$(grep -c "^# filesystem [0-9]*: .*btrfs subvolume, ranges: pages read (tracepoints)" "$tmp/btrfs/dump")" = 2 ] ||
			pf_fail "btrfs: page events not used for both subvolumes: $(grep '^# filesystem' "$tmp/btrfs/dump")"
		got=$(awk -F'\t' -v p="$tmp/b/root/partial.bin" '$1 == p { print $2, $3 }' "$tmp/btrfs/dump")
		[ "$got" = "$((64 * 4096)) $((8 * 4096))" ] ||
			pf_fail "btrfs: partial.bin's traced range is '$got', not the 8 pages read at page 64"
	elif grep -q 'no page event on the traced filesystems' "$tmp/btrfs/trace.out"; then
		pf_fail "btrfs: the tracer had page-cache events but none of btrfs's: $(cat "$tmp/btrfs/trace.out")"
	else
		pf_note "btrfs: no page events here ($(grep -o 'ranges: [^>]*' "$tmp/btrfs/trace.out")): ranges from mincore, not checked"
	fi
	# the metadata pass asked for the items of every file of both subvolumes, and the checksums of their data
	for fsi in 0 1; do
		[ "$(grep -c "^m $fsi meta btrfs-items " "$tmp/btrfs/plan")" -ge 20 ] && grep -q "^m $fsi meta btrfs-csums " "$tmp/btrfs/plan" ||
			pf_fail "btrfs: no metadata pass on filesystem $fsi: $(grep -c '^m' "$tmp/btrfs/plan") lines"
	done
	# the pass first reads the leaves those searches land in, each where it lies, in the device's order (an aged
	# filesystem's leaves in key order cost a seek each): every btrfs-leaf step names a leaf of the filesystem as
	# btrfs's own dump of its trees has it, and with one metadata chunk the logical order is the device's
	leaves=$(btrfs inspect-internal dump-tree "$bdev" 2>/dev/null | awk '$1 == "leaf" && $3 == "items" { print $2 }' | sort -u)
	[ -n "$leaves" ] || pf_fail "btrfs: inspect-internal dump-tree listed no leaf"
	for fsi in 0 1; do
		got=$(awk -v f="$fsi" '$1 == "m" && $2 == f && $4 == "btrfs-leaf" { print $5 }' "$tmp/btrfs/plan")
		[ "$(wc -l <<<"$got")" -ge 3 ] || pf_fail "btrfs: filesystem $fsi: no leaves read first: $(grep -c '^m' "$tmp/btrfs/plan") lines"
		bad=$(comm -23 <(sort -u <<<"$got") <(echo "$leaves"))
		[ -z "$bad" ] || pf_fail "btrfs: filesystem $fsi: read as leaves but no leaf of the filesystem: $bad"
		[ "$(awk -v f="$fsi" '$1 == "m" && $2 == f { print $4 }' "$tmp/btrfs/plan" | uniq | head -1)" = btrfs-leaf ] ||
			pf_fail "btrfs: filesystem $fsi: the leaves are not read before the searches"
		if [ "$(btrfs inspect-internal dump-tree -t chunk "$bdev" 2>/dev/null | grep -c 'type METADATA')" = 1 ]; then
			[ "$got" = "$(sort -n <<<"$got")" ] || pf_fail "btrfs: filesystem $fsi: leaves not in the device's order: $(tr '\n' ' ' <<<"$got")"
		else
			pf_note "btrfs: more than one metadata chunk, the leaves' order not checked"
		fi
	done
	grep -q "^  $tmp/b/root: btrfs subvolume, traced, replayed, metadata pass (tree items of its files, checksums of their data), no reorder (ext2/3/4 only); data in btrfs logical order" "$tmp/btrfs/status" ||
		pf_fail "btrfs: status: $(cat "$tmp/btrfs/status")"
	# the summary counts what the pass read: cold, the leaves of the files' items (the replay above came after
	# a check of the files' residency, whose opens read them)
	pf_drop_caches
	"$PREFETCHD" replay --medium rotational "$tmp/btrfs/layout" >"$tmp/btrfs/replay-cold.out" 2>&1 ||
		pf_fail "btrfs: cold replay: $(cat "$tmp/btrfs/replay-cold.out")"
	m=$(sed -n 's/.* \([0-9]*\) metadata blocks.*/\1/p' "$tmp/btrfs/replay-cold.out")
	[ "${m:-0}" -gt 0 ] || pf_fail "btrfs: the metadata pass read nothing, or was not counted: $(cat "$tmp/btrfs/replay-cold.out")"
	pf_note "btrfs, cold: $(cat "$tmp/btrfs/replay-cold.out")"
	n=$(grep -c "^# filesystem [0-9]*: uuid $uuid, mountpoint $tmp/b/root\(/home\)\?, .*btrfs subvolume" "$tmp/btrfs/dump")
	[ "$n" = 2 ] || pf_fail "btrfs: the trace does not hold both subvolumes as subvolumes of $uuid: $(grep '^# filesystem' "$tmp/btrfs/dump")"
	"$PREFETCHD" dump "$tmp/btrfs/layout" | grep -c "^# filesystem [0-9]*: uuid $uuid" | grep -qx 2 ||
		pf_fail "btrfs: the layout merged or lost a subvolume: $("$PREFETCHD" dump "$tmp/btrfs/layout" | grep '^# filesystem')"
	# @home not mounted (a replay from the initramfs, before /home is): its mount point shows @, the same
	# filesystem; the home record is missing, not @, and no search of @'s tree is made for @home's inodes
	umount "$tmp/b/root/home" || pf_fail "umount $tmp/b/root/home"
	"$PREFETCHD" replay --medium rotational --dump-plan "$tmp/btrfs/plan-nohome" "$tmp/btrfs/layout" >"$tmp/btrfs/replay-nohome.out" 2>&1 ||
		pf_fail "btrfs: replay with @home unmounted: $(cat "$tmp/btrfs/replay-nohome.out")"
	hi=$("$PREFETCHD" dump "$tmp/btrfs/layout" | sed -n "s|^# filesystem \([0-9]*\): uuid $uuid, mountpoint $tmp/b/root/home,.*|\1|p")
	[ -n "$hi" ] || pf_fail "btrfs: no record of $tmp/b/root/home in the layout"
	grep -q "^m $hi meta" "$tmp/btrfs/plan-nohome" &&
		pf_fail "btrfs: a metadata pass for @home's record while @home is not mounted: $(grep -c "^m $hi meta" "$tmp/btrfs/plan-nohome") steps"
	grep -q "^m $((1 - hi)) meta btrfs-items " "$tmp/btrfs/plan-nohome" || pf_fail "btrfs: no metadata pass on @ with @home unmounted"
	home_files=$("$PREFETCHD" dump --files "$tmp/btrfs/layout" | awk -F'\t' -v h="$hi" '!/^#/ && $7 == h' | wc -l)
	grep -q "replay: [0-9]* files, $home_files skipped ($home_files missing, 0 changed)" "$tmp/btrfs/replay-nohome.out" ||
		pf_fail "btrfs: with @home unmounted want its $home_files files missing: $(cat "$tmp/btrfs/replay-nohome.out")"
fi

# ---- XFS ----
if ! fs_usable XFS xfs xfsprogs; then
	skipped_xfs=1
else
	truncate -s 300M "$tmp/xfs.img"
	mkfs.xfs -q -f "$tmp/xfs.img" >/dev/null 2>&1 || pf_fail "mkfs.xfs"
	pf_mount_loop "$tmp/xfs.img" "$tmp/x/xroot"
	populate "$tmp/x/xroot" xroot
	# etc/xroot grows past one block (names the boot never reads): a leaf directory, its hash index a block apart
	for i in $(seq 1 300); do : >"$tmp/x/xroot/etc/xroot/an-entry-the-boot-never-reads-$i"; done
	umount "$tmp/x/xroot" || pf_fail "umount $tmp/x/xroot"
	# read-only (nothing written while the caches are measured); mount -o loop: the loop device goes with it
	for i in 1 2 3 4 5; do mount -o loop,ro "$tmp/xfs.img" "$tmp/x/xroot" 2>/dev/null && break; sleep 0.5; done
	mountpoint -q "$tmp/x/xroot" || pf_fail "mount -o loop,ro $tmp/xfs.img"
	xdev=$(findmnt -no SOURCE "$tmp/x/xroot")
	mkdir -p "$tmp/xfs" && ln -s "$xdev" "$tmp/xfs/dev"
	run_pipeline xfs "$tmp/x/xroot"
	grep -q "^  $tmp/x/xroot: xfs, traced, replayed, metadata pass (inode clusters, then directories within the data sweep), no reorder" "$tmp/xfs/status" ||
		pf_fail "xfs: status: $(cat "$tmp/xfs/status")"
	m=$(sed -n 's/.* \([0-9]*\) metadata blocks.*/\1/p' "$tmp/xfs/replay.out")
	[ "${m:-0}" -gt 0 ] || pf_fail "xfs: no metadata pass: $(cat "$tmp/xfs/replay.out")"
	# the two directories of 30 files each are too large for their inodes: blocks of their own, which the layout
	# places and a step of the replay reads where they lie; and the inode clusters' steps
	grep -q "^m 0 meta xfs-inodes [0-9]* 0 [1-9][0-9]* -$" "$tmp/xfs/plan" || pf_fail "xfs: no inode step: $(grep '^m' "$tmp/xfs/plan")"
	for d in usr/lib/xroot etc/xroot; do
		# the step lies at its block 0, which opening it reads
		b=$("$PREFETCHD" dump "$tmp/xfs/layout" | awk -F'\t' -v p="$tmp/x/xroot/$d" '$1 == p && $2 == 0 && $5 != "-" { print $5 * 4096; exit }')
		[ -n "$b" ] || pf_fail "xfs: the layout does not place directory $d: $("$PREFETCHD" dump "$tmp/xfs/layout" | grep "/$d	")"
		grep -q "^m 0 meta xfs-dir $b 0 [1-9][0-9]* $tmp/x/xroot/$d$" "$tmp/xfs/plan" ||
			pf_fail "xfs: no step at $b for directory $d: $(grep '^m' "$tmp/xfs/plan")"
	done
	# the leaf directory's hash index (at 32 GiB in it, xfs_db's map) is read where it lies: by a step of its own
	# there when it lies past the directory's first block (its block 0, which opening it reads), else at once
	# with it (no step)
	bs=$(stat -f -c %S "$tmp/x/xroot")
	map=$(xfs_db -r -c "inode $(stat -c %i "$tmp/x/xroot/etc/xroot")" -c bmap "$tmp/xfs.img") || pf_fail "xfs_db bmap"
	byte() { xfs_db -r -c "convert fsblock $1 byte" "$tmp/xfs.img" | sed -n 's/.*(\([0-9]*\)).*/\1/p'; }
	first=$(byte "$(echo "$map" | awk '$1 == "data" && $3 == 0 { print $5 }')")
	leaf=$(byte "$(echo "$map" | awk -v o=$((34359738368 / bs)) '$1 == "data" && $3 == o { print $5 }')")
	[ -n "$first" ] && [ -n "$leaf" ] || pf_fail "precondition: etc/xroot is not a leaf directory: $map"
	if [ "$leaf" -gt "$first" ]; then
		grep -q "^m 0 meta xfs-dir-index $leaf 0 $bs $tmp/x/xroot/etc/xroot$" "$tmp/xfs/plan" ||
			pf_fail "xfs: etc/xroot's hash index ($leaf) not read where it lies: $(grep '^m' "$tmp/xfs/plan")"
	elif grep -q "xfs-dir-index [0-9]* 0 [0-9]* $tmp/x/xroot/etc/xroot$" "$tmp/xfs/plan"; then
		pf_fail "xfs: etc/xroot's hash index ($leaf) lies before its first block ($first) but has a step of its own"
	fi
fi

# ---- a filesystem without a UUID: listed in the trace as not traced, with the reason; status says it ----
if command -v mksquashfs >/dev/null && grep -qw squashfs /proc/filesystems; then
	mkdir -p "$tmp/sq-src/lib" && head -c 20000 /dev/urandom >"$tmp/sq-src/lib/a.so"
	mksquashfs "$tmp/sq-src" "$tmp/sq.img" -quiet -noappend >/dev/null || pf_fail "mksquashfs"
	pf_mount_loop "$tmp/sq.img" "$tmp/sq"
	# no --mount: every local block-device filesystem mounted now (in this test's own mount namespace, so only the
	# machine's and this test's); a second is enough to write the header
	unshare --mount --propagation private "$PREFETCHD" trace --timeout 1 --output "$tmp/all.trace" \
		--pid-file "$tmp/all.pid" >"$tmp/all.out" 2>&1 || pf_fail "trace of every filesystem: $(cat "$tmp/all.out")"
	"$PREFETCHD" dump "$tmp/all.trace" | grep -q "^# filesystem [0-9]*: uuid 00000000-0000-0000-0000-000000000000, mountpoint $tmp/sq, not traced: no filesystem UUID" ||
		pf_fail "squashfs: the trace does not say it was skipped: $("$PREFETCHD" dump "$tmp/all.trace" | grep '^# filesystem')"
	"$PREFETCHD" status | grep -q "^  $tmp/sq: squashfs, not traced: no filesystem UUID" ||
		pf_fail "squashfs: status does not say it is not traced: $("$PREFETCHD" status)"
else
	pf_note "squashfs part skipped: mksquashfs (squashfs-tools) or the kernel's squashfs missing"
fi
[ -z "${skipped_btrfs:-}" ] || [ -z "${skipped_xfs:-}" ] || pf_skip "neither btrfs nor XFS available"
