#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# init's files are read first, and opening them costs no seeks back: on the simulated disk (count mode, request
# log), a layout of init's files in a deep directory tree is replayed on the rotational path.  Before those files
# are opened, their inode-table blocks and the directories above them are read in one forward sweep; then their
# data, forward.  Without that sweep each open reads an inode-table block, then a directory block further out,
# then the next inode-table block back at the start: the head goes back and forth per path component.
# On slow flash too, init's files (here those under /usr) come before the rest of the metadata pass: their data
# is read before any block of a directory that only other files need.
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

# ---- slow flash: init's files before the rest of the metadata pass ----
# The same tree as a layout where only /usr's files are init's: /lib's and /etc's directories are the other
# files' alone.
for p in "${paths[@]}"; do
	d=$w/fs
	IFS=/ read -r -a parts <<<"${p%/f}"
	for c in "${parts[@]}"; do d=$d/$c; echo "$d"; done
	echo "$w/fs/$p"
done | awk '!seen[$0]++' | "$TOOLS/pf_mklayout" --init="$w/fs/usr/" --dir-blocks "$w/layout-flash" || pf_fail "pf_mklayout --init=PREFIX"
"$PREFETCHD" dump "$w/layout-flash" --files >"$w/dump-flash" || pf_fail "dump"
[ "$(grep -cP "\t---i-\t" "$w/dump-flash")" -eq 3 ] || pf_fail "layout: want /usr's 3 files flagged init: $(cat "$w/dump-flash")"
# byte ranges "START END" on the device: /usr's files' data, and the blocks of the directories below /lib and /etc
ranges() { for x in "$@"; do filefrag -e -b4096 "$x" | awk '$1 ~ /^[0-9]+:$/ { sub(/\.\..*/, "", $4); sub(/:$/, "", $5); print $4 * 4096, ($5 + 1) * 4096 }'; done; }
ranges "$w"/fs/usr/d*/x/y/f >"$w/init-data"
ranges "$w"/fs/lib/d* "$w"/fs/lib/d*/x "$w"/fs/lib/d*/x/y "$w"/fs/etc/d* "$w"/fs/etc/d*/x "$w"/fs/etc/d*/x/y >"$w/other-dirs"
[ -s "$w/init-data" ] && [ -s "$w/other-dirs" ] || pf_fail "no FIEMAP places ($(cat "$w/init-data" "$w/other-dirs"))"
pf_drop_caches
sim_reset
sim_log "$w/requests-flash"
out=$("$PREFETCHD" replay "$w/layout-flash" --config "$w/no-config" --medium slow-flash 2>"$w/err") ||
	pf_fail "replay, slow flash: exit $? ($(cat "$w/err"))"
sim_log off
pf_note "replay, slow flash: $out"
# the request index of the last read into init's data, and of the first into another file's directory
idx() { awk -v want="$1" 'FNR == NR { lo[NR] = $1; hi[NR] = $2; k = NR; next }
	$1 == "R" { n++; for (i = 1; i <= k; i++) if ($2 < hi[i] && $2 + $3 > lo[i]) { if (want == "first") { print n; exit } last = n } }
	END { if (want == "last") print last + 0 }' "$2" "$w/requests-flash"; }
last_init=$(idx last "$w/init-data") first_other=$(idx first "$w/other-dirs")
[ "$last_init" -gt 0 ] || pf_fail "slow flash: init's data never read ($(head -20 "$w/requests-flash"))"
[ -n "$first_other" ] || pf_fail "slow flash: the other files' directories never read"
[ "$last_init" -lt "$first_other" ] ||
	pf_fail "slow flash: read $first_other (another file's directory) came before read $last_init (init's data): $(head -40 "$w/requests-flash")"
pf_note "slow flash: init's data by read $last_init, the other files' directories from read $first_other on"
