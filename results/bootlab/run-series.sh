#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bootlab: series of boots of one or more setups, each from a fresh writable copy of its golden image.
#   run-series.sh SETUPS [N]
# SETUPS: space- or comma-separated list of none | prefetch | reorder | selfcheck (on the simulated disk) | warm (golden-none
# on tmpfs, no simulated disk). Several setups are interleaved, one boot at a time (round r boots every setup
# once), so that the load of this shared host falls on all of them alike and a cut-short run stays balanced.
# Learning boots come first, recorded as phase "learn": TRACE_AGGREGATION_COUNT (LEARN, 3) for the prefetch
# setups, LEARN_BASE (1: the fresh image's first boot) otherwise. Then N measured boots each (default 10).
# Each boot appends a row to boots.csv and keeps its guest report under raw/RUN_ID/.
# BOOTLAB_DISK_MODEL (hdd, sd, ssd): the simulated disk's model and the golden images built for it.
# A file STOP in the run's directory ($CACHE/runs/RUN_ID/STOP) ends the series after the round under way, so a
# run cut short for time stays balanced.
source "$(dirname "$0")/lab.sh"
read -r -a setups <<<"${1//,/ }"
[ ${#setups[@]} -gt 0 ] || { echo "usage: run-series.sh SETUPS [N]" >&2; exit 2; }
n=${2:-${N:-10}}
RUN_ID=${RUN_ID:-$(date -u +%Y%m%dT%H%M)}

work=$(mktemp -d /dev/shm/bootlab.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
declare -A learn info disk initrd
maxlearn=0
for s in "${setups[@]}"; do
	case "$s" in prefetch|reorder|selfcheck) learn[$s]=${LEARN:-3} ;; none|warm) learn[$s]=${LEARN_BASE:-1} ;; *) die "unknown setup $s" ;; esac
	[ "${learn[$s]}" -gt $maxlearn ] && maxlearn=${learn[$s]}
	golden=$(golden_of "$s")
	[ -f "$golden" ] || die "no golden image $golden: make -C $LAB_DIR guest"
	cp --sparse=always "$golden" "$work/$s.img"
	initrd[$s]=${golden%.img}.initrd; [ -f "${initrd[$s]}" ] || initrd[$s]=$CACHE/initrd.img
	info[$s]=$(grep -E '^(setup|built|prefetch_commit|logs)=|(ENABLE_FILE_REORDERING|REORDER_TIME_BUDGET|LOGIN_TRACING_DELAY)=' \
		"$golden.info" 2>/dev/null | sed 's/^config: //' | tr '\n' ' ')
	medium=$(grep -E '^config: PREFETCH_MEDIUM=' "$golden.info" 2>/dev/null | sed 's/^config: //' || true)
	[ "$s" = warm ] || info[$s]+="disk_model=$DISK_MODEL ${medium:+$medium }"
	disk[$s]=sim; [ "$s" = warm ] && disk[$s]=warm
	log "series $RUN_ID $s: ${learn[$s]} learning + $n measured boots (${info[$s]})"
done

declare -A fails
boot() { # SETUP PHASE INDEX
	local s=$1 phase=$2 i=$3 out rc=0
	out=$CACHE/runs/$RUN_ID/$s-$phase$i
	BOOTLAB_INITRD=${initrd[$s]} "$LAB_DIR/boot-once.sh" "${disk[$s]}" "$work/$s.img" "$out" || rc=$?
	python3 "$LAB_DIR/report.py" record "$out" --run "$RUN_ID" --setup "$s" --phase "$phase" --boot "$i" \
		--golden-info "${info[$s]}" || log "could not record $out"
	if [ $rc -ne 0 ]; then fails[$s]=$((${fails[$s]:-0} + 1)); else fails[$s]=0; fi
	[ "${fails[$s]}" -ge 3 ] && die "$s: 3 failed boots in a row, run stopped"
	return 0
}
for ((r = 1; r <= maxlearn; r++)); do
	for s in "${setups[@]}"; do [ "$r" -le "${learn[$s]}" ] && boot "$s" learn "$r"; done
done
for ((r = 1; r <= n; r++)); do
	for s in "${setups[@]}"; do boot "$s" measure "$r"; done
	log "round $r of $n done"
	[ -e "$CACHE/runs/$RUN_ID/STOP" ] && { log "STOP file: run $RUN_ID ends after round $r of $n"; break; }
done
log "run $RUN_ID done"
