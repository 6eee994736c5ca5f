#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prefetchd config: the settings as prefetchd reads them, for sh to eval or to --get one; --check names each bad
# line with its reason.  The three readings the old readers (C, sh, systemd) disagreed on - PREFETCH_DIR=$HOME/x,
# LOGIN_TRACING_DELAY=30s, KEY = 5 - are bad lines, reported, and the settings keep their defaults.  What eval
# makes of the output equals --get for every key, also for values that need quoting.
source "$TOP/tests/lib.sh"
tmp=$(pf_tmpdir)

# ---- defaults: an empty file ----
: >"$tmp/empty"
out=$("$PREFETCHD" config --config "$tmp/empty" 2>"$tmp/err") || pf_fail "config of an empty file: exit $?"
[ ! -s "$tmp/err" ] || pf_fail "empty file: stderr: $(cat "$tmp/err")"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 24 ] || pf_fail "want 24 settings: $out"
grep -qx "REORDER_MAKE_ROOM=1" <<<"$out" || pf_fail "default REORDER_MAKE_ROOM: $out"
grep -qx "LOGIN_TRACING_DELAY=60" <<<"$out" || pf_fail "default LOGIN_TRACING_DELAY: $out"
grep -qx "TRACE_MOUNTS=''" <<<"$out" || pf_fail "default TRACE_MOUNTS: $out"
grep -qx "PREFETCH_MEDIUM=auto" <<<"$out" || pf_fail "default PREFETCH_MEDIUM: $out"
grep -qx "REORDER_ERASE_BLOCK_KB=0" <<<"$out" && grep -qx "REORDER_WRITE_BUDGET_MB=0" <<<"$out" || pf_fail "default flash reorder keys: $out"

# ---- a good file, with values that need quoting ----
cat >"$tmp/good" <<'CONF'
# comment
export PREFETCH_DIR="/srv/pre fetch"   # trailing comment
PREFETCH_RUNTIME_DIR='/run/it'"'"'s'
LOGIN_TRACING_DELAY=30
TRACE_MOUNTS="/ /usr,/boot"
PREFETCH_MEDIUM=hdd
ENABLE_FILE_REORDERING=yes
CHUNK_SIZE_BLOCKS=4096
CONF
out=$("$PREFETCHD" config --check "$tmp/good") || pf_fail "--check of a good file: exit $?: $out"
[ "$out" = "$tmp/good: OK" ] || pf_fail "--check of a good file: $out"
[ "$("$PREFETCHD" config --get PREFETCH_DIR --config "$tmp/good")" = "/srv/pre fetch" ] || pf_fail "--get PREFETCH_DIR"
[ "$("$PREFETCHD" config --get PREFETCH_RUNTIME_DIR --config "$tmp/good")" = "/run/it's" ] || pf_fail "--get quote"
[ "$("$PREFETCHD" config --get TRACE_MOUNTS --config "$tmp/good")" = "/ /usr /boot" ] || pf_fail "--get TRACE_MOUNTS"
[ "$("$PREFETCHD" config --get PREFETCH_MEDIUM --config "$tmp/good")" = rotational ] || pf_fail "--get PREFETCH_MEDIUM"
[ "$("$PREFETCHD" config --get ENABLE_FILE_REORDERING --config "$tmp/good")" = 1 ] || pf_fail "--get boolean"

# eval in a POSIX shell gives exactly what --get gives, for every key
for conf in "$tmp/good" "$tmp/empty"; do
	"$PREFETCHD" config --config "$conf" >"$tmp/settings" || pf_fail "config --config $conf: exit $?"
	for key in $(cut -d= -f1 "$tmp/settings"); do
		want=$("$PREFETCHD" config --get "$key" --config "$conf") || pf_fail "--get $key: exit $?"
		# shellcheck disable=SC2016 # expanded by the inner sh
		got=$(sh -c 'eval "$(cat "$1")" && eval "printf %s \"\$$2\""' sh "$tmp/settings" "$key") ||
			pf_fail "sh could not eval the settings of $conf"
		[ "$got" = "$want" ] || pf_fail "$conf: eval gives $key='$got', --get '$want'"
	done
done

