#!/usr/bin/env bash
# 60-reorder-crash: prefetch-reorder loses nothing, whenever the power goes.
#
# For aged ext4 4 KiB images 10 %, 50 % and 95 % full (CRASH_FILLS; tests/mkaged.sh: % of the free space), each
# with a random, a forward and a reverse layout (CRASH_ORDERS), plus ext3 1 KiB and ext2 4 KiB series
# (CRASH_EXTRA="TYPE:BS:FILL:ORDER ..."), images of CRASH_IMAGE_MB (32) MB:
#   - a full run (through the crash driver in count mode) gives W, the number of writes; e2fsck -fn is clean
#     with nothing to repair and every file reads back the same (contents, size, mode, links, inode, mtime);
#   - for k in 1..W (all of them, or CRASH_POINTS spread evenly plus the first and last three) the run is cut
#     at write k (write k and later never reach the disk, the process _exits), then e2fsck -p must repair
#     without asking (exit 0 or 1), e2fsck -fn must then be clean, and every file must read back the same;
#   - CRASH_DROP_POINTS more cuts also lose a random subset of the writes since the last flush;
#   - resume: after a cut and e2fsck -p, prefetch-reorder (the command) runs to the end, clean, same files.
# CRASH_POINTS=all (or a number) and CRASH_DROP_POINTS=N for thorough manual runs (every write of one series:
# ~30-60 s); PF_KEEP=1 keeps the failing images.  Prints a summary table: outcomes per series.
# CI default (8 + 6 points, 2 losing unflushed writes, 11 series): ~50 s alone, ~2 min on a busy machine.
set -u
# Mounts in a private mount namespace: a namespace another process creates meanwhile (other tests and
# benchmarks do) would otherwise copy ours and keep the device claimed after our umount.
if [ -z "${PF_PRIVATE_MNT_NS:-}" ] && command -v unshare >/dev/null; then
	PF_PRIVATE_MNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
source "$TOP/tests/lib.sh"
pf_require_root

# Under the sanitizer build every run is a few times slower: fewer cut points by default.
case $BUILD in *asan*) CRASH_POINTS=${CRASH_POINTS:-4} ;; *) CRASH_POINTS=${CRASH_POINTS:-8} ;; esac
CRASH_DROP_POINTS=${CRASH_DROP_POINTS:-2}
CRASH_IMAGE_MB=${CRASH_IMAGE_MB:-32}
CRASH_FILLS=${CRASH_FILLS-"10 50 95"}
CRASH_ORDERS=${CRASH_ORDERS:-"random forward reverse"}
# block-mapped files (ext2/3: the pointer switch goes through indirect blocks) and 1 KiB blocks: TYPE:BS:FILL:ORDER
CRASH_EXTRA=${CRASH_EXTRA-"ext3:1024:50:reverse ext2:4096:50:random"}
CRASH=${CRASH:-$TOOLS/reorder_crash}
[ -x "$CRASH" ] || pf_skip "$CRASH not built (make tools)"
[ -x "$TOOLS/mklayout" ] || pf_skip "$TOOLS/mklayout not built (make tools)"
[ -x "$REORDER" ] || pf_skip "$REORDER not built"

# Images on tmpfs when there is one: hundreds of copies and fscks of a 32 MB image.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}
work=$(pf_tmpdir)
# Private copies: a rebuild of the tree while this runs must not pull the programs away mid-series.
cp "$CRASH" "$work/reorder_crash" && cp "$REORDER" "$work/prefetch-reorder" || pf_fail "copying the programs"
CRASH=$work/reorder_crash REORDER=$work/prefetch-reorder
mnt=$work/mnt
mkdir -p "$mnt"
pf_cleanup_add "umount '$mnt'"
failures=0
summary=()

manifest() { pf_manifest "$1" "$2" "$work" "$mnt"; }

fail_point() { # label, message; keeps the image with PF_KEEP
	echo "FAIL: $1: $2" >&2
	echo "      reproduce: CRASH_FILLS= CRASH_EXTRA=$type:$bs:$fill:$order PF_KEEP=1 make check TESTS_ONLY=60-reorder-crash" \
		"(image $base, layout $layout, then $(basename "$CRASH") ${k:+--stop-after $k} --reserve-percent $reserve --chunk-blocks $chunk --layout LAYOUT COPY)" >&2
	failures=$((failures + 1))
	point_fail=$((point_fail + 1))
	if [ -n "${PF_KEEP:-}" ]; then cp --sparse=always "$cimg" "$work/failed-$(echo "$1" | tr ' /=' '___').img"; fi
}

