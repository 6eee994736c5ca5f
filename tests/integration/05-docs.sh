#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The documents say nothing that is not there (tests/docs_check.py): every link of the tree's Markdown resolves
# (file and #anchor), every path of the tree it names exists (and every COMMIT:PATH it hands to git show), every
# product source file (daemon/, reorder/, lib/ *.c) is named in the README's map or its folder's README.md, and
# every document of results/ is listed in results/README.md.  First the checker is shown to catch each kind of
# problem on a small tree of its own, then the real tree must have none.  Needs no root, only python3.
source "$TOP/tests/lib.sh"
command -v python3 >/dev/null || pf_skip "python3 not installed (.ci/packages lists it)"
tmp=$(pf_tmpdir)
check="python3 $TOP/tests/docs_check.py"

# ---- a small tree with one problem of each kind ----
t=$tmp/tree
mkdir -p "$t/lib" "$t/results/sub" "$t/tests"
: >"$t/lib/named.c"; : >"$t/lib/unnamed.c"; : >"$t/results/bench.sh"; : >"$t/results/sub/ok.md"
printf '# results\n| `X.md` | `bench.sh` |\n' >"$t/results/README.md"
cat >"$t/README.md" <<'MD'
# fixture
### Where things are
| `lib/` | shared | `named.c` |
## Results
[ok](results/sub/ok.md), [ok anchor](#results), [ok file anchor](results/X.md#the-method), `results/bench.sh`
MD
cat >"$t/results/X.md" <<'MD'
# X
## The method
[missing file](gone.md) and [missing anchor](#no-such-heading); [ok](sub/ok.md) [web](https://example.org/x)
run `results/gone-bench.sh --flag` or `sub/missing.md`; the old results/simdisk/ folder
placeholders are not paths: `results/bench-NN.sh`, `tests/integration/*.sh`, `results/RUN/...`
```
results/bench.sh --x; results/in-a-fence.sh
```
MD
out=$($check "$t") && pf_fail "the fixture's problems were not found: $out"
want="results/X.md:3: link to missing gone.md
results/X.md:3: link to missing anchor #no-such-heading
results/X.md:4: names missing path results/gone-bench.sh
results/X.md:4: names missing path sub/missing.md (in results/)
results/X.md:4: names missing path results/simdisk/
results/X.md:7: names missing path results/in-a-fence.sh
lib/unnamed.c: named neither in README.md \"Where things are\" nor in lib/README.md
results/sub/ok.md: not listed in results/README.md
8 problems"
[ "$out" = "$want" ] || pf_fail "fixture: got
$out
want
$want"

# fixed, it passes: the file named in a folder README counts too
printf '# lib\n`unnamed.c` does the rest\n' >"$t/lib/README.md"
printf '| `sub/ok.md` | by hand |\n' >>"$t/results/README.md"
sed -i 's/\[missing file\](gone.md) and \[missing anchor\](#no-such-heading)/[method](#the-method)/;
	s/`results\/gone-bench.sh --flag` or `sub\/missing.md`; the old results\/simdisk\/ folder/`results\/bench.sh`/' \
	"$t/results/X.md"
sed -i 's/; results\/in-a-fence.sh//' "$t/results/X.md"
out=$($check "$t") || pf_fail "the fixed fixture still fails: $out"

# in a git checkout the files are git's, and history left to git (COMMIT:PATH for git show) must be there
if command -v git >/dev/null; then
	g() { git -C "$t" -c user.name=test -c user.email=test@invalid -c init.defaultBranch=main "$@" >/dev/null 2>&1; }
	g init && g add -A && g commit -m fixture || pf_fail "git: cannot commit the fixture"
	c=$(git -C "$t" rev-parse --short HEAD)
	printf 'Before: `git show %s:results/X.md`; lost: `git show %s:results/gone.md`.\n' "$c" "$c" >>"$t/results/X.md"
	: >"$t/lib/untracked.c"   # not git's: not a product file yet
	g add results/X.md && g commit -m history
	out=$($check "$t") && pf_fail "a COMMIT:PATH git does not have was not found: $out"
	want="results/X.md:$(wc -l <"$t/results/X.md"): names $c:results/gone.md, which git does not have
1 problems"
	[ "$out" = "$want" ] || pf_fail "fixture in git: got
$out
want
$want"
else
	pf_note "git not installed: COMMIT:PATH references not checked on the fixture"
fi

# ---- the tree itself ----
out=$($check "$TOP") || pf_fail "the tree's documents:
$out"
pf_note "$out"
