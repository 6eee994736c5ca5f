#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Stamp each line qemu writes to the guest's serial files with the host's CLOCK_MONOTONIC at its arrival.

  console-stamp.py OUT FILE...

Follows each FILE (created by qemu after this starts; read every 20 ms) and appends to OUT one line per complete
line read: "MONO_S<TAB>N<TAB>LINE", N the index of FILE in the arguments (0: ttyS0, the console).  Ends on SIGTERM
after one last read.  Why: under icount the guest's clock runs at its own pace (instructions while the vCPU
computes, real time while it idles), so no single offset or rate maps it to the host's clock; the kernel's
timestamped lines, each paired with the moment the host saw it, do (timeline.py).  The simulated disk's request
log is on the same clock (simdisk's stats: log_t0_ns).
"""
import os
import signal
import sys
import time

POLL_S = 0.02


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: console-stamp.py OUT FILE...")
    out = open(sys.argv[1], "w", buffering=1, errors="replace")
    files = sys.argv[2:]
    handles = [None] * len(files)
    partial = [b""] * len(files)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    def drain():
        for i, path in enumerate(files):
            if handles[i] is None:
                try:
                    handles[i] = open(path, "rb")
                except FileNotFoundError:
                    continue
            data = handles[i].read()
            if not data:
                continue
            now = time.monotonic()
            lines = (partial[i] + data).split(b"\n")
            partial[i] = lines.pop()
            for line in lines:
                text = line.decode(errors="replace").replace("\r", "").replace("\t", " ")
                out.write(f"{now:.3f}\t{i}\t{text}\n")

    while not stop:
        drain()
        time.sleep(POLL_S)
    drain()
    out.close()


if __name__ == "__main__":
    main()
