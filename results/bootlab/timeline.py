#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""When did the boot wait for the disk?  For one boot's work directory (boot-once.sh OUTDIR): the simulated
disk's requests (sim-requests.log: "R|W offset length cost_us start_ms", start_ms since the log was opened,
just before qemu started) cut at the guest's events: the root mounted, prefetchd started, systemd started,
prefetchd's replay ended, the boot ended; plus the request log's make-up (small vs large reads).

The guest's clock is not the host's: under TCG it starts seconds after qemu, and under icount it runs at the
pace of the guest's instructions while the vCPU computes and at real time while it idles, so no one offset and
rate maps it.  Boots recorded with console-times.tsv (console-stamp.py: every serial line stamped with the
host's CLOCK_MONOTONIC as it arrived) and the disk log's start on that clock (host.env sim_log_t0_ns) are put
on the disk's clock through every timestamped kernel line, piecewise.  Older boots fall back to a straight
line through two anchors: the guest's first disk request (at the kernel's "virtio_blk ... [vda]" line) and
its report at boot end (host_t_bootend); that is roughly right without icount and wrong with it.

  timeline.py OUTDIR...
"""
import bisect
import os
import re
import sys

# Requests before this many ms of the log are the host's own (losetup and friends), not the guest's.
HOST_SETUP_MS = 1000.0


def load_timeline(d):
    """The 0.2 s samples of the disk's counters (host clock): (t, requests, reads, bytes, busy_s)."""
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


def requests(d):
    """(kind, offset, length, cost_us, start_s or None) per request, in arrival order."""
    out = []
    try:
        with open(os.path.join(d, "sim-requests.log")) as f:
            for line in f:
                p = line.split()
                if len(p) >= 4:
                    out.append((p[0], int(p[1]), int(p[2]), float(p[3]), float(p[4]) / 1e3 if len(p) > 4 else None))
    except FileNotFoundError:
        pass
    return out


def _text(d):
    text = ""
    for name in ("console.log", "report.log"):
        try:
            with open(os.path.join(d, name), errors="replace") as f:
                text += f.read().replace("\r", "") + "\n"
        except FileNotFoundError:
            pass
    return text


def marks(d):
    """Guest events (guest clock, s).  Keys starting with '_' are anchors, not cuts."""
    m = {}
    text = _text(d)
    g = re.search(r"\[\s*([0-9.]+)\] virtio_blk \S+ \[vda\]", text)
    if g:
        m["_vda"] = float(g.group(1))
    # the kernel's line at the end of the root's mount: ext4's, XFS's
    g = re.search(r"\[\s*([0-9.]+)\] (?:EXT4-fs \(vda\): mounted filesystem|XFS \(vda\): Ending clean mount)", text)
    if g:
        m["root mounted"] = float(g.group(1))
    # prefetchd starts from the initramfs (when its replay began, or its kernel-log line) or, without that, from
    # prefetch.service -- unless the service found it running already (started from the initramfs without a
    # kernel-log line: then its start is not known).
    from_service = None if "prefetchd is already running" in text else \
        re.search(r"\[\s*([0-9.]+)\] systemd\[1\]: Starting prefetch.service", text)
    starts = [float(g.group(1)) for g in
              (re.search(r"prefetchd: started from the initramfs .*replay began at ([0-9.]+) s", text),
               re.search(r"\[\s*([0-9.]+)\] prefetchd: started from the initramfs", text), from_service) if g]
    if starts:
        m["prefetchd start"] = min(starts)
    g = re.search(r"Startup finished in ([0-9.]+)s \(kernel\)", text)
    if g:  # systemd's own start: the "kernel" part of systemd-analyze (here it includes the initramfs)
        m["systemd start"] = float(g.group(1))
    g = re.search(r"replay: .* done at ([0-9.]+) s of uptime", text)
    if g:
        m["replay end"] = float(g.group(1))
    else:
        g = re.search(r"replay: .* in ([0-9.]+) s", text)
        if g and "prefetchd start" in m:
            m["replay end"] = m["prefetchd start"] + float(g.group(1))
    g = re.search(r"finish_timestamp_monotonic_us=(\d+)", text)
    if g:
        m["boot end"] = int(g.group(1)) / 1e6
    g = re.search(r"uptime_at_report_start=([0-9.]+)", text)
    if g:
        m["_report"] = float(g.group(1))
    hb = _env(d, "host-bootend.env")
    if "host_t_bootend" in hb:
        m["_host_report"] = float(hb["host_t_bootend"])
    return m


def _env(d, name="host.env"):
    """KEY=VALUE lines of one of the boot's env files ({} when it is not there)."""
    try:
        with open(os.path.join(d, name)) as f:
            return dict(line.strip().split("=", 1) for line in f if "=" in line)
    except FileNotFoundError:
        return {}


