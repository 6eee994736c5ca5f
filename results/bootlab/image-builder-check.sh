#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bootlab: prefetch-image on an image made the way a Debian image builder makes one (issue 30).
#   image-builder-check.sh [mbr|gpt]
# 1. mmdebstrap makes a Debian 12 root (minbase with systemd, udev, linux-image-amd64, grub-pc) with this tree's
#    Debian package installed by apt inside it (--include of the .deb: its postinst enables the units, its trigger
#    puts prefetchd into the initramfs);
# 2. the root goes into a raw disk image with a partition table, mbr (default: one bootable ext4 partition) or
#    gpt (a BIOS boot partition, then the ext4 root), an /etc/fstab by UUID, and the image's GRUB for BIOS (its
#    grub-mkimage's core.img and boot.img written as grub-install does, update-grub in the root; serial console,
#    no quiet);
# 3. prefetch-image build (3 learning boots under qemu through the image's own GRUB, the root reordered offline,
#    the layout installed), prefetch-image check, and a second build, which must change no byte;
# 4. a fresh copy of the built image booted once (TCG, its own GRUB): its prefetchd must replay the installed
#    layout (the "prefetchd: replay: N files" notice on the console) and trace the boot; the self-check never
#    makes that first boot a control boot.
# Work files (a few GiB, sparse) in a folder under /var/tmp, removed at the end unless KEEP=1; logs (build
# output, consoles, summary.txt) in $CACHE/image-builder-check-LABEL/.  The project is HEAD of this tree, built
# and packaged as build-guest.sh does it (BOOTLAB_SRC=worktree: the work tree as it is).  Run it niced on a
# shared host: four TCG boots of a few minutes each.
source "$(dirname "$0")/build-guest.sh" # lab.sh; project_tree, deb_package
LABEL=${1:-mbr}
case "$LABEL" in mbr|gpt) ;; *) echo "usage: $0 [mbr|gpt]" >&2; exit 2 ;; esac
# the guest: what a minimal bootable Debian needs, systemd as init, its kernel and BIOS GRUB
GUEST_PACKAGES=systemd-sysv,udev,dbus,kmod,linux-image-amd64,grub-pc,e2fsprogs,procps
LOGS=$CACHE/image-builder-check-$LABEL
TIMEOUT=${BOOTLAB_IMAGE_TIMEOUT:-1200}
W='' LOOP='' PFQ_PID=''