# check_after_cut LABEL REF: e2fsck -p repairs without asking, -fn is clean, files are the same.
check_after_cut() {
	local label=$1 ref=$2 out rc
	out=$(e2fsck -p "$cimg" 2>&1); rc=$?
	if [ $rc -gt 1 ]; then point_manual=$((point_manual + 1)); fail_point "$label" "e2fsck -p exit $rc: $(echo "$out" | tail -3 | tr '\n' ' ')"; return 1; fi
	out=$(e2fsck -fn "$cimg" 2>&1); rc=$?
	if [ $rc -ne 0 ]; then
		point_unfixed=$((point_unfixed + 1))
		fail_point "$label" "e2fsck -fn exit $rc after e2fsck -p: $(echo "$out" | grep -v '^e2fsck\|^Pass\|^$' | head -5 | tr '\n' ' ')"
		return 1
	fi
	if ! manifest "$cimg" "$work/m.cur"; then fail_point "$label" "cannot mount/read the image"; return 1; fi
	if ! cmp -s "$ref" "$work/m.cur"; then
		point_lost=$((point_lost + 1))
		fail_point "$label" "files differ: $(diff "$ref" "$work/m.cur" | grep '^[<>]' | head -4 | tr '\n' ' ')"
		return 1
	fi
	return 0
}

# pick_points W N: the k to cut at
pick_points() {
	local w=$1 n=$2 k
	if [ "$n" = all ] || [ "$w" -le $((n + 6)) ]; then seq 1 "$w"; return; fi
	{
		seq 1 3
		for ((k = 1; k <= n; k++)); do echo $((k * w / (n + 1))); done
		seq $((w - 2)) "$w"
	} | awk '$1 >= 1' | sort -nu
}

