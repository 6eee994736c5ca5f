#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The first replay after a reorder: prefetch-reorder moves the layout's blocks at shutdown, but the layout keeps
# the old block numbers (it is rewritten only at the end of the next boot).  A rotational replay must sweep in
# the order of where the blocks are *now*: its plan (--dump-plan) places every range by FIEMAP, each place
# agrees with the on-disk extent tree (debugfs bmap, read from the device), the sweep is ascending in those
# places within each time bin, and the same ranges sorted by the layout's stale numbers would not be (so the
# test can tell).  The same plan built from libext2fs's mapping of the unmounted filesystem (as prefetch-reorder
# sees it) is the replay's, item for item, before and after, metadata pass included.  The data is resident afterwards.  The metadata pass (its steps in --dump-plan) asks for the
# layout's directory where it lies now and never for its place before the reorder.
source "$TOP/tests/lib.sh"
pf_require_root
command -v debugfs >/dev/null || pf_skip "needs debugfs"
[ -x "$TOOLS/pf_mklayout" ] && [ -x "$TOOLS/pf_mincore" ] || pf_fail "test tools not built (make tools)"

d=$(pf_tmpdir)
pf_mkfs "$d/img" 64M -b 4096
dev=$(pf_loop "$d/img")
mnt=$d/mnt
pf_mount "$dev" "$mnt"

# Files written in one order (and fragmented: appended to in the reverse order, junk in between deleted), read
# by the "boot" in another: the reorder has to move nearly everything.
mkdir -p "$mnt/lib" "$mnt/var"
for i in $(seq 1 30); do
	head -c $((12288 * (i % 5 + 1))) /dev/urandom >"$mnt/lib/f$i"
	head -c 40960 /dev/urandom >"$mnt/var/junk$i"
	sync
done
rm -f "$mnt"/var/junk*
for i in $(seq 30 -1 1); do head -c 20480 /dev/urandom >>"$mnt/lib/f$i"; sync; done
order=$(for i in $(seq 2 2 30) $(seq 1 2 29); do echo "$i"; done)
{
	echo "$mnt/lib"
	for i in $order; do echo "$mnt/lib/f$i"; done
} >"$d/lines"
"$TOOLS/pf_mklayout" --dir-blocks "$d/layout" "$d/lines" >/dev/null || pf_fail "pf_mklayout"
chown root:root "$d/layout"; chmod 0644 "$d/layout"
umount "$mnt" || pf_fail "umount"

replay() { # OUT-PLAN: cold rotational replay of the layout, plan dumped; prints the summary
	local out
	pf_drop_caches
	out=$(timeout 60 "$PREFETCHD" replay "$d/layout" --medium rotational --config "$d/no-config" \
		--dump-plan "$1" 2>"$d/err") || { cat "$d/err" >&2; pf_fail "replay exited $?"; }
	[ ! -s "$d/err" ] || { cat "$d/err" >&2; pf_fail "replay wrote to stderr"; }
	[[ $out == "replay: 31 files, 0 skipped "* ]] || pf_fail "summary '$out'"
	echo "$out"
}
# counts SUMMARY: "N M P L" = ranges placed now, moved since the layout, pieces cut, placed by the layout
counts() { sed -n 's/.*, \([0-9]*\) ranges placed now (\([0-9]*\) moved since the layout, \([0-9]*\) pieces cut), \([0-9]*\) by the layout.*/\1 \2 \3 \4/p' <<<"$1"; }

