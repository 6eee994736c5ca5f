#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make install / uninstall into a DESTDIR: binaries, systemd units in pkg-config's unit dir, the shutdown hook,
# executable init scripts, /etc/default/prefetch (never overwritten), man pages that render without warnings;
# every configuration key documented in the default file and in prefetch(5); 'systemd-analyze verify' clean
# on the installed units (paths pointed at the DESTDIR copies), and no ordering cycle once they are enabled;
# the unit's capability bounding set holds what the tracer keeps; the initramfs script of an earlier version goes.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1

tmp=$(pf_tmpdir)
D=$tmp/dest
san=
case $BUILD in */asan) san=SANITIZE=1 ;; esac
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
hookdir=$(pkg-config --variable=systemdshutdowndir systemd 2>/dev/null || echo /lib/systemd/system-shutdown)

# the initramfs script of an earlier version (init-bottom): an upgrade removes it, or prefetchd would start twice
mkdir -p "$D/usr/share/initramfs-tools/scripts/init-bottom"
printf '#!/bin/sh\n' >"$D/usr/share/initramfs-tools/scripts/init-bottom/prefetch"
# and the init script's earlier name (stop-prefetch, now prefetch-stop as its systemd unit is called)
mkdir -p "$D/etc/init.d" && printf '#!/bin/sh\n' >"$D/etc/init.d/stop-prefetch"
make -s -C "$TOP" $san install DESTDIR="$D" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; pf_fail "make install"; }
[ -e "$D/usr/share/initramfs-tools/scripts/init-bottom/prefetch" ] && pf_fail "the old init-bottom script was left"
[ -e "$D/etc/init.d/stop-prefetch" ] && pf_fail "the init script's old name stop-prefetch was left"

exe() { [ -f "$D$1" ] && [ -x "$D$1" ] || pf_fail "not installed executable: $1"; }
reg() { [ -f "$D$1" ] || pf_fail "not installed: $1"; [ "$(stat -c %a "$D$1")" = "${2:-644}" ] || pf_fail "$1: mode $(stat -c %a "$D$1")"; }
exe /usr/sbin/prefetchd
exe /usr/sbin/prefetch-reorder
for u in prefetch.service prefetch-stop.service prefetch-stop.timer prefetch-reorder.service; do reg "$unitdir/$u"; done
exe "$hookdir/prefetch-reorder"
for s in prefetch prefetch-stop prefetch-reorder; do exe "/etc/init.d/$s"; done
exe /usr/share/initramfs-tools/scripts/local-bottom/prefetch
exe /usr/share/initramfs-tools/hooks/prefetch
exe /usr/lib/dracut/modules.d/90prefetch/module-setup.sh
exe /usr/lib/dracut/modules.d/90prefetch/prefetch-pre-pivot.sh
reg /etc/default/prefetch
cmp -s "$TOP/config/prefetch.default" "$D/etc/default/prefetch" || pf_fail "/etc/default/prefetch differs from config/prefetch.default"
for m in man8/prefetchd.8 man8/prefetch-reorder.8 man5/prefetch.5 man1/prefetch-image.1; do reg "/usr/share/man/$m"; done
exe /usr/bin/prefetch-image
reg /usr/share/prefetch/qemu-guest.sh
"$D/usr/bin/prefetch-image" --version | grep -q "^prefetch-image " || pf_fail "installed prefetch-image does not run"
grep -q "^QEMU_LIB=.*/usr/share/prefetch/qemu-guest.sh}" "$D/usr/bin/prefetch-image" || pf_fail "prefetch-image does not find its qemu driver where it is installed"
"$D/usr/sbin/prefetchd" --version | grep -q '^prefetchd ' || pf_fail "installed prefetchd does not run"

# The shipped configuration parses without a warning, and every key the parser knows is explained in it and
# documented in prefetch(5).
out=$("$D/usr/sbin/prefetchd" report --config "$D/etc/default/prefetch" --log "$tmp/none" 2>&1)
echo "$out" | grep -q warning && pf_fail "default configuration gives warnings: $out"
# the keys as the parser itself lists them (the key table of lib/config.c)
keys=$("$D/usr/sbin/prefetchd" config --config "$D/etc/default/prefetch" | cut -d= -f1)
[ "$(echo "$keys" | wc -w)" -ge 16 ] || pf_fail "could not list the keys with 'prefetchd config'"
for k in $keys; do
	grep -q "$k" "$D/etc/default/prefetch" || pf_fail "$k missing in /etc/default/prefetch"
	grep -q "$k" "$D/usr/share/man/man5/prefetch.5" || pf_fail "$k not documented in prefetch(5)"
