#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bootlab: build (once, cached) the Debian 12 guest and one golden disk image per setup.
#   build-guest.sh base            debootstrap + guest configuration  -> $CACHE/rootfs-base, vmlinuz, initrd.img
#   build-guest.sh golden SETUP    base + this project installed, configured for SETUP -> $CACHE/golden-SETUP.img
#   build-guest.sh golden imaged   golden-reorder.img (built first when missing or of another commit) after
#                                  `prefetch-image build` of this tree -> $CACHE/golden-imaged.img (issue 30)
#   build-guest.sh keep TAG SETUP  golden-SETUP.img (and its .info, .initrd) copied to golden-SETUP@TAG.img, so
#                                  that run-series.sh can boot it as SETUP@TAG beside a newer build's SETUP
#   build-guest.sh deb             only build the Debian package of the project tree -> $CACHE/deb-COMMIT/
# SETUP: none (installed, its units disabled), prefetch (prefetch.service + stop timer), reorder (also
# ENABLE_FILE_REORDERING=1, so the shutdown hook reorders), selfcheck (prefetch with the self-check on:
# SELF_CHECK_INTERVAL=BOOTLAB_SELF_CHECK_INTERVAL, default 2 there). "warm" boots golden-none.img.
# BOOTLAB_INSTALL=deb (default): the project goes into the image as its Debian package, built from the project
# tree with dpkg-buildpackage (nocheck) and installed in the image root with apt-get, the way a user installs it
# (its postinst enables the units without starting them, its trigger runs update-initramfs);
# BOOTLAB_INSTALL=make: 'make install DESTDIR=' of the same tree (the lab's way before).
# BOOTLAB_DISK_MODEL=sd|ssd: the images for that simulated disk, golden-SETUP-MODEL.img, with PREFETCH_MEDIUM
# slow-flash / fast-flash in /etc/default/prefetch (the guest's virtio disk reports rotational=1 whatever the
# model, so prefetch's own detection would take it for a rotational disk).
# BOOTLAB_REORDER_TIME_BUDGET=S: REORDER_TIME_BUDGET in the prefetch setups' images (default: the package's).
# BOOTLAB_LOGS=ram: /var/log on a tmpfs in the guest (lab.sh says why), images golden-SETUP[-MODEL]-ramlog.img.
# BOOTLAB_ATIME=noatime: the root mounted noatime (lab.sh says why), images golden-...-noatime.img.
# BOOTLAB_ROOT_FS=xfs|btrfs: the guest's root on XFS, or on btrfs in Fedora's layout (the root in subvolume @,
# /home in @home, the kernel's rootflags=subvol=@), images golden-SETUP[-MODEL][-ramlog]-FS.img; ext4 (default)
# is the lab's image as before.  The guest's /etc/fstab names the type and options, and the image's initramfs
# must hold the filesystem's module.
source "$(dirname "$0")/lab.sh"

PACKAGES=systemd,systemd-sysv,udev,dbus,kmod,linux-image-amd64,cron,rsyslog,openssh-server,ifupdown
# Runtime libraries of prefetchd / prefetch-reorder (host build installed into the guest: same Debian 12).
PACKAGES+=,libext2fs2,libcom-err2,libblkid1,libsystemd0,libcap2,procps

# remove_tree DIR: a debootstrap cut off leaves the host's /proc (and /sys) mounted in its target; rm -rf would
# walk into them.  Unmount whatever lies below DIR first, and never cross into another filesystem.
remove_tree() {
	local m
	[ -e "$1" ] || return 0
	findmnt -rn -o TARGET | { grep -F "$1/" || true; } | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf --one-file-system "$1"
}

