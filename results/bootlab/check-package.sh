#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bootlab: the Debian package's install and purge, in a chroot of the base guest (no boot).
#   check-package.sh [DEB]     (default: the package of the project tree, built by 'build-guest.sh deb')
# In a copy of $CACHE/rootfs-base (an ext4 image on tmpfs, loop-mounted): list every path (type, mode, owner, and
# a checksum of regular files), then
#   apt-get install ./prefetch_*.deb            (units enabled, none started; the trigger rebuilds the initramfs)
#   two 'prefetchd boot' runs in the chroot      (proc, sys, dev, run mounted; each stopped by 'prefetchd stop'):
#                                                 the first traces, the second replays what the first learnt (or is
#                                                 a control boot) and traces again, so that /var/lib/prefetch and
#                                                 /run/prefetch hold what boots leave (traces, layout, boottime.log,
#                                                 the self-check's state)
#   apt-get purge -y prefetch
# and list again: every path that is new, gone or changed against the first list, outside dpkg's and apt's own
# records and logs, is printed.  Expected: nothing new, nothing gone; changed only the initramfs (rebuilt by the
# trigger at purge, now without prefetch's files: checked).  Exit 0 when so, 1 otherwise.
source "$(dirname "$0")/lab.sh"
set +e +o pipefail
export LC_ALL=C
base=$CACHE/rootfs-base
[ -e "$base/.bootlab-ok" ] || die "no base guest: $LAB_DIR/build-guest.sh base"
deb=${1:-$("$LAB_DIR/build-guest.sh" deb | tail -n 1)}
[ -f "$deb" ] || die "no package $deb"

root=$(mktemp -d "$CACHE/pkgcheck.XXXXXX")
work=$(mktemp -d /dev/shm/pkgcheck.XXXXXX)
MOUNTS=() LOOP=
umount_all() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[$i]}" 2>/dev/null || umount -l "${MOUNTS[$i]}"; done
	MOUNTS=()
}
cleanup() {
	[ -n "${PF_PID:-}" ] && kill "$PF_PID" 2>/dev/null
	umount_all
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rmdir "$root" 2>/dev/null || rm -rf "$root"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One line per path: path, type, mode, owner, and for regular files an md5 of the contents.
snapshot() {
	(cd "$root" && find . -xdev -path ./proc -prune -o -path ./sys -prune -o -path ./dev -prune -o \
		-printf '%p\t%y\t%m\t%u:%g\n' | LC_ALL=C sort) >"$1.paths"
	(cd "$root" && find . -xdev -path ./proc -prune -o -path ./sys -prune -o -path ./dev -prune -o \
		-type f -print0 | xargs -0 md5sum | sort) >"$1.sums"
}
# dpkg's and apt's own records and logs: they change with every install and purge by design.
BOOKKEEPING='^\./(var/lib/dpkg/|var/log/(dpkg\.log|apt/|alternatives\.log)|var/cache/(apt|debconf|ldconfig)/|var/lib/apt/|etc/ld\.so\.cache)'

log "package: $deb ($(dpkg-deb -f "$deb" Package Version | tr '\n' ' '))"
# The copy on its own ext4 filesystem (an image on tmpfs, loop-mounted): the tracer wants a local block-device
# filesystem with a UUID as /, and it then watches that filesystem only, not the host's.
truncate -s "$IMG_SIZE" "$work/root.img"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 -d "$base" "$work/root.img" || die "mkfs.ext4 failed"
LOOP=$(losetup -f --show "$work/root.img") || die "losetup failed"
mount "$LOOP" "$root" && MOUNTS+=("$root") || die "mount failed"
rm -f "$root/.bootlab-ok"
snapshot "$work/before"

echo "== install: apt-get install ./$(basename "$deb")"
install_deb "$root" "$deb" 2>&1 | grep -E '^(Setting up|Created symlink|Processing triggers|update-initramfs|E:)' | grep -v 'posix_openpt'
chroot "$root" dpkg-query -W -f='${Package} ${Version} ${Status}\n' prefetch
echo "enabled: $(cd "$root/etc/systemd/system" && ls -d -- *.wants/prefetch* 2>/dev/null | tr '\n' ' ')"
kver=$(basename "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -n 1)"); kver=${kver#vmlinuz-}
echo "initramfs after install: $(chroot "$root" lsinitramfs "/boot/initrd.img-$kver" | grep -c prefetch) prefetch files" \
	"($(chroot "$root" lsinitramfs "/boot/initrd.img-$kver" | grep prefetch | tr '\n' ' '))"

echo "== state: two 'prefetchd boot' runs in the chroot"
for m in proc sys dev run; do
	case $m in
	proc) mount -t proc proc "$root/proc" ;;
	sys) mount -t sysfs sys "$root/sys" ;;
	dev) mount --bind /dev "$root/dev" ;;
	run) mount -t tmpfs -o mode=0755 run "$root/run" ;;
	esac && MOUNTS+=("$root/$m")