done
# every line of the installed file is one the parser takes (no unknown key, no bad syntax)
out=$("$D/usr/sbin/prefetchd" config --check "$D/etc/default/prefetch") ||
	pf_fail "/etc/default/prefetch has bad lines: $out"

# Man pages render without warnings.
if command -v groff >/dev/null; then
	for m in "$D"/usr/share/man/man*/*; do
		w=$(groff -man -ww -z "$m" 2>&1) || pf_fail "groff $m failed"
		[ -z "$w" ] || pf_fail "groff warnings in $m: $w"
		if command -v man >/dev/null; then
			[ "$(MANWIDTH=80 man -l "$m" 2>/dev/null | wc -l)" -gt 20 ] || pf_fail "man -l $m renders nearly nothing"
		fi
	done
else
	pf_note "groff not installed: man pages not rendered"
fi
if command -v mandoc >/dev/null; then
	for m in "$D"/usr/share/man/man*/*; do mandoc -T lint -W warning "$m" || pf_fail "mandoc lint $m"; done
else
	pf_note "mandoc not installed: man pages not linted"
fi

# The units: verified as installed, with their paths pointing at the DESTDIR copies.
if command -v systemd-analyze >/dev/null; then
	U=$tmp/units
	mkdir -p "$U/sysinit.target.wants" "$U/multi-user.target.wants"
	for f in "$D$unitdir"/prefetch*; do
		sed -e "s|/usr/sbin/|$D/usr/sbin/|g" -e "s|$hookdir/|$D$hookdir/|g" "$f" >"$U/$(basename "$f")"
	done
	out=$(cd "$U" && systemd-analyze verify --man=no ./prefetch.service ./prefetch-stop.service ./prefetch-stop.timer \
		./prefetch-reorder.service 2>&1) || pf_fail "systemd-analyze verify: $out"
	[ -z "$out" ] || pf_fail "systemd-analyze verify: $out"
	# prefetch.service sandboxed as far as its work allows (issue 26: 5.7 MEDIUM before UMask=, IPAddressDeny=,
	# ProtectHostname= and the system call deny-list); 'systemd-analyze security --offline' is systemd >= 252.
	if sec=$(systemd-analyze security --offline=yes "$U/prefetch.service" 2>/dev/null); then
		level=$(echo "$sec" | sed -n 's/.*Overall exposure level for prefetch.service: \([0-9.]*\).*/\1/p')
		awk -v l="$level" 'BEGIN { exit !(l != "" && l <= 4.5) }' || pf_fail "prefetch.service exposure $level (want <= 4.5)"
		pf_note "prefetch.service: systemd-analyze security exposure $level"
	fi
	# Enabled as [Install] says, the boot transaction has no ordering cycle.
	ln -s ../prefetch.service "$U/sysinit.target.wants/"
	ln -s ../prefetch-stop.timer ../prefetch-reorder.service "$U/multi-user.target.wants/"
	for t in graphical.target multi-user.target; do
		out=$(SYSTEMD_UNIT_PATH=$U: systemd-analyze verify --man=no "$t" 2>&1)
		echo "$out" | grep -qi "cycle" && pf_fail "ordering cycle with $t: $out"
	done
	grep -q '^Also=prefetch-stop.timer prefetch-reorder.service' "$U/prefetch.service" || pf_fail "prefetch.service Also="
	# The helper units are sandboxed (exposure at most 5 of 10); prefetch.service keeps what fanotify needs
	# (CAP_SYS_ADMIN, the host's mounts: see its comments) and must not get worse than it is.
	if systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
		for ux in prefetch-stop.service:5.0 prefetch-reorder.service:5.0 prefetch.service:5.7; do
			u=${ux%%:*} max=${ux#*:}
			out=$(cd "$U" && systemd-analyze security --offline=yes --no-pager "./$u" 2>&1)
			level=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
			[ -n "$level" ] || pf_fail "systemd-analyze security $u: $out"
			awk -v l="$level" -v m="$max" 'BEGIN { exit !(l <= m) }' || pf_fail "$u: exposure $level > $max"
			pf_note "$u: exposure $level (at most $max)"
		done
	else
		pf_note "systemd-analyze security has no --offline here: exposure not checked"
	fi
else
	pf_note "systemd-analyze not installed: units not verified"
fi

# The unit's bounding set holds every capability prefetchd keeps for tracing (daemon/cli/privileges.h): one
# missing there is silently unavailable to the daemon.
bound=$(sed -n 's/^CapabilityBoundingSet=//p' "$GEN/systemd/prefetch.service")
caps=$(sed -n 's/^#define PF_TRACER_CAPS { \(.*\) }$/\1/p' "$TOP/daemon/cli/privileges.h" | tr -d ',')
[ -n "$caps" ] || pf_fail "PF_TRACER_CAPS not found in daemon/cli/privileges.h"
for c in $caps CAP_SYS_ADMIN; do
	[[ " $bound " == *" $c "* ]] || pf_fail "prefetch.service CapabilityBoundingSet lacks $c"
done

# prefetch-stop.service's shell command as systemd passes it ($$ -> $): the delay and the runtime dir come from
# 'prefetchd config --get' (here a wrapper points it at a test file, whose bad line is reported, not fatal), the
# stop finds no tracer and exits 0.  No unit reads the file with EnvironmentFile= (a second parser).
grep -n '^EnvironmentFile=' "$GEN"/systemd/*.service && pf_fail "a unit reads the configuration with EnvironmentFile="
printf 'LOGIN_TRACING_DELAY=0\nPREFETCH_RUNTIME_DIR=%s\nTRACE_TIMEOUT = 5\n' "$tmp/run" >"$tmp/stop.conf"
printf '#!/bin/sh\n[ "$1" = config ] && { shift; exec "%s" config --config "%s" "$@"; }\nexec "%s" "$@"\n' \
	"$D/usr/sbin/prefetchd" "$tmp/stop.conf" "$D/usr/sbin/prefetchd" >"$tmp/pfd"
chmod +x "$tmp/pfd"
cmd=$(sed -n "s|^ExecStart=/bin/sh -c '\(.*\)'\$|\1|p" "$GEN/systemd/prefetch-stop.service" | sed 's/\$\$/$/g')
[ -n "$cmd" ] || pf_fail "cannot read prefetch-stop.service's ExecStart"
cmd=${cmd//\/usr\/sbin\/prefetchd/$tmp\/pfd}
mkdir -p "$tmp/run"
out=$(timeout 20 /bin/sh -c "$cmd" 2>&1) || pf_fail "stop command: $out"
echo "$out" | grep -q "no tracer running ($tmp/run/prefetchd.pid)" || pf_fail "stop command did not use the runtime dir: $out"

# prefetch.service stays active when the tracer started from the initramfs holds the pid file (its ExecStart
# exits at once), and its ExecStop ends whichever tracer runs through the pid file.
grep -q '^RemainAfterExit=yes$' "$GEN/systemd/prefetch.service" || pf_fail "prefetch.service: RemainAfterExit=yes"
cmd=$(sed -n "s|^ExecStop=/bin/sh -c '\(.*\)'\$|\1|p" "$GEN/systemd/prefetch.service" | sed 's/\$\$/$/g')
[ -n "$cmd" ] || pf_fail "cannot read prefetch.service's ExecStop"
cmd=${cmd//\/usr\/sbin\/prefetchd/$tmp\/pfd}
out=$(timeout 20 /bin/sh -c "$cmd" 2>&1) || pf_fail "prefetch.service stop command: $out"
echo "$out" | grep -q "no tracer running ($tmp/run/prefetchd.pid)" || pf_fail "prefetch.service stop command: $out"

# debian/changelog names NEWS's version, with a Debian revision.
if [ -f "$TOP/debian/changelog" ]; then
	read -r _ nv _ <"$TOP/NEWS"
	dv=$(sed -n '1s/^prefetch (\([^)]*\)).*/\1/p' "$TOP/debian/changelog")
	[ "${dv%-*}" = "$nv" ] && [ "$dv" != "$nv" ] || pf_fail "debian/changelog's version $dv is not NEWS's $nv with a Debian revision"
fi

# A second install keeps a changed /etc/default/prefetch.
echo "# local change" >>"$D/etc/default/prefetch"
make -s -C "$TOP" $san install DESTDIR="$D" >"$tmp/install.log" 2>&1 || pf_fail "second make install"
grep -q "# local change" "$D/etc/default/prefetch" || pf_fail "make install overwrote /etc/default/prefetch"

make -s -C "$TOP" $san uninstall DESTDIR="$D" >"$tmp/uninstall.log" 2>&1 || pf_fail "make uninstall"
left=$(cd "$D" && find . -type f ! -path ./etc/default/prefetch)
[ -z "$left" ] || pf_fail "make uninstall left: $left"
[ -f "$D/etc/default/prefetch" ] || pf_fail "make uninstall removed the configuration"

# Paths from the Makefile reach every installed file: with SBINDIR=/usr/local/sbin no unit, script, hook or man
# page names /usr/sbin (a unit's ConditionPathExists= would otherwise skip it silently), and no placeholder is left.
# (A build tree of its own: SBINDIR is compiled in, and the tests' binaries must stay as they are.)
D2=$tmp/local
make -s -j2 -C "$TOP" $san install DESTDIR="$D2" SBINDIR=/usr/local/sbin BUILD="$tmp/build" >"$tmp/install2.log" 2>&1 ||
	{ cat "$tmp/install2.log"; pf_fail "make install SBINDIR=/usr/local/sbin"; }
[ -x "$D2/usr/local/sbin/prefetchd" ] || pf_fail "SBINDIR=/usr/local/sbin: prefetchd not installed there"
grep -q '^ExecStart=/usr/local/sbin/prefetchd boot$' "$D2$unitdir/prefetch.service" || pf_fail "SBINDIR: prefetch.service ExecStart"
grep -q '^ConditionPathExists=/usr/local/sbin/prefetchd$' "$D2$unitdir/prefetch.service" || pf_fail "SBINDIR: ConditionPathExists"
left=$(grep -rl '/usr/sbin' "$D2$unitdir" "$D2$hookdir" "$D2/etc/init.d" "$D2/usr/share/initramfs-tools" "$D2/usr/lib/dracut" "$D2/usr/share/man")
[ -z "$left" ] && pf_fail "SBINDIR=/usr/local/sbin: still /usr/sbin in: $left"
left=$(grep -rlI '@[A-Z]*@' "$D2")
[ -z "$left" ] || pf_fail "placeholders left in: $left"
# The installed prefetchd runs the initramfs fallback from SBINDIR too.
strings "$D2/usr/local/sbin/prefetchd" | grep -q '/usr/local/sbin/prefetchd' || pf_fail "SBINDIR not compiled into prefetchd"
# A distribution's flags are added to ours, never replace them; -Werror only in a git checkout unless WERROR says.
make -s -j2 -C "$TOP" $san all BUILD="$tmp/build" SBINDIR=/usr/local/sbin CPPFLAGS=-DPF_DISTRO_FLAG=1 \
	CFLAGS=-fstack-protector-strong LDFLAGS=-Wl,-z,relro WERROR=0 >"$tmp/flags.log" 2>&1 ||
	{ cat "$tmp/flags.log"; pf_fail "make with CPPFLAGS/CFLAGS/LDFLAGS on the command line"; }
flags=$(cat "$tmp/build/.flags")
for f in -D_GNU_SOURCE -DPREFETCH_VERSION= -DPF_DISTRO_FLAG=1 -fstack-protector-strong -Wall; do
	[[ $flags == *" $f"* ]] || pf_fail "compile flags lack $f: $flags"
done
[[ $flags == *-Werror* ]] && pf_fail "WERROR=0 still compiles with -Werror"
if [ -e "$TOP/.git" ]; then
	[[ $(cat "$BUILD/.flags") == *-Werror* ]] || pf_fail "a git checkout's build lacks -Werror"
fi
# Man pages carry the version and the ISO date of NEWS's first line.
read -r _ version date _ < "$TOP/NEWS"
date=${date//[()]/}
grep -q "^\.TH PREFETCHD 8 \"$date\" \"prefetch $version\"" "$D/usr/share/man/man8/prefetchd.8" 2>/dev/null ||
	grep -q "^\.TH PREFETCHD 8 \"$date\" \"prefetch $version\"" "$D2/usr/share/man/man8/prefetchd.8" ||
	pf_fail "prefetchd.8 .TH does not carry $version ($date) from NEWS"
"$D2/usr/local/sbin/prefetchd" --version | grep -qx "prefetchd $version" || pf_fail "prefetchd --version is not $version"
exit 0
