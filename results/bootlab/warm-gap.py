#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How far is a boot with prefetch (+ reorder) from a warm boot, and where does it still wait?  (WARM-GAP.md)

  warm-gap.py summary --run ID
      per setup of the run (measured boots, status ok): boot time, I/O stall (PSI some / full), disk busy
      (model time to boot end), median / avg / stddev / min / max, the medians' ratios to warm's, and
      issue 31's two thresholds (prefetch + reorder: stall <= 1.3x warm's, boot <= 1.03x warm's); then the
      replay's own account from each guest report (guest clock): when it began and ended, systemd's start, what
      the boot read from the disk itself and what of the replay it left unused.
  warm-gap.py waits --run ID --setup S --image IMG [--prefetchd PATH] [--no-layout] [--header]
      one table row: what the boots of S read from the disk, every 4 KiB block of the guest's reads from qemu's
      start until the host saw its report at boot end (simdisk's request log, host clock only), by what the block
      is on IMG (a copy of the setup's disk from the series; debugfs icheck / stat / ncheck / blocks): in the
      layout's ranges (first read this boot, or read again: evicted in between), in a layout file outside its
      ranges, a file not in the layout, metadata (directories outside the layout, blocks of no inode: inode
      tables, bitmaps, descriptors, extent blocks of ext4's reserved inodes), the journal.  The layout is IMG's
      own (/var/lib/prefetch/layout through 'prefetchd dump'), its ranges put on IMG's blocks by each file's
      block map.  MiB and disk busy (model time), medians over the boots.

Not split by time: the host's log does not say who asked for a block, and the guest's clock cannot be put on
the host's by a linear map at icount shift 0 (WARM-GAP.md, "Limits"), so "in the layout but read by the boot
before the replay got there" is not told apart from the replay's own reads here.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

LAB = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, LAB)
import report  # noqa: E402
import timeline  # noqa: E402

CACHE = os.environ.get("BOOTLAB_CACHE", "/var/cache/prefetch-bootlab")
BS = 4096
ORDER = ["none", "prefetch", "reorder", "warm"]
NAMES = {"none": "none", "prefetch": "prefetch", "reorder": "prefetch + reorder", "warm": "warm (instant disk)"}


def measured(run, phase="measure"):
    rows = [r for r in report.load_rows() if r["run"] == run and r["phase"] == phase and r["status"] == "ok"]
    by = {}
    for r in rows:
        by.setdefault(r["setup"], []).append(r)
    return by


def stat_line(v, digits=2):
    if not v:
        return ["–"] * 6
    sd = statistics.stdev(v) if len(v) > 1 else 0.0
    f = f"{{:.{digits}f}}"
    return [f.format(statistics.median(v)), f.format(statistics.fmean(v)), f.format(sd), f.format(min(v)),
            f.format(max(v)), str(len(v))]


def summary(args):
    by = measured(args.run, args.phase)
    setups = [s for s in ORDER if s in by]
    keys = [("boot_end_s", "boot time (s)"), ("io_some_s", "I/O stall, PSI some (s)"),
            ("io_full_s", "I/O stall, PSI full (s)"), ("sim_model_s", "disk busy to boot end, simdisk's model time (s)"),
            ("guest_io_ticks_ms", "disk busy to boot end as the guest saw it, /proc/diskstats io_ticks (s)")]
    med = {}
    for k, title in keys:
        print(f"**{title}**\n")
        print("| setup | median | avg | stddev | min | max | boots | median / warm's |")
        print("|---|---|---|---|---|---|---|---|")
        for s in setups:
            v = report.num(by[s], k, 1e-3 if k.endswith("_ms") else 1.0)
            med[(s, k)] = statistics.median(v) if v else None
            w = med.get(("warm", k))
            if w is None and "warm" in by:
                wv = report.num(by["warm"], k, 1e-3 if k.endswith("_ms") else 1.0)
                w = statistics.median(wv) if wv else None
            ratio = f"{med[(s, k)] / w:.3f}x" if med[(s, k)] is not None and w else "–"
            print(f"| {NAMES[s]} | " + " | ".join(stat_line(v)) + f" | {ratio} |")
        print()
    if "reorder" in by and "warm" in by:
        for k, lim, what in (("io_some_s", 1.3, "I/O stall (PSI some)"), ("boot_end_s", 1.03, "boot time")):
            r, w = med.get(("reorder", k)), med.get(("warm", k))
            if r is None or not w:
                continue
            print(f"- prefetch + reorder, {what}: {r:.2f} s / {w:.2f} s = **{r / w:.3f}x** warm's "
                  f"(threshold <= {lim}x: **{'met' if r / w <= lim else 'not met'}**)")
    print("\nRounds: " + ", ".join(f"{NAMES[s]} {len(by[s])}" for s in setups) + " measured boots.\n")
    phases(by, setups)
    replay_account(args.run, by, setups, args.phase)


def phases(by, setups):
    """The boot's stretches on the guest's clock (kernel log, systemd), medians, and each one's excess over warm's."""
    cuts = [("root_mounted_s", "root mounted"), ("kernel_s", "systemd start"), ("boot_end_s", "boot end")]
    med = {s: [statistics.median(report.num(by[s], k)) if report.num(by[s], k) else None for k, _ in cuts]
           for s in setups}
    print("| setup | " + " | ".join(f"{a} → {b} (s)" for a, b in
                                   zip(["start"] + [n for _, n in cuts[:-1]], [n for _, n in cuts])) + " |")
    print("|---|" + "---|" * len(cuts))
    for s in setups:
        cells, prev, wprev = [], 0.0, 0.0
        for i, t in enumerate(med[s]):
            w = med.get("warm", [None] * len(cuts))[i]
            if t is None:
                cells.append("–")
                continue
            d = t - prev
            cell = f"{d:.2f}"
            if w is not None and s != "warm":
                cell += f" ({d - (w - wprev):+.2f})"
            cells.append(cell)
            prev, wprev = t, (w if w is not None else wprev)
        print(f"| {NAMES[s]} | " + " | ".join(cells) + " |")
    print()


RX = {
    "began": r"replay began at ([0-9.]+) s",
    "metadata done": r"metadata pass done at ([0-9.]+) s",
    "done": r"done at ([0-9.]+) s of uptime",
    "replay MiB": r"replay: \d+ files \(\d+ skipped\), ([0-9.]+) MiB",
    "skipped": r"replay: \d+ files \((\d+) skipped\)",
    "boot's own MiB": r"the boot:\s+read ([0-9.]+) MiB from the disk itself",
    "unused MiB": r"([0-9.]+) MiB not used",
}


def replay_account(run, by, setups, phase):
    """The replay's timing and the boot's own reads as the guest's prefetchd tells them (medians)."""
    cols = list(RX) + ["systemd start"]
    print("| setup | " + " | ".join(c + (" (s)" if c in ("began", "metadata done", "done", "systemd start") else "")
                                    for c in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for s in setups:
        if s not in ("prefetch", "reorder"):
            continue
        vals = {c: [] for c in cols}
        for r in by[s]:
            path = os.path.join(report.RAW, run, f"{s}-{phase}{r['boot']}.report")
            try:
                text = open(path, errors="replace").read()
            except FileNotFoundError:
                continue
            for c, rx in RX.items():
                g = re.search(rx, text)
                if g:
                    vals[c].append(float(g.group(1)))
            if r.get("kernel_s"):
                vals["systemd start"].append(float(r["kernel_s"]))
        print(f"| {NAMES[s]} | " + " | ".join(f"{statistics.median(v):.2f}" if v else "–" for v in vals.values())
              + " |")


def debugfs(image, cmds):
    with tempfile.NamedTemporaryFile("w", suffix=".cmd") as f:
        f.write("\n".join(cmds) + "\n")
        f.flush()
        return subprocess.run(["debugfs", "-f", f.name, image], capture_output=True, text=True).stdout


def layout_of(image, prefetchd):
    """(set of paths, set of blocks) of the layout on IMAGE: its ranges (path, offset, length) put on the
    image's blocks by each file's own block map (debugfs 'blocks'), since a layout knows the physical block of
    only some of its extents and a reorder moves them."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "layout")
        debugfs(image, [f"dump /var/lib/prefetch/layout {out}"])
        if not os.path.exists(out) or os.path.getsize(out) == 0:
            return set(), set()
        text = subprocess.run([prefetchd, "dump", out], capture_output=True, text=True).stdout
        files = subprocess.run([prefetchd, "dump", "--files", out], capture_output=True, text=True).stdout
    inode = {}
    for line in files.splitlines():
        p = line.split("\t")
        if not line.startswith("#") and len(p) == 8 and p[3].isdigit() and p[6] == "0":
            inode[p[7]] = int(p[3])
    ranges = []
    for line in text.splitlines():
        p = line.split("\t")
        if not line.startswith("#") and len(p) == 5 and p[0] in inode:
            ranges.append((p[0], int(p[1]), int(p[2])))
    inos = sorted(set(inode.values()))
    out = debugfs(image, [f"blocks <{n}>" for n in inos])
    bmap = {}
    for n, m in zip(inos, re.findall(r"^debugfs: blocks <\d+>\n([0-9 ]*)", out + "\n", re.M)):
        bmap[n] = [int(x) for x in m.split()]
    blocks = set()
    for path, off, length in ranges:
        bl = bmap.get(inode[path], [])
        blocks.update(bl[off // BS:(off + length + BS - 1) // BS])
    return set(inode), blocks


def owners(image, blocks):
    """block -> inode, ("extent", inode), ("itable" | "fs", None) or None; inode -> [type, path]."""
    blocks = sorted(blocks)
    owner = {}
    for i in range(0, len(blocks), 400):
        out = debugfs(image, ["icheck " + " ".join(map(str, blocks[i:i + 400]))])
        for line in out.splitlines():
            p = line.split()
            if len(p) == 2 and p[0].isdigit():
                owner[int(p[0])] = int(p[1]) if p[1].isdigit() else None
    inodes = sorted({v for v in owner.values() if v})  # before the tuples below
    info = {}
    out = debugfs(image, [f"stat <{n}>" for n in inodes])
    for m in re.finditer(r"Inode: (\d+)\s+Type: (\w+)", out):
        info[int(m.group(1))] = [m.group(2), None]
    regular = {n for n in inodes if n >= 11 and n in info and info[n][0] == "regular"}
    out = debugfs(image, [f"blocks <{n}>" for n in sorted(regular)])
    data = set()
    for m in re.findall(r"^debugfs: blocks <\d+>\n([0-9 ]*)", out + "\n", re.M):
        data.update(int(x) for x in m.split())
    for b, n in owner.items():  # a block of a file that is none of its data: its extent tree
        if n in regular and b not in data:
            owner[b] = ("extent", n)
    dump = subprocess.run(["dumpe2fs", image], capture_output=True, text=True).stdout
    spans = [("itable", int(a), int(z)) for a, z in re.findall(r"Inode table at (\d+)-(\d+)", dump)]
    spans += [("fs", int(a), int(z or a)) for a, z in
              re.findall(r"(?:superblock|descriptors|GDT blocks|bitmap) at (\d+)(?:-(\d+))?", dump)]
    for kind, a, z in spans:
        for b in blocks:
            if a <= b <= z and owner.get(b) is None:
                owner[b] = (kind, None)
    out = debugfs(image, ["ncheck " + " ".join(map(str, inodes[i:i + 200])) for i in range(0, len(inodes), 200)])
    for line in out.splitlines():
        p = line.split("\t")
        if len(p) == 2 and p[0].strip().isdigit():
            n = int(p[0])
            if n in info and info[n][1] is None:
                info[n][1] = re.sub(r"^/+", "/", p[1])
    return owner, info


CLASSES = ["layout ranges", "layout ranges, read again", "layout file, other blocks", "not in layout",
           "inode tables", "directories", "extent blocks", "bitmaps, descriptors, superblocks", "no owner on the image",
           "journal"]


def classify(b, owner, info, paths, ranges):
    n = owner.get(b)
    if b in ranges:  # a directory the layout lists is in its ranges too
        return "layout ranges"
    if isinstance(n, tuple):
        return {"itable": "inode tables", "fs": "bitmaps, descriptors, superblocks"}.get(n[0], "extent blocks")
    if n == 8:
        return "journal"
    if n and n >= 11 and n in info and info[n][0] == "directory":
        return "directories"
    if not n:  # free on the copy: the partition probes, or a block freed or moved away since that boot
        return "no owner on the image"
    if n < 11 or n not in info or info[n][0] != "regular":  # inodes below 11: ext4's reserved ones
        return "bitmaps, descriptors, superblocks"
        return "layout ranges"
    return "layout file, other blocks" if info[n][1] in paths else "not in layout"


def boot_reads(d):
    """[(first block, blocks, cost s)] of the guest's reads from qemu's start until the host saw the guest's
    report at boot end (host clock: no guest-to-host clock mapping needed)."""
    reqs, m = timeline.requests(d), timeline.marks(d)
    end = timeline.report_arrival(d, m)
    if end is None:
        return []
    return [(off // BS, max(1, (off + length + BS - 1) // BS - off // BS), cost / 1e6)
            for kind, off, length, cost, t in reqs
            if kind == "R" and t is not None and timeline.HOST_SETUP_MS < t * 1e3 < end * 1e3]


def waits(args):
    dirs = sorted(os.path.join(CACHE, "runs", args.run, n) for n in os.listdir(os.path.join(CACHE, "runs", args.run))
                  if re.fullmatch(re.escape(args.setup) + "-" + args.phase + r"\d+", n))
    per_boot = {d: boot_reads(d) for d in dirs}
    per_boot = {d: v for d, v in per_boot.items() if v}
    blocks = {b + i for v in per_boot.values() for b, n, _ in v for i in range(n)}
    owner, info = owners(args.image, blocks)
    paths, ranges = layout_of(args.image, args.prefetchd) if not args.no_layout else (set(), set())
    parts = ["whole boot"] if not ranges else ["to the root's first block", "from it on"]
    tab = {(p, c): [] for p in parts for c in CLASSES}  # (part, class) -> per boot (MiB, busy s)
    top = {}  # file outside the layout (or its ranges) -> disk busy s, average per boot
    for d, v in per_boot.items():
        acc, seen, part = {}, set(), parts[0]
        for b, n, cost in v:
            if ranges and part == parts[0] and any(b + i in ranges for i in range(n)):
                part = parts[1]  # the root directory's block, read at the mount: the first block the layout has
            for i in range(n):
                c = classify(b + i, owner, info, paths, ranges)
                if c == "layout ranges" and b + i in seen:
                    c = "layout ranges, read again"
                seen.add(b + i)
                if args.files and c in ("not in layout", "layout file, other blocks"):
                    f = info[owner[b + i]][1] or f"inode {owner[b + i]}"
                    top[f] = top.get(f, 0.0) + cost / n / len(per_boot)
                mb, busy = acc.get((part, c), (0.0, 0.0))
                acc[(part, c)] = (mb + BS / 1048576, busy + cost / n)
        for k in tab:
            tab[k].append(acc.get(k, (0.0, 0.0)))
    if args.header:
        print("| setup | boots | layout on the image: files, MiB | part | " + " | ".join(CLASSES) + " | all |")
        print("|---|---|---|---|" + "---|" * (len(CLASSES) + 1))
    k = len(per_boot)
    for p in parts:
        cells = [f"{statistics.median(x[0] for x in tab[(p, c)]):.1f} / {statistics.median(x[1] for x in tab[(p, c)]):.2f}"
                 for c in CLASSES]
        tot = (statistics.median(sum(tab[(p, c)][i][0] for c in CLASSES) for i in range(k)),
               statistics.median(sum(tab[(p, c)][i][1] for c in CLASSES) for i in range(k)))
        print(f"| {NAMES.get(args.setup, args.setup)} | {k} | {len(paths)}, {len(ranges) * BS / 1048576:.1f} | {p} | "
              + " | ".join(cells) + f" | {tot[0]:.1f} / {tot[1]:.2f} |")
    if args.files:
        print(f"\n{NAMES.get(args.setup, args.setup)}: the files read outside the layout's ranges, most disk time "
              "first (s a boot, average): " + ", ".join(f"`{f}` {t:.3f}" for f, t in
                                                        sorted(top.items(), key=lambda x: -x[1])[:args.files]))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary")
    s.add_argument("--run", required=True)
    s.add_argument("--phase", default="measure")
    w = sub.add_parser("waits")
    w.add_argument("--run", required=True)
    w.add_argument("--setup", required=True)
    w.add_argument("--image", required=True)
    w.add_argument("--phase", default="measure")
    w.add_argument("--no-layout", action="store_true", help="classify without a layout (the none setup)")
    w.add_argument("--header", action="store_true", help="print the table's header first")
    w.add_argument("--files", type=int, default=0, help="then the N files read outside the layout's ranges")
    w.add_argument("--prefetchd", default=os.path.join(report.TOP, "prefetchd"))
    a = ap.parse_args()
    summary(a) if a.cmd == "summary" else waits(a)


if __name__ == "__main__":
    main()
