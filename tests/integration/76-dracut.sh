#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The dracut module (dracut/90prefetch), without dracut (it conflicts with initramfs-tools on Debian):
#  - module-setup.sh, sourced with stub inst_* functions as dracut does: check() includes the module where
#    prefetch is enabled for boot (systemd wants link or sysvinit rcS link), only on request (255) elsewhere,
#    never without prefetchd (1); install() asks for prefetchd (with its libraries) and the pre-pivot hook;
#  - the pre-pivot hook, sourced by dash as dracut's hook runner does (so it must not exit): starts
#    'prefetchd boot --from-initramfs' chrooted into $NEWROOT only where prefetch is enabled, never without a
#    root or prefetchd, not with prefetch=off; with the initramfs's own copy present, that copy runs with --root.
# Runs unprivileged.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
command -v dash >/dev/null || pf_skip "dash not installed"
tmp=$(pf_tmpdir)
mod=$GEN/dracut/90prefetch
[ -f "$mod/module-setup.sh" ] && [ -f "$mod/prefetch-pre-pivot.sh" ] || pf_fail "dracut module not rendered in $mod"
sbin=$(sed -n 's|^[[:space:]]*inst_binary \(.*\)/prefetchd$|\1|p' "$mod/module-setup.sh")
[ -n "$sbin" ] || pf_fail "module-setup.sh: no inst_binary of prefetchd"

# --- module-setup.sh ---
sysroot=$tmp/sysroot
mkdir -p "$sysroot/etc/systemd/system/sysinit.target.wants" "$sysroot/etc/rcS.d"
setup() { # FUNCTION [have-prefetchd]: run it in bash with dracut's stubs, print the calls and the status
	HAVE=$2 SYSROOT=$sysroot MOD=$mod FN=$1 bash -c '
		require_binaries() { [ "$HAVE" = 1 ] && echo "require_binaries $*"; [ "$HAVE" = 1 ]; }
		inst_binary() { echo "inst_binary $*"; }
		inst_hook() { echo "inst_hook $*"; }
		inst_simple() { echo "inst_simple $*"; }
		inst_multiple() { echo "inst_multiple $*"; }
		moddir=/moddir dracutsysrootdir=$SYSROOT
		. "$MOD/module-setup.sh"
		"$FN"; echo "status $?"' 2>&1 </dev/null
}
out=$(setup check 0); echo "$out" | grep -qx 'status 1' || pf_fail "check() without prefetchd: $out"
out=$(setup check 1); echo "$out" | grep -qx 'status 255' || pf_fail "check() where prefetch is not enabled: $out"
echo "$out" | grep -qx "require_binaries $sbin/prefetchd" || pf_fail "check() does not require prefetchd: $out"
ln -s /lib/systemd/system/prefetch.service "$sysroot/etc/systemd/system/sysinit.target.wants/prefetch.service"
out=$(setup check 1); echo "$out" | grep -qx 'status 0' || pf_fail "check() with prefetch.service enabled: $out"
rm "$sysroot/etc/systemd/system/sysinit.target.wants/prefetch.service"
ln -s ../init.d/prefetch "$sysroot/etc/rcS.d/S01prefetch"
out=$(setup check 1); echo "$out" | grep -qx 'status 0' || pf_fail "check() with the sysvinit script enabled: $out"
out=$(setup depends 1); [ "$out" = "status 0" ] || pf_fail "depends(): $out"
out=$(setup install 1)
[ "$out" = "inst_binary $sbin/prefetchd
inst_hook pre-pivot 50 /moddir/prefetch-pre-pivot.sh
status 0" ] || pf_fail "install() asked for: $out"

# --- the pre-pivot hook ---
hook=$mod/prefetch-pre-pivot.sh
mkdir -p "$tmp/bin" "$tmp/root$sbin" "$tmp/root/etc/systemd/system/sysinit.target.wants" "$tmp/root/etc/rcS.d"
printf '#!/bin/sh\necho "$*" >>"%s/chroot.calls"\n' "$tmp" >"$tmp/bin/chroot"
printf '#!/bin/sh\necho "$*" >>"%s/copy.calls"\n' "$tmp" >"$tmp/bin/copy"
chmod +x "$tmp/bin/chroot" "$tmp/bin/copy"
run_hook() { # NEWROOT [copy] -> number of chroot calls; the hook is sourced and must return to its runner
	rm -f "$tmp/chroot.calls"
	# it starts prefetchd in the background: fd 9 goes with it, so the substitution ends when that has run too
	out=$(PATH=$tmp/bin:$PATH NEWROOT=$1 PREFETCH_INITRAMFS_COPY=${2:-$tmp/none} \
		dash -c '. "$1"; echo sourced-and-returned' _ "$hook" 9>&1) || pf_fail "hook: exit $?"
	[ "$out" = sourced-and-returned ] || pf_fail "the hook did not return to its runner: $out"
	[ -f "$tmp/chroot.calls" ] && wc -l <"$tmp/chroot.calls" || echo 0
}
[ "$(run_hook "$tmp/root")" = 0 ] || pf_fail "started without prefetchd in the root"
printf '#!/bin/sh\n' >"$tmp/root$sbin/prefetchd"; chmod +x "$tmp/root$sbin/prefetchd"
[ "$(run_hook "$tmp/root")" = 0 ] || pf_fail "started although prefetch is not enabled"
[ "$(run_hook "")" = 0 ] || pf_fail "started without a root"
ln -s /lib/systemd/system/prefetch.service "$tmp/root/etc/systemd/system/sysinit.target.wants/prefetch.service"
[ "$(run_hook "$tmp/root")" = 1 ] || pf_fail "not started with prefetch.service enabled"
grep -qx "$tmp/root $sbin/prefetchd boot --from-initramfs" "$tmp/chroot.calls" || pf_fail "wrong command: $(cat "$tmp/chroot.calls")"
rm -f "$tmp/copy.calls"
[ "$(run_hook "$tmp/root" "$tmp/bin/copy")" = 0 ] || pf_fail "chroot used despite the copy"
grep -qx "boot --from-initramfs --root $tmp/root" "$tmp/copy.calls" || pf_fail "copy: $(cat "$tmp/copy.calls" 2>&1)"
rm "$tmp/root/etc/systemd/system/sysinit.target.wants/prefetch.service"
ln -s ../init.d/prefetch "$tmp/root/etc/rcS.d/S01prefetch"
[ "$(run_hook "$tmp/root")" = 1 ] || pf_fail "not started with the sysvinit script enabled"
[ "$(PREFETCH_CMDLINE='quiet prefetch=off' run_hook "$tmp/root")" = 0 ] || pf_fail "started with prefetch=off"
exit 0
