#!/bin/bash
# bootlab: one series of boots of one setup, from a fresh writable copy of its golden image.
#   run-series.sh SETUP [N] [LEARN]
# SETUP: none | prefetch | reorder (on the simulated disk) | warm (golden-none on tmpfs, no simulated disk).
# LEARN boots come first and are recorded as phase "learn" (default: TRACE_AGGREGATION_COUNT = 3 for the
# prefetch setups, 1 first boot of the fresh image otherwise); then N measured boots (default 10).
# Each boot appends a row to boots.csv and keeps its guest report under raw/RUN_ID/.
source "$(dirname "$0")/lab.sh"
setup=${1:?usage: run-series.sh SETUP [N] [LEARN]}
n=${2:-${N:-10}}
case "$setup" in prefetch|reorder) learn=${3:-${LEARN:-3}} ;; none|warm) learn=${3:-${LEARN_BASE:-1}} ;; *) die "unknown setup $setup" ;; esac
RUN_ID=${RUN_ID:-$(date -u +%Y%m%dT%H%M)}
golden=$(golden_of "$setup")
[ -f "$golden" ] || die "no golden image $golden: make -C $LAB_DIR guest"
disk=sim; [ "$setup" = warm ] && disk=warm

work=$(mktemp -d /dev/shm/bootlab.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
cp --sparse=always "$golden" "$work/root.img"
info=$(grep -E '^(setup|built|prefetch_commit)=|(ENABLE_FILE_REORDERING|REORDER_TIME_BUDGET|LOGIN_TRACING_DELAY)=' "$golden.info" 2>/dev/null | sed 's/^config: //' | tr '\n' ' ')
log "series $RUN_ID $setup: $learn learning + $n measured boots ($info)"

fails=0
for phase in learn measure; do
	count=$learn; [ $phase = measure ] && count=$n
	for ((i = 1; i <= count; i++)); do
		out=$CACHE/runs/$RUN_ID/$setup-$phase$i
		rc=0
		"$LAB_DIR/boot-once.sh" "$disk" "$work/root.img" "$out" || rc=$?
		python3 "$LAB_DIR/report.py" record "$out" --run "$RUN_ID" --setup "$setup" --phase "$phase" --boot "$i" \
			--golden-info "$info" || log "could not record $out"
		if [ $rc -ne 0 ]; then fails=$((fails + 1)); else fails=0; fi
		[ $fails -ge 3 ] && die "3 failed boots in a row: series stopped"
	done
done
log "series $RUN_ID $setup done"
