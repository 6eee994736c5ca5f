#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What replay's FIEMAP mapping costs on the simulated spinning disk (count mode: exact), after a reorder left the
# layout's block numbers stale.  Builds three variants of prefetchd from the committed tree (git archive HEAD) in
# a temporary directory: the metadata pass only; the metadata pass + the FIEMAP mapping (stop before the sweep);
# and the tree at OLD (default 61d9bd4: sorted by the layout's numbers).  Replays the bench-reorder image and
# layout with each (and the current build) and prints disk requests, seeks, model time; then strace -c totals of
# a whole replay, current vs OLD.  Needs root, /dev/fuse, strace, make all tools, make -C tests/simdisk.
# Environment: OLD (61d9bd4), SEED (1).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/tests/lib.sh"
source "$TOP/tests/simdisk/lib-sim.sh"
pf_require_root
pf_private_mount_ns "$@"
OLD=${OLD:-61d9bd4} SEED=${SEED:-1}
sim_available || pf_fail "simdisk unavailable (no /dev/fuse, or run make -C tests/simdisk)"
command -v strace >/dev/null || pf_fail "strace not installed"
work=$(pf_tmpdir)
for v in meta map old; do mkdir -p "$work/$v"; done
git -C "$TOP" archive HEAD | tar -x -C "$work/meta" && git -C "$TOP" archive HEAD | tar -x -C "$work/map" &&
	git -C "$TOP" archive "$OLD" | tar -x -C "$work/old" || pf_fail "git archive"
python3 - "$work" <<'PY' || pf_fail "patching the variants (replay_rotational.c changed?)"
import sys
w = sys.argv[1]
a = "\tpf_rplan_sort_physical(items, n);\n\tn = pf_rplan_coalesce(items, n);\n"
b = "\tstruct pf_rvec more = { 0 };\n"
for v, anchor, ins, after in (("map", a, "\tif (1) { free(own); return 0; } /* stop before the sweep */\n", True),
                              ("meta", b, "\tif (1) return 0; /* the metadata pass only */\n", False)):
    p = f"{w}/{v}/daemon/replay/replay_rotational.c"
    s = open(p).read()
    if anchor not in s:
        sys.exit(1)
    s = s.replace(anchor, anchor + ins if after else ins + anchor, 1)
    open(p, "w").write(s)
PY
for v in meta map old; do
	(cd "$work/$v" && nice make build/default/prefetchd >/dev/null 2>&1) || pf_fail "building the $v variant"
done

tmp=$(sim_tmpfs_dir)
fs=$work/fs
mkdir -p "$fs"
"$TOP/tests/mkbootset.sh" --scale 1 --ratio 8 --seed "$SEED" "$tmp/main.img" >/dev/null || pf_fail mkbootset
sim_workload_layout "$tmp/main.img" "$fs" "$tmp/main.layout" || pf_fail "layout of the boot set"
sim_start "$tmp/main.img" count
pf_drop_caches
"$REORDER" --layout "$tmp/main.layout" "$SIM_DEV" >"$work/reorder.out" 2>&1 || pf_fail "prefetch-reorder: $(tail -1 "$work/reorder.out")"
sim_mount "$fs"

run() { # NAME BINARY [strace]
	pf_drop_caches
	sim_reset
	if [ "${3:-}" = strace ]; then
		strace -f -c -o "$work/strace.$1" "$2" replay --medium rotational --config /nonexistent "$tmp/main.layout" >"$work/out" 2>&1
	else
		"$2" replay --medium rotational --config /nonexistent "$tmp/main.layout" >"$work/out" 2>&1
	fi || pf_fail "$1: $(tail -1 "$work/out")"
	printf '| %s | %.3f | %d | %d | %.1f |\n' "$1" "$(sim_seconds)" "$(sim_stat requests)" "$(sim_stat seeks)" \
		"$(awk -v b="$(sim_stat read_bytes)" 'BEGIN { print b / 1048576 }')"
}
echo "Replay of the bench-reorder layout after the reorder (stale block numbers); tree $(git -C "$TOP" rev-parse --short HEAD)"
echo
echo "| replay | disk s | requests | seeks | read MiB |"
echo "|---|---|---|---|---|"
run "metadata pass only" "$work/meta/build/default/prefetchd"
run "metadata pass + FIEMAP mapping" "$work/map/build/default/prefetchd"
run "whole replay (current build)" "$BUILD/prefetchd"
run "whole replay ($OLD)" "$work/old/build/default/prefetchd"
echo
echo "Last summary (current build): $(run "again" "$BUILD/prefetchd" >/dev/null; cat "$work/out")"
run cur "$BUILD/prefetchd" strace >/dev/null
run old "$work/old/build/default/prefetchd" strace >/dev/null
echo
echo "| syscall | current | $OLD |"
echo "|---|---|---|"
awk '/^ *[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+/ { n = $4; s = $NF; if (FILENAME ~ /cur$/) c[s] = n; else o[s] = n; all[s] = 1 }
     END { for (k in all) if (c[k] + 0 >= 50 || o[k] + 0 >= 50) printf "| %s | %d | %d |\n", k, c[k], o[k] }' \
	"$work/strace.cur" "$work/strace.old" | sort
