#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/stability.sh: the proof that `make check` passes every time, not by luck (results/STABILITY.md
# records its figures).  As root, from a checkout (each part works on a fresh clone of HEAD, never this tree):
#   1. the full `make check` ROOT_RUNS times in a row (default 10);
#   2. `make check` as a normal user (USER, default nobody) USER_RUNS times (default 3);
#   3. two `make check` at the same time in two clones (they must not collide);
#   4. 77-selfcheck under SEEDS different injected boot ids (default 20);
#   5. 55-REPEAT runs of 55-reorder-make-room on its own (default 30);
#   6. 77-selfcheck under DROP_SEEDS random boot ids (default 10) beside a loop that drops the page cache every
#      second through the tests' cache lock (tests/cache_lock.sh), as the benchmarks and the boot lab do;
#   7. the tests of the tracer and of scripted boots (BUSY_TESTS: TESTS_ONLY patterns, default every *-trace*
#      script, 72-boot-e2e and 78-off-boots) BUSY_RUNS times (default 10) beside two processes spinning per core:
#      load changes when the tracer reads its queue and when a boot's replay gets going, and what they check must
#      not follow it (before 10-trace waited for the ignore marks it counted 14-20 events here on a quiet machine,
#      13-14 beside the spinners, and 21, over its limit, on a CI machine; before 78-off-boots waited for its
#      replays, 1 run in 6 beside spinners ended a boot before its replay had read a file).
# PARTS=1,3 runs only those parts.  Prints one line per run and a closing "N passed, N failed" line (one per
# run); exits non-zero if any run failed.  Logs of failed runs are kept in $OUT (default a temporary directory).
# Everything the runs make (clones, TMPDIR, the unit tests' scratch space) is under one new directory in
# STABILITY_DIR (default /var/tmp), so a clean-up of shared temporary folders elsewhere cannot pull files from under
# a run.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
ROOT_RUNS=${ROOT_RUNS:-10} USER_RUNS=${USER_RUNS:-3} SEEDS=${SEEDS:-20} REPEAT_55=${REPEAT_55:-30} DROP_SEEDS=${DROP_SEEDS:-10}
BUSY_RUNS=${BUSY_RUNS:-10} BUSY_TESTS=${BUSY_TESTS:--trace 72-boot-e2e 78-off-boots} PARTS=${PARTS:-1,2,3,4,5,6,7} USER=${STABILITY_USER:-nobody}
[ "$(id -u)" -eq 0 ] || { echo "stability.sh: run it as root (part 2 drops to $USER itself)" >&2; exit 2; }
work=$(mktemp -d "${STABILITY_DIR:-/var/tmp}/prefetch-stability.XXXXXX") || exit 1
OUT=${OUT:-$work/logs}
mkdir -p "$OUT" "$work/tmp" "$work/scratch"
chmod 0755 "$work"
chmod 1777 "$work/tmp" "$work/scratch"
export TMPDIR=$work/tmp PF_TEST_SCRATCH=$work/scratch
trap 'rm -rf "$work"/clone* "$work"/*.rc "$work/tmp" "$work/scratch"; rmdir "$OUT" "$work" 2>/dev/null' EXIT # a failed run's logs stay
passed=0 failed=0

clone() { # DIR [OWNER]
	git -C "$top" archive --prefix=p/ HEAD | tar -C "$work" -xf - && mv "$work/p" "$1" || return 1
	[ -z "${2:-}" ] || chown -R "$2" "$1"
}
# judge NAME LOG RC SECS: count one run; a passed run's log is dropped
judge() {
	local summary
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$2" | tail -1)
	if [ "$3" -eq 0 ]; then
		passed=$((passed + 1)); echo "ok:   $1 (${4}s): $summary"; rm -f "$2"
	else
		failed=$((failed + 1)); echo "FAIL: $1 (${4}s, exit $3): $summary; log $2"
	fi
}
# run NAME LOG CMD...: one run, timed, judged
run() {
	local name=$1 log=$2 start
	shift 2
	start=$(date +%s)
	"$@" >"$log" 2>&1
	judge "$name" "$log" $? $(($(date +%s) - start))
}
part() { [[ ,$PARTS, == *,$1,* ]]; }