build_base() {
	local base=$CACHE/rootfs-base boot=$CACHE/rootfs.debootstrap
	[ -e "$base/.bootlab-ok" ] && { log "base guest cached: $base"; return 0; }
	mkdir -p "$CACHE"
	if [ ! -e "$boot/.debootstrap-ok" ]; then
		remove_tree "$boot"
		log "debootstrap --variant=minbase $SUITE from $MIRROR (a few minutes)"
		debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$boot" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
			die "debootstrap failed, see $CACHE/debootstrap.log"
		touch "$boot/.debootstrap-ok"
	fi
	rm -rf "$base.tmp"
	cp -a "$boot" "$base.tmp"
	local r=$base.tmp
	echo bootlab >"$r/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tbootlab\n' >"$r/etc/hosts"
	echo '/dev/vda / ext4 errors=remount-ro 0 1' >"$r/etc/fstab"
	printf 'auto lo\niface lo inet loopback\n' >"$r/etc/network/interfaces"
	chroot "$r" passwd -d root >/dev/null
	# A fixed machine id: no first-boot work, every boot of every setup alike.
	rm -f "$r/etc/machine-id"; chroot "$r" systemd-machine-id-setup >/dev/null 2>&1 || true
	chroot "$r" apt-get clean
	local k i
	k=$(ls "$r"/boot/vmlinuz-* | sort -V | tail -n 1); i=$(ls "$r"/boot/initrd.img-* | sort -V | tail -n 1)
	[ -f "$k" ] && [ -f "$i" ] || die "no kernel/initrd in the guest"
	cp "$k" "$CACHE/vmlinuz"; cp "$i" "$CACHE/initrd.img"
	touch "$r/.bootlab-ok"
	rm -rf "$base"; mv "$r" "$base"
	log "base guest ready: $base ($(du -sh "$base" | cut -f1))"
}

# The project as committed (HEAD, exported with git archive: others' unfinished edits stay out), built once per
# commit under $CACHE/src-COMMIT; BOOTLAB_SRC=worktree builds the work tree as it is instead.
# Sets PROJ_SRC (the tree to 'make install' from) and PROJ_COMMIT.
project_tree() {
	PROJ_COMMIT=$(git -C "$TOP" rev-parse --short=10 HEAD) || return 1
	if [ "${BOOTLAB_SRC:-head}" = worktree ]; then
		make -s -C "$TOP" all >/dev/null || return 1
		PROJ_SRC=$TOP PROJ_COMMIT="$PROJ_COMMIT+worktree"
		return 0
	fi
	PROJ_SRC=$CACHE/src-$PROJ_COMMIT
	if [ ! -e "$PROJ_SRC/.bootlab-built" ]; then
		rm -rf "$PROJ_SRC"; mkdir -p "$PROJ_SRC"
		git -C "$TOP" archive HEAD | tar -x -C "$PROJ_SRC" || return 1
		log "building prefetch $PROJ_COMMIT for the guest"
		make -s -C "$PROJ_SRC" all >"$PROJ_SRC/.build.log" 2>&1 ||
			{ log "build of $PROJ_COMMIT failed: $PROJ_SRC/.build.log"; return 1; }
		touch "$PROJ_SRC/.bootlab-built"
		# keep only the newest few builds
		ls -dt "$CACHE"/src-* 2>/dev/null | tail -n +4 | xargs -r rm -rf
	fi
}

