#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The sysvinit scripts' LSB headers, ordered by insserv on a test root among stubs that carry the headers of
# Debian's own boot and shutdown scripts (tests/data/insserv): in rc0.d and rc6.d prefetch-reorder stops after
# umountroot (the root is read-only) and before halt, reboot and kexec (a script in halt's slot would run after
# it: never); prefetch-stop stops before sendsigs and umountfs (the trace is stored while /var is mounted);
# in rcS.d prefetch starts after mountkernfs and before udev and checkroot; prefetch-stop starts in the default
# runlevel after the usual last services.  Without the Should-Stop: on halt/reboot/kexec, insserv puts
# prefetch-reorder beside halt: the test shows that it would notice.  Runs unprivileged.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
INSSERV=$(command -v insserv || { [ -x /usr/sbin/insserv ] && echo /usr/sbin/insserv; } || { [ -x /sbin/insserv ] && echo /sbin/insserv; })
[ -n "$INSSERV" ] || pf_skip "insserv not installed"
fix=$TOP/tests/data/insserv
tmp=$(pf_tmpdir)

# order ROOT: insserv run on ROOT/etc/init.d with every script in it, as update-rc.d does one by one
order() {
	local root=$1
	mkdir -p "$root/overrides"
	(cd "$root/etc/init.d" && "$INSSERV" -p "$root/etc/init.d" -c "$fix/insserv.conf" -o "$root/overrides" *) \
		>"$root/insserv.log" 2>&1 || { cat "$root/insserv.log"; pf_fail "insserv failed"; }
}
# num ROOT RUNLEVEL K|S SCRIPT: the script's sequence number there (fails when it has no link)
num() {
	local l; l=$(cd "$1/etc/rc$2.d" && ls -d "$3"[0-9][0-9]"$4" 2>/dev/null) || pf_fail "no $3 link for $4 in rc$2.d: $(ls "$1/etc/rc$2.d" | tr '\n' ' ')"
	echo $((10#${l:1:2}))
}
before() { # ROOT RUNLEVEL K|S A B: A runs strictly before B
	local a b; a=$(num "$1" "$2" "$3" "$4") && b=$(num "$1" "$2" "$3" "$5") || exit 1
	[ "$a" -lt "$b" ] || pf_fail "rc$2.d: $4 ($3$a) does not run before $5 ($3$b): $(ls "$1/etc/rc$2.d" | tr '\n' ' ')"
}

root=$tmp/root
mkdir -p "$root/etc"
cp -r "$fix/scripts" "$root/etc/init.d"
cp "$GEN"/initscripts/prefetch "$GEN"/initscripts/prefetch-stop "$GEN"/initscripts/prefetch-reorder "$root/etc/init.d/"
order "$root"
grep -i -E 'warning|loop|error' "$root/insserv.log" && pf_fail "insserv warned: $(cat "$root/insserv.log")"
for rl in 0 6; do
	before "$root" $rl K prefetch-stop sendsigs
	before "$root" $rl K prefetch-stop umountfs
	before "$root" $rl K umountroot prefetch-reorder
	before "$root" $rl K umountfs prefetch-reorder
done
before "$root" 0 K prefetch-reorder halt
before "$root" 6 K prefetch-reorder reboot
before "$root" 6 K prefetch-reorder kexec
before "$root" S S mountkernfs.sh prefetch
before "$root" S S prefetch udev
before "$root" S S prefetch checkroot.sh
for rl in 2 3 4 5; do before "$root" $rl S cron prefetch-stop; done
# prefetch-reorder stops (runs) in 0 and 6; its start links in 2-5 do nothing but let update-rc.d disable it
# ('systemctl disable prefetch-reorder.service' calls update-rc.d, which refuses a script without start runlevels).
for rl in 0 6; do ls "$root/etc/rc$rl.d" | grep -q '^K[0-9]*prefetch-reorder$' || pf_fail "prefetch-reorder not stopped in rc$rl"; done
for rl in 2 3 4 5; do ls "$root/etc/rc$rl.d" | grep -q '^S[0-9]*prefetch-reorder$' || pf_fail "prefetch-reorder has no start link in rc$rl"; done
ls "$root"/etc/rc[0-6].d | grep -q '^K[0-9]*prefetch-reorder$' || pf_fail "prefetch-reorder never stopped"
pf_note "rc0.d: $(ls "$root/etc/rc0.d" | tr '\n' ' ')"
pf_note "rc6.d: $(ls "$root/etc/rc6.d" | tr '\n' ' ')"
pf_note "rcS.d: $(ls "$root/etc/rcS.d" | tr '\n' ' ')"

# The test can tell: without the Should-Stop: line, prefetch-reorder shares halt's slot (and runs after it).
root2=$tmp/root2
mkdir -p "$root2/etc"
cp -r "$fix/scripts" "$root2/etc/init.d"
cp "$GEN"/initscripts/prefetch "$GEN"/initscripts/prefetch-stop "$root2/etc/init.d/"
grep -v '^# Should-Stop:' "$GEN/initscripts/prefetch-reorder" >"$root2/etc/init.d/prefetch-reorder"
order "$root2"
[ "$(num "$root2" 0 K prefetch-reorder)" -lt "$(num "$root2" 0 K halt)" ] &&
	pf_fail "without Should-Stop: halt, prefetch-reorder still comes before halt: the check above proves nothing"
exit 0