if part 1; then
	clone "$work/clone1" || exit 1
	make -s -C "$work/clone1" -j2 all >/dev/null || exit 1
	for ((i = 1; i <= ROOT_RUNS; i++)); do run "make check as root, run $i" "$OUT/root-$i.log" make -C "$work/clone1" check; done
fi
if part 2; then
	clone "$work/clone2" "$USER" || exit 1
	for ((i = 1; i <= USER_RUNS; i++)); do
		run "make check as $USER, run $i" "$OUT/user-$i.log" setpriv --reuid="$USER" --regid="$(id -g "$USER")" --clear-groups \
			env HOME="$work/clone2" make -C "$work/clone2" check
	done
fi
if part 3; then
	clone "$work/clone3a" && clone "$work/clone3b" || exit 1
	make -s -C "$work/clone3a" -j2 all >/dev/null && make -s -C "$work/clone3b" -j2 all >/dev/null || exit 1
	start=$(date +%s)
	for c in a b; do (make -C "$work/clone3$c" check >"$OUT/side-$c.log" 2>&1; echo $? >"$work/side-$c.rc") & done
	wait
	for c in a b; do judge "make check in clone $c, beside the other" "$OUT/side-$c.log" "$(cat "$work/side-$c.rc")" \
		$(($(date +%s) - start)); done
fi
if part 4 || part 5 || part 6 || part 7; then
	[ -d "$work/clone1" ] || { clone "$work/clone1" && make -s -C "$work/clone1" -j2 all >/dev/null; } || exit 1
	make -s -C "$work/clone1" -j2 tools >/dev/null || exit 1
fi
if part 4; then
	for ((i = 1; i <= SEEDS; i++)); do
		seed=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
		run "77-selfcheck, boot ids $seed-N" "$OUT/77-$seed.log" env PF_TEST_BOOT_SEED="$seed" TESTS_UNIT_ONLY= \
			TESTS_ONLY=77-selfcheck bash "$work/clone1/tests/run.sh"
	done
fi
if part 5; then
	for ((i = 1; i <= REPEAT_55; i++)); do
		run "55-reorder-make-room, run $i" "$OUT/55-$i.log" env TESTS_ONLY=55-reorder-make-room bash "$work/clone1/tests/run.sh"
	done
fi
if part 6; then
	(
		. "$work/clone1/tests/cache_lock.sh"
		while :; do pf_drop_caches; sleep 1; done
	) &
	dropper=$!
	for ((i = 1; i <= DROP_SEEDS; i++)); do
		seed=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
		run "77-selfcheck beside a drop every second, boot ids $seed-N" "$OUT/77drop-$seed.log" env PF_TEST_BOOT_SEED="$seed" \
			TESTS_UNIT_ONLY= TESTS_ONLY=77-selfcheck bash "$work/clone1/tests/run.sh"
	done
	kill "$dropper"
	wait "$dropper" 2>/dev/null
fi
if part 7; then
	spinners=()
	for ((i = 0; i < 2 * $(nproc); i++)); do (while :; do :; done) & spinners+=($!); done
	for ((i = 1; i <= BUSY_RUNS; i++)); do
		for pat in $BUSY_TESTS; do
			run "$pat beside $((2 * $(nproc))) spinners, run $i" "$OUT/busy-${pat#-}-$i.log" env TESTS_UNIT_ONLY= \
				TESTS_ONLY="$pat" bash "$work/clone1/tests/run.sh"
		done
	done
	kill "${spinners[@]}"
	wait "${spinners[@]}" 2>/dev/null
fi
echo "stability: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
