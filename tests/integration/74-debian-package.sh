#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages, prefetch and prefetch-image: built as an unprivileged user from a copy of the tree (dpkg-buildpackage -us -uc -b,
# DEB_BUILD_OPTIONS=nocheck: the unprivileged make check runs in CI's own package build, .ci/run), lintian
# without an error or a warning, the .deb's files exactly the expected list with their modes, its version
# NEWS's with a Debian revision, and its maintainer scripts: units and init scripts enabled but never started,
# the initramfs refreshed through the update-initramfs trigger only, /var/lib/prefetch made 0700, a running
# tracer ended on remove, purge removing the state; README.md installed as documentation.  Nothing is installed on this machine (that would enable the units on the host).
# Runs as any user: as root the build drops to nobody, otherwise it runs as the user itself; either way with
# HOME and TMPDIR in the test's directory (lintian leaves its caches in TMPDIR).
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1
[ -n "${DEB_BUILD_ARCH:-}${DEB_HOST_ARCH:-}" ] && pf_skip "inside a Debian package build (dpkg-buildpackage does not nest)"
for t in dpkg-buildpackage lintian dh fakeroot; do command -v "$t" >/dev/null || pf_skip "$t not installed (dpkg-dev, lintian, debhelper)"; done
[ -f "$TOP/debian/control" ] || pf_skip "no debian/ in this tree"
[ "$(id -u)" -ne 0 ] || command -v setpriv >/dev/null || pf_skip "setpriv (util-linux) not installed"

tmp=$(pf_tmpdir)
chmod 0755 "$tmp"
src=$tmp/prefetch
mkdir "$src"
# the tree without build products, owned by the build user (nobody)
tar -C "$TOP" --exclude=./build --exclude=./.git --exclude=./prefetchd --exclude=./prefetch-reorder \
	--exclude='./prefetch-*.tar.gz' --exclude='./tests/simdisk/simdisk' -cf - . | tar -C "$src" -xf - ||
	pf_fail "copying the tree"
if [ "$(id -u)" -eq 0 ]; then
	chown -R 65534:65534 "$tmp"
	as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp" TMPDIR="$tmp" "$@"; }
else
	as_user() { env HOME="$tmp" TMPDIR="$tmp" "$@"; }
fi

(cd "$src" && as_user env DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 ||
	{ tail -40 "$tmp/build.log"; pf_fail "dpkg-buildpackage as an unprivileged user"; }
read -r _ nv _ <"$TOP/NEWS"
dv=$(sed -n '1s/^prefetch (\([^)]*\)).*/\1/p' "$TOP/debian/changelog")
[ "${dv%-*}" = "$nv" ] && [ "$dv" != "$nv" ] || pf_fail "debian/changelog's version $dv is not NEWS's $nv with a Debian revision"
arch=$(dpkg --print-architecture)
deb=$tmp/prefetch_${dv}_$arch.deb
changes=$tmp/prefetch_${dv}_$arch.changes
[ -f "$deb" ] && [ -f "$changes" ] || pf_fail "no $deb or $changes: $(ls "$tmp")"
[ "$(dpkg-deb -f "$deb" Version)" = "$dv" ] || pf_fail "the .deb's version is not $dv"

# lintian: no error, no warning (info and pedantic tags listed)
(cd "$tmp" && as_user lintian -I --pedantic "$changes") >"$tmp/lintian.log" 2>&1
grep -E '^[EW]: ' "$tmp/lintian.log" && pf_fail "lintian reports errors or warnings"
grep -E '^[A-Z]: ' "$tmp/lintian.log" | sed 's/^/lintian: /'
pf_note "lintian: $(grep -c -E '^[IPX]: ' "$tmp/lintian.log") info/pedantic/experimental tags, no errors or warnings"

# the files, with their modes
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $1, $6 }' | sort >"$tmp/files"
sort >"$tmp/want" <<'LIST'
-rw-r--r-- ./etc/default/prefetch
-rwxr-xr-x ./etc/init.d/prefetch
-rwxr-xr-x ./etc/init.d/prefetch-reorder
-rwxr-xr-x ./etc/init.d/prefetch-stop
-rw-r--r-- ./lib/systemd/system/prefetch-reorder.service
-rw-r--r-- ./lib/systemd/system/prefetch-stop.service
-rw-r--r-- ./lib/systemd/system/prefetch-stop.timer
-rw-r--r-- ./lib/systemd/system/prefetch.service
-rwxr-xr-x ./lib/systemd/system-shutdown/prefetch-reorder
-rwxr-xr-x ./usr/sbin/prefetch-reorder
-rwxr-xr-x ./usr/sbin/prefetchd
-rw-r--r-- ./usr/share/doc/prefetch/README.Debian
-rw-r--r-- ./usr/share/doc/prefetch/README.md.gz
-rw-r--r-- ./usr/share/doc/prefetch/changelog.Debian.gz
-rw-r--r-- ./usr/share/doc/prefetch/copyright
-rwxr-xr-x ./usr/share/initramfs-tools/hooks/prefetch
-rwxr-xr-x ./usr/share/initramfs-tools/scripts/local-bottom/prefetch
-rw-r--r-- ./usr/share/lintian/overrides/prefetch
-rw-r--r-- ./usr/share/man/man5/prefetch.5.gz
-rw-r--r-- ./usr/share/man/man8/prefetch-reorder.8.gz
-rw-r--r-- ./usr/share/man/man8/prefetchd.8.gz
LIST
diff -u "$tmp/want" "$tmp/files" || pf_fail "the .deb's files differ from the expected list"
dpkg-deb -c "$deb" | grep -q -E ' \./(var|run)/' && pf_fail "the .deb ships /var or /run (postinst makes the state dir)"