# The Debian package of the project tree (PROJ_SRC, from project_tree): dpkg-buildpackage -us -uc -b with
# DEB_BUILD_OPTIONS=nocheck in a copy of the tree, so that the .deb lands in a scratch directory, never in the
# work tree or its parent; built once per commit (always again for BOOTLAB_SRC=worktree).  Sets PROJ_DEB.
deb_package() {
	local out=$CACHE/deb-${PROJ_COMMIT//+/-} ver
	PROJ_DEB=$(ls "$out"/prefetch_*.deb 2>/dev/null | head -n 1 || true)
	if [ -n "$PROJ_DEB" ] && [ "${BOOTLAB_SRC:-head}" != worktree ]; then return 0; fi
	ver=$(cd "$PROJ_SRC" && dpkg-parsechangelog -S Version) || return 1
	rm -rf "$out"; mkdir -p "$out"
	cp -a "$PROJ_SRC" "$out/prefetch-${ver%-*}"
	log "building the Debian package prefetch $ver of $PROJ_COMMIT (nocheck)"
	(cd "$out/prefetch-${ver%-*}" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b -Pnocheck) \
		>"$out/build.log" 2>&1 || { log "dpkg-buildpackage failed: $out/build.log"; return 1; }
	rm -rf "$out/prefetch-${ver%-*}"
	PROJ_DEB=$(ls "$out"/prefetch_*.deb | grep -v dbgsym | head -n 1)
	[ -f "$PROJ_DEB" ] || return 1
	# keep only the newest few packages
	ls -dt "$CACHE"/deb-* 2>/dev/null | tail -n +4 | xargs -r rm -rf
}

# Set KEY=value in a shell-style config file (replace the key's lines or append).
set_key() {
	local f=$1 k=$2 v=$3
	touch "$f"
	if grep -qE "^[#[:space:]]*$k=" "$f"; then sed -i -E "s|^[#[:space:]]*$k=.*|$k=$v|" "$f"; else echo "$k=$v" >>"$f"; fi
}

# The guest's root line(s) in the fstab FILE for ROOT_FS (the base's is ext4's): pass 0 for XFS and btrfs, as
# RHEL's and Fedora's installers write them (neither has a boot-time fsck).
root_fstab() {
	local f=$1
	case "$ROOT_FS" in
	ext4) return 0 ;;
	xfs) sed -i -E 's|^/dev/vda[[:space:]]+/[[:space:]].*|/dev/vda / xfs defaults 0 0|' "$f" ;;
	btrfs) sed -i -E 's|^/dev/vda[[:space:]]+/[[:space:]].*|/dev/vda / btrfs subvol=@ 0 0\n/dev/vda /home btrfs subvol=@home 0 0|' "$f" ;;
	esac
	grep -q "^/dev/vda / $ROOT_FS " "$f" || die "no $ROOT_FS root line in $f"
}

# The root's line in the fstab FILE mounted noatime too (BOOTLAB_ATIME=noatime).
root_noatime() {
	awk '$1 == "/dev/vda" && $2 == "/" { $4 = $4 == "defaults" ? "noatime" : "noatime," $4 } { print }' "$1" >"$1.new" &&
		mv "$1.new" "$1"
	grep -q '^/dev/vda / [a-z0-9]* noatime' "$1" || die "no noatime root line in $1"
}

# The kernel modules the initramfs needs to mount a root of type $1.
fs_modules_of() { case "$1" in ext4) echo ext4 ;; xfs) echo xfs ;; btrfs) echo btrfs ;; esac; }

# The image IMG of IMG_SIZE holding the tree DIR as the guest's root filesystem of type ROOT_FS.  ext4: mkfs.ext4
# -d, no lazy init (the guest must not do background inode-table/journal writes during measured boots).  XFS and
# btrfs: mkfs, then the tree copied in through a loop mount (mkfs.xfs has no directory import in Debian 12's
# xfsprogs, and mkfs.btrfs --rootdir makes no subvolumes); unmount_image undoes the mount on every path.
ROOT_MNT='' ROOT_LOOP=''
unmount_image() {
	local rc=0
	if [ -n "$ROOT_MNT" ] && mountpoint -q "$ROOT_MNT"; then umount "$ROOT_MNT" || { umount -l "$ROOT_MNT"; rc=1; }; fi
	if [ -n "$ROOT_LOOP" ]; then losetup -d "$ROOT_LOOP" || rc=1; fi
	if [ -n "$ROOT_MNT" ]; then rmdir "$ROOT_MNT" || rc=1; fi
	ROOT_MNT='' ROOT_LOOP=''
	return $rc
}
root_image() {
	local dir=$1 img=$2
	if [ "$ROOT_FS" = ext4 ]; then
		mkfs.ext4 -q -F -L bootlab -E lazy_itable_init=0,lazy_journal_init=0 -d "$dir" "$img" "$IMG_SIZE"
		return
	fi
	rm -f "$img"; truncate -s "$IMG_SIZE" "$img"
	case "$ROOT_FS" in
	xfs) mkfs.xfs -q -f -L bootlab "$img" ;;
	btrfs) mkfs.btrfs -q -f -L bootlab "$img" >/dev/null ;;
	esac
	ROOT_MNT=$(mktemp -d "$CACHE/mnt-root.XXXXXX")
	ROOT_LOOP=$(losetup --find --show "$img")
	mount -t "$ROOT_FS" "$ROOT_LOOP" "$ROOT_MNT"
	local root=$ROOT_MNT
	if [ "$ROOT_FS" = btrfs ]; then
		btrfs -q subvolume create "$ROOT_MNT/@"
		btrfs -q subvolume create "$ROOT_MNT/@home"
		root=$ROOT_MNT/@
	fi
	cp -a "$dir/." "$root/"
	if [ "$ROOT_FS" = btrfs ]; then # /home's files in @home; the root's /home is @home's empty mount point
		cp -a "$dir/home/." "$ROOT_MNT/@home/"
		find "$root/home" -mindepth 1 -delete
	fi
	sync -f "$root"
	unmount_image || die "could not unmount the $ROOT_FS image $img cleanly"
	log "root filesystem $ROOT_FS: $(blkid -p -o value -s TYPE "$img") $(du -h --apparent-size "$img" | cut -f1)"
}

