#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bootlab: does the guest's boot time stay put when the host gets busy?  The same boot (a fresh copy of
# golden-prefetch, prefetch=off on its command line, so every boot is the image's identical first boot) with
# the guest's clock the host's and with qemu's instruction counting (BOOTLAB_ICOUNT), each on a quiet host and
# with BUSY (2) spinners at nice 0 beside it; N rounds, the four kinds interleaved within a round (KINDS: a
# subset, e.g. "icount-quiet icount-busy plain-busy").
#   icount-check.sh SHIFT [N]
# Rows in boots.csv: setup icount-SHIFT-quiet / icount-SHIFT-busy / plain-quiet / plain-busy (each boot under
# the bench lock, boot-once.sh); report.py icount --run RUN_ID prints the table (NOTES.md, "Host load").
source "$(dirname "$0")/lab.sh"
shift_n=${1:?usage: icount-check.sh SHIFT [N]}
n=${2:-2}
RUN_ID=${RUN_ID:-icount-$(date -u +%Y%m%dT%H%M)}
golden=$(golden_of prefetch)
[ -f "$golden" ] || die "no golden image $golden: build-guest.sh golden prefetch"
work=$(mktemp -d /dev/shm/bootlab.XXXXXX)
spinners=()
stop_spinners() { local p; for p in "${spinners[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; spinners=(); }
trap 'stop_spinners; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
info="$(grep -E '^(setup|built|prefetch_commit|package)=' "$golden.info" | tr '\n' ' ')disk_model=$DISK_MODEL icount-check"
for ((r = 1; r <= n; r++)); do
	for kind in ${KINDS:-plain-quiet icount-quiet icount-busy plain-busy}; do
		kind=${kind/icount-/icount-$shift_n-}
		cp --sparse=always "$golden" "$work/disk.img"
		case $kind in *busy)
			for ((k = 0; k < ${BUSY:-2}; k++)); do nice -n 0 bash -c 'while :; do :; done' & spinners+=($!); done ;;
		esac
		ic=; case $kind in icount*) ic=$shift_n ;; esac
		out=$CACHE/runs/$RUN_ID/$kind-measure$r
		BOOTLAB_ICOUNT=$ic BOOTLAB_INITRD=${golden%.img}.initrd BOOTLAB_GUEST_ARGS=prefetch=off \
			"$LAB_DIR/boot-once.sh" sim "$work/disk.img" "$out" || log "boot $kind $r failed"
		stop_spinners
		python3 "$LAB_DIR/report.py" record "$out" --run "$RUN_ID" --setup "$kind" --phase measure --boot "$r" \
			--golden-info "$info busy=$([ "${kind%busy}" != "$kind" ] && echo "${BUSY:-2}" || echo 0)" ||
			log "could not record $out"
	done
	log "round $r of $n done"
done
log "run $RUN_ID done: python3 $LAB_DIR/report.py icount --run $RUN_ID"