# ---- a bad file: each bad line named with its reason; the commands warn the same words ----
cat >"$tmp/bad" <<'CONF'
PREFETCH_DIR=$HOME/x
LOGIN_TRACING_DELAY=30s
KEY = 5
TRACE_TIMEOUT = 5
REPLAY_THREADS=4
CONF
out=$("$PREFETCHD" config --check "$tmp/bad"); rc=$?
[ $rc -eq 1 ] || pf_fail "--check of a bad file: exit $rc, want 1"
want="$tmp/bad:1: PREFETCH_DIR: \$ expansion is not supported; line ignored
$tmp/bad:2: LOGIN_TRACING_DELAY: '30s' is not a number (0..3600); line ignored
$tmp/bad:3: unknown key KEY; line ignored
$tmp/bad:4: TRACE_TIMEOUT: no spaces allowed around '='; line ignored
$tmp/bad: 4 bad lines"
[ "$out" = "$want" ] || pf_fail "--check output:
$out
want:
$want"
out=$("$PREFETCHD" config --get LOGIN_TRACING_DELAY --config "$tmp/bad" 2>"$tmp/err") || pf_fail "--get on a bad file: exit $?"
[ "$out" = 60 ] || pf_fail "bad LOGIN_TRACING_DELAY not ignored: $out"
[ "$("$PREFETCHD" config --get PREFETCH_DIR --config "$tmp/bad" 2>/dev/null)" = /var/lib/prefetch ] || pf_fail "\$HOME taken"
[ "$("$PREFETCHD" config --get TRACE_TIMEOUT --config "$tmp/bad" 2>/dev/null)" = 300 ] || pf_fail "'KEY = 5' taken"
grep -qx "prefetchd: config: warning: $tmp/bad:2: LOGIN_TRACING_DELAY: '30s' is not a number (0..3600); line ignored" \
	"$tmp/err" || pf_fail "warning of the config command: $(cat "$tmp/err")"
# another command reading the file says the same (only its command name differs)
"$PREFETCHD" report --config "$tmp/bad" --log "$tmp/no-log" >/dev/null 2>"$tmp/err"
grep -qx "prefetchd: report: warning: $tmp/bad:2: LOGIN_TRACING_DELAY: '30s' is not a number (0..3600); line ignored" \
	"$tmp/err" || pf_fail "warning of the report command: $(cat "$tmp/err")"

# ---- errors ----
out=$("$PREFETCHD" config --get NO_SUCH_KEY 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "prefetchd: config: unknown key 'NO_SUCH_KEY'" ] || pf_fail "unknown key: exit $rc: $out"
out=$("$PREFETCHD" config --check "$tmp/missing" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == "prefetchd: config: cannot read $tmp/missing: "* ]] || pf_fail "missing file: exit $rc: $out"
out=$("$PREFETCHD" config --config "$tmp/missing" 2>&1); rc=$?
[ $rc -eq 1 ] || pf_fail "missing --config file: exit $rc: $out"
out=$("$PREFETCHD" config --frobnicate 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "prefetchd: config: unknown option '--frobnicate'
Try 'prefetchd config --help'." ] || pf_fail "usage error: exit $rc: $out"
"$PREFETCHD" config --help | grep -q "^Usage: prefetchd config" || pf_fail "--help"
# A reorder-only key changed while reordering is off: a warning (it has no effect), the file still OK (exit 0);
# the same key with reordering on, or left at its default, no warning.
printf 'CHUNK_SIZE_BLOCKS=512\nREORDER_TIME_BUDGET=20\n' >"$tmp/reorder-off"
out=$("$PREFETCHD" config --check "$tmp/reorder-off") || pf_fail "--check reorder-only keys: exit $?"
[ "$out" = "$tmp/reorder-off: warning: CHUNK_SIZE_BLOCKS=512 has no effect: it acts only with ENABLE_FILE_REORDERING=1 (now 0)
$tmp/reorder-off: OK (but for the warnings above)" ] || pf_fail "--check reorder-only keys: $out"
printf 'CHUNK_SIZE_BLOCKS=512\nENABLE_FILE_REORDERING=1\n' >"$tmp/reorder-on"
[ "$("$PREFETCHD" config --check "$tmp/reorder-on")" = "$tmp/reorder-on: OK" ] || pf_fail "--check with reordering on"
pf_note "config: $(wc -l <"$tmp/settings") settings, eval = --get; --check names each bad line"
