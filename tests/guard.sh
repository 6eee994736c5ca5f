#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/guard.sh CMD [ARG...]: run one test so that it cannot read or write the machine's own prefetch state
# (a prefetchd of the host may be using it), and fail it if it tried.  Used by tests/run.sh for every test.
#
# As root, in a mount namespace of its own: /run, /var/lib and /etc/default are shadowed by a scratch tmpfs whose
# entries are symlinks to the real ones (so losetup, mount, dpkg and the rest work as before), except the
# guarded paths /run/prefetch, /var/lib/prefetch and /etc/default/prefetch, which are decoys: state files that
# look like prefetch's, dated in the past.  After the test, a decoy read (its atime moved, relatime updates it on
# the first read after the back-dating), changed, or anything created among them fails the test, naming the path.
# The host's files are never seen.  Elsewhere (not root, no namespaces) the guarded paths' existence and times
# are compared before and after: writes are caught, reads are not.
# Exit: CMD's status, or 1 (with "guard: ..." lines on stderr) when CMD passed or skipped but broke the rule.
#
# The test also gets a TMPDIR of its own: whatever it leaves there (files, loop devices backed by them, mounts)
# fails it too, and is removed.
set -u
GUARDED=(/run/prefetch /var/lib/prefetch /etc/default/prefetch)

# run_test CMD...: CMD with TMPDIR a fresh directory; sets rc (CMD's status, or 1 if it passed but left
# something behind).
run_test() {
	local tdir left loops l
	tdir=$(mktemp -d "${TMPDIR:-/tmp}/prefetch-run.XXXXXX") || { rc=1; return; }
	chmod 1777 "$tdir" # as /tmp: tests that drop privileges make their files here too
	TMPDIR=$tdir "$@"
	rc=$?
	loops=$(losetup -nl -O NAME,BACK-FILE 2>/dev/null | awk -v d="$tdir/" 'index($2, d) == 1 { print $1 }')
	for l in $loops; do
		echo "guard: the test left $l attached ($(losetup -nl -O BACK-FILE "$l"))" >&2
		umount "$l" 2>/dev/null
		losetup -d "$l"
	done
	left=$(findmnt -rn -o TARGET | awk -v d="$tdir/" 'index($1, d) == 1')
	[ -z "$left" ] || echo "guard: the test left mounted: $left" >&2
	for l in $left; do umount -l "$l"; done
	[ -z "$left" ] && left=$(cd "$tdir" && ls -A)
	[ -z "$left" ] || echo "guard: the test left in its TMPDIR: $(echo $left)" >&2
	if [ -n "$loops$left" ] && { [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; }; then rc=1; fi
	rm -rf --one-file-system "$tdir"
}

if [ -z "${PF_GUARD_INSIDE:-}" ] && [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	PF_GUARD_INSIDE=1 exec unshare -m --propagation private bash "$0" "$@"
fi

# The stat line of every guarded path and what lies below it (a missing path: "absent").
snapshot() {
	local p
	for p in "${GUARDED[@]}"; do
		if [ -e "$p" ] || [ -L "$p" ]; then
			# (a directory's atime is left out: this very listing moves it)
			find "$p" \( -type d -printf '%p %y %i %s - %T@ %C@\n' \) -o -printf '%p %y %i %s %A@ %T@ %C@\n' \
				2>/dev/null | LC_ALL=C sort
		else
			echo "$p absent"
		fi
	done
}

if [ -z "${PF_GUARD_INSIDE:-}" ]; then
	before=$(snapshot)
	run_test "$@"
	after=$(snapshot)
	if [ "$before" != "$after" ]; then
		diff <(echo "$before") <(echo "$after") | sed -n 's/^> \(.*\)/guard: the test changed a system-wide path: \1/p' >&2
		[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] && rc=1
	fi
	exit "$rc"
fi

# ---- root, in our own mount namespace ----
shadow=$(mktemp -d "${TMPDIR:-/tmp}/prefetch-guard.XXXXXX") || exit 1
mount -t tmpfs -o mode=0755 prefetch-guard "$shadow" || { rmdir "$shadow"; exit 1; }
decoys=$shadow/decoys

# shadow_dir DIR: DIR becomes a copy of itself made of symlinks to the real entries (reachable at $shadow/real/N).
n=0
shadow_dir() {
	local dir=$1 real=$shadow/real/$n top=$shadow/top/$n e
	n=$((n + 1))
	mkdir -p "$real" "$top"
	mount --rbind "$dir" "$real" || return 1
	chmod --reference="$dir" "$top"
	for e in "$real"/* "$real"/.[!.]* "$real"/..?*; do
		[ -e "$e" ] || [ -L "$e" ] || continue
		ln -s "$e" "$top/$(basename "$e")"
	done
	mount --bind "$top" "$dir"
}
ok=1
for p in "${GUARDED[@]}"; do
	shadow_dir "$(dirname "$p")" || { ok=0; break; }
	rm -f "$p"
done
if [ $ok = 1 ]; then
	# The decoys: what prefetchd would find in its state, all of it garbage that no test should take.
	mkdir -p /run/prefetch/pending /var/lib/prefetch/traces
	echo 999999999 >/run/prefetch/prefetchd.pid
	echo 1.0 >/run/prefetch/boot-end
	for f in layout boottime.log selfcheck reorder.log traces/trace-1-guard.pf; do
		echo "decoy of tests/guard.sh: a test read the machine's prefetch state" >"/var/lib/prefetch/$f"
	done
	printf '# decoy of tests/guard.sh: a test read the machine'"'"'s configuration\nPREFETCH_DIR=/var/lib/prefetch\n' \
		>/etc/default/prefetch
	find "${GUARDED[@]}" -exec touch -h -a -d '2001-01-01 00:00:00' {} + -exec touch -h -m -d '2001-01-02 00:00:00' {} +
	before=$(snapshot)
fi
if [ $ok = 0 ]; then
	echo "guard: cannot shadow the system-wide paths here; running unguarded" >&2
	umount -R "$shadow" 2>/dev/null
	rmdir "$shadow" 2>/dev/null
	exec "$@"
fi

run_test "$@"
after=$(snapshot)
if [ "$before" != "$after" ]; then
	# a changed line: report what changed in words
	diff <(echo "$before") <(echo "$after") | awk '
		/^< / { old[$2] = $0; next }
		/^> / { if (!($2 in old)) { print "guard: the test created " $2; next }
			split(old[$2], o, " "); n = split($0, a, " ")
			if (a[6] != o[6]) print "guard: the test read " $2
			if (a[7] != o[7] || a[8] != o[8] || a[5] != o[5]) print "guard: the test wrote " $2
			delete old[$2] }
		END { for (p in old) print "guard: the test removed " p }' >&2
	[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] && rc=1
fi
umount -l "$shadow" && rmdir "$shadow"
exit "$rc"
