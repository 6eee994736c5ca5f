#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Does prefetch do as well on XFS and btrfs roots as on ext4?  The three real boot traces of
# tests/data/debian12-boot, each on a 1 GiB image built the same way (tests/mkbootset.sh --fstype: ext4, XFS, or
# btrfs with the root in subvolume @ mounted with -o subvol=@), on the simulated 7200 rpm disk (tests/simdisk,
# count mode, mounted read-only).  The layout comes from the real pipeline: prefetchd trace while the workload
# runs cold, TRACES times, then prefetchd aggregate.  Cases, each cold:
#   none      the workload alone (the boot's reads, in boot order)
#   prefetch  prefetchd replay --medium rotational (the metadata pass of the filesystem, if it has one, then the
#             data in physical order), then the workload
#   before    (with BEFORE=PREFETCHD: another build, e.g. the tree before this benchmark's change) its replay of
#             the same layout, then the workload
#   limit     the physical limit: the workload's bytes at the disk's 100 MB/s, no seek
# Time = the model's disk time of everything the case does (replay + workload).  Ratios: none/prefetch (speedup)
# and prefetch/limit, from the same run.
#
# Environment: RUNS (5) runs per case; TRACES (3); FSTYPES ("ext4 xfs btrfs"); BOOTS ("boot1 boot2 boot3");
# SIZE (1024) MiB; RATIO (8); SEED (1); BEFORE (none); IMAGE_OPTS (none: mkbootset's aged image; e.g.
# --fresh, --package-order); KEEP_LOG=FILE keeps the per-run figures (bench-fstypes.sh --table FILE
# renders them again).  Needs root, /dev/fuse, the default build, tools, build/simdisk, mkfs.xfs, mkfs.btrfs.
# Cold-cache benchmark: runs under flock /var/tmp/prefetch-bench.lock (taken here).
set -u -o pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)