# series TYPE BLOCKSIZE FILL ORDERS...: one aged image, cut runs for each layout order
series() {
	local type=$1 bs=$2 fill=$3 order; shift 3
	base=$work/aged-$type-$bs-$fill.img
	"$TOP/tests/mkaged.sh" "$base" "$CRASH_IMAGE_MB" "$type" "$bs" "$fill" $((fill + 11)) >"$work/mkaged.out" ||
		pf_fail "mkaged.sh $fill %: $(cat "$work/mkaged.out")"
	pf_note "image $type ${bs}b $fill %: $(cat "$work/mkaged.out")"
	manifest "$base" "$work/m.ref" || pf_fail "cannot read $base"
	# A nearly full filesystem has less free space than the default 5 % reserve: let reorder use what there is,
	# or it would (rightly) do nothing and the cuts would test nothing.
	# Small chunks too: a chunk moves whole or not at all, and the few free blocks above the reserve hold no 2000-block chunk.
	reserve=5 chunk=2000; [ "$fill" -ge 90 ] && reserve=1 chunk=32
	printf 'REORDER_FREE_RESERVE_PERCENT=%s\nCHUNK_SIZE_BLOCKS=%s\n' "$reserve" "$chunk" >"$work/config-$type-$bs-$fill"
	for order in "$@"; do
		case $order in random) seed=$((fill * 10 + 1)) ;; forward) seed=$((fill * 10 + 2)) ;; *) seed=$((fill * 10 + 3)) ;; esac
		label="$type-$bs $fill% $order"
		point_fail=0 point_manual=0 point_unfixed=0 point_lost=0
		layout=$work/layout-$type-$bs-$fill-$order
		extra=(); [ "$order" = random ] && extra=(--partial)
		"$TOOLS/mklayout" --order "$order" --seed "$seed" --percent 40 --dirs --special "${extra[@]}" -o "$layout" "$base" \
			>"$work/mklayout.out" || pf_fail "mklayout $label"
		cimg=$work/cut.img

		k=""
		# full run, counted (twice: the write sequence must be the same, or the cut points mean nothing)
		cp --sparse=always "$base" "$cimg"
		full=$("$CRASH" --count --reserve-percent "$reserve" --chunk-blocks "$chunk" --layout "$layout" "$cimg" 2>"$work/crash.err") ||
			pf_fail "$label: full run failed: $(cat "$work/crash.err")"
		w=$(echo "$full" | sed -n 's/^writes \([0-9]*\) .*/\1/p')
		digest=$(echo "$full" | sed -n 's/.* digest \([0-9a-f]*\) .*/\1/p')
		[ -n "$w" ] || pf_fail "$label: no write count in: $full"
		out=$(e2fsck -fn "$cimg" 2>&1) || fail_point "$label full run" "e2fsck -fn not clean: $(echo "$out" | head -8 | tr '\n' ' ')"
		manifest "$cimg" "$work/m.cur" && cmp -s "$work/m.ref" "$work/m.cur" ||
			fail_point "$label full run" "files differ: $(diff "$work/m.ref" "$work/m.cur" | grep '^[<>]' | head -4 | tr '\n' ' ')"
		cp --sparse=always "$base" "$cimg"
		again=$("$CRASH" --count --reserve-percent "$reserve" --chunk-blocks "$chunk" --layout "$layout" "$cimg" 2>/dev/null)
		[ "$(echo "$again" | sed -n 's/.* digest \([0-9a-f]*\) .*/\1/p')" = "$digest" ] ||
			fail_point "$label" "two full runs wrote different sequences (non-deterministic): '$full' vs '$again'"

		# cuts
		points=$(pick_points "$w" "$CRASH_POINTS")
		ntested=0
		for k in $points; do
			cp --sparse=always "$base" "$cimg"
			"$CRASH" --stop-after "$k" --reserve-percent "$reserve" --chunk-blocks "$chunk" --layout "$layout" "$cimg" >/dev/null 2>"$work/crash.err"; rc=$?
			if [ $rc -ne 99 ]; then fail_point "$label k=$k" "no cut (exit $rc): $(tail -2 "$work/crash.err")"; continue; fi
			ntested=$((ntested + 1))
			check_after_cut "$label k=$k/$w" "$work/m.ref" || true
		done

		# cuts that also lose unflushed writes, at pseudo-random k
		ndrop=0
		for ((i = 1; i <= CRASH_DROP_POINTS && w > 0; i++)); do
			k=$(( (seed * 7919 + i * 104729) % w + 1 ))
			cp --sparse=always "$base" "$cimg"
			"$CRASH" --stop-after "$k" --drop-unflushed "$((seed * 100 + i))" --reserve-percent "$reserve" --chunk-blocks "$chunk" --layout "$layout" "$cimg" \
				>/dev/null 2>"$work/crash.err"; rc=$?
			if [ $rc -ne 99 ]; then fail_point "$label drop k=$k" "no cut (exit $rc)"; continue; fi
			ndrop=$((ndrop + 1))
			check_after_cut "$label drop k=$k/$w seed=$((seed * 100 + i))" "$work/m.ref" || true
		done

		# resume: cut halfway, repair, then the real command finishes the job
		if [ "$w" -ge 2 ]; then
			k=$(( (w + 1) / 2 ))
			cp --sparse=always "$base" "$cimg"
			"$CRASH" --stop-after "$k" --reserve-percent "$reserve" --chunk-blocks "$chunk" --layout "$layout" "$cimg" >/dev/null 2>&1
			if check_after_cut "$label resume k=$k" "$work/m.ref"; then
				if ! out=$("$REORDER" --config "$work/config-$type-$bs-$fill" --layout "$layout" "$cimg" 2>&1); then
					fail_point "$label resume k=$k" "prefetch-reorder after the cut failed: $(echo "$out" | tail -2 | tr '\n' ' ')"
				else
					out=$(e2fsck -fn "$cimg" 2>&1) || fail_point "$label resume" "e2fsck -fn after resume: $(echo "$out" | head -6 | tr '\n' ' ')"
					manifest "$cimg" "$work/m.cur" && cmp -s "$work/m.ref" "$work/m.cur" ||
						fail_point "$label resume" "files differ after resume"
				fi
			fi
		fi
		summary+=("$(printf '%-10s %-5s %-8s %7s %9s %6s %8s %8s %8s %8s' "$type-$bs" "$fill%" "$order" "$w" "$ntested" "$ndrop" \
			"$point_manual" "$point_unfixed" "$point_lost" "$point_fail")")
	done
}

# shellcheck disable=SC2086
for fill in $CRASH_FILLS; do series ext4 4096 "$fill" $CRASH_ORDERS; done
for spec in $CRASH_EXTRA; do
	IFS=: read -r t b f o <<<"$spec"
	series "$t" "$b" "$f" $o
done

echo
printf '%-10s %-5s %-8s %7s %9s %6s %8s %8s %8s %8s\n' fs image layout writes k-tested drop 'fsck-p>1' fsck-fn files-lost failures
printf '%s\n' "${summary[@]}"
echo "fsck-p>1: e2fsck -p could not repair alone; fsck-fn: still errors after e2fsck -p; files-lost: a file reads back different"
echo "CRASH_POINTS=$CRASH_POINTS CRASH_DROP_POINTS=$CRASH_DROP_POINTS images of ${CRASH_IMAGE_MB} MB"
[ "$failures" -eq 0 ] || pf_fail "$failures failed checks"
