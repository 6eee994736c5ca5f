# SPDX-License-Identifier: GPL-2.0-or-later
# bootlab: shared settings and helpers, sourced by the lab's scripts.
set -euo pipefail
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$LAB_DIR/../.." && pwd)
CACHE=${BOOTLAB_CACHE:-/var/cache/prefetch-bootlab}
# Same mirror as this machine's apt sources (first deb.debian.org-style URI found), else the default.
mirror_from_sources() {
	local m
	m=$(grep -rhoE '^(URIs:|deb)[[:space:]]+(\[[^]]*\][[:space:]]+)?https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
		/etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | grep -oE 'https?://[^[:space:]]+' | head -n 1 || true)
	echo "${m:-http://deb.debian.org/debian}"
}
MIRROR=${BOOTLAB_MIRROR:-$(mirror_from_sources)}
SUITE=bookworm
IMG_SIZE=${BOOTLAB_IMG_SIZE:-2G}
GUEST_MEM=${BOOTLAB_MEM:-1024}
# A guest still running after this many host seconds is killed.  With BOOTLAB_ICOUNT the guest's clock no longer
# runs on while its vCPU waits, but the host's does: on a busy host a boot can take several times its guest time.
BOOT_TIMEOUT=${BOOTLAB_TIMEOUT:-$([ -n "${BOOTLAB_ICOUNT:-}" ] && echo 900 || echo 300)}
KERNEL_APPEND=${BOOTLAB_APPEND:-root=/dev/vda console=ttyS0 panic=-1}
SETUPS_ALL="none prefetch reorder warm selfcheck first imaged"
# BOOTLAB_ICOUNT=N: the guest's clock counts instructions (qemu -icount shift=N,sleep=on, TCG in one thread), 2^N
# ns each, and follows real time only while the vCPU idles (waiting for the disk): the time the vCPU waits for a
# host CPU on this shared host is then no part of the guest's boot time.  Empty (the default): the guest's clock
# is the host's (each run before h32-icount).  NOTES.md says which N and why.
ICOUNT=${BOOTLAB_ICOUNT:-}
case "$ICOUNT" in '' | [0-9] | 10) ;; *) echo "bootlab: BOOTLAB_ICOUNT must be empty or a shift 0..10" >&2; exit 2 ;; esac
# The simulated disk's model (tests/simdisk --model, lib/disk_model.h): hdd (7200 rpm, the lab's disk), sd (an A1
# SD card) or ssd.  Under qemu the guest's virtio disk says rotational=1 whatever the model, so the golden images of
# a flash model are built with the matching PREFETCH_MEDIUM (what an administrator of such a machine would set)
# and get names of their own (golden-SETUP-MODEL.img); the hdd images keep theirs.
DISK_MODEL=${BOOTLAB_DISK_MODEL:-hdd}
case "$DISK_MODEL" in hdd|sd|ssd) ;; *) echo "bootlab: BOOTLAB_DISK_MODEL must be hdd, sd or ssd" >&2; exit 2 ;; esac
MODEL_SUFFIX=; [ "$DISK_MODEL" = hdd ] || MODEL_SUFFIX=-$DISK_MODEL
# BOOTLAB_DISK_STRETCH=K: the simulated disk waits K times its model's time (simdisk --stretch), for a guest whose
# CPU runs K times slower than a real machine's, so that CPU and disk keep a real machine's balance (all times
# then K times a real machine's); default 1.  ICOUNT-CHECK.md, "Which N", says why the lab needs it.
DISK_STRETCH=${BOOTLAB_DISK_STRETCH:-1}
[[ $DISK_STRETCH =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v k="$DISK_STRETCH" 'BEGIN { exit !(k > 0 && k <= 1000) }' ||
	{ echo "bootlab: BOOTLAB_DISK_STRETCH must be a number in (0, 1000]" >&2; exit 2; }
# BOOTLAB_LOGS=ram: /var/log on a tmpfs in the guest, as single-board-computer images keep their logs to spare the
# SD card (Armbian's ramlog, log2ram): the persistent journal and rsyslog then write nothing to the disk.  On the
# SD model their small writes (0.5 s each: a read-modify-write of a 4 MiB erase block) otherwise make the boot
# write-bound.  The images get names of their own (golden-SETUP[-MODEL]-ramlog.img).
LOGS=${BOOTLAB_LOGS:-disk}
case "$LOGS" in disk) ;; ram) MODEL_SUFFIX+=-ramlog ;; *) echo "bootlab: BOOTLAB_LOGS must be disk or ram" >&2; exit 2 ;; esac
# BOOTLAB_ATIME=noatime: the root mounted noatime, as SD-card images mount theirs (Raspberry Pi OS, Armbian).  Under
# the default relatime a fresh copy's first boot writes back the inode of every file it reads (an image's files
# were read before they were copied in: atime older than ctime), one erase-block read-modify-write each on the SD
# model (image-sd-20261128T0650, IMAGE-RUN.md).  Images golden-SETUP[-MODEL]...-noatime.img.
ATIME=${BOOTLAB_ATIME:-relatime}
case "$ATIME" in relatime) ;; noatime) MODEL_SUFFIX+=-noatime ;; *) echo "bootlab: BOOTLAB_ATIME must be relatime or noatime" >&2; exit 2 ;; esac
# BOOTLAB_ROOT_FS: the guest's root filesystem.  ext4 (the default: the lab's images as they always were), xfs (as
# RHEL, CentOS Stream, Rocky and Alma install it) or btrfs (as Fedora: the root in subvolume @, /home in @home,
# the kernel's rootflags=subvol=@).  Images of xfs and btrfs get names of their own (golden-SETUP[-MODEL]-FS.img).
ROOT_FS=${BOOTLAB_ROOT_FS:-ext4}
case "$ROOT_FS" in ext4) ;; xfs|btrfs) MODEL_SUFFIX+=-$ROOT_FS ;; *) echo "bootlab: BOOTLAB_ROOT_FS must be ext4, xfs or btrfs" >&2; exit 2 ;; esac
# The kernel's root options a root filesystem needs beyond root=/dev/vda (the type comes from the image's blkid
# probe in the initramfs).
root_args_of() { case "$1" in btrfs) echo "rootflags=subvol=@" ;; *) echo ;; esac; }
# PREFETCH_MEDIUM the guest needs on DISK_MODEL (empty: auto, right for the rotational model).
medium_of_model() { case "$1" in sd) echo slow-flash ;; ssd) echo fast-flash ;; *) echo ;; esac; }