# the control data
f() { dpkg-deb -f "$deb" "$1"; }
[ "$(f Package)" = prefetch ] && [ "$(f Architecture)" = "$arch" ] || pf_fail "Package/Architecture"
[[ $(f Conflicts) == *e4rat* && $(f Conflicts) == *ureadahead* ]] || pf_fail "Conflicts: $(f Conflicts)"
grep -q '^Architecture: linux-any$' "$TOP/debian/control" || pf_fail "debian/control: Architecture: linux-any"
grep -q '^Rules-Requires-Root: no$' "$TOP/debian/control" || pf_fail "debian/control: Rules-Requires-Root: no"
ctl=$tmp/control
mkdir "$ctl" && dpkg-deb -e "$deb" "$ctl" || pf_fail "dpkg-deb -e"
[ "$(grep -v '^#' "$ctl/triggers" | grep -v '^$')" = "activate-noawait update-initramfs" ] || pf_fail "triggers: $(cat "$ctl/triggers")"
grep -q 'update-initramfs' "$ctl/postinst" "$ctl/postrm" "$ctl/preinst" "$ctl/prerm" 2>/dev/null &&
	pf_fail "a maintainer script runs update-initramfs (the trigger does that)"
grep -q -E 'deb-systemd-invoke (start|restart|try-restart)|invoke-rc.d [^ ]+ (start|restart)' "$ctl"/*inst "$ctl"/*rm 2>/dev/null &&
	pf_fail "a maintainer script starts or restarts a unit or init script"
for u in prefetch.service prefetch-stop.timer prefetch-reorder.service; do
	grep -q "deb-systemd-helper enable '$u'" "$ctl/postinst" || pf_fail "postinst does not enable $u"
done
for s in prefetch prefetch-stop prefetch-reorder; do
	grep -q "update-rc.d $s defaults" "$ctl/postinst" || pf_fail "postinst does not link the init script $s"
	grep -q "update-rc.d $s remove" "$ctl/postrm" || pf_fail "postrm does not unlink the init script $s"
done
grep -q 'chmod 0700 /var/lib/prefetch' "$ctl/postinst" || pf_fail "postinst does not make /var/lib/prefetch 0700"
sed -n '/^purge)/,/;;/p' "$ctl/postrm" | grep -q 'rm -rf /var/lib/prefetch /run/prefetch' || pf_fail "postrm purge keeps the state"
grep -qx '/etc/default/prefetch' "$ctl/conffiles" || pf_fail "/etc/default/prefetch is not a conffile"
for s in postinst postrm preinst prerm; do sh -n "$ctl/$s" || pf_fail "$s: syntax"; done
# prerm ends a running tracer on remove (before the units are stopped and the binary goes), so that nothing
# writes into /var/lib/prefetch after a purge; never on upgrade (tracing a boot is cut short by no upgrade)
sed -n '/^remove | deconfigure)/,/;;/p' "$ctl/prerm" | grep -q 'prefetchd stop --pid-file' ||
	pf_fail "prerm does not stop a running tracer on remove: $(cat "$ctl/prerm")"
first_stop=$(grep -n 'deb-systemd-invoke\|invoke-rc.d' "$ctl/prerm" | head -1 | cut -d: -f1)
[ -z "$first_stop" ] || [ "$(grep -n 'prefetchd stop' "$ctl/prerm" | head -1 | cut -d: -f1)" -lt "$first_stop" ] ||
	pf_fail "prerm stops the units before the tracer: $(cat "$ctl/prerm")"
pf_note "$(basename "$deb"): $(wc -l <"$tmp/files") files, $(f Installed-Size) KiB installed"

# prefetch-image: its own package, so that prefetch alone pulls in no qemu
[[ "$(f Depends) $(f Recommends) $(f Suggests)" == *qemu* ]] && pf_fail "prefetch depends on or recommends qemu: $(f Depends); $(f Recommends)"
ideb=$tmp/prefetch-image_${dv}_all.deb
[ -f "$ideb" ] || pf_fail "no $ideb: $(ls "$tmp")"
fi_() { dpkg-deb -f "$ideb" "$1"; }
[ "$(fi_ Architecture)" = all ] || pf_fail "prefetch-image: Architecture $(fi_ Architecture)"
[[ $(fi_ Depends) == *"prefetch (>= $dv)"* && $(fi_ Depends) == *e2fsprogs* ]] || pf_fail "prefetch-image: Depends: $(fi_ Depends)"
[[ $(fi_ Recommends) == *qemu-system-x86* && $(fi_ Recommends) == *qemu-utils* ]] || pf_fail "prefetch-image: Recommends: $(fi_ Recommends)"
dpkg-deb -c "$ideb" | awk '$1 !~ /^d/ { print $1, $6 }' | sort >"$tmp/ifiles"
sort >"$tmp/iwant" <<'LIST'
-rwxr-xr-x ./usr/bin/prefetch-image
-rw-r--r-- ./usr/share/doc/prefetch-image/changelog.Debian.gz
-rw-r--r-- ./usr/share/doc/prefetch-image/copyright
-rw-r--r-- ./usr/share/lintian/overrides/prefetch-image
-rw-r--r-- ./usr/share/man/man1/prefetch-image.1.gz
-rw-r--r-- ./usr/share/prefetch/qemu-guest.sh
LIST
diff -u "$tmp/iwant" "$tmp/ifiles" || pf_fail "prefetch-image's files differ from the expected list"
pf_note "$(basename "$ideb"): $(wc -l <"$tmp/ifiles") files; qemu recommended by it, not by prefetch"
exit 0
