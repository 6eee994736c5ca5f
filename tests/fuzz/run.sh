#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs each fuzz target given as argument for FUZZ_SECONDS (default 60) from its seed corpus
# tests/fuzz/corpus/NAME/ (fuzz_config -> corpus/config), and prints one closing line per target, then
# "fuzz: N targets, N crashed".  Exit 1 on any crash: the input that caused it is kept in
# $BUILD/fuzz-crashes/ (feed it again with 'TARGET FILE'), the target's output in $BUILD/fuzz-logs/NAME.log.
# FUZZ_ENGINE=libfuzzer: libFuzzer; new inputs it finds go to $BUILD/fuzz-corpus/NAME/ (kept for the next run),
# never into the tree.  FUZZ_ENGINE=driver: tests/fuzz/driver.c, deterministic by FUZZ_SEED (default 1).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build/fuzz-driver}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
seconds=${FUZZ_SECONDS:-60} engine=${FUZZ_ENGINE:-driver}
mkdir -p "$BUILD/fuzz-crashes" "$BUILD/fuzz-logs"
total=0 crashed=0

for bin in "$@"; do
	name=$(basename "$bin")
	corpus=$top/tests/fuzz/corpus/${name#fuzz_}
	log=$BUILD/fuzz-logs/$name.log
	total=$((total + 1))
	if [ ! -d "$corpus" ]; then
		echo "$name: no seed corpus $corpus"; crashed=$((crashed + 1)); continue
	fi
	before=$(ls "$BUILD/fuzz-crashes" | wc -l)
	if [ "$engine" = libfuzzer ]; then
		work=$BUILD/fuzz-corpus/$name
		mkdir -p "$work"
		"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			${FUZZ_SEED:+-seed=$FUZZ_SEED} -artifact_prefix="$BUILD/fuzz-crashes/$name-" "$work" "$corpus" >"$log" 2>&1
		rc=$?
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
		secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
		line="$name: libFuzzer, ${runs:-?} inputs in ${secs:-?} s, corpus $(ls "$work" | wc -l) inputs"
	else
		"$bin" -t "$seconds" -s "${FUZZ_SEED:-1}" -a "$BUILD/fuzz-crashes/$name-" "$corpus" >"$log" 2>&1
		rc=$?
		line=$(tail -n 1 "$log")
	fi
	if [ "$rc" -ne 0 ] || [ "$(ls "$BUILD/fuzz-crashes" | wc -l)" -ne "$before" ]; then
		crashed=$((crashed + 1))
		grep -m 1 -E 'ERROR: |runtime error|fuzz check failed|deadly signal' "$log" | sed "s|^|$name: |"
		echo "$name: CRASH (exit $rc): the input is in $BUILD/fuzz-crashes/, the output in $log"
	else
		case $line in *"no crash") echo "$line" ;; *) echo "$line, no crash" ;; esac
	fi
done
echo "fuzz: $total targets, $crashed crashed"
[ "$crashed" -eq 0 ]
