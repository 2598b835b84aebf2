#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per lat_tcp round trip, per configuration and per function.

Reads what bench/insnprof.sh and the insncount plugin left in DIR: the
guest's kallsyms, the list of windows and the plugin's snapshots at each
window's begin and end (one line per translated block: vaddr, its
instructions, how often it ran).  A window's instructions are the blocks'
executions between its two snapshots times their lengths, summed per
function (the symbol at or below the block's first address; user space as
one bucket).  Rounds of a configuration are exact counts that differ only
by what else the guest ran (timers, the RCU): the median round is shown.

    bench/insnprof.py DIR [--top N] [--json FILE]
"""
import argparse
import bisect
import json
import os
import statistics
import sys

KERNEL_START = 0xffff800000000000


def load_kallsyms(path):
    addrs, names = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[1] in "aAuUwWvV":
                continue
            addr = int(parts[0], 16)
            if addr == 0:
                continue
            name = parts[2] + (" " + parts[3] if len(parts) > 3 else "")
            addrs.append(addr)
            names.append(name)
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def load_snapshot(path):
    snap = {}
    with open(path) as f:
        for line in f:
            vaddr, insns, execs = line.split()
            snap[(int(vaddr, 16), int(insns))] = int(execs)
    return snap


def window_counts(dirname, name, syms):
    """Instructions of one window by function."""
    begin = load_snapshot(os.path.join(dirname, "snap.%s.begin" % name))
    end = load_snapshot(os.path.join(dirname, "snap.%s.end" % name))
    addrs, names = syms
    by_fn = {}
    for key, execs in end.items():
        ran = execs - begin.get(key, 0)
        if ran <= 0:
            continue
        vaddr, insns = key
        if vaddr < KERNEL_START:
            fn = "(user space)"
        else:
            i = bisect.bisect_right(addrs, vaddr) - 1
            fn = names[i] if i >= 0 else "(unknown kernel)"
        by_fn[fn] = by_fn.get(fn, 0) + ran * insns
    return by_fn


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json")
    args = ap.parse_args()

    syms = load_kallsyms(os.path.join(args.dir, "kallsyms"))
    rounds = {}
    trips = None
    with open(os.path.join(args.dir, "windows")) as f:
        for line in f:
            cfg, name = line.split()
            if cfg == "round_trips":
                trips = int(name)
                continue
            rounds.setdefault(cfg, []).append(name)
    if not trips or "II" not in rounds:
        sys.exit("insnprof: %s holds no round-trip count or no II window" % args.dir)

    per_cfg = {}
    for cfg, names in rounds.items():
        counts = [window_counts(args.dir, n, syms) for n in names]
        totals = [sum(c.values()) for c in counts]
        mid = sorted(range(len(totals)), key=totals.__getitem__)[len(totals) // 2]
        per_cfg[cfg] = {"totals": totals, "median": counts[mid]}

    base = statistics.median(per_cfg["II"]["totals"]) / trips
    print("%-8s %6s %14s %14s %8s" % ("", "rounds", "insns/trip", "min/trip", "x II"))
    for cfg in rounds:
        t = per_cfg[cfg]["totals"]
        med = statistics.median(t) / trips
        print("%-8s %6d %14.0f %14.0f %8.3f" % (cfg, len(t), med, min(t) / trips, med / base))

    ii = per_cfg["II"]["median"]
    out = {"round_trips": trips, "configs": {}}
    for cfg in rounds:
        fns = per_cfg[cfg]["median"]
        out["configs"][cfg] = {
            "insns_per_trip": statistics.median(per_cfg[cfg]["totals"]) / trips,
            "functions": {k: v / trips for k, v in fns.items()},
        }
        if cfg == "II":
            continue
        diff = {k: (fns.get(k, 0) - ii.get(k, 0)) / trips for k in set(fns) | set(ii)}
        top = sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:args.top]
        print("\n%s less II, per round trip (%+.0f in all):" % (cfg, sum(diff.values())))
        for fn, d in top:
            print("  %+10.0f  %s" % (d, fn))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
