#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetchd replay on bad input never hangs, crashes or fails a boot: one clear line and a clean exit.
#   no layout yet -> 0 (notice)          corrupt, truncated, empty, a trace, a directory,
#   stale (filesystem gone) -> 0 (notice) group-writable, not root-owned -> 1 (error)
#   bad options -> 2.  (Stop requests and the timeout: 30-replay-timeout.sh.)
source "$TOP/tests/lib.sh"
pf_require_root
[ -x "$TOOLS/pf_mklayout" ] || pf_fail "test tools not built (make tools)"

d=$(pf_tmpdir)
pf_mkfs "$d/img" 80M
dev=$(pf_loop "$d/img")
mnt=$d/mnt
pf_mount "$dev" "$mnt"
mkdir -p "$mnt/dir"
for i in $(seq 1 20); do head -c 16384 /dev/urandom >"$mnt/dir/f$i"; done
sync
for i in $(seq 1 20); do echo "$mnt/dir/f$i"; done | "$TOOLS/pf_mklayout" "$d/good" || pf_fail "pf_mklayout"
echo "$mnt/dir/f1" | "$TOOLS/pf_mklayout" --kind trace "$d/trace" || pf_fail "pf_mklayout --kind trace"

size=$(stat -c %s "$d/good")
head -c $((size / 2)) "$d/good" >"$d/truncated"
cp "$d/good" "$d/corrupt"
printf '\xff\xff\xff\xff' | dd of="$d/corrupt" bs=1 seek=$((size - 40)) conv=notrunc status=none
: >"$d/empty"
head -c 4096 /dev/urandom >"$d/random"
cp "$d/good" "$d/groupw"; chmod 0664 "$d/groupw"
cp "$d/good" "$d/notroot"; chown 65534 "$d/notroot"
chmod 0755 "$d" # the unprivileged owner above must not matter: the check is on the file

# expect NAME EXIT PATTERN ARGS...: exit code, exactly one line on stderr, "prefetchd: replay: " and matching
# PATTERN (a usage error, exit 2: then the hint "Try 'prefetchd replay --help'." as a second line), nothing on stdout
expect() {
	local name=$1 want=$2 pat=$3 rc=0; shift 3
	local start=$SECONDS
	timeout 20 "$PREFETCHD" replay "$@" --config "$d/no-config" >"$d/out" 2>"$d/err" || rc=$?
	[ $rc -ne 124 ] || pf_fail "$name: replay hung"
	[ $rc -eq "$want" ] || { cat "$d/err" >&2; pf_fail "$name: exit $rc, want $want"; }
	if [ "$want" -eq 2 ]; then
		[ "$(sed -n 2p "$d/err")" = "Try 'prefetchd replay --help'." ] && [ "$(wc -l <"$d/err")" -eq 2 ] ||
			{ cat "$d/err" >&2; pf_fail "$name: want one line and the --help hint on stderr"; }
	else
		[ "$(wc -l <"$d/err")" -eq 1 ] || { cat "$d/err" >&2; pf_fail "$name: want one line on stderr"; }
	fi
	[[ $(head -1 "$d/err") == "prefetchd: replay: "* ]] || { cat "$d/err" >&2; pf_fail "$name: not 'prefetchd: replay: ...'"; }
	grep -q -- "$pat" "$d/err" || { cat "$d/err" >&2; pf_fail "$name: message does not match '$pat'"; }
	[ ! -s "$d/out" ] || pf_fail "$name: unexpected output: $(cat "$d/out")"
	pf_note "$name ($rc, $((SECONDS - start)) s): $(cat "$d/err")"
}

expect missing 0 "no layout yet" "$d/missing"
expect corrupt 1 "not prefetching: layout .*corrupt: " "$d/corrupt"
expect truncated 1 "not prefetching: layout .*truncated: " "$d/truncated"
expect empty 1 "not prefetching: layout .*empty: " "$d/empty"
expect random 1 "not prefetching: layout .*random: " "$d/random"
expect trace 1 "not prefetching: layout .*trace: " "$d/trace"
expect directory 1 "not prefetching: layout " "$d"
expect group-writable 1 "not prefetching: layout .*groupw: " "$d/groupw"
expect not-root-owned 1 "not prefetching: layout .*notroot: " "$d/notroot"
expect bad-medium 2 "medium" "$d/good" --medium floppy
expect bad-threads 2 "threads" "$d/good" --threads 0
expect unknown-option 2 "unknown option" "$d/good" --frobnicate
expect bad-timeout 2 "^prefetchd: replay: --timeout: '-1' is not a number of seconds (0..86400)$" "$d/good" --timeout -1
expect extra-arg 2 "one LAYOUT" "$d/good" "$d/good"

# --help works and exits 0
"$PREFETCHD" replay --help | grep -q "Usage: prefetchd replay LAYOUT" || pf_fail "--help"

# A good layout: a summary on stdout, nothing on stderr.
out=$("$PREFETCHD" replay "$d/good" --config "$d/no-config" 2>"$d/err") || pf_fail "good layout: exit $?"
[[ $out == "replay: 20 files, 0 skipped"* ]] || pf_fail "good layout: '$out'"
[ ! -s "$d/err" ] || pf_fail "good layout: stderr: $(cat "$d/err")"

# A bad config file only warns (defaults kept); the replay still happens.
printf 'REPLAY_THREADS=lots\n' >"$d/bad-config"
out=$("$PREFETCHD" replay "$d/good" --config "$d/bad-config" 2>"$d/err") || pf_fail "bad config: exit $?"
grep -q "REPLAY_THREADS" "$d/err" || pf_fail "bad config: no warning"
[[ $out == "replay: 20 files"* ]] || pf_fail "bad config: '$out'"

# Stale: the layout's filesystem is not mounted any more.
umount "$mnt" || pf_fail "umount"
expect stale 0 "matches nothing on the mounted filesystems (stale)" "$d/good"
exit 0
