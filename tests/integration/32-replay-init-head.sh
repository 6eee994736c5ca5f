#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# init's files are read first, and opening them costs no seeks back: on the simulated disk (count mode, request
# log), a layout of init's files in a deep directory tree is replayed on the rotational path.  Before those files
# are opened, their inode-table blocks and the directories above them are read in one forward sweep; then their
# data, forward.  Without that sweep each open reads an inode-table block, then a directory block further out,
# then the next inode-table block back at the start: the head goes back and forth per path component.
source "$TOP/tests/lib.sh"
pf_require_simdisk
[ -x "$TOOLS/pf_mklayout" ] || pf_fail "test tools not built (make tools)"

dir=$(sim_tmpfs_dir)
# One block group (64 MiB of 4 KiB blocks): inode table first, then the directories (made first), then the data.
pf_mkfs "$dir/img" 64M -b 4096
w=$(pf_tmpdir)
mkdir -p "$w/fill"
mount -o loop "$dir/img" "$w/fill" || pf_fail "mount $dir/img"
pf_cleanup_add "umount '$w/fill' 2>/dev/null"
paths=()
for a in usr lib etc; do
	for b in 1 2 3; do
		mkdir -p "$w/fill/$a/d$b/x/y" || pf_fail "mkdir"
		paths+=("$a/d$b/x/y/f")
	done
done
# Spread over the group, so that each is a seek of its own; some filler between them.
for p in "${paths[@]}"; do
	head -c $((96 << 10)) /dev/urandom >"$w/fill/$p" || pf_fail "write $p"
	head -c $((512 << 10)) /dev/urandom >"$w/fill/${p%/f}/filler"
done
umount "$w/fill" || pf_fail "umount"

sim_start "$dir/img" count
# no_prefetch_block_bitmaps: the kernel's own background bitmap reads would land among the replay's
sim_mount "$w/fs" -o ro,no_prefetch_block_bitmaps
# As the tracer records them: the directories above each file just before it.
for p in "${paths[@]}"; do
	d=$w/fs
	IFS=/ read -r -a parts <<<"${p%/f}"
	for c in "${parts[@]}"; do d=$d/$c; echo "$d"; done
	echo "$w/fs/$p"
done | awk '!seen[$0]++' | "$TOOLS/pf_mklayout" --init --dir-blocks "$w/layout" || pf_fail "pf_mklayout"
"$PREFETCHD" dump "$w/layout" --files >"$w/dump" || pf_fail "dump"
[ "$(grep -cP "\t---i-\t" "$w/dump")" -eq ${#paths[@]} ] || pf_fail "layout: not all files flagged init: $(cat "$w/dump")"

pf_drop_caches
sim_reset
sim_log "$w/requests"
out=$("$PREFETCHD" replay "$w/layout" --config "$w/no-config" --medium rotational 2>"$w/err") ||
	pf_fail "replay: exit $? ($(cat "$w/err"))"
sim_log off
pf_note "replay: $out"
[[ $out == "replay: 39 files, 0 skipped"* ]] || pf_fail "not all 39 files and directories replayed: '$out'"

# Where init's data lies: the first block of each file (FIEMAP, in bytes on the device).
data_start=$(for p in "${paths[@]}"; do filefrag -e -b4096 "$w/fs/$p" | awk '$1 == "0:" { sub(/\.\..*/, "", $4); print $4 * 4096 }'; done | sort -n | head -1)
[ -n "$data_start" ] || pf_fail "no FIEMAP place for init's files"
# The reads until the first one into init's data: all forward (each starts at or after the previous one's end).
back=$(awk -v d="$data_start" '$1 == "R" { if ($2 >= d) exit; if (n && $2 < end) back++; end = $2 + $3; n++ }
	END { print back + 0 }' "$w/requests")
before=$(awk -v d="$data_start" '$1 == "R" { if ($2 >= d) exit; n++ } END { print n + 0 }' "$w/requests")
pf_note "$before metadata read(s) before init's data, $back going back"
[ "$before" -ge 2 ] || pf_fail "only $before read(s) before init's data: nothing to judge ($(head -5 "$w/requests"))"
[ "$back" -eq 0 ] || pf_fail "opening init's files went back $back time(s) before their data: $(head -40 "$w/requests")"
# And init's data itself in one forward sweep (it is read before the rest of the metadata pass).
dback=$(awk -v d="$data_start" '$1 == "R" && $2 >= d { if (n && $2 < end) back++; end = $2 + $3; n++ }
	END { print back + 0 }' "$w/requests")
[ "$dback" -eq 0 ] || pf_fail "init's data read going back $dback time(s)"
