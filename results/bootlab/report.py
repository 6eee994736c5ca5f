#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bootlab records and report.

  report.py record OUTDIR --run ID --setup S --phase learn|measure --boot I [--golden-info TEXT]
      parse one boot (OUTDIR/report.log from the guest, host.env from the host), append a row to boots.csv
      and keep the guest report under raw/ID/.
  report.py render [--run ID ...]
      RESULTS.md and bootlab.svg from boots.csv: per setup the latest run holding measured boots of it
      (or the named runs); the chart is `prefetchd report --svg`'s (build the tree first).
  report.py icount --run ID
      icount-check.sh's run, markdown on stdout: per kind (the guest's clock the host's or instruction-counted,
      quiet host or busy) the guest's boot time, the vCPU's wait for a host CPU, the disk's model time.
  report.py tuning --run ID [--prefetchd PATH]
      the tuning series (run-series.sh tuning), markdown on stdout: the lab's figures per phase, then
      'prefetchd report --by setup / --by chunk-size' of the guest's whole boot-time log (from the series' last
      report boot) with each boot's time as recorded, replaced by boot − vCPU wait, and by the model disk time.
"""
import argparse
import csv
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

LAB = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(LAB, "..", ".."))
CSV_PATH = os.path.join(LAB, "boots.csv")
RAW = os.path.join(LAB, "raw")
CACHE_DIR = os.environ.get("BOOTLAB_CACHE", "/var/cache/prefetch-bootlab")
SETUPS = ["none", "prefetch", "reorder", "warm", "selfcheck", "first", "imaged"]
LABEL = {
    "none": "none",
    "prefetch": "prefetch",
    "reorder": "prefetch + reorder",
    "warm": "warm bound (tmpfs)",
    "selfcheck": "prefetch, self-check on",
    "first": "image as shipped, first boot",
    "imaged": "after prefetch-image build, first boot",
}
FIELDS = [
    "run", "setup", "phase", "boot", "status", "disk", "boot_end_s", "boot_end_source", "systemd_finish_s",
    "report_uptime_s", "kernel_s", "userspace_s", "pf_boot_s", "pf_prefetch", "pf_reorder", "pf_io_ms",
    "guest_reads", "guest_sectors_read", "guest_read_ms", "guest_io_ticks_ms", "guest_scheduler",
    "sim_requests", "sim_reads", "sim_read_mb", "sim_seeks", "sim_model_s", "sim_wall_s",
    "sim_total_requests", "sim_total_model_s", "wall_s", "host_load_start", "host_load_end",
    "prefetch_stop_s", "prefetch_result", "failed_units", "reorder_log", "vcpu_run_s", "vcpu_wait_s", "pf_start_s", "replay_s", "disk_s_before_pf",
    "disk_s_replay", "disk_s_after_replay", "req_before_pf", "pf_cpu_s", "vcpus", "boot_id", "golden",
    "io_some_s", "io_full_s", "disk_s_preroot", "disk_s_to_systemd", "root_mounted_s", "disk_model",
    "pf_written_bytes", "sim_writes", "sim_total_writes", "sim_total_write_mb", "sim_write_model_s",
    "sim_read_model_s", "icount", "disk_stretch", "root_fs", "pf_used_files", "pf_late_files", "pf_late_mib",
]


def read_env(path):
    env = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\r\n")
                if "=" in line:
                    k, v = line.split("=", 1)
                    env.setdefault(k.strip(), v)
    except FileNotFoundError:
        pass
    return env


def parse_report(text):
    """The guest's report: key=value lines, systemd-analyze output, the prefetch section."""
    r = {"failed": [], "boottime": [], "config": {}}
    section = None
    for line in text.splitlines():
        line = line.rstrip("\r")
        if line.startswith("--- "):
            section = line[4:]
            continue
        if line in ("BOOTLAB-BEGIN", "BOOTLAB-END"):
            section = None
            continue
        m = re.match(r"Startup finished in (.*) = ([0-9.]+)(min )?", line)
        if m:
            for part in m.group(1).split("+"):
                pm = re.match(r"\s*(?:([0-9]+)min )?([0-9.]+)s \((\w+)\)", part)
                if pm:
                    r[pm.group(3) + "_s"] = int(pm.group(1) or 0) * 60 + float(pm.group(2))
            continue
        if section == "failed units":
            if line.strip():
                r["failed"].append(line.split()[0])
            continue
        if section == "written this boot":
            f = line.split()
            if len(f) >= 4 and f[0] == "written" and f[1].isdigit():
                r.setdefault("written", []).append((int(f[1]), f[3]))
            continue
        if section and section.startswith("boottime.log"):
            if line and not line.startswith("#"):
                r["boottime"].append(line.split())
            continue
        if line.startswith("config: ") and "=" in line:
            k, v = line[8:].split("=", 1)
            r["config"][k] = v
            continue
        if section in (None, "prefetch.service", "state dir") and "=" in line and re.match(r"^[A-Za-z_0-9]+=", line):
            k, v = line.split("=", 1)
            r.setdefault(k, v)
    return r


def fnum(v, scale=1.0, digits=3):
    try:
        return f"{float(v) * scale:.{digits}f}"
    except (TypeError, ValueError):
        return ""