# check_plan PLAN NAME: every data item of the plan placed now, where the on-disk extent tree says (debugfs
# bmap, from the device), and the sweep goes up the disk within each bin; leaves PLAN.checked (plan + bmap)
check_plan() {
	local plan=$1 name=$2 bad
	awk '$3 == "data"' "$plan" >"$plan.data"
	[ "$(wc -l <"$plan.data")" -ge 30 ] || pf_fail "$name: plan has $(wc -l <"$plan.data") data items"
	bad=$(awk '$4 != "now"' "$plan.data" | head -3)
	[ -z "$bad" ] || pf_fail "$name: data items not placed by FIEMAP: $bad"
	awk -v m="$mnt" '{ print "bmap " substr($8, length(m) + 1) " " int($6 / 4096) }' "$plan.data" >"$plan.cmd"
	debugfs -c -f "$plan.cmd" "$dev" 2>/dev/null | grep -E '^[0-9]+$' >"$plan.bmap"
	[ "$(wc -l <"$plan.bmap")" = "$(wc -l <"$plan.data")" ] ||
		pf_fail "$name: debugfs bmap: $(wc -l <"$plan.bmap") answers for $(wc -l <"$plan.data") items"
	paste -d' ' "$plan.data" "$plan.bmap" >"$plan.checked"
	bad=$(awk '$5 / 4096 != $9 { print; exit }' "$plan.checked")
	[ -z "$bad" ] || pf_fail "$name: plan's place differs from the extent tree's (plan bytes / 4096 vs bmap): $bad"
	bad=$(awk '{ if ($1 == bin && $2 == fs && $9 < last) { print "bin " bin ": " prev " then " $0; exit }
		bin = $1; fs = $2; last = $9; prev = $0 }' "$plan.checked")
	[ -z "$bad" ] || pf_fail "$name: sweep not in ascending physical order: $bad"
}

# same_plan PLAN NAME: what prefetch-reorder's view builds (libext2fs: tests/tools/read_plan_ext, the same
# lib/ext_meta_pass.c and lib/read_plan.c) is what the replay read and dumped, line for line: the metadata
# pass's steps and the sweep the replay built with FIEMAP
same_plan() {
	"$TOOLS/read_plan_ext" "$d/layout" "$dev" >"$1.ext" || pf_fail "$2: read_plan_ext"
	[ "$(grep -cv '^m ' "$1")" -ge 30 ] || pf_fail "$2: the replay's sweep has $(grep -cv '^m ' "$1") items"
	[ "$(grep -c '^m ' "$1")" -ge 3 ] || pf_fail "$2: the replay's metadata pass has $(grep -c '^m ' "$1") runs"
	cmp -s "$1" "$1.ext" || pf_fail "$2: the plan built with libext2fs's mapping is not the replay's \
(< replay, > libext2fs): $(diff "$1" "$1.ext" | head -6)"
	pf_note "$2: the replay's plan and libext2fs's are the same: $(grep -c '^m ' "$1.ext") metadata runs, \
$(grep -cv '^m ' "$1.ext") items"
}

# Before the reorder: the layout is right, FIEMAP agrees with it everywhere; the files appended to later lie in
# two places each, and each piece is swept where it lies.
pf_mount "$dev" "$mnt" -o ro
out=$(replay "$d/plan.before") || exit 1
pf_note "before: $out"
read -r now moved pieces bylayout < <(counts "$out")
[ "${now:-0}" -gt 0 ] && [ "$moved" = 0 ] && [ "$bylayout" = 0 ] || pf_fail "before the reorder: '$out'"
[ "$pieces" -ge 10 ] || pf_fail "before the reorder: only $pieces ranges cut (the files should be fragmented): '$out'"
check_plan "$d/plan.before" "before the reorder"
umount "$mnt" || pf_fail "umount"
same_plan "$d/plan.before" "before the reorder"