log() { printf '[bootlab %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Golden image of a setup (warm boots the "none" image from tmpfs without the simulated disk).
# The images of the disk model DISK_MODEL.
# "first" boots fresh copies of the reorder image (the image as shipped, never booted): see run-series.sh.
# SETUP@TAG: SETUP's image kept under a tag, golden-...@TAG.img (keep_golden), so that a series compares two builds
# of prefetch side by side.
golden_of() {
	case "$1" in
	*@*) local g; g=$(golden_of "${1%%@*}"); echo "${g%.img}@${1#*@}.img" ;;
	warm) echo "$CACHE/golden-none$MODEL_SUFFIX.img" ;;
	first) echo "$CACHE/golden-reorder$MODEL_SUFFIX.img" ;;
	*) echo "$CACHE/golden-$1$MODEL_SUFFIX.img" ;;
	esac
}

# keep_golden SETUP TAG: SETUP's golden image, its .info and its initramfs copied to SETUP@TAG's names, before a
# new build replaces them.
keep_golden() {
	local from to
	from=$(golden_of "$1") to=$(golden_of "$1@$2")
	[ -f "$from" ] || die "no golden image $from to keep"
	cp --sparse=always "$from" "$to" && cp "$from.info" "$to.info" && cp "${from%.img}.initrd" "${to%.img}.initrd" ||
		die "could not keep $from as $to"
	log "kept $from as $to"
}

# Install the package file $2 into the root $1 as a user would: apt-get install of the .deb (its dependencies
# are in the base guest already, so no download).  No service is started in the image (the package starts none
# anyway; policy-rc.d says so to invoke-rc.d).
install_deb() {
	local root=$1 deb=$2 f
	f=/tmp/$(basename "$deb")
	cp "$deb" "$root$f"
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"; chmod 0755 "$root/usr/sbin/policy-rc.d"
	local rc=0
	DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q --no-install-recommends "$f" || rc=$?
	rm -f "$root$f" "$root/usr/sbin/policy-rc.d"
	chroot "$root" apt-get clean
	return $rc
}
