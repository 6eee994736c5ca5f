#!/usr/bin/env python3
"""When did the boot wait for the disk?  For one boot's work directory (boot-once.sh OUTDIR):
the simulated disk's progress over time (sim-timeline.tsv, sampled every 0.2 s from qemu's start, which is
within a fraction of a second of guest uptime 0) cut at the prefetch service's start, the end of its replay
and the end of the boot; plus the request log's make-up (small vs large reads, seeks).

  timeline.py OUTDIR...
"""
import os
import re
import sys


def load_timeline(d):
    pts = []
    try:
        with open(os.path.join(d, "sim-timeline.tsv")) as f:
            for line in f:
                p = line.split()
                if len(p) == 5 and p[1].isdigit():
                    pts.append((float(p[0]), int(p[1]), int(p[2]), int(p[3]), int(p[4]) / 1e9))
    except FileNotFoundError:
        pass
    return pts


def at(pts, t):
    """Counters at time t (last sample not after t)."""
    best = (0.0, 0, 0, 0, 0.0)
    for p in pts:
        if p[0] <= t:
            best = p
    return best


def marks(d):
    m = {}
    text = ""
    for name in ("console.log", "report.log"):
        try:
            with open(os.path.join(d, name), errors="replace") as f:
                text += f.read().replace("\r", "") + "\n"
        except FileNotFoundError:
            pass
    # prefetchd starts from the initramfs (its kernel-log line) or, without that, from prefetch.service.
    starts = [float(g.group(1)) for g in
              (re.search(r"\[\s*([0-9.]+)\] prefetchd: started from the initramfs", text),
               re.search(r"\[\s*([0-9.]+)\] systemd\[1\]: Starting prefetch.service", text)) if g]
    if starts:
        m["prefetch start"] = min(starts)
    g = re.search(r"replay: .* in ([0-9.]+) s", text)
    if g and "prefetch start" in m:
        m["replay end"] = m["prefetch start"] + float(g.group(1))
    g = re.search(r"finish_timestamp_monotonic_us=(\d+)", text)
    if g:
        m["boot end"] = int(g.group(1)) / 1e6
    # Host seconds since qemu started minus guest uptime, both at the moment the guest's report appeared.
    try:
        with open(os.path.join(d, "host-bootend.env")) as f:
            hb = dict(line.strip().split("=", 1) for line in f if "=" in line)
        g = re.search(r"uptime_at_report_start=([0-9.]+)", text)
        if "host_t_bootend" in hb and g:
            m["_offset"] = float(hb["host_t_bootend"]) - float(g.group(1))
    except FileNotFoundError:
        pass
    g = re.search(r"Startup finished in ([0-9.]+)s \(kernel\)", text)
    if g:
        m["kernel end (root mounted ~)"] = float(g.group(1))
    return m


def requests(d):
    out = []
    try:
        with open(os.path.join(d, "sim-requests.log")) as f:
            for line in f:
                p = line.split()
                if len(p) >= 4:
                    out.append((p[0], int(p[1]), int(p[2]), float(p[3])))
    except FileNotFoundError:
        pass
    return out


def main():
    for d in sys.argv[1:]:
        pts, m = load_timeline(d), marks(d)
        off = m.pop("_offset", None)
        if off is not None:  # put the samples on the guest's clock
            pts = [(p[0] - off,) + p[1:] for p in pts]
        print(f"== {d} (guest clock = host clock - {off if off is None else round(off, 2)} s)")
        cuts = sorted(m.items(), key=lambda kv: kv[1])
        prev_t, prev = 0.0, (0.0, 0, 0, 0, 0.0)
        print(f"{'until':>28} {'t (s)':>7} {'requests':>9} {'reads':>6} {'MB read':>8} {'disk busy (s)':>13}")
        for name, t in cuts:
            c = at(pts, t)
            print(f"{name:>28} {t:7.2f} {c[1] - prev[1]:9d} {c[2] - prev[2]:6d} {(c[3] - prev[3]) / 1048576:8.1f} "
                  f"{c[4] - prev[4]:13.2f}")
            prev_t, prev = t, c
        reqs = requests(d)
        if reqs:
            end = int(sum(1 for _ in reqs))
            rd = [r for r in reqs if r[0] == "R"]
            small = [r for r in rd if r[2] <= 16384]
            print(f"request log: {end} requests, {len(rd)} reads ({len(small)} of <= 16 KiB costing "
                  f"{sum(r[3] for r in small) / 1e6:.2f} s; larger {sum(r[3] for r in rd if r[2] > 16384) / 1e6:.2f} s), "
                  f"writes {sum(r[3] for r in reqs if r[0] == 'W') / 1e6:.2f} s")
        _ = prev_t


if __name__ == "__main__":
    main()