def _stamped_lines(d):
    """[(seconds on the disk log's clock, serial file index, text)] of console-times.tsv (console-stamp.py), or []
    without the stamps or the disk log's start (host.env sim_log_t0_ns)."""
    t0 = int(_env(d).get("sim_log_t0_ns") or 0) / 1e9
    if t0 <= 0:
        return []
    out = []
    try:
        with open(os.path.join(d, "console-times.tsv"), errors="replace") as f:
            for line in f:
                p = line.rstrip("\n").split("\t", 2)
                if len(p) == 3:
                    out.append((float(p[0]) - t0, p[1], p[2]))
    except FileNotFoundError:
        return []
    return out


def stamped_anchors(d):
    """[(guest s, disk-log s)]: each kernel line's timestamp against its arrival, and the guest's report
    (uptime_at_report_start) against its own; [] without the stamps."""
    pts = []
    for h, idx, text in _stamped_lines(d):
        g = re.match(r"\[\s*([0-9]+\.[0-9]+)\]", text) if idx == "0" else \
            re.search(r"uptime_at_report_start=([0-9.]+)", text)
        if g:
            pts.append((float(g.group(1)), h))
    pts.sort()
    # A line reaches the host at or after its timestamp (the console is written in bursts): each arrival is an
    # upper bound, so keep the lower envelope, which is also monotonic.
    env = []
    for g, h in reversed(pts):
        env.append((g, min(h, env[-1][1]) if env else h))
    return env[::-1]


def report_arrival(d, m):
    """When the host saw the guest's report at boot end, on the disk log's clock (the stamped BOOTLAB-BEGIN line);
    for boots without stamps host_t_bootend, which counts from qemu's start, a second or so after the log's."""
    return next((h for h, idx, text in _stamped_lines(d) if idx == "1" and "BOOTLAB-BEGIN" in text),
                m.get("_host_report"))


def clock(d, m, reqs):
    """guest seconds -> seconds on the disk log's clock, or None without anchors."""
    pts = stamped_anchors(d)
    if len(pts) >= 2:
        gs = [p[0] for p in pts]

        def piecewise(t):
            i = bisect.bisect_right(gs, t)
            if i == 0:
                return pts[0][1] - (pts[0][0] - t)
            if i == len(pts):
                return pts[-1][1] + (t - pts[-1][0])
            (ga, ha), (gb, hb) = pts[i - 1], pts[i]
            return ha + (t - ga) * (hb - ha) / (gb - ga) if gb > ga else ha
        return piecewise
    first = next((r[4] for r in reqs if r[4] is not None and r[4] * 1e3 > HOST_SETUP_MS), None)
    if first is None or "_vda" not in m or "_report" not in m or "_host_report" not in m:
        return None
    ga, ha, gb, hb = m["_vda"], first, m["_report"], m["_host_report"]
    k = (hb - ha) / (gb - ga) if gb > ga else 1.0
    return lambda t: ha + (t - ga) * k


def segments(d):
    """[(name of the event ending it, guest time, requests, MiB read, disk busy s)] from qemu's start on, or []
    when the request log has no times (runs before it had them)."""
    reqs, m = requests(d), marks(d)
    to_host = clock(d, m, reqs)
    if to_host is None:
        return []
    cuts = sorted((t, k) for k, t in m.items() if not k.startswith("_"))
    out, i = [], 0
    guest = [r for r in reqs if r[4] * 1e3 > HOST_SETUP_MS]
    for t, name in cuts:
        h = to_host(t)
        n = mb = busy = 0
        while i < len(guest) and guest[i][4] < h:
            r = guest[i]
            n += 1
            mb += r[2] / 1048576 if r[0] == "R" else 0
            busy += r[3] / 1e6
            i += 1
        out.append((name, t, n, mb, busy))
    return out


def main():
    for d in sys.argv[1:]:
        print(f"== {d}")
        segs = segments(d)
        if not segs:
            print("no request times (or no anchors): nothing to cut")
            continue
        print(f"{'until':>18} {'t (s)':>7} {'requests':>9} {'MiB read':>9} {'disk busy (s)':>13}")
        for name, t, n, mb, busy in segs:
            print(f"{name:>18} {t:7.2f} {n:9d} {mb:9.1f} {busy:13.3f}")
        reqs = requests(d)
        rd = [r for r in reqs if r[0] == "R"]
        small = [r for r in rd if r[2] <= 16384]
        print(f"request log (to power-off): {len(reqs)} requests, {len(rd)} reads ({len(small)} of <= 16 KiB costing "
              f"{sum(r[3] for r in small) / 1e6:.2f} s; larger {sum(r[3] for r in rd if r[2] > 16384) / 1e6:.2f} s), "
              f"writes {sum(r[3] for r in reqs if r[0] == 'W') / 1e6:.2f} s")


if __name__ == "__main__":
    main()
