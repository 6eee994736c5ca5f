#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The documentation test of prefetch(5)'s MEASURING AND TUNING (issue 26): the section's commands, extracted
# from the man page's source, run exactly as written (the configuration file's path the test's own), its
# "(reboot N times)" steps as N scripted boot records that follow the configuration as it then is (off boots,
# the first on boot learning the layout, replays, a reorder at the first shutdown after the chunk size changed
# and none after); then the report's verdicts are the ones the section promises: the replay clearly faster than
# off, and the two chunk sizes told apart.  A step the test does not know fails it, so the page cannot drift
# from the program.
source "${TOP:?run me through tests/run.sh (make check)}/tests/lib.sh" || exit 1

tmp=$(pf_tmpdir)
conf=$PREFETCH_CONFIG
state=$(PREFETCH_CONFIG=$conf "$PREFETCHD" config --get PREFETCH_DIR)
mkdir -p "$tmp/bin" "$state"
ln -s "$PREFETCHD" "$tmp/bin/prefetchd"
export PATH="$tmp/bin:$PATH"

# The section's literal blocks, de-roffed: one step per line.
awk '/^\.SH MEASURING AND TUNING/ { on = 1; next } /^\.SH / { on = 0 }
     on && /^\.nf/ { lit = 1; next } on && /^\.fi/ { lit = 0; next } on && lit { print }' "$TOP/man/prefetch.5.in" |
	sed -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" >"$tmp/steps"
[ "$(grep -c '^# ' "$tmp/steps")" -ge 6 ] && grep -q '^(reboot [0-9]* times)$' "$tmp/steps" ||
	pf_fail "no MEASURING AND TUNING steps found in prefetch.5.in: $(cat "$tmp/steps")"

get() { "$PREFETCHD" config --get "$1"; }
noise=(-0.6 0.4 -0.2 0.7 -0.5 0.1 0.3 -0.3 0.5 -0.1)
nboot=0 layout=0 generation=0 placed=-1
# One scripted boot as prefetchd would record it under the configuration now: what ran, its boot time (the
# setup's, plus a fixed noise), the reorder generation and chunk size of the files' placement.
scripted_boot() {
	local run=on prefetch=0 reorder=0 base=30 chunk
	chunk=$(get CHUNK_SIZE_BLOCKS)
	if [ "$(get ENABLE_FILE_REORDERING)" = 1 ] && [ "$layout" = 1 ] && [ "$chunk" != "$placed" ]; then
		generation=$((generation + 1)) placed=$chunk reorder=1 # the last shutdown's reorder moved blocks
	fi
	if [ "$(get ENABLE_PREFETCH)" = 0 ]; then
		run=off
	elif [ "$layout" = 0 ]; then
		layout=1 # the first traced boot: nothing to replay yet
	else
		prefetch=1 base=25
		[ "$generation" -gt 0 ] && base=$([ "$placed" -le 1000 ] && echo 23.5 || echo 22)
	fi
	local s c
	s=$(awk -v b="$base" -v d="${noise[$((nboot % 10))]}" 'BEGIN { printf "%.2f", b + d }')
	c=$([ "$generation" -gt 0 ] && echo "$placed" || echo -1)
	nboot=$((nboot + 1))
	[ -s "$state/boottime.log" ] || printf '# prefetch boottime log, format 1\n' >"$state/boottime.log"
	printf 'doc-%d %d %s systemd %d %d sda 9000 2000 300000 0 replay -1 -1 -1 -1 -1 -1 -1 -1 %s %d %s rotational 6.1.0 0\n' \
		"$nboot" $((1700000000 + nboot * 100)) "$s" "$prefetch" "$reorder" "$run" "$generation" "$c" >>"$state/boottime.log"
}

n=0
while IFS= read -r step; do
	case $step in
	'# '*)
		n=$((n + 1))
		cmd=${step#\# }
		cmd=${cmd//@SYSCONFDIR@\/default\/prefetch/$conf}
		bash -c "$cmd" >"$tmp/out$n" 2>&1 || { cat "$tmp/out$n"; pf_fail "step '$step' failed"; }
		echo "\$ $cmd" >>"$tmp/transcript"
		cat "$tmp/out$n" >>"$tmp/transcript"
		;;
	'(reboot '*' times)')
		k=${step#(reboot }
		k=${k% times)}
		for ((i = 0; i < k; i++)); do scripted_boot; done
		echo "(rebooted $k times: $nboot boots recorded)" >>"$tmp/transcript"
		;;
	*) pf_fail "a step of prefetch(5)'s MEASURING AND TUNING this test does not know: '$step'" ;;
	esac
done <"$tmp/steps"
sed 's/^/    /' "$tmp/transcript"

# What the section promises the integrator reads.
grep -q "^  replay against off: -[0-9.]* s (.*): clear: [0-9.]* s faster$" "$tmp/transcript" ||
	pf_fail "the report does not say the replay is clearly faster than off"
grep -q "warning" "$tmp/transcript" && pf_fail "config --check warned after ENABLE_FILE_REORDERING=1"
grep -q "^  replay+reorder against replay: -[0-9.]* s (.*): clear: [0-9.]* s faster$" "$tmp/transcript" ||
	pf_fail "the report does not tell the reorder from the replay alone"
grep -q "^  4000 against 512: -[0-9.]* s (.*): clear: [0-9.]* s faster$" "$tmp/transcript" ||
	pf_fail "the report does not tell the chunk sizes apart"
grep -q "^512  *8 " "$tmp/transcript" && grep -q "^4000  *8 " "$tmp/transcript" ||
	pf_fail "want 8 boots under each chunk size (the settled disk's boots stay in their generation)"
exit 0
