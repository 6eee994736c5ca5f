#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Writes the fuzz targets' seed corpus, tests/fuzz/corpus/{format,config,boot_log}/: a few small valid inputs
# of each, so that the fuzzers start from the real formats.  The traces and layouts are made by the project's
# own tools from files of this machine (the paths and blocks in them do not matter, their form does), so run
# it after 'make all tools'; the text seeds are written here.  The corpus is committed: run this only to
# change it.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build/default}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
mk=$BUILD/tests/tools/pf_mklayout
out=$top/tests/fuzz/corpus
rm -rf "$out"
mkdir -p "$out/format" "$out/config" "$out/boot_log"

# Traces and layouts: a directory, whole files, pieces of a file; with and without physical blocks.
reads='/usr/bin
/usr/bin/env 0 8192
/usr/lib/os-release
/usr/bin/env 16384 4096'
echo "$reads" | "$mk" --kind trace --no-phys "$out/format/small.trace"
echo "$reads" | "$mk" --kind trace --dir-blocks "$out/format/phys.trace"
echo "$reads" | "$mk" --kind layout --init "$out/format/init.layout"
"$BUILD/prefetchd" aggregate --output "$out/format/aggregated.layout" "$out/format/small.trace" \
	"$out/format/phys.trace" >/dev/null
: | "$mk" --kind trace "$out/format/empty.trace"

# Configuration: the shipped file, and the shell forms the parser accepts.
cp "$top/config/prefetch.default" "$out/config/prefetch.default"
cat >"$out/config/forms" <<'CFG'
# quoting, export, comments, lists
export ENABLE_PREFETCH=yes
PREFETCH_DIR='/var/lib/prefetch'
PREFETCH_RUNTIME_DIR="/run/pre\"fetch"
LOGIN_TRACING_DELAY=30 # seconds
TRACE_MOUNTS="/ /usr,/var"
PREFETCH_MEDIUM=ssd
CHUNK_SIZE_BLOCKS=4096
ENABLE_APP_PREFETCHING=1
NOT_A_KEY=1
CFG

# Boot log: a record of every setup; /proc/diskstats lines; a boot-end file.
cat >"$out/boot_log/boottime.log" <<'LOG'
# prefetch boottime log, format 1
# boot_id unix_time boot_s end_source prefetch reorder disk io_ms reads sectors
6f1c9a44-3b0e-4d8e-9a51-0c2f1d7e8b90 1795288058 21.37 systemd 0 0 sda 4120 5231 412880
0d3e5f6a-1b2c-4d5e-8f90-a1b2c3d4e5f6 1795288158 14.02 systemd 1 0 sda 2210 3120 398112
- 1795288258 12.50 file 1 1 vda -1 -1 -1
9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d 1795288358 30.00 trace-stop 0 1 - 1 2 3 extra
0d3e5f6a-1b2c-4d5e-8f90-a1b2c3d4e5f7 1795288458 19.80 systemd 1 0 sda 2210 3120 398112 0 narrow 30.00 25.00 20.00 2000 1.10 0.20 90 80
1a2b3c4d-1b2c-4d5e-8f90-a1b2c3d4e5f8 1795288558 24.10 systemd 0 0 sda 4000 5000 400000 0 - 0.00 -1 80.00 6200 -1 -1 0 -1 off 2 512 rotational 6.1.0-18-amd64 -1
2a2b3c4d-1b2c-4d5e-8f90-a1b2c3d4e5f9 1795288658 18.30 systemd 1 0 sda 2000 3000 300000 0 replay 120.00 100.00 20.00 2000 3.10 0.50 900 800 on 2 512 fast-flash 6.12.9 3 extra
LOG
cat >"$out/boot_log/diskstats" <<'DISK'
   8       0 sda 1102345 172788 67595412 313083 501094 623131 30846924 396884 0 217936 730807 0 0 0 0 226572 20838
   8       1 sda1 246393 46698 18249404 54609 84633 101848 10222300 161862 0 37748 219207 0 0 0 0 27380 2735
 259       0 nvme0n1 7465 1454 657768 16925 4025 6920 219060 1295 0 6348 18884
DISK
printf '53.40 12.00\n' >"$out/boot_log/boot-end"
ls -l "$out"/*
