# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by tests/lib.sh, tests/run.sh and tests/valgrind.sh: the one place that says what a test's own
# prefetch looks like, so nothing a test runs reaches the machine's /etc/default/prefetch, /var/lib/prefetch or
# /run/prefetch, its boot id or its kernel command line (tests/guard.sh fails a test that does).

# pf_home_make DIR: DIR/state, DIR/run and DIR/prefetch.conf naming them; exports PREFETCH_CONFIG to it and
# the stand-ins for the host's draws (lib/host.h) unless the caller set its own.
pf_home_make() {
	mkdir -p "$1/state" "$1/run" &&
		printf 'PREFETCH_DIR=%s/state\nPREFETCH_RUNTIME_DIR=%s/run\n' "$1" "$1" >"$1/prefetch.conf" || return 1
	export PREFETCH_CONFIG=$1/prefetch.conf
	export PREFETCH_BOOT_ID=${PREFETCH_BOOT_ID:-prefetch-test-boot} PREFETCH_CMDLINE=${PREFETCH_CMDLINE-}
}