build_golden() {
	local setup=$1 dir img
	case "$setup" in none|prefetch|reorder|selfcheck) ;; *) die "unknown setup '$setup'";; esac
	local how=${BOOTLAB_INSTALL:-deb} logs_of=$setup
	[ "$ROOT_FS" = ext4 ] || logs_of=$setup-$ROOT_FS
	case "$how" in deb|make) ;; *) die "BOOTLAB_INSTALL must be deb or make";; esac
	[ -e "$CACHE/rootfs-base/.bootlab-ok" ] || build_base
	img=$(golden_of "$setup")
	dir=$(mktemp -d "$CACHE/rootfs-$setup.XXXXXX")
	trap 'unmount_image || true; rm -rf "$dir" "$img.tmp" "${img%.img}.initrd.tmp"' EXIT
	cp -a "$CACHE/rootfs-base/." "$dir/"
	rm -f "$dir/.bootlab-ok"
	# The lab's own guest unit (installed here, not in the cached base, so edits to it take effect).
	install -m 0755 "$LAB_DIR/guest/bootlab-report" "$dir/usr/local/sbin/bootlab-report"
	install -m 0644 "$LAB_DIR/guest/bootlab-report.service" "$dir/etc/systemd/system/bootlab-report.service"
	systemctl --root="$dir" enable bootlab-report.service >/dev/null 2>&1
	project_tree || die "could not build the project"
	local pkg=-
	if [ "$how" = deb ]; then
		deb_package || die "could not build the Debian package"
		install_deb "$dir" "$PROJ_DEB" >"$CACHE/install-$logs_of.log" 2>&1 ||
			die "apt-get install of $PROJ_DEB failed in the $setup image, see $CACHE/install-$logs_of.log"
		pkg="$(basename "$PROJ_DEB") sha256:$(sha256sum "$PROJ_DEB" | cut -c1-16)"
	else
		make -s -C "$PROJ_SRC" install DESTDIR="$dir" >/dev/null
		mkdir -p "$dir/var/lib/prefetch"
	fi
	root_fstab "$dir/etc/fstab"
	[ "$LOGS" = ram ] && echo 'tmpfs /var/log tmpfs mode=0755,size=64m 0 0' >>"$dir/etc/fstab"
	[ "$ATIME" = noatime ] && root_noatime "$dir/etc/fstab"
	local cfg=$dir/etc/default/prefetch medium
	medium=$(medium_of_model "$DISK_MODEL")
	# In every setup of a flash model, none included: the same file as the prefetch setups' but for the units.
	[ -z "$medium" ] || set_key "$cfg" PREFETCH_MEDIUM "$medium"
	case "$setup" in
	none)
		# none = installed, not enabled: the package enabled its units at install, so they are disabled here
		# (as an administrator would); with 'make install' nothing was enabled.  The initramfs script does
		# nothing where prefetch.service is not enabled, and the hook copies no prefetchd there.
		# 'disable prefetch.service' takes the others along (Also=). (Naming prefetch-reorder.service itself
		# failed before d5223cb: systemctl hands it to update-rc.d, which refused a script without Default-Start.)
		systemctl --root="$dir" disable prefetch.service >/dev/null 2>&1 || true
		if ls "$dir"/etc/systemd/system/*.wants/prefetch* >/dev/null 2>&1; then die "none: prefetch units still enabled"; fi
		;;
	prefetch|reorder|selfcheck)
		[ -f "$dir/lib/systemd/system/prefetch.service" ] || die "prefetch.service not installed (systemd/ not ready?)"
		# The package has enabled them already; 'make install' has not (Also= enables the timer and reorder unit).
		systemctl --root="$dir" enable prefetch.service >/dev/null 2>&1 || true
		[ -L "$dir/etc/systemd/system/sysinit.target.wants/prefetch.service" ] || die "$setup: prefetch.service not enabled"
		set_key "$cfg" ENABLE_PREFETCH 1
		# Every boot of a setup replays (the lab compares setups itself); the selfcheck setup runs the self-check
		# (BOOTLAB_SELF_CHECK_INTERVAL, 2 there: half the boots are control boots, so that a decision comes
		# within a dozen boots); BOOTLAB_SELF_CHECK_INTERVAL set for the other setups applies to them too.
		if [ "$setup" = selfcheck ]; then
			set_key "$cfg" SELF_CHECK_INTERVAL "${BOOTLAB_SELF_CHECK_INTERVAL:-2}"
		else
			set_key "$cfg" SELF_CHECK_INTERVAL "${BOOTLAB_SELF_CHECK_INTERVAL:-0}"
		fi
		if [ "$setup" = reorder ]; then set_key "$cfg" ENABLE_FILE_REORDERING 1; else set_key "$cfg" ENABLE_FILE_REORDERING 0; fi
		# the shutdown's reorder budget in the guest's time: with the disk's waits stretched 8 times, 75 s, the most
		# the shutdown hook allows, as make tuning's plan sets it (INTEGRATOR-RUN.md, "The time budget")
		[ -z "${BOOTLAB_REORDER_TIME_BUDGET:-}" ] || set_key "$cfg" REORDER_TIME_BUDGET "$BOOTLAB_REORDER_TIME_BUDGET"
		;;
	esac
	# The guest boots with this image's own initramfs: with prefetch installed it carries the local-bottom
	# script that starts prefetchd before systemd (it does nothing where prefetch.service is not enabled),
	# and where it is enabled a copy of prefetchd (initramfs/hooks/prefetch).
	local kver
	kver=$(basename "$(ls "$dir"/boot/vmlinuz-* | sort -V | tail -n 1)"); kver=${kver#vmlinuz-}
	chroot "$dir" update-initramfs -u -k "$kver" >"$CACHE/initramfs-$logs_of.log" 2>&1 ||
		die "update-initramfs failed in the $setup image, see $CACHE/initramfs-$logs_of.log"
	local mod files
	files=$(chroot "$dir" lsinitramfs "/boot/initrd.img-$kver") || die "lsinitramfs failed in the $setup image"
	for mod in $(fs_modules_of "$ROOT_FS"); do
		grep -qE "/$mod\.ko(\.[a-z]+)?$" <<<"$files" ||
			die "the $setup image's initramfs lacks $mod.ko: it could not mount a $ROOT_FS root"
	done
	if [ "$setup" != none ] && ! chroot "$dir" lsinitramfs "/boot/initrd.img-$kver" | grep -qx 'usr/sbin/prefetchd'; then
		die "the $setup image's initramfs lacks prefetchd's copy (initramfs/hooks/prefetch)"
	fi
	cp "$dir/boot/initrd.img-$kver" "${img%.img}.initrd.tmp"
	{
		echo "setup=$setup"
		echo "built=$(date -u +%FT%TZ)"
		echo "prefetch_commit=$PROJ_COMMIT"
		echo "install=$how"
		echo "disk_model=$DISK_MODEL"
		echo "logs=$LOGS"
		echo "atime=$ATIME"
		echo "root_fs=$ROOT_FS"
		echo "root_args=$(root_args_of "$ROOT_FS")"
		echo "fstab: $(grep -v '^#' "$dir/etc/fstab" | tr '\n' ';')"
		echo "package=$pkg"
		[ "$how" = deb ] && echo "dpkg=$(chroot "$dir" dpkg-query -W -f='${Package} ${Version} ${Status}' prefetch 2>/dev/null)"
		echo "kernel=$(basename "$(ls "$dir"/boot/vmlinuz-* | sort -V | tail -n 1)")"
		echo "initramfs_script=$(chroot "$dir" lsinitramfs "/boot/initrd.img-$kver" 2>/dev/null | grep -c 'local-bottom/prefetch$')"
		echo "enabled=$(ls "$dir"/etc/systemd/system/*.wants 2>/dev/null | grep -E '^prefetch|^bootlab' | tr '\n' ' ')"
		[ -f "$cfg" ] && grep -E '^[A-Z_]+=' "$cfg" | sed 's/^/config: /'
	} >"$img.info.tmp"
	root_image "$dir" "$img.tmp"
	mv "$img.tmp" "$img"; mv "$img.info.tmp" "$img.info"; mv "${img%.img}.initrd.tmp" "${img%.img}.initrd"
	rm -rf "$dir"; trap - EXIT
	log "golden image ready: $img"; sed 's/^/    /' "$img.info" >&2
}

# The image an image builder ships (issue 30): golden-reorder.img as prefetch-image build leaves it (3 learning
# boots under qemu on an overlay, the root reordered offline for their layout, the layout installed).  The
# learning boots run on a plain image file (no simulated disk, the host's clock): what the boots read does not
# depend on the disk's speed.  The initramfs and kernel are the reorder image's (build changes neither).
build_imaged() {
	local src img work out
	src=$(golden_of reorder) img=$(golden_of imaged)
	[ "$ROOT_FS" = ext4 ] || die "imaged: prefetch-image reorders ext2/3/4 roots only"
	project_tree || die "could not build the project"
	grep -qx "prefetch_commit=$PROJ_COMMIT" "$src.info" 2>/dev/null || build_golden reorder
	work=$(mktemp -d "$CACHE/imaged.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	cp --sparse=always "$src" "$work/$(basename "$img")" # built under its own name: the layout's origin names it
	local b=$PROJ_SRC/build/default
	log "prefetch-image build of a copy of $src (3 learning boots under qemu: a few minutes)"
	out=$(PREFETCHD=$b/prefetchd REORDER=$b/prefetch-reorder PREFETCH_IMAGE_LIB=$PROJ_SRC/image/qemu-guest.sh \
		"$b/gen/image/prefetch-image" build --work "$work/pi" --kernel "$CACHE/vmlinuz" --initrd "${src%.img}.initrd" \
		--append "$KERNEL_APPEND" "$work/$(basename "$img")" 2>&1) ||
		die "prefetch-image build failed: $(tail -n 3 <<<"$out")"
	printf '%s\n' "$out" >"$CACHE/imaged$MODEL_SUFFIX.log"
	{
		sed 's/^setup=reorder$/setup=imaged/' "$src.info"
		grep -E '^(origin|replay now|reordered): ' <<<"$out" | sed -E 's/^([a-z ]+): +/image_build \1: /'
	} >"$img.info.tmp"
	cp "${src%.img}.initrd" "${img%.img}.initrd.tmp"
	mv "$work/$(basename "$img")" "$img"; mv "$img.info.tmp" "$img.info"; mv "${img%.img}.initrd.tmp" "${img%.img}.initrd"
	rm -rf "$work"; trap - EXIT
	log "golden image ready: $img"; sed 's/^/    /' "$img.info" >&2
}

# Sourced (image-builder-check.sh: project_tree, deb_package), it only defines its functions.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
case "${1:-}" in
base) build_base ;;
golden) shift; for s in "$@"; do if [ "$s" = imaged ]; then build_imaged; else build_golden "$s"; fi; done ;;
keep) shift; tag=${1:-}; [[ $tag =~ ^[A-Za-z0-9_-]+$ ]] || die "keep: a TAG of letters, digits, _ and - first"
	shift; for s in "$@"; do keep_golden "$s" "$tag"; done ;;
deb) project_tree && deb_package && echo "$PROJ_DEB" ;;
*) echo "usage: $0 base | golden SETUP... | keep TAG SETUP... | deb" >&2; exit 2 ;;
esac
