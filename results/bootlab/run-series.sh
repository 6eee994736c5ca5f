#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bootlab: series of boots of one or more setups, each from a fresh writable copy of its golden image.
#   run-series.sh SETUPS [N]
# SETUPS: space- or comma-separated list of none | prefetch | reorder | selfcheck (on the simulated disk) | warm (golden-none
# on tmpfs, no simulated disk) | first (the reorder image as shipped) | imaged (it after prefetch-image build): these
# two boot a fresh copy of their image every time, no learning boots: each boot is a deployed machine's first,
# stopped once its report is complete (boot-once.sh BOOTLAB_STOP_AT_END: the copy is thrown away).
# Several setups are interleaved, one boot at a time (round r boots every setup
# once, beginning with the r-th, in turn), so that the load of this shared host falls on all of them alike, no
# setup always follows the same other one, and a cut-short run stays balanced.
# Learning boots come first, recorded as phase "learn": TRACE_AGGREGATION_COUNT (LEARN, 3) for the prefetch
# setups, LEARN_BASE (1: the fresh image's first boot) otherwise. Then N measured boots each (default 10).
# Each boot appends a row to boots.csv and keeps its guest report under raw/RUN_ID/.
# BOOTLAB_DISK_MODEL (hdd, sd, ssd): the simulated disk's model and the golden images built for it.
# BOOTLAB_ROOT_FS (ext4, xfs, btrfs): the guest's root filesystem, the golden images built for it (make fstypes).
# A file STOP in the run's directory ($CACHE/runs/RUN_ID/STOP) ends the series after the round under way, so a
# run cut short for time stays balanced.
#
#   run-series.sh tuning [N]
# The integrator's loop of prefetch(5), "Measuring and tuning", on ONE disk that persists across the whole
# series, as on a real machine: a writable copy of golden-prefetch booted again and again, the configuration
# changed inside the guest between phases.  The last boot of a phase appends the next phase's keys to
# /etc/default/prefetch (bootlab.append=, guest/bootlab-report) and prints the guest's 'prefetchd report'
# (bootlab.report=1); its power-off is the first shutdown under the new setting (where the reorder runs).
# Phases, TUNING_PLAN ("NAME:KEY=VALUE,..." each, in order; default below): off, on (LEARN_ON learning boots
# first, 1: "the first one learns the layout"), reorder-512, and reorder-4000 on a copy of the disk made before
# the first reorder; N measured boots each (default 8).
# The image's first boot has prefetch=off on its command line (for one boot the same as ENABLE_PREFETCH=0) and
# appends the first phase's keys: recorded as the off phase's learning boot.  Rows: setup tune-NAME.
# A phase "NAME/BASE:KEYS" runs on a copy of the disk as it was before the last boot of phase BASE (the
# prefetch(5) way to compare chunk sizes by boots: a disk whose files were not reordered yet): that last boot
# is booted again on the copy, appending KEYS (a learning boot of NAME), then N boots; the phases of the main
# disk never append a copy's keys.  A STOP file ends the series after the boot under way; the disks as they
# ended are kept as $CACHE/runs/RUN_ID/disk.img (and disk-NAME.img for a copy).
# BOOTLAB_ICOUNT=N: every boot with the guest's clock instruction-counted (lab.sh).
# SETUP@TAG (any setup above): the same setup booted from its golden image kept under TAG (lab.sh keep_golden:
# `build-guest.sh keep TAG SETUPS` before building new ones), so that two builds of prefetch run interleaved, as
# "reorder@old reorder".  Recorded as setup SETUP@TAG; report.py render leaves such rows out of its tables.
#
# A series of SETUPS cut off (a session's end, the host's power) resumes: RESUME=1 RUN_ID=ID run-series.sh with
# the same arguments and environment boots only what has no record yet.  The setups' disks live in
# /dev/shm/bootlab-RUN_ID until the run is done; the disk of a setup that learns from boot to boot is copied
# before each boot, and a boot cut off gives way to that copy, so the resumed boot starts from the disk its cut
# predecessor started from.  The golden images must be the ones the run began with (checked).
source "$(dirname "$0")/lab.sh"
read -r -a setups <<<"${1//,/ }"
[ ${#setups[@]} -gt 0 ] || { echo "usage: run-series.sh SETUPS [N] | tuning [N]" >&2; exit 2; }
tuning=; [ "${setups[*]}" = tuning ] && tuning=1
n=${2:-${N:-$([ -n "$tuning" ] && echo 8 || echo 10)}}
RUN_ID=${RUN_ID:-$(date -u +%Y%m%dT%H%M)}

work=/dev/shm/bootlab-$RUN_ID
finished= booted=${RESUME:-}
if [ -n "${RESUME:-}" ]; then
	[ -z "$tuning" ] || die "RESUME: a tuning series cannot resume"
	[ -d "$work" ] || die "RESUME: run $RUN_ID has no disks in $work to resume from"
else
	[ ! -e "$work" ] || die "run $RUN_ID was cut off: its disks are in $work (RESUME=1 to go on, or remove them)"
	mkdir -p "$work"
fi
# kept for RESUME once a boot ran, unless the run came to its end
trap 'if [ -n "$finished$tuning" ] || [ -z "$booted" ]; then rm -rf "$work"; else log "run $RUN_ID not finished: RESUME=1 RUN_ID=$RUN_ID to go on"; fi' EXIT
trap 'exit 130' INT TERM
declare -A learn info disk initrd img fresh golden_img
declare -A fails
# One boot of SETUP from its image img[SETUP], recorded; BOOTLAB_GUEST_ARGS (the caller's) reach the guest.
boot() { # SETUP PHASE INDEX
	local s=$1 phase=$2 i=$3 out rc=0
	out=$CACHE/runs/$RUN_ID/$s-$phase$i
	[ -e "$out/recorded" ] && return 0 # a resumed run: booted before the cut
	if [ -n "${fresh[$s]:-}" ]; then # a deployed machine's first boot: every boot on a fresh copy of the image
		cp --sparse=always "${golden_img[$s]}" "${img[$s]}"
	elif [ -z "$tuning" ]; then # the disk as this boot finds it, for a resumed run if this boot is cut off
		cp --sparse=always "${img[$s]}" "$work/$s.before.img"
	fi
	booted=1
	BOOTLAB_INITRD=${initrd[$s]} BOOTLAB_STOP_AT_END=${fresh[$s]:-} \
		"$LAB_DIR/boot-once.sh" "${disk[$s]}" "${img[$s]}" "$out" || rc=$?
	python3 "$LAB_DIR/report.py" record "$out" --run "$RUN_ID" --setup "$s" --phase "$phase" --boot "$i" \
		--golden-info "${info[$s]}" && : >"$out/recorded" || log "could not record $out"
	rm -f "$work/$s.before.img"
	if [ $rc -ne 0 ]; then fails[$s]=$((${fails[$s]:-0} + 1)); else fails[$s]=0; fi
	[ "${fails[$s]}" -ge 3 ] && die "$s: 3 failed boots in a row, run stopped"
	return 0
}

# The tuning series (see above): one image, phases in order, each phase's keys appended by the boot before it;
# a phase NAME/BASE on a copy of the disk taken before BASE's last boot.
tuning_series() {
	local plan=${TUNING_PLAN:-off:ENABLE_PREFETCH=0 on:ENABLE_PREFETCH=1 reorder-512:ENABLE_FILE_REORDERING=1,CHUNK_SIZE_BLOCKS=512 reorder-4000/on:ENABLE_FILE_REORDERING=1,CHUNK_SIZE_BLOCKS=4000}
	local golden phases=() keys=() base=() p k i j total args nx
	declare -A forks=() # BASE -> the phases copied from it
	golden=$(golden_of prefetch)
	[ -f "$golden" ] || die "no golden image $golden: build-guest.sh golden prefetch"
	cp --sparse=always "$golden" "$work/tuning.img"
	for p in $plan; do
		k=${p%%:*}
		phases+=("${k%%/*}") keys+=("${p#*:}")
		if [ "$k" != "${k#*/}" ]; then base+=("${k#*/}"); forks[${k#*/}]+=" ${k%%/*}"; else base+=(""); fi
	done
	for ((j = 0; j < ${#phases[@]}; j++)); do
		p=${phases[j]}
		img[tune-$p]=$work/tuning.img disk[tune-$p]=sim initrd[tune-$p]=${golden%.img}.initrd
		[ -n "${base[j]}" ] && img[tune-$p]=$work/tuning-$p.img
		info[tune-$p]="$(grep -E '^(setup|built|prefetch_commit|package)=' "$golden.info" | tr '\n' ' ')disk_model=$DISK_MODEL${ICOUNT:+ icount=$ICOUNT} tuning: ${keys[j]}"
		[ -n "${base[j]}" ] && info[tune-$p]+=" on a copy made before the last ${base[j]} boot"
		learn[tune-$p]=0; [ "$j" -eq 0 ] && learn[tune-$p]=1; [ "$p" = on ] && learn[tune-$p]=${LEARN_ON:-1}
		[ -n "${base[j]}" ] && learn[tune-$p]=1
		log "series $RUN_ID tuning phase $p (${keys[j]}${base[j]:+, a copy of the disk before the last ${base[j]} boot}): ${learn[tune-$p]} learning + $n measured boots"
	done
	for ((j = 0; j < ${#phases[@]}; j++)); do
		p=${phases[j]}
		total=$((${learn[tune-$p]} + n))
		# the main disk's next phase (a copy's keys are its own)
		nx=$((j + 1)); while [ "$nx" -lt ${#phases[@]} ] && [ -n "${base[nx]}" ]; do nx=$((nx + 1)); done
		[ -n "${base[j]}" ] && nx=${#phases[@]} # a copy's last boot appends nothing
		for ((i = 1; i <= total; i++)); do
			args=
			[ "$j" -eq 0 ] && [ "$i" -eq 1 ] && args="prefetch=off bootlab.append=${keys[0]}"
			[ -n "${base[j]}" ] && [ "$i" -eq 1 ] && args="bootlab.append=${keys[j]}"
			if [ "$i" -eq "$total" ]; then
				args+=" bootlab.report=1"
				[ "$nx" -lt ${#phases[@]} ] && args+=" bootlab.append=${keys[nx]}"
				for k in ${forks[$p]:-}; do # the copies are made before this boot
					cp --sparse=always "$work/tuning.img" "$work/tuning-$k.img"
					log "disk copied for phase $k before the last boot of phase $p"
				done
			fi
			if [ "$i" -le "${learn[tune-$p]}" ]; then k=learn; else k=measure; fi
			BOOTLAB_GUEST_ARGS=${args# } boot "tune-$p" "$k" "$([ $k = learn ] && echo "$i" || echo $((i - ${learn[tune-$p]})))"
			if [ -e "$CACHE/runs/$RUN_ID/STOP" ]; then
				log "STOP file: run $RUN_ID ends in phase $p after boot $i of $total"
				break 2
			fi
		done
		log "phase $p done"
	done
	cp --sparse=always "$work/tuning.img" "$CACHE/runs/$RUN_ID/disk.img"
	for ((j = 0; j < ${#phases[@]}; j++)); do
		[ -n "${base[j]}" ] && [ -f "$work/tuning-${phases[j]}.img" ] &&
			cp --sparse=always "$work/tuning-${phases[j]}.img" "$CACHE/runs/$RUN_ID/disk-${phases[j]}.img"
	done
	log "run $RUN_ID done; its disks: $CACHE/runs/$RUN_ID/disk*.img"
}
[ -n "$tuning" ] && { tuning_series; exit 0; }

maxlearn=0
for s in "${setups[@]}"; do
	case "${s%%@*}" in
	prefetch|reorder|selfcheck) learn[$s]=${LEARN:-3} ;;
	none|warm) learn[$s]=${LEARN_BASE:-1} ;;
	first|imaged) learn[$s]=0 fresh[$s]=1 ;;
	*) die "unknown setup $s" ;;
	esac
	[ "${learn[$s]}" -gt $maxlearn ] && maxlearn=${learn[$s]}
	golden=$(golden_of "$s")
	[ -f "$golden" ] || die "no golden image $golden: make -C $LAB_DIR guest"
	img[$s]=$work/$s.img golden_img[$s]=$golden
	sig=$(stat -c '%n %s %Y' "$golden")
	if [ -n "${RESUME:-}" ]; then
		[ "$(cat "$work/$s.golden" 2>/dev/null)" = "$sig" ] || die "RESUME: $s's golden image is not the one run $RUN_ID began with"
		# its last boot was cut off: back to the disk that boot started from
		if [ -f "$work/$s.before.img" ]; then
			mv "$work/$s.before.img" "$work/$s.img"
			log "run $RUN_ID resumed: $s's last boot was cut off; booted again from the disk it began with"
		fi
	else
		echo "$sig" >"$work/$s.golden"
		[ -n "${fresh[$s]:-}" ] || cp --sparse=always "$golden" "$work/$s.img" # a fresh setup's: at each boot
	fi
	initrd[$s]=${golden%.img}.initrd; [ -f "${initrd[$s]}" ] || initrd[$s]=$CACHE/initrd.img
	info[$s]=$(grep -E '^(setup|built|prefetch_commit|logs|atime|root_fs)=|(ENABLE_FILE_REORDERING|REORDER_TIME_BUDGET|LOGIN_TRACING_DELAY)=|^image_build origin' \
		"$golden.info" 2>/dev/null | sed 's/^config: //' | tr '\n' ' ')
	medium=$(grep -E '^config: PREFETCH_MEDIUM=' "$golden.info" 2>/dev/null | sed 's/^config: //' || true)
	[ "${s%%@*}" = warm ] || info[$s]+="disk_model=$DISK_MODEL ${medium:+$medium }"
	disk[$s]=sim; [ "${s%%@*}" = warm ] && disk[$s]=warm
	log "series $RUN_ID $s: ${learn[$s]} learning + $n measured boots (${info[$s]})"
done

for ((r = 1; r <= maxlearn; r++)); do
	for s in "${setups[@]}"; do [ "$r" -le "${learn[$s]}" ] && boot "$s" learn "$r"; done
done
for ((r = 1; r <= n; r++)); do
	# each round starts with another setup (rotated by one a round): no setup is always the one after another
	ns=${#setups[@]}
	for ((k = 0; k < ns; k++)); do
		s=${setups[$(((r - 1 + k) % ns))]}
		boot "$s" measure "$r"
	done
	log "round $r of $n done"
	[ -e "$CACHE/runs/$RUN_ID/STOP" ] && { log "STOP file: run $RUN_ID ends after round $r of $n"; break; }
done
finished=1
log "run $RUN_ID done"