def record(args):
    out = args.outdir
    try:
        with open(os.path.join(out, "report.log"), errors="replace") as f:
            text = f.read().replace("\r", "")
    except FileNotFoundError:
        text = ""
    host = read_env(os.path.join(out, "host.env"))
    rep = parse_report(text)
    row = {k: "" for k in FIELDS}
    row.update(run=args.run, setup=args.setup, phase=args.phase, boot=args.boot, golden=args.golden_info.strip())
    row["status"] = host.get("status", "no-host-record")
    row["disk"] = host.get("disk", "")
    # Runs before the knob have no disk_model: the 7200 rpm disk.
    row["disk_model"] = host.get("disk_model", "hdd") if row["disk"] == "sim" else ""
    if "written" in rep:
        row["pf_written_bytes"] = str(sum(n for n, _ in rep["written"]))
    fin = rep.get("finish_timestamp_monotonic_us", "")
    row["systemd_finish_s"] = fnum(fin, 1e-6) if fin not in ("", "0") else ""
    row["report_uptime_s"] = rep.get("uptime_at_report_start", "")
    row["kernel_s"] = fnum(rep.get("kernel_s"))
    row["userspace_s"] = fnum(rep.get("userspace_s"))
    row["boot_id"] = rep.get("boot_id", "")
    ds = rep.get("diskstats_vda", "").split()
    if len(ds) >= 4:
        row["guest_reads"], row["guest_sectors_read"], row["guest_read_ms"], row["guest_io_ticks_ms"] = ds[:4]
    # /proc/pressure/io totals at boot end (µs): the time the boot's tasks were stalled on I/O.
    for kind in ("some", "full"):
        g = re.search(kind + r"=(\d+)", rep.get("pressure_io", ""))
        row["io_" + kind + "_s"] = fnum(g.group(1), 1e-6) if g else ""
    sched = re.search(r"\[(\S+)\]", rep.get("scheduler", ""))
    row["guest_scheduler"] = sched.group(1) if sched else rep.get("scheduler", "")
    # The project's own boot-time log: the record of this boot (same boot id).
    for f in rep["boottime"]:
        if len(f) >= 10 and f[0] == row["boot_id"]:
            row["pf_boot_s"], row["pf_prefetch"], row["pf_reorder"], row["pf_io_ms"] = f[2], f[4], f[5], f[7]
            # of the layout's files the boot opened, those it opened before the replay had read them (prefetchd(8),
            # BOOT TIME; -1: unknown, or nothing replayed)
            if len(f) >= 28:
                row["pf_used_files"], row["pf_late_files"], row["pf_late_mib"] = f[19], f[26], f[27]
    if row["pf_boot_s"]:
        row["boot_end_s"], row["boot_end_source"] = row["pf_boot_s"], "prefetch boottime.log"
    elif row["systemd_finish_s"]:
        row["boot_end_s"], row["boot_end_source"] = row["systemd_finish_s"], "guest unit (systemd finish)"
    # prefetchd's CPU until boot end, as it logs it; older runs: systemd's account of the whole service run.
    g = re.search(r"prefetchd CPU ([0-9.]+) s by then", text)
    if g:
        row["pf_cpu_s"] = f"{float(g.group(1)):.3f}"
    else:
        g = re.search(r"prefetch.service: Consumed (?:(\d+)min )?([0-9.]+)s CPU time", text)
        if g:
            row["pf_cpu_s"] = f"{int(g.group(1) or 0) * 60 + float(g.group(2)):.3f}"
    row["prefetch_stop_s"] = rep.get("prefetch_stop_seconds", "")
    row["prefetch_result"] = rep.get("Result", "")
    row["failed_units"] = " ".join(rep["failed"])
    for k in ("requests", "reads", "seeks", "writes"):
        row["sim_" + k] = host.get("simend_" + k, "")
    row["sim_total_writes"] = host.get("sim_writes", "")
    row["sim_total_write_mb"] = fnum(host.get("sim_write_bytes"), 1 / 1048576, 2)
    row["sim_read_mb"] = fnum(host.get("simend_read_bytes"), 1 / 1048576, 2)
    row["sim_model_s"] = fnum(host.get("simend_model_ns"), 1e-9)
    row["sim_wall_s"] = fnum(host.get("simend_wall_ns"), 1e-9)
    # The model time of the reads and of the writes among the requests served until boot end: the request log's
    # first simend_requests lines.  (The host reads the counters one by one, each through the simulated disk,
    # which answers after the request it is serving: with the SD model's 0.5 s writes the later counters of the
    # snapshot run on by a few requests, the log's cut does not.  On the flash models a write programs a whole
    # erase block.)
    try:
        n_end = int(host.get("simend_requests", ""))
        cost, count = {"R": 0.0, "W": 0.0}, {"R": 0, "W": 0}
        with open(os.path.join(out, "sim-requests.log")) as f:
            for i, ln in enumerate(f):
                if i >= n_end:
                    break
                p = ln.split()
                if len(p) >= 4 and p[0] in cost:
                    cost[p[0]] += float(p[3])
                    count[p[0]] += 1
        row["sim_write_model_s"] = f"{cost['W'] / 1e6:.3f}"
        row["sim_read_model_s"] = f"{cost['R'] / 1e6:.3f}"
        row["sim_writes"] = str(count["W"])
        if count["R"] + count["W"] == n_end:  # the whole cut is logged: the disk's busy time to boot end
            row["sim_model_s"] = f"{(cost['R'] + cost['W']) / 1e6:.3f}"
    except (ValueError, FileNotFoundError):
        pass
    row["sim_total_requests"] = host.get("sim_requests", "")
    row["sim_total_model_s"] = fnum(host.get("sim_model_ns"), 1e-9)
    g = re.search(r"-smp (\d+)", host.get("qemu_cmd", ""))
    row["vcpus"] = g.group(1) if g else ""
    row["wall_s"] = host.get("wall_s", "")
    # The root's filesystem as the guest mounted it (its report's root_mounts, "/=TYPE:OPTIONS ..."), else the
    # host's probe of the image; rows before the column: empty, the lab's ext4 root.
    g = re.search(r"(?:^|\s)/=([^:\s]+)", rep.get("root_mounts", ""))
    row["root_fs"] = g.group(1) if g else host.get("root_fs", "")
    row["icount"] = host.get("icount", "")  # qemu -icount shift (empty: the guest's clock is the host's)
    # simdisk --stretch (runs before the knob: 1); the disk's model figures stay the model's
    row["disk_stretch"] = host.get("disk_stretch", "1") if row["disk"] == "sim" else ""
    row["vcpu_run_s"] = fnum(host.get("vcpu_run_ns"), 1e-9)
    row["vcpu_wait_s"] = fnum(host.get("vcpu_wait_ns"), 1e-9)
    row["host_load_start"] = host.get("host_load1_start", "")
    row["host_load_end"] = host.get("host_load1_end", "")
    # The shutdown reorder hook logs to the kernel log, i.e. the console of this boot's power-off.
    try:
        with open(os.path.join(out, "console.log"), errors="replace") as f:
            msgs = [re.sub(r"^\[[ 0-9.]+\] ", "", ln.strip()) for ln in f if "prefetch-reorder:" in ln]
        row["reorder_log"] = " | ".join(msgs[-3:])
    except FileNotFoundError:
        pass
    # Where the disk time went (timeline.py: the request log cut at the guest's events on the host clock).
    try:
        sys.path.insert(0, LAB)
        import timeline
        mk = timeline.marks(out)
        if "root mounted" in mk:
            row["root_mounted_s"] = f"{mk['root mounted']:.2f}"
        segs = timeline.segments(out)
        at = {}  # event -> (guest time, requests, disk busy s) since qemu started
        n = busy = 0
        for name, t, k, _mb, b in segs:
            n, busy = n + k, busy + b
            at[name] = (t, n, busy)
        if "root mounted" in at:
            row["disk_s_preroot"] = f"{at['root mounted'][2]:.3f}"
            if "systemd start" in at:
                row["disk_s_to_systemd"] = f"{at['systemd start'][2] - at['root mounted'][2]:.3f}"
        if "prefetchd start" in at:
            row["pf_start_s"] = f"{at['prefetchd start'][0]:.2f}"
            row["req_before_pf"] = at["prefetchd start"][1]
            row["disk_s_before_pf"] = f"{at['prefetchd start'][2]:.3f}"
            if "replay end" in at and "boot end" in at:
                row["replay_s"] = f"{at['replay end'][0] - at['prefetchd start'][0]:.2f}"
                row["disk_s_replay"] = f"{at['replay end'][2] - at['prefetchd start'][2]:.3f}"
                row["disk_s_after_replay"] = f"{at['boot end'][2] - at['replay end'][2]:.3f}"
    except Exception as e:  # a diagnostic only: never lose the record for it
        print(f"timeline: {e}", file=sys.stderr)
    if row["status"] == "ok" and not row["boot_end_s"]:
        row["status"] = "no-boot-end"

    new = not os.path.exists(CSV_PATH)
    if not new:
        with open(CSV_PATH, newline="") as f:
            rd = csv.DictReader(f)
            old_fields, old_rows = rd.fieldnames, list(rd)
        def key(r):
            return r["run"], r["setup"], r["phase"], r["boot"]
        others = [r for r in old_rows if key(r) != key(row)]
        # columns added since, or this boot recorded before (a resumed run boots it again): rewrite the file
        if old_fields != FIELDS or len(others) != len(old_rows):
            with open(CSV_PATH + ".tmp", "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\n")
                w.writeheader()
                for r in others:
                    w.writerow({k: (r.get(k) or "") for k in FIELDS})
            os.replace(CSV_PATH + ".tmp", CSV_PATH)
    with open(CSV_PATH, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        if new:
            w.writeheader()
        w.writerow(row)
    rawdir = os.path.join(RAW, args.run)
    os.makedirs(rawdir, exist_ok=True)
    name = f"{args.setup}-{args.phase}{args.boot}"
    with open(os.path.join(rawdir, name + ".report"), "w") as f:
        f.write(text)
        f.write("\n--- host\n")
        for k, v in host.items():
            f.write(f"{k}={v}\n")
    print(f"{name}: {row['status']} boot_end={row['boot_end_s']} s ({row['boot_end_source']}) "
          f"io_ticks={row['guest_io_ticks_ms']} ms sim_requests={row['sim_requests']} "
          f"sim_model={row['sim_model_s']} s", file=sys.stderr)


def rerecord(args):
    """Rebuild the rows of one run from its boot directories (BOOTLAB_CACHE/runs/RUN/SETUP-PHASEi): the
    records of older boots gain columns added since. Other runs' rows stay as they are."""
    cache = os.environ.get("BOOTLAB_CACHE", "/var/cache/prefetch-bootlab")
    rundir = os.path.join(cache, "runs", args.run)
    rows = load_rows()
    golden = {(r["setup"]): r["golden"] for r in rows if r["run"] == args.run}
    keep = [r for r in rows if r["run"] != args.run]
    with open(CSV_PATH + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in keep:
            w.writerow({k: (r.get(k) or "") for k in FIELDS})
    os.replace(CSV_PATH + ".tmp", CSV_PATH)

    def key(name):
        m = re.match(r"(\w+)-(learn|measure)(\d+)$", name)
        return (m.group(2) != "learn", int(m.group(3)), SETUPS.index(m.group(1))) if m else (9, 0, 0)
    for name in sorted(os.listdir(rundir), key=key):
        m = re.match(r"(\w+)-(learn|measure)(\d+)$", name)
        if not m or m.group(1) not in SETUPS:
            continue
        if not os.path.exists(os.path.join(rundir, name, "host.env")):
            continue  # a boot under way: run-series records it when it ends
        record(argparse.Namespace(outdir=os.path.join(rundir, name), run=args.run, setup=m.group(1),
                                  phase=m.group(2), boot=m.group(3), golden_info=golden.get(m.group(1), "")))


def setup_name(v):
    if v.split("@")[0] in SETUPS and re.fullmatch(r"\w+(@[A-Za-z0-9_-]+)?", v) or \
            re.fullmatch(r"tune-[A-Za-z0-9]+(-[A-Za-z0-9]+)*", v) or re.fullmatch(r"(plain|icount-\d+)-(quiet|busy)", v):
        return v
    raise argparse.ArgumentTypeError(f"unknown setup {v!r}")


# The tuning series (run-series.sh tuning): the lab's figures of its boots, and the guest's boot-time log with
# each boot's time replaced by a lab figure, read by the same 'prefetchd report' (the same comparison, lib/compare.c),
# so that the guest's verdicts and the lab's differ only in the figure compared.
TUNING_FIGURES = [
    ("boot_end_s", "boot time as the guest recorded it (s)"),
    ("vcpu_wait_s", "vCPU wait to boot end (s)"),
    ("corr", "boot − vCPU wait (s)"),
    ("sim_model_s", "disk busy to boot end, model time (s)"),
    ("host_load_start", "host load (1 min) at start"),
]


def tuning_value(r, key):
    try:
        if key == "corr":
            return float(r["boot_end_s"]) - float(r["vcpu_wait_s"])
        return float(r[key])
    except (KeyError, TypeError, ValueError):
        return None


def guest_boot_logs(run, rows):
    """The guest's whole boottime.log per disk, each as printed by its last report boot (bootlab.report=1): the
    series' disk ("main") and each copy (a phase run on a copy of the disk: its name)."""
    copies = {r["setup"] for r in rows if "on a copy made before" in r["golden"]}
    rawdir = os.path.join(RAW, run)
    best = {}
    for name in sorted(os.listdir(rawdir)) if os.path.isdir(rawdir) else []:
        path = os.path.join(rawdir, name)
        with open(path, errors="replace") as f:
            text = f.read()
        if "--- full boottime.log" not in text:
            continue
        part = text.split("--- full boottime.log", 1)[1].split("\n--- ", 1)[0]
        lines = [ln for ln in part.splitlines() if ln.strip()]
        setup = re.sub(r"-(learn|measure)\d+\.report$", "", name)
        disk = setup[len("tune-"):] if setup in copies else "main"
        if disk not in best or len(lines) > len(best[disk][1]):
            best[disk] = (name, lines)
    return best


def tuning(args):
    rows = [r for r in load_rows() if r["run"] == args.run and r["setup"].startswith("tune-")]
    if not rows:
        sys.exit(f"no tuning rows of run {args.run} in {CSV_PATH}")
    phases = list(dict.fromkeys(r["setup"] for r in rows))
    by_id = {r["boot_id"]: r for r in rows if r["status"] == "ok" and r["boot_id"]}
    # With the guest's clock instruction-counted (BOOTLAB_ICOUNT) the vCPU's wait is no part of its boot time:
    # boot − vCPU wait would take it off twice.
    icounted = all(r.get("icount") for r in rows if r["status"] == "ok")
    figures = [f for f in TUNING_FIGURES if not (icounted and f[0] == "corr")]
    print(f"## The lab's figures per phase (run `{args.run}`)\n")
    print("Median, mean ± standard deviation, minimum–maximum of the boots ok; learning boots apart.\n")
    if icounted:
        print(f"The guest's clock instruction-counted (qemu -icount shift={rows[0]['icount']},sleep=on).\n")
    print("| phase | boots | " + " | ".join(label for _, label in figures) + " |")
    print("|---|---|" + "---|" * len(figures))
    for ph in phases:
        for kind in ("learn", "measure"):
            ok = [r for r in rows if r["setup"] == ph and r["phase"] == kind and r["status"] == "ok"]
            alln = sum(1 for r in rows if r["setup"] == ph and r["phase"] == kind)
            if not alln:
                continue
            cells = []
            for key, _ in figures:
                v = [x for x in (tuning_value(r, key) for r in ok) if x is not None]
                if not v:
                    cells.append("–")
                    continue
                st = stats(v)
                cells.append(f"{statistics.median(v):.2f}; {st['avg']:.2f} ± {st['sd']:.2f}; "
                             f"{st['min']:.2f}–{st['max']:.2f}")
            name = ph[len("tune-"):] + (" (learning)" if kind == "learn" else "")
            print(f"| {name} | {len(ok)} of {alln} | " + " | ".join(cells) + " |")
    print()
    # How much of the host's load is left in the guest's boot time: within a phase the boots are alike, so the
    # guest's boot time should not follow the vCPU's wait (it did, about 1 s per s, with the host's clock).
    print("Within each phase (measured boots): the guest's boot time against the vCPU's wait for a host CPU.\n")
    print("| phase | boots | vCPU wait (s), min–max | guest boot time (s), min–max | correlation | slope (s per s of wait) |")
    print("|---|---|---|---|---|---|")
    for ph in phases:
        pts = [(tuning_value(r, "vcpu_wait_s"), tuning_value(r, "boot_end_s")) for r in rows
               if r["setup"] == ph and r["phase"] == "measure" and r["status"] == "ok"]
        pts = [(w, b) for w, b in pts if w is not None and b is not None]
        if len(pts) < 3:
            continue
        ws, bs = [w for w, _ in pts], [b for _, b in pts]
        sw, sb = statistics.pstdev(ws), statistics.pstdev(bs)
        cov = statistics.fmean([(w - statistics.fmean(ws)) * (b - statistics.fmean(bs)) for w, b in pts])
        corr = f"{cov / (sw * sb):+.2f}" if sw > 0 and sb > 0 else "–"
        slope = f"{cov / sw ** 2:+.3f}" if sw > 0 else "–"
        print(f"| {ph[len('tune-'):]} | {len(pts)} | {min(ws):.1f}–{max(ws):.1f} | {min(bs):.2f}–{max(bs):.2f} | "
              f"{corr} | {slope} |")
    print()
    logs = guest_boot_logs(args.run, rows)
    for spec in args.guest_log or []:  # DISK=FILE: a disk's log dumped from its image (a series cut short)
        disk, path = spec.split("=", 1)
        with open(path, errors="replace") as f:
            logs[disk] = (path, [ln for ln in f.read().splitlines() if ln.strip()])
    if not logs:
        print("(no whole boot-time log of the guest in raw/: no report boot yet)")
        return
    # The disks' logs read together as 'prefetchd report --log A --log B' does: a boot in both (from before a
    # copy was made) once.
    header, recs, seen = [], [], set()
    for disk in sorted(logs, key=lambda d: d != "main"):
        src, lines = logs[disk]
        header = header or [ln for ln in lines if ln.startswith("#")]
        mine = [ln for ln in lines if not ln.startswith("#")]
        new = [ln for ln in mine if ln.split()[0] not in seen]
        seen.update(ln.split()[0] for ln in mine)
        recs += new
        print(f"The guest's boot-time log of disk `{disk}`: {len(mine)} records (printed by `{src}`), "
              f"{len(new)} not in a log before.")
    unmatched = [ln.split()[0] for ln in recs if ln.split()[0] not in by_id]
    print(f"\nTogether {len(recs)} boots, {len(recs) - len(unmatched)} of them boots the lab recorded ok"
          + (f"; not in the lab's ok boots: {', '.join(unmatched)}" if unmatched else "") + ".\n")
    figs = [("boot_end_s", "the guest's own boot time (what the guest's report compares)"),
            ("corr", "boot − vCPU wait"), ("sim_model_s", "disk busy to boot end, model time")]
    figs = [f for f in figs if not (icounted and f[0] == "corr")]
    # The series disk's configuration as it ended (its keys appended in order), for the report's word on the
    # configured chunk size.
    conf = "".join(re.sub(r",", "\n", r["golden"].split("tuning: ", 1)[-1].split(" on a copy", 1)[0]) + "\n"
                   for r in {r["setup"]: r for r in rows if "on a copy made before" not in r["golden"]}.values())
    for key, label in figs:
        with tempfile.TemporaryDirectory(prefix="bootlab-tuning.") as tmp:
            with open(os.path.join(tmp, "prefetch"), "w") as f:
                f.write(conf)
            log = os.path.join(tmp, "boottime.log")
            with open(log, "w") as f:
                for ln in header:
                    f.write(ln + "\n")
                for ln in recs:
                    p = ln.split()
                    r = by_id.get(p[0])
                    v = tuning_value(r, key) if r else None
                    if v is None:
                        continue
                    p[2] = f"{v:.3f}"
                    f.write(" ".join(p) + "\n")
            print(f"### `prefetchd report` on the guest's logs, boot time replaced by: {label}\n")
            for by in (["--by", "setup"], ["--by", "chunk-size"], ["--by", "chunk-size", "--setup", "replay+reorder"]):
                res = subprocess.run([args.prefetchd, "report", "--config", os.path.join(tmp, "prefetch"), "--log", log] + by,
                                     capture_output=True, text=True)
                print("```\n$ prefetchd report " + " ".join(by) + "\n" + res.stdout.rstrip() +
                      ("\n" + res.stderr.rstrip() if res.stderr.strip() else "") + "\n```\n")


ICOUNT_FIGURES = [
    ("boot_end_s", "guest boot time (s)"),
    ("vcpu_wait_s", "vCPU wait to boot end (s)"),
    ("vcpu_run_s", "vCPU run to boot end (s)"),
    ("sim_model_s", "disk busy, model time (s)"),
    ("host_t_bootend", "host seconds to boot end"),
]


def icount(args):
    """icount-check.sh: the same boot, guest clock plain or instruction-counted, quiet host or busy."""
    rows = [r for r in load_rows() if r["run"] == args.run and r["status"] == "ok"]
    if not rows:
        sys.exit(f"no ok rows of run {args.run} in {CSV_PATH}")
    kinds = sorted(dict.fromkeys(r["setup"] for r in rows), key=lambda k: (k.startswith("icount"), k.endswith("busy")))
    print("Median; mean ± standard deviation; minimum–maximum.\n")
    print("| kind | boots | " + " | ".join(label for _, label in ICOUNT_FIGURES) + " |")
    print("|---|---|" + "---|" * len(ICOUNT_FIGURES))
    med = {}
    for k in kinds:
        ok = [r for r in rows if r["setup"] == k]
        cells = []
        for key, _ in ICOUNT_FIGURES:
            v = []
            for r in ok:
                if key == "host_t_bootend":  # not in boots.csv: the boot's host record has it
                    r = read_env(os.path.join(CACHE_DIR, "runs", args.run, f"{k}-measure{r['boot']}", "host.env"))
                try:
                    v.append(float(r[key]))
                except (KeyError, ValueError):
                    pass
            if not v:
                cells.append("–")
                continue
            st = stats(v)
            med[(k, key)] = statistics.median(v)
            cells.append(f"{statistics.median(v):.2f}; {st['avg']:.2f} ± {st['sd']:.2f}; {st['min']:.2f}–{st['max']:.2f}")
        print(f"| {k} | {len(ok)} | " + " | ".join(cells) + " |")
    print()
    for k in kinds:
        if k.endswith("busy") and (k[:-4] + "quiet", "boot_end_s") in med and (k, "boot_end_s") in med:
            q, b = med[(k[:-4] + "quiet", "boot_end_s")], med[(k, "boot_end_s")]
            print(f"- {k[:-5]}: busy against quiet, guest boot time {b - q:+.2f} s ({(b / q - 1) * 100:+.1f} %) "
                  "(medians)")


def load_rows():
    if not os.path.exists(CSV_PATH):
        return []
    with open(CSV_PATH, newline="") as f:
        return list(csv.DictReader(f))


def num(rows, key, scale=1.0):
    out = []
    for r in rows:
        try:
            out.append(float(r[key]) * scale)
        except (KeyError, TypeError, ValueError):
            pass
    return out


def stats(v):
    if not v:
        return None
    return {
        "n": len(v), "avg": statistics.fmean(v), "sd": statistics.stdev(v) if len(v) > 1 else 0.0,
        "min": min(v), "max": max(v),
    }


def fmt_stats(s, digits=2):
    if not s:
        return "–", "–", "–", "–"
    return (f"{s['avg']:.{digits}f}", f"{s['sd']:.{digits}f}", f"{s['min']:.{digits}f}", f"{s['max']:.{digits}f}")


def pct(a, b):
    if not a or not b or b["avg"] == 0:
        return "–"
    return f"{(a['avg'] / b['avg'] - 1) * 100:+.1f} %"


def vs_none(s, d, base, k):
    """A setup's average of k against none's, as a signed percentage ("–" for none itself)."""
    return pct(d[k], base.get(k)) if s != "none" else "–"


def select(rows, runs):
    """Per setup: rows of the chosen runs. By default the run covering the most setups with measured boots
    (the latest such run in boots.csv), so that a later partial variant does not replace part of the table."""
    if not runs:
        cover, last = {}, {}
        for i, r in enumerate(rows):
            if r["phase"] == "measure" and r["setup"] in SETUPS:  # not the tuning series' tune-* rows
                cover.setdefault(r["run"], set()).add(r["setup"])
                last[r["run"]] = i
        if cover:
            best = max(cover, key=lambda k: (len(cover[k]), last[k]))
            runs = {best}
    chosen = {}
    for s in SETUPS:
        srows = [r for r in rows if r["setup"] == s]
        if runs:
            srows = [r for r in srows if r["run"] in runs]
        else:
            mruns = sorted({r["run"] for r in srows if r["phase"] == "measure"})
            srows = [r for r in srows if mruns and r["run"] == mruns[-1]]
        if srows:
            chosen[s] = srows
    return chosen


def boots_chart(data, path, title):
    """The lab's chart is prefetchd report's, one chart code path for both: the measured boots of the runs shown,
    in boots.csv's order, written as a boot-time log (lib/boot_log.h) and rendered by `prefetchd report --svg`.
    The warm bound is not a setup prefetchd knows and stays in the tables only."""
    prefetchd = os.path.join(TOP, "build", "default", "prefetchd")
    if not os.access(prefetchd, os.X_OK):
        sys.exit(f"report.py: {prefetchd} is not built: run make at the top first (the chart is prefetchd report's)")
    flags = {"none": (0, 0), "prefetch": (1, 0), "reorder": (1, 1), "selfcheck": (1, 0), "first": (1, 0),
             "imaged": (1, 1)}
    order = {id(r): k for k, r in enumerate(load_rows_cached())}
    boots = sorted((r for s, d in data.items() if s in flags for r in d["ok"]), key=lambda r: order.get(id(r), 0))
    lines = ["# prefetch boottime log, format 1", "# the boot lab's measured boots (results/bootlab/report.py)"]
    for r in boots:
        prefetch, reorder = flags[r["setup"]]
        if r.get("pf_prefetch") in ("0", "1"):
            prefetch = int(r["pf_prefetch"])  # what the guest's prefetchd recorded (a self-check control boot: 0)
        control = int(r["setup"] == "selfcheck" and not prefetch)
        io_ms = r.get("guest_io_ticks_ms") or "-1"
        lines.append(f"{r.get('boot_id') or '-'} 0 {float(r['boot_end_s']):.2f} file {prefetch} {reorder} - "
                     f"{int(float(io_ms))} -1 -1 {control} -")
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        log = f.name
    try:
        subprocess.run([prefetchd, "report", "--log", log, "--svg", path, "--title", title], check=True,
                       stdout=subprocess.DEVNULL)
    finally:
        os.unlink(log)


_ROWS = None


def load_rows_cached():
    global _ROWS
    if _ROWS is None:
        _ROWS = load_rows()
    return _ROWS


def render(args):
    rows = load_rows_cached()
    chosen = select(rows, set(args.run or []))
    data, lines = {}, []
    for s, srows in chosen.items():
        meas = [r for r in srows if r["phase"] == "measure"]
        ok = [r for r in meas if r["status"] == "ok"]
        data[s] = {
            "rows": srows, "meas": meas, "ok": ok,
            "boot": stats(num(ok, "boot_end_s")),
            "io": stats(num(ok, "guest_io_ticks_ms", 1e-3)),
            "sim": stats(num(ok, "sim_model_s")),
            "simreq": stats(num(ok, "sim_requests")),
            "reads": stats(num(ok, "guest_reads")),
            "mb": stats(num(ok, "guest_sectors_read", 512 / 1048576)),
            "sysd": stats(num(ok, "systemd_finish_s")),
            "wall": stats(num(ok, "wall_s")),
            "load": stats(num(ok, "host_load_start")),
            "vwait": stats(num(ok, "vcpu_wait_s")),
            "vrun": stats(num(ok, "vcpu_run_s")),
            "pfcpu": stats(num(ok, "pf_cpu_s")),
            "psome": stats(num(ok, "io_some_s")),
            "pfull": stats(num(ok, "io_full_s")),
            "corr": stats([float(r["boot_end_s"]) - float(r["vcpu_wait_s"]) for r in ok
                           if r.get("boot_end_s") and r.get("vcpu_wait_s")]),
        }
    base = data.get("none", {})
    L = lines.append
    L("# Boot lab: prefetch and reorder on a real Debian 12 boot")
    L("")
    L("Generated by `results/bootlab/report.py render` from `boots.csv` (one row per boot; the guest's own report of")
    L("each boot is under `raw/RUN/`). Runs shown: " + ", ".join(
        f"{LABEL[s]} = `{sorted({r['run'] for r in d['rows']})[0]}`" for s, d in data.items()) + ".")
    L("")
    if not args.out:
        # Linked, not copied: each figure lives in one document.
        L("What these boots show, and against which targets: [FINDINGS.md](FINDINGS.md). The method (guest, disk "
          "model, setups, what each column measures) and the list of runs: [NOTES.md](NOTES.md).")
        L("")
        L("![every measured boot's time, coloured by setup, and per setup min/max, mean, spread and change against "
          "none (the chart of prefetchd report)](bootlab.svg)")
        L("")
    L("## Measured boots")
    L("")
    L("| setup | boots ok / run | boot time avg (s) | stddev | min | max | vs none | I/O ticks avg (s) | stddev | min "
      "| max | vs none |")
    L("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in SETUPS:
        if s not in data:
            continue
        d = data[s]
        b, i = fmt_stats(d["boot"]), fmt_stats(d["io"])
        L(f"| {LABEL[s]} | {len(d['ok'])} / {len(d['meas'])} | {b[0]} | {b[1]} | {b[2]} | {b[3]} | "
          f"{vs_none(s, d, base, 'boot')} | {i[0]} | {i[1]} | {i[2]} | {i[3]} | {vs_none(s, d, base, 'io')} |")
    L("")
    if any(d["psome"] for d in data.values()):
        L("I/O wait: the guest's pressure stall information (`/proc/pressure/io` totals at boot end): *some* = time")
        L("in which at least one task of the boot was stalled waiting for I/O, *full* = time in which all non-idle")
        L("tasks were. Unlike I/O ticks it does not count the disk time of the replay itself, only the waiting.")
        L("")
        L("| setup | I/O wait, some (s) | stddev | min | max | vs none | I/O wait, full (s) | stddev | vs none |")
        L("|---|---|---|---|---|---|---|---|---|")
        for s in SETUPS:
            if s not in data or not data[s]["psome"]:
                continue
            d = data[s]
            p, q = fmt_stats(d["psome"]), fmt_stats(d["pfull"])
            L(f"| {LABEL[s]} | {p[0]} | {p[1]} | {p[2]} | {p[3]} | "
              f"{vs_none(s, d, base, 'psome')} | {q[0]} | {q[1]} | {vs_none(s, d, base, 'pfull')} |")
        L("")
    L("Boot time: uptime at boot end (systemd's FinishTimestampMonotonic, what `systemd-analyze` prints as the total;")
    L("for the prefetch setups the value prefetchd wrote to its own `/var/lib/prefetch/boottime.log` when it has a")
    L("record for that boot, see `boot_end_source` in the CSV). I/O ticks: the guest's `/proc/diskstats` io_ticks of")
    L("vda (time the disk was busy) sampled right after the boot finished.")
    L("")
    L("The host is shared (2 cores, other developers' builds and tests) and TCG boot time is CPU time, so each boot")
    L("also records how long the guest's vCPU thread waited for a host CPU before boot end (schedstat run delay).")
    L("Under TCG the guest clock keeps running while the vCPU waits, so *boot time − vCPU wait* is an estimate of the boot time the")
    L("guest would have had on an idle host; the simulated disk's own busy time (model time of the requests it")
    L("served until boot end) does not depend on host load at all. Both are below.")
    L("")
    L("| setup | disk busy, model (s) | stddev | vs none | disk requests | guest reads | guest MB read | "
      "vCPU busy (s) | prefetchd CPU (s) | vCPU wait (s) | boot − vCPU wait (s) | stddev | vs none | wall per boot (s) "
      "| host load at start |")
    L("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in SETUPS:
        if s not in data:
            continue
        d = data[s]

        def a(k, dg=1):
            return f"{d[k]['avg']:.{dg}f}" if d[k] else "–"

        def sd(k, dg=2):
            return f"{d[k]['sd']:.{dg}f}" if d[k] else "–"
        vs = lambda k: vs_none(s, d, base, k)  # noqa: E731
        L(f"| {LABEL[s]} | {a('sim', 2)} | {sd('sim')} | {vs('sim')} | {a('simreq', 0)} | {a('reads', 0)} | "
          f"{a('mb')} | {a('vrun', 2)} | {a('pfcpu', 2)} | {a('vwait', 2)} | {a('corr', 2)} | {sd('corr')} | {vs('corr')} | {a('wall')} | "
          f"{a('load', 2)} |")
    L("")
    if any(num(d["ok"], "sim_writes") for d in data.values()):
        L("Writes: the simulated disk's write requests until boot end and over the whole boot (power-off included),")
        L("and what prefetch wrote this boot (its state dir's files changed since the boot began, summed: the")
        L("trace, the layout when it changed, the boot-time log whole; the guest report's \"written this boot\").")
        L("")
        L("| setup | disk writes to boot end | their model time (s) | the reads' model time (s) | disk writes, whole "
          "boot | MB written, whole boot | prefetch's files written (KiB) | min | max |")
        L("|---|---|---|---|---|---|---|---|---|")
        for s in SETUPS:
            if s not in data:
                continue
            ok = data[s]["ok"]
            w, wm, wt, mb, pw = (stats(num(ok, k)) for k in ("sim_writes", "sim_write_model_s", "sim_total_writes",
                                                             "sim_total_write_mb", "pf_written_bytes"))
            f = lambda x, dg=0, sc=1.0: f"{x['avg'] * sc:.{dg}f}" if x else "–"  # noqa: E731
            rm = stats(num(ok, "sim_read_model_s"))
            L(f"| {LABEL[s]} | {f(w)} | {f(wm, 2)} | {f(rm, 2)} | {f(wt)} | {f(mb, 2)} | {f(pw, 1, 1 / 1024)} | "
              + (f"{pw['min'] / 1024:.1f} | {pw['max'] / 1024:.1f} |" if pw else "– | – |"))
        L("")
    slower = []
    if base.get("boot"):
        for s in ("prefetch", "reorder"):
            if s in data:
                worst = max(num(data[s]["ok"], "boot_end_s"), default=None)
                if worst is not None:
                    slower.append(f"{LABEL[s]}: slowest measured boot {worst:.2f} s vs none's fastest "
                                  f"{base['boot']['min']:.2f} s and average {base['boot']['avg']:.2f} s")
    if slower:
        L("Slowest boots against none: " + "; ".join(slower) + ".")
        L("")
    # Paired by round: the setups were interleaved, so boot i of each setup ran under about the same host load.
    if base.get("boot"):
        nb = {r["boot"]: r for r in base["ok"]}
        prs = []
        for s in ("prefetch", "reorder", "warm"):
            if s not in data:
                continue
            pairs = [(r, nb[r["boot"]]) for r in data[s]["ok"] if r["boot"] in nb]
            if not pairs:
                continue
            db = [float(a["boot_end_s"]) - float(b["boot_end_s"]) for a, b in pairs]
            dc = [(float(a["boot_end_s"]) - float(a["vcpu_wait_s"])) - (float(b["boot_end_s"]) - float(b["vcpu_wait_s"]))
                  for a, b in pairs if a.get("vcpu_wait_s") and b.get("vcpu_wait_s")]
            prs.append((s, len(pairs), statistics.fmean(db), sum(d < 0 for d in db),
                        statistics.fmean(dc) if dc else float("nan"), sum(d < 0 for d in dc), len(dc)))
        if prs:
            L("Paired by round (setup minus none in the same round, i.e. under about the same host load):")
            L("")
            L("| setup | rounds | boot time difference avg (s) | rounds faster than none | "
              "boot − vCPU wait difference avg (s) | rounds faster than none |")
            L("|---|---|---|---|---|---|")
            for s, n, mb, fb, mc, fc, nc in prs:
                L(f"| {LABEL[s]} | {n} | {mb:+.2f} | {fb} of {n} | {mc:+.2f} | {fc} of {nc} |")
            L("")
    tl = [(s, data[s]) for s in SETUPS if s in data and num(data[s]["ok"], "root_mounted_s")]
    if tl:
        L("### From the root mount to systemd's start, and where the boot waited for the disk")
        L("")
        L("Averages of the measured boots. The root is mounted (the kernel's EXT4-fs line) and systemd starts (the")
        L("\"kernel\" part of systemd-analyze, which here includes the initramfs): what lies between is the only")
        L("part of the kernel time a prefetcher started from the initramfs can shorten. The simulated disk's request")
        L("log (each request's model time, at its start on the host clock) is cut at the guest's events, put on the")
        L("host clock by two anchors (the guest's first disk request at the kernel's `[vda]` line, and its report at")
        L("boot end): the mount, systemd's start, prefetchd's start (when its replay began), the end of its replay")
        L("(the uptime it logs; its readahead may still be queued then) and the boot's end. Runs before `smp2-v5`")
        L("cut the 0.2 s samples with one clock offset taken at boot end, which put about a second of the replay")
        L("before prefetchd's start (so the earlier \"disk busy before prefetchd\" of 1.35 s was mostly the replay's).")
        L("")
        L("| setup | root mounted (s) | systemd starts (s) | mount → systemd (s) | disk busy until the mount (s) | "
          "disk busy, mount → systemd (s) | prefetchd start (s) | replay (s) | disk busy during replay (s) | "
          "disk busy after replay, to boot end (s) |")
        L("|---|---|---|---|---|---|---|---|---|---|")
        for s, d in tl:
            def av(k, dg=2):
                v = num(d["ok"], k)
                return f"{statistics.fmean(v):.{dg}f}" if v else "–"
            gap = [float(r["kernel_s"]) - float(r["root_mounted_s"]) for r in d["ok"]
                   if r.get("kernel_s") and r.get("root_mounted_s")]
            gap_s = f"{statistics.fmean(gap):.2f}" if gap else "–"
            L(f"| {LABEL[s]} | {av('root_mounted_s')} | {av('kernel_s')} | {gap_s} | {av('disk_s_preroot')} | "
              f"{av('disk_s_to_systemd')} | {av('pf_start_s')} | {av('replay_s')} | {av('disk_s_replay')} | "
              f"{av('disk_s_after_replay')} |")
        L("")
    L("## Learning and first boots (not measured)")
    L("")
    L("The prefetch setups first boot TRACE_AGGREGATION_COUNT times so that a layout exists; none and warm boot once")
    L("from the fresh image first (first-boot work of the image). These boots are not in the table above.")
    L("")
    L("| setup | boot | status | boot time (s) | I/O ticks (s) | disk requests | prefetch replayed | reorder armed |"
      " prefetchd stop (s) |")
    L("|---|---|---|---|---|---|---|---|---|")
    for s in SETUPS:
        if s not in data:
            continue
        for r in data[s]["rows"]:
            if r["phase"] != "learn":
                continue
            io = fnum(r["guest_io_ticks_ms"], 1e-3, 2)
            L(f"| {LABEL[s]} | {r['boot']} | {r['status']} | {fnum(r['boot_end_s'], 1, 2)} | {io} | "
              f"{r['sim_requests'] or '–'} | {r['pf_prefetch'] or '–'} | {r['pf_reorder'] or '–'} | "
              f"{r['prefetch_stop_s'] or '–'} |")
    L("")
    L("## Every measured boot")
    L("")
    L("| setup | boot | status | boot time (s) | source | I/O ticks (s) | disk requests | model time (s) | "
      "vCPU wait (s) | host load | prefetch replayed | reorder armed | failed units |")
    L("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in SETUPS:
        if s not in data:
            continue
        for r in data[s]["meas"]:
            L(f"| {LABEL[s]} | {r['boot']} | {r['status']} | {fnum(r['boot_end_s'], 1, 2)} | "
              f"{'prefetch log' if r['boot_end_source'].startswith('prefetch') else 'guest unit'} | "
              f"{fnum(r['guest_io_ticks_ms'], 1e-3, 2)} | {r['sim_requests'] or '–'} | {fnum(r['sim_model_s'], 1, 2)} | "
              f"{fnum(r['vcpu_wait_s'], 1, 2)} | {r['host_load_start']} | {r['pf_prefetch'] or '–'} | {r['pf_reorder'] or '–'} | {r['failed_units'] or '–'} |")
    L("")
    shown = {r["run"] for d in data.values() for r in d["rows"]}
    others = sorted({r["run"] for r in rows} - shown)
    if others:
        L("## Other runs in boots.csv")
        L("")
        L("Validation runs, a first series under heavy host load, variants (see the notes for what each was).")
        L("Measured boots that finished only.")
        L("")
        L("| run | setup | boots | boot time avg (s) | stddev | boot − vCPU wait (s) | disk busy, model (s) | vCPUs |")
        L("|---|---|---|---|---|---|---|---|")
        for run in others:
            for s in SETUPS:
                ok = [r for r in rows if r["run"] == run and r["setup"] == s and r["phase"] == "measure"
                      and r["status"] == "ok"]
                if not ok:
                    continue
                b = stats(num(ok, "boot_end_s"))
                # With several vCPUs the summed wait includes an idle vCPU's: no correction then.
                c = stats([float(r["boot_end_s"]) - float(r["vcpu_wait_s"]) for r in ok
                           if r.get("boot_end_s") and r.get("vcpu_wait_s") and (r.get("vcpus") or "1") == "1"])
                m = stats(num(ok, "sim_model_s"))
                smp = ",".join(sorted({r.get("vcpus") or "1" for r in ok}))
                L(f"| {run} | {LABEL[s]} | {len(ok)} | {b['avg']:.2f} | {b['sd']:.2f} | "
                  + (f"{c['avg']:.2f}" if c else "–") + " | " + (f"{m['avg']:.2f}" if m else "–") + f" | {smp} |")
        L("")
    out = args.out or os.path.join(LAB, "RESULTS.md")
    svg = args.svg or os.path.join(LAB, "bootlab.svg")
    with open(out, "w") as f:
        f.write("\n".join(lines))
    runs = ", ".join(sorted({r["run"] for d in data.values() for r in d["rows"]}))
    models = ", ".join(sorted({r["disk_model"] or "hdd" for d in data.values() for r in d["rows"] if r["disk"] == "sim"}))
    boots_chart(data, svg, f"boot lab: boot time per setup (runs {runs}, disk model {models})")
    print(f"wrote {out} and {svg} ({len(data)} setups)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description="bootlab records and report")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("outdir")
    r.add_argument("--run", required=True)
    r.add_argument("--setup", required=True, type=setup_name,
                   help="one of " + ", ".join(SETUPS) + ", or tune-PHASE (run-series.sh tuning)")
    r.add_argument("--phase", required=True, choices=["learn", "measure"])
    r.add_argument("--boot", required=True)
    r.add_argument("--golden-info", default="")
    rr = sub.add_parser("rerecord")
    rr.add_argument("--run", required=True)
    g = sub.add_parser("render")
    g.add_argument("--run", action="append")
    g.add_argument("--out", help="the report's file (default RESULTS.md; another file gets the tables only, "
                   "without the links to FINDINGS.md and NOTES.md and the chart)")
    g.add_argument("--svg", help="the chart's file (default bootlab.svg)")
    ic = sub.add_parser("icount")
    ic.add_argument("--run", required=True)
    t = sub.add_parser("tuning")
    t.add_argument("--run", required=True)
    t.add_argument("--guest-log", action="append", metavar="DISK=FILE",
                   help="a disk's boot-time log dumped from its image (debugfs), in place of the one its last "
                   "report boot printed: main, or the copy's phase name")
    t.add_argument("--prefetchd", default=os.path.join(TOP, "build", "default", "prefetchd"),
                   help="the prefetchd whose report compares the lab's figures (default: this tree's build)")
    a = ap.parse_args()
    {"record": record, "rerecord": rerecord, "render": render, "tuning": tuning, "icount": icount}[a.cmd](a)


if __name__ == "__main__":
    main()