# table LOG: "boot fstype run case seconds replay_seconds requests seeks metadata_blocks limit" per line
table() {
	echo "| boot | root | N | none s (min-max) | prefetch s (min-max) | of which replay s | metadata blocks | before s | limit s | speedup | prefetch / limit |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	awk '
		{ k = $1 SUBSEP $2; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
		  c = k SUBSEP $4; n[c]++; s[c] += $5; rp[c] += $6; mb[c] += $9; lim[k] = $10
		  if (!(c in mn) || $5 < mn[c]) mn[c] = $5; if (!(c in mx) || $5 > mx[c]) mx[c] = $5
		  t[k, $3, $4] = $5 }
		END {
			for (i = 1; i <= nk; i++) {
				k = order[i]; split(k, p, SUBSEP); a = k SUBSEP "none"; b = k SUBSEP "prefetch"; bf = k SUBSEP "before"
				sp = 0; np = 0
				for (r = 1; r <= n[b]; r++) if ((k SUBSEP r SUBSEP "none") in t && t[k, r, "prefetch"] > 0) {
					sp += t[k, r, "none"] / t[k, r, "prefetch"]; np++ }
				printf "| %s | %s | %d | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.3f | %d | %s | %.3f | %.2fx | %.2fx |\n",
					p[1], p[2], n[b], s[a] / n[a], mn[a], mx[a], s[b] / n[b], mn[b], mx[b], rp[b] / n[b],
					mb[b] / n[b], n[bf] ? sprintf("%.3f", s[bf] / n[bf]) : "-", lim[k], np ? sp / np : 0,
					(s[b] / n[b]) / lim[k]
			}
		}' "$1"
}
if [ "${1:-}" = --table ] && [ $# -eq 2 ]; then
	table "$2"
	exit
fi
# One benchmark at a time on this machine (drop_caches is machine-wide), in a mount namespace of its own.
if [ -z "${BENCH_LOCKED:-}" ]; then
	BENCH_LOCKED=1 exec flock /var/tmp/prefetch-bench.lock "$0" "$@"
fi
if [ -z "${BENCH_PRIVATE_NS:-}" ] && command -v unshare >/dev/null; then
	BENCH_PRIVATE_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
RUNS=${RUNS:-5} TRACES=${TRACES:-3} FSTYPES=${FSTYPES:-"ext4 xfs btrfs"} BOOTS=${BOOTS:-"boot1 boot2 boot3"}
SIZE=${SIZE:-1024} RATIO=${RATIO:-8} SEED=${SEED:-1} BEFORE=${BEFORE:-} IMAGE_OPTS=${IMAGE_OPTS:-}
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || pf_fail "BEFORE=$BEFORE is not a program"
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
for b in "$PREFETCHD" "$WLRUN" "$TOOLS/mkbootset"; do [ -x "$b" ] || pf_fail "$b missing (make all tools; make -C tests/simdisk)"; done

work=$(pf_tmpdir)
log=${KEEP_LOG:-$work/runs}
: >"$log"

# cold CASE FS WL LAYOUT: "seconds replay_seconds requests seeks metadata_blocks"; measured again (up to 5
# times) when somebody else dropped caches meanwhile
cold() {
	local c=$1 fs=$2 wl=$3 layout=$4 try d0 rs mb
	for ((try = 1; try <= 5; try++)); do
		rs=0 mb=0
		pf_drop_caches
		pf_cache_hold # until the workload has read: no one else's drop in between (tests/cache_lock.sh)
		d0=$(pf_cache_drops slab)
		sim_reset
		if [ "$c" = prefetch ] || [ "$c" = before ]; then
			local bin=$PREFETCHD
			[ "$c" = before ] && bin=$BEFORE
			"$bin" replay --medium rotational "$layout" >"$work/replay.out" 2>&1 || pf_fail "replay: $(cat "$work/replay.out")"
			sim_settle
			rs=$(sim_seconds)
			mb=$(sed -n 's/.* \([0-9]*\) metadata blocks.*/\1/p' "$work/replay.out")
		fi
		"$WLRUN" -q -C "$fs" "$wl" >/dev/null || pf_fail "workload"
		pf_cache_release
		[ "$(pf_cache_drops slab)" = "$d0" ] && break
		echo "$c: caches dropped by someone else during the run, again" >&2
	done
	echo "$(sim_seconds) $rs $(sim_stat requests) $(sim_stat seeks) ${mb:-0}"
}

for boot in $BOOTS; do
	tsv=$TOP/tests/data/debian12-boot/$boot.tsv
	for fst in $FSTYPES; do
		dir=$(sim_tmpfs_dir $((SIZE + 64))) || pf_fail "no tmpfs room for the image"
		pf_note "$boot on $fst: building the image"
		# shellcheck disable=SC2086 # IMAGE_OPTS: words
		"$TOP/tests/mkbootset.sh" --size "$SIZE" --ratio "$RATIO" --seed "$SEED" --tsv "$tsv" --fstype "$fst" $IMAGE_OPTS "$dir/img" |
			sed 's/^/   /' || pf_fail "mkbootset --fstype $fst"
		wl=$dir/img.workload
		sim_start "$dir/img" count
		opts=ro
		[ "$fst" = btrfs ] && opts=ro,subvol=@
		fs=$work/fs-$boot-$fst
		sim_mount "$fs" -o "$opts"
		traces=()
		for ((t = 1; t <= TRACES; t++)); do
			sim_trace_workload "$fs" "$wl" "$work/trace$t" "$work"
			traces+=("$work/trace$t")
		done
		pf_note "$boot on $fst: $(cat "$work/trace.out")"
		"$PREFETCHD" aggregate --max-mb 0 --max-files 0 --output "$work/layout" "${traces[@]}" | sed 's/^/-- /' ||
			pf_fail "aggregate"
		limit=$(awk -F'\t' '{ s += $1 } END { printf "%.3f", s / 100e6 }' "$wl")
		cases=(none prefetch ${BEFORE:+before})
		for ((r = 1; r <= RUNS; r++)); do
			for ((i = 0; i < ${#cases[@]}; i++)); do
				c=${cases[$(((i + r) % ${#cases[@]}))]} # rotate the order from run to run
				echo "$boot $fst $r $c $(cold "$c" "$fs" "$wl" "$work/layout") $limit" >>"$log"
			done
		done
		pf_note "$boot on $fst: last replay: $(tail -1 "$work/replay.out")"
		describe=$(sim_describe)
		sim_stop
		rm -f "$dir/img"
	done
done

echo
echo "Images: tests/mkbootset.sh --size $SIZE --ratio $RATIO --seed $SEED${IMAGE_OPTS:+ $IMAGE_OPTS} --tsv BOOT.tsv --fstype ROOT (btrfs: subvolume @, mounted subvol=@), mounted ro"
echo "Disk: $describe"
echo "Layout: $TRACES traces of the cold workload, prefetchd aggregate --max-mb 0 --max-files 0"
echo "Code: tree at $(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown); $(uname -r); mkfs: $(mkfs.xfs -V 2>&1 | head -1), $(mkfs.btrfs -V 2>&1 | head -1)"
echo "Before: ${BEFORE:-not measured}${BEFORE:+ (built $(date -u -r "$BEFORE" '+%F %T UTC'))}"
echo "Method: $RUNS count-mode runs per case, the case order rotating from run to run; a run during which caches were dropped by someone else is measured again"
echo
table "$log"