# dir_blocks: the blocks of /lib, one per line (debugfs, from the device)
dir_blocks() { debugfs -c -R "blocks /lib" "$dev" 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+$'; }
# meta_asks PLAN BLOCK: the metadata-pass steps of PLAN asking for BLOCK (4 KiB), one per line
meta_asks() { awk -v b="$2" '$1 == "m" && $3 == "meta" && $5 / 4096 <= b && b < ($5 + $7) / 4096 { print $4 }' "$1"; }
dir_blocks >"$d/dir.before"
[ -s "$d/dir.before" ] || pf_fail "debugfs: no blocks for /lib"
[ -n "$(meta_asks "$d/plan.before" "$(head -1 "$d/dir.before")")" ] ||
	pf_fail "before the reorder: the metadata pass does not ask for /lib's block $(head -1 "$d/dir.before")"

# The reorder, on the unmounted device; the layout stays as it was (old block numbers).
sum0=$(sha256sum <"$d/layout")
"$REORDER" --layout "$d/layout" "$dev" >"$d/reorder.out" 2>&1 || { cat "$d/reorder.out" >&2; pf_fail "prefetch-reorder"; }
[ "$(sha256sum <"$d/layout")" = "$sum0" ] || pf_fail "the reorder changed the layout file"
pf_fsck_clean "$dev"

pf_mount "$dev" "$mnt" -o ro
out=$(replay "$d/plan.after") || exit 1
pf_note "after:  $out"
read -r now moved pieces bylayout < <(counts "$out")
[ "${now:-0}" -gt 0 ] && [ "$bylayout" = 0 ] || pf_fail "after the reorder: not every range placed by FIEMAP: '$out'"
[ "$moved" -ge $((now / 2)) ] || pf_fail "after the reorder: only $moved of $now ranges moved (did the reorder run?)"

check_plan "$d/plan.after" "after the reorder"
same_plan "$d/plan.after" "after the reorder"
# The directory moved with the data (placed ahead of it); the metadata pass asks for it there, not where it was.
dir_blocks >"$d/dir.after"
stale=$(grep -vxFf "$d/dir.after" "$d/dir.before")
[ -n "$stale" ] || pf_fail "the reorder left /lib where it was ($(tr '\n' ' ' <"$d/dir.after")): the test cannot tell a stale read"
for b in $(cat "$d/dir.after"); do
	[ -n "$(meta_asks "$d/plan.after" "$b")" ] || pf_fail "after the reorder: the metadata pass does not ask for /lib's block $b"
done
for b in $stale; do
	asks=$(meta_asks "$d/plan.after" "$b" | sort -u | tr '\n' ' ')
	[ -z "$asks" ] || pf_fail "after the reorder: the metadata pass asks for /lib's old block $b (steps: $asks)"
done
pf_note "/lib: block $(tr '\n' ' ' <"$d/dir.before")-> $(tr '\n' ' ' <"$d/dir.after")(only the new one asked for)"
# Discriminating: the same items in the order of the layout's (stale) numbers go backwards on the disk.
awk 'NR == FNR { if ($3 == "data") old[$8 " " $6] = $5; next } { k = $8 " " $6; print ((k in old) ? old[k] : -1), $9 }' \
	"$d/plan.before" "$d/plan.after.checked" | sort -n -k1,1 -s >"$d/stale-order"
grep -q '^-1 ' "$d/stale-order" && pf_fail "an item of the plan after the reorder is not in the plan before: $(grep '^-1 ' "$d/stale-order" | head -1)"
back=$(awk '{ if (NR > 1 && $2 < last) n++; last = $2 } END { print n + 0 }' "$d/stale-order")
[ "$back" -gt 5 ] || pf_fail "the stale order goes backwards only $back times: the test cannot tell a stale sweep"
pf_note "sorted by the layout's stale numbers the sweep would step backwards $back times"

# And it read the data.  Other tests on this machine drop caches now and then: a file found cold is replayed
# again (a replay that never reads it fails every try).
not_resident() {
	local i t r n
	for i in $order; do
		for t in $(seq 30); do
			read -r r n < <("$TOOLS/pf_mincore" "$mnt/lib/f$i")
			[ "$r" = "$n" ] && break
			sleep 0.1
		done
		[ "$r" = "$n" ] || { echo "lib/f$i: $r of $n pages resident after the replay"; return; }
	done
}
for try in 1 2 3; do
	miss=$(not_resident)
	[ -z "$miss" ] && break
	pf_note "try $try: $miss; replaying again"
	replay "$d/plan.again" >/dev/null || exit 1
done
[ -z "$miss" ] || pf_fail "$miss"
exit 0