done
# Two runs: the first traces (no layout yet), the second replays the layout the first left and traces again.
for n in 1 2; do
	chroot "$root" /usr/sbin/prefetchd boot >"$work/boot$n.log" 2>&1 &
	PF_PID=$!
	sleep 2
	# some reads for it to trace, as a boot's would be
	chroot "$root" /bin/sh -c 'ls -R /usr/lib/systemd /etc >/dev/null; cat /usr/bin/apt* /lib/systemd/systemd >/dev/null' || true
	sleep 1
	chroot "$root" /usr/sbin/prefetchd stop --timeout 60 2>&1 | sed "s/^/  run $n: /"
	wait "$PF_PID"; echo "  run $n: prefetchd boot exited $?"; PF_PID=
	sed "s/^/  run $n log: /" "$work/boot$n.log" | tail -n 6
done
echo "state left by the runs:"
(cd "$root" && find var/lib/prefetch run/prefetch -printf '  /%p %y %m %s\n' 2>/dev/null | sort)
chroot "$root" /usr/sbin/prefetchd status 2>&1 | sed 's/^/  status: /' | head -n 20

echo "== purge: apt-get purge -y prefetch"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"; chmod 0755 "$root/usr/sbin/policy-rc.d"
DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get purge -y -q prefetch 2>&1 |
	grep -E '^(Removing|Purging|Processing triggers|update-initramfs|E:|dpkg: warning)' | grep -v 'posix_openpt'
rm -f "$root/usr/sbin/policy-rc.d"
echo "dpkg: $(chroot "$root" dpkg-query -W -f='${Package} ${Status}\n' prefetch 2>&1)"
echo "left in /run (the chroot's tmpfs, gone at the next boot anyway): $(cd "$root/run" && find . -mindepth 1 | tr '\n' ' ')"
for ((i = ${#MOUNTS[@]} - 1; i >= 1; i--)); do umount "${MOUNTS[$i]}" || umount -l "${MOUNTS[$i]}"; done
MOUNTS=("$root")
chroot "$root" apt-get clean
snapshot "$work/after"

echo "== what the install, the runs and the purge left (against the base before the install)"
fail=0
new=$(comm -13 <(cut -f1 "$work/before.paths") <(cut -f1 "$work/after.paths") | grep -Ev "$BOOKKEEPING" || true)
gone=$(comm -23 <(cut -f1 "$work/before.paths") <(cut -f1 "$work/after.paths") | grep -Ev "$BOOKKEEPING" || true)
attrs=$(comm -13 "$work/before.paths" "$work/after.paths" | cut -f1 | grep -Fxv -f <(printf '%s\n' "$new") |
	grep -Ev "$BOOKKEEPING" || true)
changed=$(comm -13 "$work/before.sums" "$work/after.sums" | sed 's/^[0-9a-f]*  //' |
	grep -Fxv -f <(printf '%s\n' "$new") | grep -Ev "$BOOKKEEPING" || true)
book=$(comm -3 <(cut -f1 "$work/before.paths") <(cut -f1 "$work/after.paths") | sed 's/^\t/+ /; t; s/^/- /' |
	grep -E "^[-+] ${BOOKKEEPING#^}" || true)
printf 'new paths:     %s\n' "$(grep -c . <<<"$new" || true)"; [ -n "$new" ] && sed 's/^/  + /' <<<"$new" && fail=1
printf 'gone paths:    %s\n' "$(grep -c . <<<"$gone" || true)"; [ -n "$gone" ] && sed 's/^/  - /' <<<"$gone" && fail=1
printf 'mode/owner changed: %s\n' "$(grep -c . <<<"$attrs" || true)"; [ -n "$attrs" ] && sed 's/^/  ~ /' <<<"$attrs" && fail=1
printf 'content changed: %s\n' "$(grep -c . <<<"$changed" || true)"
while read -r f; do
	[ -n "$f" ] || continue
	case "$f" in
	./boot/initrd.img-*)
		k=$(chroot "$root" lsinitramfs "/${f#./}" | grep -c prefetch || true)
		echo "  * $f (rebuilt by the initramfs trigger at purge; prefetch files in it now: $k)"
		[ "$k" -eq 0 ] || fail=1 ;;
	*) echo "  * $f"; fail=1 ;;
	esac
done <<<"$changed"
echo "dpkg's and apt's records and logs, not counted (+ new, - gone):"; sed 's/^/  /' <<<"$book"
if [ $fail -eq 0 ]; then echo "RESULT: nothing left behind"; else echo "RESULT: leftovers (above)"; fi
exit $fail
