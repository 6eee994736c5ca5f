#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The code keeps its shape (tests/code_check.py, over daemon/, reorder/, lib/): no function over 100 lines, no
# circle inside a folder (a file calling back into the file that calls it, or needing types from the header of
# one that depends on it: the include and call graph of the folder's modules), no bare `return -1` beyond the
# known ones listed in tests/code_check.allow (which must all still be there: a fixed one comes off the list).
# First the checker is shown to catch each kind on a small tree of its own.  Needs no root, only python3.
source "$TOP/tests/lib.sh"
command -v python3 >/dev/null || pf_skip "python3 not installed (.ci/packages lists it)"
tmp=$(pf_tmpdir)
check="python3 $TOP/tests/code_check.py"

# ---- a small tree with one problem of each kind ----
t=$tmp/tree
mkdir -p "$t/lib" "$t/reorder" "$t/daemon"
{
	echo '#include "b.h"'
	echo 'int a_top(void)'
	echo '{'
	for i in $(seq 1 100); do echo "	b_step($i);"; done
	echo '	return 0;'
	echo '}'
	echo 'int a_helper(void)'
	echo '{'
	echo '	return -1;'
	echo '}'
} >"$t/reorder/a.c"
printf 'int a_top(void);\nint a_helper(void);\n' >"$t/reorder/a.h"
printf '#include "a.h"\nint b_step(int i)\n{\n\treturn i ? a_helper() : 0;\n}\n' >"$t/reorder/b.c"
printf 'int b_step(int i);\n' >"$t/reorder/b.h"
# a comparator's -1 is an order, not an error: not counted
printf '#include "c.h"\nstatic int by_size(const void *x, const void *y)\n{\n\treturn x < y ? -1 : 1;\n}\n' >"$t/lib/c.c"
printf 'int c_find(int x)\n{\n\tif (x)\n\t\treturn -1;\n\treturn 0;\n}\n' >>"$t/lib/c.c"
: >"$t/lib/c.h"
out=$($check "$t") && pf_fail "the fixture's problems were not found: $out"
want="reorder/a.c:2: a_top is 104 lines (over 100)
circle in reorder (2 modules): a -> b -> a
lib/c.c:9: c_find: 1 bare return -1 (reads as -EPERM: return a pf error, lib/error.h, or a named sentinel)
reorder/a.c:108: a_helper: 1 bare return -1 (reads as -EPERM: return a pf error, lib/error.h, or a named sentinel)"
[ "$out" = "$want" ] || pf_fail "the checker said (< want, > got):
$(diff <(echo "$want") <(echo "$out"))"
# Listed, they pass; listed but gone, they fail.
printf 'length reorder/a.c a_top\ncircle reorder\nreturn reorder/a.c a_helper 1\nreturn lib/c.c c_find 1\n' >"$tmp/allow"
out=$($check --allow "$tmp/allow" "$t") || pf_fail "the listed exceptions were not allowed: $out"
echo 'return lib/c.c gone 1' >>"$tmp/allow"
out=$($check --allow "$tmp/allow" "$t") && pf_fail "an exception no longer found was not reported"
[[ $out == *"return lib/c.c gone no longer found"* ]] || pf_fail "stale exception: '$out'"

# ---- the real tree ----
out=$($check --allow "$TOP/tests/code_check.allow" "$TOP") || pf_fail "the code lost its shape:
$out"
echo "PASS: no function over 100 lines, no circle in a folder, $(grep -c '^return' "$TOP/tests/code_check.allow") functions with a listed bare return -1"
