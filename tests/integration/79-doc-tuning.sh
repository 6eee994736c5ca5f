#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The documentation test of prefetch(5)'s MEASURING AND TUNING (issue 26): the section's commands, extracted
# from the man page's source, run exactly as written (the configuration file's path the test's own), its
# "(reboot N times)" steps as N scripted boot records that follow the configuration as it then is (off boots,
# the first on boot learning the layout, replays, a reorder at the first shutdown with reordering on, and none
# after: once the files lie in order the gain gate holds a changed chunk size back); then the report says what
# the section promises: the replay clearly faster than off, the reorder faster than the replay alone, and for
# chunk size B on the same disk no row but one line saying why.  Then what the section says for comparing by
# boots: a copy of the disk made before step 3, given size B and rebooted 8 times, read together with this
# disk's log (its boots from before the copy counted once) tells the two sizes apart.  A step the test does
# not know fails it, so the page cannot drift from the program.
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
nboot=0 layout=0 generation=0 placed=-1 idp=doc
# One scripted boot as prefetchd would record it under the configuration now ($PREFETCH_CONFIG, its log in
# $state): what ran, its boot time (the setup's, plus a fixed noise), the reorder generation and chunk size of
# the files' placement.  The reorder places the files once, at the first shutdown with reordering on and a
# layout; a chunk size changed after that leaves them where they are (prefetch-reorder predicts no gain).
scripted_boot() {
	local run=on prefetch=0 reorder=0 base=30
	if [ "$(get ENABLE_FILE_REORDERING)" = 1 ] && [ "$layout" = 1 ] && [ "$generation" = 0 ]; then
		generation=1 placed=$(get CHUNK_SIZE_BLOCKS) reorder=1 # the last shutdown's reorder moved blocks
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
	printf '%s-%d %d %s systemd %d %d sda 9000 2000 300000 0 replay -1 -1 -1 -1 -1 -1 -1 -1 %s %d %s rotational 6.1.0 0\n' \
		"$idp" "$nboot" $((1700000000 + nboot * 100)) "$s" "$prefetch" "$reorder" "$run" "$generation" "$c" \
		>>"$state/boottime.log"
}

# The disk copied before step 3 (the first step that turns reordering on): its configuration, boot log and
# the model's state.
copy_disk() {
	mkdir -p "$tmp/copy/state"
	cp "$conf" "$tmp/copy/prefetch"
	cp "$state/boottime.log" "$tmp/copy/state/"
	echo "PREFETCH_DIR=$tmp/copy/state" >>"$tmp/copy/prefetch"
	copied="$nboot $layout $generation $placed"
}

n=0
while IFS= read -r step; do
	case $step in
	'# '*)
		n=$((n + 1))
		[[ $step == *ENABLE_FILE_REORDERING=1* ]] && [ -z "${copied:-}" ] && copy_disk
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
# Step 4 on the same disk: the boots go on counting under the size that placed the files, no row for B, and
# the report says why.
grep -q "^512  *16 " "$tmp/transcript" || pf_fail "want the 16 reorder boots under chunk size 512 (no new placement)"
grep -q "^4000 " "$tmp/transcript" && pf_fail "a row for chunk size 4000, whose boots the page says there are none of"
grep -qx "  CHUNK_SIZE_BLOCKS=4000 has no boots: the files still lie where chunk size 512 placed them (generation 1); prefetch-reorder --check compares sizes on this disk" \
	"$tmp/transcript" || pf_fail "the report does not say why chunk size 4000 has no boots"

# Comparing by boots, as the section says: the copy made before step 3, given size B, rebooted 8 times with
# reordering on, its log read together with this disk's.
[ -n "${copied:-}" ] || pf_fail "no step turned reordering on"
main_log=$state/boottime.log
read -r nboot layout generation placed <<<"$copied"
export PREFETCH_CONFIG=$tmp/copy/prefetch
echo ENABLE_FILE_REORDERING=1 >>"$PREFETCH_CONFIG"
echo CHUNK_SIZE_BLOCKS=4000 >>"$PREFETCH_CONFIG"
state=$tmp/copy/state idp=copy
for ((i = 0; i < 8; i++)); do scripted_boot; done
"$PREFETCHD" report --log "$main_log" --log "$state/boottime.log" --by chunk-size --setup replay+reorder \
	>"$tmp/both" 2>&1 || pf_fail "report of both logs: $(cat "$tmp/both")"
"$PREFETCHD" report --log "$main_log" --log "$state/boottime.log" --by setup >>"$tmp/both" 2>&1 ||
	pf_fail "report --by setup of both logs: $(cat "$tmp/both")"
sed 's/^/    /' "$tmp/both"
grep -q "^512  *16 " "$tmp/both" && grep -q "^4000  *8 " "$tmp/both" ||
	pf_fail "both logs: want 16 boots under 512 and 8 under 4000"
grep -q "^  4000 against 512: -[0-9.]* s (.*): clear: [0-9.]* s faster$" "$tmp/both" ||
	pf_fail "both logs: the report does not tell the chunk sizes apart"
grep -q "has no boots" "$tmp/both" && pf_fail "both logs: a note on a chunk size that has boots"
# the boots from before the copy are in both logs: counted once, as many as this disk's own report has
boots_of() { awk -v s="$1" '$1 == s && $2 ~ /^[0-9]+$/ { print $2; exit }' "$2"; }
for s in off trace replay; do
	[ -n "$(boots_of "$s" "$tmp/transcript")" ] && [ "$(boots_of "$s" "$tmp/both")" = "$(boots_of "$s" "$tmp/transcript")" ] ||
		pf_fail "both logs: $s boots from before the copy not counted once ($(boots_of "$s" "$tmp/both") against $(boots_of "$s" "$tmp/transcript"))"
done
exit 0