# ---- cleanup on every path: the guest, the loop device, the work folder (GRUB's mounts are in a namespace that
# ends with them: grub_in_root)
cleanup() {
	local rc=$?
	declare -F pfq_kill >/dev/null && pfq_kill
	[ -z "$LOOP" ] || losetup -d "$LOOP" 2>/dev/null || true
	LOOP=''
	# --one-file-system: never into a mount left inside (mmdebstrap's /proc, /sys, /dev/pts in the root it makes)
	if [ -n "$W" ] && [ -z "${KEEP:-}" ]; then rm -rf --one-file-system "$W"; elif [ -n "$W" ]; then log "kept $W"; fi
	return $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 1. the root: mmdebstrap with the project's package
build_root() {
	local root=$W/root
	log "mmdebstrap --variant=minbase $SUITE from $MIRROR with $(basename "$PROJ_DEB") (a few minutes)"
	mmdebstrap --mode=root --variant=minbase --include="$GUEST_PACKAGES" --include="$PROJ_DEB" \
		--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
		"$SUITE" "$root" "$MIRROR" >"$LOGS/mmdebstrap.log" 2>&1 || die "mmdebstrap failed, see $LOGS/mmdebstrap.log"
	chroot "$root" dpkg-query -W -f='${Status}\n' prefetch | grep -qx 'install ok installed' ||
		die "prefetch is not installed in the root"
	local kver; kver=$(basename "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -n 1)"); kver=${kver#vmlinuz-}
	chroot "$root" lsinitramfs "/boot/initrd.img-$kver" | grep -qx 'usr/sbin/prefetchd' ||
		die "the root's initramfs lacks prefetchd (initramfs/hooks/prefetch)"
	echo imgcheck >"$root/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\timgcheck\n' >"$root/etc/hosts"
	printf 'UUID=%s / ext4 errors=remount-ro 0 1\n' "$UUID" >"$root/etc/fstab"
	chroot "$root" passwd -d root >/dev/null
	# the kernel's messages on the serial console (prefetch-image's only screen), GRUB's menu there too
	local g=$root/etc/default/grub
	set_key "$g" GRUB_TIMEOUT 1
	set_key "$g" GRUB_CMDLINE_LINUX_DEFAULT '""'
	set_key "$g" GRUB_CMDLINE_LINUX '"console=ttyS0"'
	set_key "$g" GRUB_TERMINAL serial
	set_key "$g" GRUB_SERIAL_COMMAND '"serial --unit=0 --speed=115200"'
	chroot "$root" apt-get clean
	log "root ready: $(du -sh "$root" | cut -f1), kernel $kver, $(chroot "$root" dpkg-query -W -f='${Package} ${Version}' prefetch)"
}

# ---- 2. the disk: partition table, ext4 root, GRUB for BIOS (the image's own GRUB)
# This host's kernel reads no partition tables (no loop partitions, no device mapper: no kpartx, no grub-install on
# a loop device), so the root partition is a loop device at its offset and GRUB goes in as grub-install would put
# it: its modules copied to /boot/grub/i386-pc, a core.img made by the image's grub-mkimage (BIOS disk, the
# partition map, ext2; the prefix the root partition's /boot/grub), boot.img written into the MBR's boot code and
# core.img behind it: into the gap after the MBR (mbr), or the BIOS boot partition (gpt: boot.img's pointer to
# core.img's first sector and core.img's own to the rest patched as grub-bios-setup does).
partition_table() {
	case "$LABEL" in
	mbr) printf 'label: dos\nstart=2048, type=83, bootable\n' ;;
	gpt) printf 'label: gpt\nstart=2048, size=2048, type=21686148-6449-6E6F-744E-656564454649, name=bios\nstart=4096, type=0FC63DAF-8483-4772-8E79-3DE47D4BE5C0, name=root\n' ;;
	esac
}
# put_u64 FILE OFFSET VALUE: VALUE as 8 little-endian bytes at byte OFFSET of FILE.
put_u64() {
	local i hex=''
	for ((i = 0; i < 8; i++)); do hex+=$(printf '\\x%02x' $((($3 >> (8 * i)) & 255))); done
	printf "$hex" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# grub_in_root: in a mount namespace of its own (its mounts vanish with it, whatever happens), the root mounted from
# a device node not named loopN (Debian's update-grub writes no menu entry for a root
# on a loop device backed by a file), with /dev, /proc and /sys; there the image's GRUB makes core.img
# (grub-mkimage) and grub.cfg (update-grub, root=UUID= by the /dev/disk/by-uuid link it looks for).
grub_in_root() {
	local m=$W/mnt d=$W/dev dev=imageroot
	mkdir -p "$m" "$d"
	unshare --mount --propagation private bash -euo pipefail -c '
		m=$1 d=$2 dev=$3 loop=$4 uuid=$5 part=$6 prefix=$7
		trap "umount -R \"\$1\" 2>/dev/null || true" EXIT
		mount -t tmpfs -o mode=0755 nsdev "$d"
		cp -a /dev/null /dev/zero /dev/full /dev/random /dev/urandom "$d/"
		mknod "$d/$dev" b $((0x$(stat -c %t "$loop"))) $((0x$(stat -c %T "$loop")))
		mkdir -p "$d/disk/by-uuid"; ln -s "../../$dev" "$d/disk/by-uuid/$uuid"
		mount --bind "$d" /dev
		mount "/dev/$dev" "$m"
		mount --bind /dev "$m/dev"
		mount -t proc proc "$m/proc"
		mount -t sysfs sysfs "$m/sys"
		mkdir -p "$m/boot/grub/i386-pc"
		cp "$m"/usr/lib/grub/i386-pc/*.mod "$m"/usr/lib/grub/i386-pc/*.lst "$m/boot/grub/i386-pc/"
		chroot "$m" grub-mkimage -O i386-pc -o /boot/grub/i386-pc/core.img -p "$prefix" biosdisk "$part" ext2
		chroot "$m" update-grub
		umount -R "$m"
	' grub "$m" "$d" "$dev" "$LOOP" "$UUID" "$1" "$2" >"$LOGS/grub.log" 2>&1 || die "GRUB's setup in the root failed, see $LOGS/grub.log"
}
install_grub() {
	local core=$W/core.img boot=$W/boot.img part prefix core_at=1
	case "$LABEL" in
	mbr) part=part_msdos prefix="(hd0,msdos$ROOT_PART)/boot/grub" ;;
	gpt) part=part_gpt prefix="(hd0,gpt$ROOT_PART)/boot/grub" core_at=2048 ;;
	esac
	grub_in_root "$part" "$prefix"
	debugfs -R "dump /boot/grub/i386-pc/core.img $core" "$LOOP" 2>/dev/null
	debugfs -R "dump /usr/lib/grub/i386-pc/boot.img $boot" "$LOOP" 2>/dev/null
	debugfs -R "dump /boot/grub/grub.cfg $LOGS/grub.cfg" "$LOOP" 2>/dev/null
	[ -s "$core" ] && [ -s "$boot" ] && [ -s "$LOGS/grub.cfg" ] || die "no core.img, boot.img or grub.cfg in the root"
	grep -q "root=UUID=$UUID .*console=ttyS0" "$LOGS/grub.cfg" || die "grub.cfg boots no root=UUID=$UUID with console=ttyS0"
	grep -qE '^[[:space:]]*linux.* quiet' "$LOGS/grub.cfg" && die "grub.cfg boots with quiet"
	local n; n=$((($(stat -c %s "$core") + 511) / 512))
	[ $((core_at + n)) -le "$PART_START" ] || die "core.img ($n sectors) does not fit before the root partition"
	if [ "$core_at" != 1 ]; then # boot.img loads core.img's first sector, which loads the rest from the next
		put_u64 "$boot" $((0x5c)) "$core_at"
		put_u64 "$core" 500 $((core_at + 1))
	fi
	dd if="$boot" of="$IMG" bs=440 count=1 conv=notrunc status=none # the boot code; the partition table stays
	dd if="$core" of="$IMG" bs=512 seek="$core_at" conv=notrunc status=none
	log "GRUB: boot.img in the MBR, core.img ($n sectors) at sector $core_at, prefix $prefix"
}
make_disk() {
	rm -f "$IMG"; truncate -s "$IMG_SIZE" "$IMG"
	partition_table | sfdisk -q "$IMG" >"$LOGS/sfdisk.log" 2>&1 || die "sfdisk failed, see $LOGS/sfdisk.log"
	local line size
	line=$(sfdisk -d "$IMG" | grep -E "^$IMG$ROOT_PART :") || die "no partition $ROOT_PART in $IMG"
	PART_START=$(sed -E 's/.*start= *([0-9]+).*/\1/' <<<"$line") size=$(sed -E 's/.*size= *([0-9]+).*/\1/' <<<"$line")
	LOOP=$(losetup --find --show -o $((PART_START * 512)) --sizelimit $((size * 512)) "$IMG") || die "losetup failed"
	mkfs.ext4 -q -F -U "$UUID" -L root -E lazy_itable_init=0,lazy_journal_init=0 -d "$W/root" "$LOOP" ||
		die "mkfs.ext4 of the root partition failed"
	install_grub
	e2fsck -fn "$LOOP" >"$LOGS/e2fsck.log" 2>&1 || die "the new root is not fsck-clean, see $LOGS/e2fsck.log"
	losetup -d "$LOOP"; LOOP=''
	rm -rf "$W/root"
	sfdisk -l "$IMG" >>"$LOGS/sfdisk.log"
	log "disk ready: $IMG ($LABEL, root partition $ROOT_PART at sector $PART_START, $(du -h "$IMG" | cut -f1) used of $IMG_SIZE)"
}

# ---- 3. prefetch-image build, check, build again
pi() {
	PREFETCHD=$W/bin/prefetchd REORDER=$W/bin/prefetch-reorder PREFETCH_IMAGE_LIB=$W/bin/qemu-guest.sh \
		"$W/bin/prefetch-image" "$@"
}
image_build() {
	local t=$SECONDS sum1 sum2
	log "prefetch-image build $IMG (3 learning boots through its own GRUB under qemu: several minutes)"
	pi build --work "$W/pi" --timeout "$TIMEOUT" "$IMG" >"$LOGS/build-1.log" 2>&1 ||
		{ cp "$W"/pi/console-*.log "$LOGS/" 2>/dev/null; die "prefetch-image build failed: $(tail -n 2 "$LOGS/build-1.log")"; }
	BUILD_S=$((SECONDS - t))
	cp "$W"/pi/console-*.log "$LOGS/"
	pi check "$IMG" >"$LOGS/check.log" 2>&1 || die "prefetch-image check failed: $(tail -n 2 "$LOGS/check.log")"
	grep -q '^reordered: *yes' "$LOGS/check.log" || die "check: the image is not reordered for its layout"
	sum1=$(sha256sum <"$IMG")
	pi build --work "$W/pi" --timeout "$TIMEOUT" "$IMG" >"$LOGS/build-2.log" 2>&1 ||
		die "the second prefetch-image build failed: $(tail -n 2 "$LOGS/build-2.log")"
	sum2=$(sha256sum <"$IMG")
	[ "$sum1" = "$sum2" ] || die "the second build changed the image"
	log "build done in $BUILD_S s; a second build changed no byte"
}

# ---- 4. one boot of a fresh copy of the built image: the installed layout replayed
# The self-check (SELF_CHECK_INTERVAL, 8 by default) makes one boot in that many a control boot, nothing replayed,
# but never the first boot on a fresh state: a deployed machine's first boot must replay.
boot_copy() {
	local copy=$W/boot.img console=$LOGS/console-check-$1.log
	rm -f "$copy"; cp --sparse=always "$IMG" "$copy"
	rm -f "$console"; : >"$console"
	PFQ_ACCEL=tcg PFQ_NAME=image-builder-check PFQ_DRIVE="file=$copy,format=raw,if=virtio,cache=writeback"
	PFQ_SERIALS=$console PFQ_MONITOR=$W/monitor
	pfq_command
	log "boot of a fresh copy ($1): ${PFQ_CMD[*]}"
	pfq_start "$LOGS/qemu-check-$1.out" || die "cannot start qemu"
	pfq_wait_line "$console" 'prefetchd: trace: [0-9]+ files' "$TIMEOUT" ||
		die "the fresh copy's boot: no 'prefetchd: trace:' line within $TIMEOUT s, see $console"
	pfq_powerdown 300
	CHECK_CONSOLE=$console
	grep -q 'prefetchd: no layout yet' "$console" && die "the fresh copy's prefetchd found no layout, see $console"
	grep -q 'prefetchd: self-check: a control boot' "$console" &&
		die "the fresh copy's first boot was a control boot (nothing replayed), see $console"
	grep -Eq 'prefetchd: replay: [1-9][0-9]* files' "$console" ||
		die "the fresh copy's prefetchd replayed nothing, see $console"
	log "fresh copy ($1): $(grep -Eo 'prefetchd: replay: [0-9]+ files[^)]*\)' "$console" | head -n 1)"
}
boot_check() {
	# shellcheck source=../../image/qemu-guest.sh
	source "$W/bin/qemu-guest.sh"
	boot_copy 1
}

summary() {
	{
		echo "image: mmdebstrap --variant=minbase $SUITE + $GUEST_PACKAGES + $(basename "$PROJ_DEB") ($PROJ_COMMIT)"
		echo "disk: $LABEL, ext4 root in partition $ROOT_PART, GRUB i386-pc, $IMG_SIZE"
		echo "build: $BUILD_S s (accelerator: $(grep -q 'run under TCG' "$LOGS/build-1.log" && echo 'TCG after KVM failed' || echo 'as qemu chose'))"
		grep -E 'boot [0-9]+: prefetchd: trace:|layout: [0-9]+ boots' "$LOGS/build-1.log" | sed 's/^prefetch-image: [a-z]*: /  /'
		grep '^prefetch-reorder: ' "$LOGS/build-1.log" | sed 's/^prefetch-reorder: /  reorder: /'
		sed 's/^/  check: /' "$LOGS/check.log"
		echo "second build: no byte changed"
		echo "fresh copy's boot: $(grep -Eo 'prefetchd: (started from the initramfs[^;(]*|replay: [0-9]+ files[^)]*\)|trace: [0-9]+ files)' "$CHECK_CONSOLE" | tr '\n' ';')"
	} >"$LOGS/summary.txt"
	sed 's/^/    /' "$LOGS/summary.txt" >&2
}

for t in mmdebstrap sfdisk mkfs.ext4 qemu-system-x86_64 qemu-img debugfs; do
	command -v "$t" >/dev/null || die "needs $t (make deps: packages.txt)"
done
rm -rf "$LOGS"; mkdir -p "$LOGS"
W=$(mktemp -d /var/tmp/prefetch-image-builder.XXXXXX)
IMG=$W/disk.img UUID=$(cat /proc/sys/kernel/random/uuid)
ROOT_PART=1; [ "$LABEL" = gpt ] && ROOT_PART=2
project_tree || die "could not build the project"
deb_package || die "could not build the Debian package"
# the programs and the package copied out of the lab's cache, which keeps only the newest few builds: another
# run's build may remove this one's while it runs
mkdir -p "$W/bin"
cp "$PROJ_SRC"/build/default/{prefetchd,prefetch-reorder,gen/image/prefetch-image} "$PROJ_SRC/image/qemu-guest.sh" "$W/bin/"
cp "$PROJ_DEB" "$W/"; PROJ_DEB=$W/$(basename "$PROJ_DEB")
build_root
make_disk
image_build
boot_check
summary
log "done: $LOGS"
