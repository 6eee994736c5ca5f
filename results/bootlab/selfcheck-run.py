#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bootlab: the self-check's boots and decisions of one run, as Markdown tables (for SELF-CHECK-RUN.md).

  selfcheck-run.py RUN [SETUP]      (SETUP: selfcheck)

Reads the run's guest reports (raw/RUN/SETUP-PHASEi.report: each holds prefetchd's boottime.log, the self-check
state file after that boot and 'prefetchd status') and its rows in boots.csv (the host's side: vCPU wait, the
simulated disk's busy time).  vCPU wait: the time the guest's vCPU threads (summed over them) waited for a host
CPU until boot end — under TCG a second of it is a second of guest time, so it is the host's load in the boot;
"boot − wait ÷ vCPUs" takes the average vCPU's wait out (an estimate of the boot on an idle host)."""
import csv
import os
import re
import sys

LAB = os.path.dirname(os.path.abspath(__file__))


def sections(text):
    out, cur = {}, None
    for line in text.replace("\r", "").splitlines():
        if line.startswith("--- "):
            cur = line[4:]
            out[cur] = []
        elif line in ("BOOTLAB-BEGIN", "BOOTLAB-END"):
            cur = None
        elif cur:
            out[cur].append(line)
    return out


def main():
    run = sys.argv[1]
    setup = sys.argv[2] if len(sys.argv) > 2 else "selfcheck"
    rows = [r for r in csv.DictReader(open(os.path.join(LAB, "boots.csv"))) if r["run"] == run and r["setup"] == setup]
    rows.sort(key=lambda r: (r["phase"] != "learn", int(r["boot"])))
    print("| # | boot | role | policy in force | replayed MiB | boot time (s) | vCPU wait (s) | boot − wait ÷ vCPUs (s) | "
          "disk busy, model (s) | I/O stall, PSI some (s) | decision after the boot (selfcheck state) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    last = None
    for n, r in enumerate(rows, 1):
        path = os.path.join(LAB, "raw", run, f"{setup}-{r['phase']}{r['boot']}.report")
        text = open(path, errors="replace").read()
        sec = sections(text)
        bid = re.search(r"^boot_id=(\S+)", text, re.M)
        bid = bid.group(1) if bid else ""
        rec = None
        for line in sec.get("boottime.log (last 30)", []):
            f = line.split()
            if f and f[0] == bid:
                rec = f
        state = {}
        for line in sec.get("selfcheck state", []):
            k, _, v = line.partition(" ")
            state[k] = v
        role = policy = mib = "?"
        if rec and len(rec) >= 13:
            prefetch, control, policy, mib = rec[4], rec[10], rec[11], rec[12]
            if control == "1":
                role = "control"
            elif prefetch == "1":
                role = {"replay": "replay", "narrow": "narrow", "off": "probe"}.get(policy, "replay")
            else:
                role = "no layout yet" if policy != "off" else "off (nothing)"
        bt = r["boot_end_s"]
        try:
            corr = f"{float(bt) - float(r['vcpu_wait_s']) / int(r['vcpus'] or 1):.2f}"
        except ValueError:
            corr = ""
        psi = f"{int(rec[15]) / 1000:.2f}" if rec and len(rec) >= 16 and rec[15] != "-1" else ""
        why = state.get("why", "(no state file)")
        dec = f"**{state.get('policy', '?')}**: {why}"
        print(f"| {n} | {r['phase']} {r['boot']} | {role} | {policy} | {mib} | {bt} | {r['vcpu_wait_s']} | {corr} | "
              f"{r['sim_model_s']} | {psi} | {dec} |")
        last = sec
    if last:
        for name in ("boottime.log (last 30)", "selfcheck state", "prefetchd status"):
            print(f"\nAfter the last boot, {name}:\n\n```")
            print("\n".join(l for l in last.get(name, []) if l.strip()))
            print("```")


if __name__ == "__main__":
    main()
