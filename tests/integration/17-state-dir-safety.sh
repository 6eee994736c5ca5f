#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 17-state-dir-safety: nothing in the state directory can be turned against root (issue #27).  A real
# 'prefetchd boot' (TRACE_TIMEOUT=1) with PREFETCH_DIR prepared the way another user could have:
#  1. traces/ a symbolic link to another directory: no trace written there, none of its trace-*.pf pruned;
#  2. reorder.log a symbolic link, boottime.log and the layout hard links to files elsewhere: those files
#     byte-identical;
#  3. PREFETCH_DIR mode 1777, 0775, or owned by another user: refused in one line naming what is wrong, nothing
#     stored, and the runtime directory likewise (mode 1777: refused, no pid file written);
#  4. a safe PREFETCH_DIR: the trace, the layout and the boot log are stored, every one 0600.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
pf_require_root

tmp=$(pf_tmpdir)
mnt=$tmp/mnt
pf_mkfs "$tmp/img" 32M -b 4096
dev=$(pf_loop "$tmp/img")
pf_mount "$dev" "$mnt"
echo data >"$mnt/file"

state=$tmp/state
cat >"$tmp/conf" <<EOF
PREFETCH_DIR=$state
SELF_CHECK_INTERVAL=0
PREFETCH_RUNTIME_DIR=$tmp/run
TRACE_MOUNTS=$mnt
TRACE_TIMEOUT=1
EOF
# boot: one traced boot; its output in $tmp/boot.out
boot() {
	timeout 60 "$PREFETCHD" boot --config "$tmp/conf" >"$tmp/boot.out" 2>&1 ||
		pf_fail "prefetchd boot exited $?: $(cat "$tmp/boot.out")"
}
fresh() { rm -rf "$state" "$tmp/run" "$tmp/elsewhere"; mkdir -m 0700 "$state" "$tmp/elsewhere"; }

# 1. traces/ -> another directory holding trace files of its own
fresh
for i in 1 2 3; do echo "precious $i" >"$tmp/elsewhere/trace-$i-x.pf"; done
ln -s "$tmp/elsewhere" "$state/traces"
boot
[ "$(ls "$tmp/elsewhere" | wc -l)" -eq 3 ] || pf_fail "traces symlink: files added or pruned there: $(ls "$tmp/elsewhere")"
for i in 1 2 3; do [ "$(cat "$tmp/elsewhere/trace-$i-x.pf")" = "precious $i" ] || pf_fail "trace-$i-x.pf changed"; done
grep -q "refusing the state directory: $state/traces is a symbolic link" "$tmp/boot.out" ||
	pf_fail "traces symlink: no refusal: $(cat "$tmp/boot.out")"
pf_note "traces -> elsewhere: $(grep refusing "$tmp/boot.out")"

# 2. reorder.log a symbolic link; boottime.log and layout hard links
fresh
echo "root's log" >"$tmp/elsewhere/log"
echo "root's file" >"$tmp/elsewhere/hard"
echo "root's other file" >"$tmp/elsewhere/hard2"
ln -s "$tmp/elsewhere/log" "$state/reorder.log"
ln "$tmp/elsewhere/hard" "$state/boottime.log"
ln "$tmp/elsewhere/hard2" "$state/layout"
echo "1700000000 armed /dev/x budget 20s" >"$state/reorder-armed"
boot
[ "$(cat "$tmp/elsewhere/log")" = "root's log" ] || pf_fail "appended through the reorder.log symlink"
[ "$(cat "$tmp/elsewhere/hard")" = "root's file" ] || pf_fail "appended through the boottime.log hard link"
[ "$(cat "$tmp/elsewhere/hard2")" = "root's other file" ] || pf_fail "wrote through the layout hard link"
ls "$state"/traces/trace-*.pf >/dev/null 2>&1 || pf_fail "no trace stored: $(cat "$tmp/boot.out")"
pf_note "links in PREFETCH_DIR: nothing written through them"

# 3. unsafe PREFETCH_DIR and runtime dir
for how in 1777 0775 owner; do
	fresh
	if [ $how = owner ]; then chown nobody "$state"; else chmod $how "$state"; fi
	boot
	[ -z "$(ls -A "$state")" ] || pf_fail "PREFETCH_DIR $how: something was stored: $(ls -A "$state")"
	[ "$(grep -c 'refusing the state directory' "$tmp/boot.out")" -eq 1 ] ||
		pf_fail "PREFETCH_DIR $how: want one refusal line: $(cat "$tmp/boot.out")"
	case $how in
	owner) grep -q "$state is owned by uid $(id -u nobody)" "$tmp/boot.out" ;;
	*) grep -q "$state has mode $how: writable by group or others" "$tmp/boot.out" ;;
	esac || pf_fail "PREFETCH_DIR $how: the refusal does not say why: $(cat "$tmp/boot.out")"
	pf_note "PREFETCH_DIR $how: $(grep refusing "$tmp/boot.out")"
done
fresh
mkdir -m 1777 "$tmp/run"
rc=0
timeout 60 "$PREFETCHD" boot --config "$tmp/conf" >"$tmp/boot.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || pf_fail "runtime dir 1777: exit 0"
[ ! -e "$tmp/run/prefetchd.pid" ] || pf_fail "runtime dir 1777: pid file written"
grep -q "$tmp/run has mode 1777" "$tmp/boot.out" || pf_fail "runtime dir 1777: $(cat "$tmp/boot.out")"
pf_note "runtime dir 1777: $(cat "$tmp/boot.out")"

# 4. safe: stored, 0600
fresh
boot
boot # the second boot aggregates a layout from two traces
for f in "$state"/traces/trace-*.pf "$state/layout" "$state/boottime.log"; do
	[ -f "$f" ] || pf_fail "not stored: $f: $(cat "$tmp/boot.out")"
	[ "$(stat -c %a "$f")" = 600 ] || pf_fail "$f: mode $(stat -c %a "$f"), want 600"
done
[ -z "$(find "$state" -name '.*')" ] || pf_fail "temporary files left: $(find "$state" -name '.*')"
pf_note "a safe PREFETCH_DIR: trace, layout and boot log stored, 0600"
exit 0
