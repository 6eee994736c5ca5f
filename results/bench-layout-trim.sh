#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Does the layout hold what the boot read, or what the kernel read ahead too?  Issue #13: trim a trace's ranges
# to the pages the boot asked for (page-cache tracepoints) instead of the pages resident at the end (mincore).
#
# On the simulated 7200 rpm disk in count mode (model seconds summed per request: exact, one run per case),
# for each boot set (tests/mkbootset.sh: the default image, then --package-order): the boot's reads run with
# the kernel's readahead on (`wlrun -r`, read_ahead_kb $SIM_RA_KB = 128 as on a SATA disk) under `prefetchd
# trace`, once with the tracepoints (the default where tracefs has them) and once with PREFETCH_TRACE_PAGES=
# mincore; each trace is aggregated into a layout (`prefetchd aggregate`).  Per layout: its bytes (all, and
# those of regular files) against the bytes the boot's workload reads (the workload's BYTES column: what the
# boot had of each file, in pages, cut at the file size); then one cold replay (`prefetchd replay --medium
# rotational`) and the boot's reads after it: the replay's model seconds, and what the boot still had to read
# from the disk itself (requests, bytes, seconds: ~0 when the layout covers the boot).  A trace whose layout
# holds less than the boot read, or a replay after which the boot still read, is taken again (up to 3 times:
# another process's drop_caches on a shared machine evicts pages; the last column counts the attempts).
#
# Environment: SEED (1), RATIO (8), SIZE (image MiB; default: mkbootset's), TSV (boot1.tsv).  OUT=FILE also
# writes the report there.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
pf_private_mount_ns "$@"
SEED=${SEED:-1} RATIO=${RATIO:-8} SIZE=${SIZE:-} TSV=${TSV:-$TOP/tests/data/debian12-boot/boot1.tsv}
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
for b in "$PREFETCHD" "$WLRUN" "$TOOLS/mkbootset"; do
	[ -x "$b" ] || pf_fail "$b missing (make all tools; make -C tests/simdisk)"
done
[ -d /sys/kernel/tracing/events/filemap/mm_filemap_get_pages ] ||
	pf_note "this kernel has no page-cache tracepoints: both layouts will come from mincore"
tmp=$(sim_tmpfs_dir 1400)
work=$(pf_tmpdir)
mkdir -p "$work/bin" && cp "$PREFETCHD" "$WLRUN" "$work/bin/" || pf_fail "copying the programs"
PREFETCHD=$work/bin/prefetchd WLRUN=$work/bin/wlrun

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }
# LAYOUT: "all_bytes file_bytes" (directories are read whole by replay: not the boot's data reads)
layout_bytes() {
	"$PREFETCHD" dump --files "$1" >"$work/files.txt" || pf_fail "dump --files"
	"$PREFETCHD" dump "$1" >"$work/ext.txt" || pf_fail "dump"
	awk -F'\t' 'NR == FNR { if ($2 ~ /^d/) dir[$8] = 1; next }
		!/^#/ { all += $3; if (!($1 in dir)) files += $3 }
		END { printf "%d %d\n", all, files }' "$work/files.txt" "$work/ext.txt"
}
# one cold replay of LAYOUT, then the boot's reads: "replay_s boot_s boot_requests boot_read_bytes"
replay_case() {
	pf_drop_caches
	sim_reset
	"$PREFETCHD" replay --medium rotational "$1" >"$work/replay.out" 2>&1 || pf_fail "replay: $(cat "$work/replay.out")"
	local rs
	rs=$(sim_seconds)
	sim_reset
	"$WLRUN" -q -r -C "$fs" "$work/workload" >/dev/null || pf_fail "workload"
	echo "$rs $(sim_seconds) $(sim_stat requests) $(sim_stat read_bytes)"
}

rows=()
fs=$work/fs
for set in default package-order; do
	img=$tmp/$set.img
	args=(--tsv "$TSV" --ratio "$RATIO" --seed "$SEED" ${SIZE:+--size "$SIZE"})
	[ "$set" = package-order ] && args+=(--package-order)
	pf_note "building the $set image (${args[*]})"
	"$TOP/tests/mkbootset.sh" "${args[@]}" "$img" | sed 's/^/   /' || pf_fail "mkbootset"
	cp "$img.workload" "$work/workload"
	wl_bytes=$(awk -F'\t' '{ s += $1 } END { printf "%d", s }' "$work/workload")
	sim_start "$img" count
	sim_mount "$fs"
	describe=$(sim_describe)
	# a cold boot with readahead and no prefetch: what the boot reads from the disk by itself
	pf_drop_caches
	sim_reset
	"$WLRUN" -q -r -C "$fs" "$work/workload" >/dev/null || pf_fail "workload"
	none="$(sim_seconds) $(sim_stat requests) $(sim_stat read_bytes)"
	for mode in tracepoints mincore; do
		env_mode=auto
		[ "$mode" = mincore ] && env_mode=mincore
		# On a shared machine another process's drop_caches can evict the boot's pages before mincore looks
		# (the layout then holds less than the boot read): such a trace is taken again, up to 3 times.
		for ((try = 1; try <= 3; try++)); do
			PREFETCH_TRACE_PAGES=$env_mode SIM_WL_OPT=-r sim_trace_workload "$fs" "$work/workload" \
				"$work/trace.$mode" "$work"
			"$PREFETCHD" dump "$work/trace.$mode" | grep -q "ranges: pages read" && src=tracepoints || src=mincore
			"$PREFETCHD" aggregate --output "$work/layout.$mode" "$work/trace.$mode" >"$work/aggregate.out" ||
				pf_fail "aggregate"
			read -r all files <<<"$(layout_bytes "$work/layout.$mode")"
			[ "$files" -ge "$wl_bytes" ] && break
			pf_note "$set/$mode: layout $(mib "$files") MiB < boot read $(mib "$wl_bytes") MiB (evicted meanwhile?): again"
		done
		# The same for the replay: pages evicted between replay and boot would make the boot read by itself.
		for ((rtry = 1; rtry <= 3; rtry++)); do
			read -r rs bs brq bbytes <<<"$(replay_case "$work/layout.$mode")"
			[ "$brq" -eq 0 ] && break
		done
		rows+=("| $set | $src | $(mib "$wl_bytes") | $(mib "$all") | $(mib "$files") | $(ratio "$files" "$wl_bytes") | $rs | $bs | $brq | $(mib "$bbytes") | $try / $rtry |")
	done
	read -r ns nrq nbytes <<<"$none"
	rows+=("| $set | (no prefetch: the boot alone) | $(mib "$wl_bytes") | - | - | - | - | $ns | $nrq | $(mib "$nbytes") | - |")
	sim_umount
	sim_stop
	rm -f "$img" "$img.workload"
done

{
	echo "## bench-layout-trim.sh ($(date -u +%Y-%m-%d), $(git -C "$TOP" rev-parse --short HEAD), seed $SEED, ratio $RATIO, $(basename "$TSV"), kernel $(uname -r))"
	echo
	echo "$describe"
	echo
	echo "| boot set | ranges from | boot read (MiB) | layout (MiB) | of which files (MiB) | files / boot read | replay (s) | boot after replay (s) | its requests | its reads (MiB) | attempts (trace / replay) |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	printf '%s\n' "${rows[@]}"
} | tee ${OUT:+"$OUT"}
