#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per unit of work, per configuration and per function.

Reads what bench/insnprof.sh and the insncount plugin left in DIR: the
guest's kallsyms, the list of windows (workload, configuration, the
snapshots at its begin and end, its units of work) and the snapshots
(one line per translated block: vaddr, its instructions, how often it
ran; for a block of one REP string instruction, how often it was entered
and, fourth, how often TCG ran an iteration of it).  A window's instructions are the blocks' executions between its two
snapshots times their lengths, summed per function (the symbol at or
below the block's first address).  In user space, nsdump runs without
address randomisation and maps.nsdump holds its map: its code and that
of the libraries it loaded are named "file:function" (the symbols nm
finds in each file, the guest's root being the host's); the rest of user
space (the workload, the shell) is one bucket.  nsdump's process exit,
after each window that ran it, is listed apart ("exits").  Rounds of a
configuration are exact counts that differ only by what else the guest
ran (timers, the RCU): the median round is shown.

    bench/insnprof.py DIR [--top N] [--diff A B] [--json FILE]
                          [--budget FILE] [--rep-iterations]
                          [--vmlinux FILE]
    bench/insnprof.py DIR --window BEGIN END

A REP string instruction counts once, as the CPU's INST_RETIRED counts
it; --rep-iterations counts each of its iterations, as TCG runs them
(how every figure before 2026-11-28 was counted).  The ratio table gives
the other count's ratio too ("other"), and NetSlice's own code's part of
each count ("NetSlice", below).  --window prints, as JSON, what ran
between two snapshots in user space and in the kernel, counted both
ways, and each REP block's entries and iterations: the plugin's own
check (tests/vm/t_insn.sh).

For the stages of a block's life that ran (II, none, carry, clock,
records, III: the module's cost_stage), a table says what each adds to
the one before it, in all and in NetSlice's own code (the core's and the
module's functions and nsdump's user space).  That part is exact from
boot to boot; the rest follows the wall clock (the scheduler, the page
allocator), about 2% of a lat_tcp round trip.  The hooks run inline
in the stack's functions (linux/netslice.h): with --vmlinux, the kernel
the VM ran, the functions that hold one (that branch on one of its
static keys, by the kernel's jump table, or hold a step) count as
NetSlice's what they run beyond what they run in II, the same boot's
baseline.

--diff prints the per-function difference B less A (default: each
configuration less II).  --budget FILE checks the ratios against the
budgets it lists ("workload config max_ratio" per line, # comments), and
NetSlice's own code per unit against "workload config code max": a
figure more than 2% over its budget fails (exit status 1).  TAP.
"""
import argparse
import bisect
import json
import os
import statistics
import struct
import subprocess
import sys

KERNEL_START = 0xffff800000000000
UNITS = {"lat_tcp": "round trip", "lat_nic": "round trip", "tcp_stream": "MiB"}
SLACK = 1.02
# A block's life, cut short stage by stage (the module's cost_stage): each
# step down this list adds one part of what collecting costs.
STAGES = ["II", "none", "carry", "clock", "records", "III"]
STEP_WHAT = {
    "none": "NSI decides for every packet, and makes no block",
    "carry": "blocks made, forked and freed; the hooks called",
    "clock": "START and STOP read the TSC",
    "records": "the records kept",
    "III": "delivered: encoded into the ring, written by nsdump",
}


def netslice_code(fn):
    """Whether FN is NetSlice's own code: the core's and the module's
    functions, and whatever nsdump's process ran in user space (its names
    are "file:function").  What they run is the same from boot to boot;
    what the rest of the window runs (the scheduler, the page allocator)
    follows the wall clock, so this part of a difference is the exact one."""
    return ("[netslice]" in fn or fn.startswith(("nsl_", "__nsl_")) or
            ":" in fn)


# The static keys a NetSlice hook branches on (linux/netslice.h).
HOOK_KEYS = ("nsl_active", "nsl_staged", "nsl_magnet")


def step_sites(vmlinux):
    """The functions that hold a hook's inline step: nsl_log_since()'s
    rdtsc, sub and sbb, three instructions in a row that nothing else in
    the kernel runs."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", vmlinux],
                         capture_output=True, text=True, check=True).stdout
    sites, fn, last = set(), None, ("", "")
    for line in dis.splitlines():
        if line.endswith(">:") and " <" in line:
            fn = line[line.index(" <") + 2:-2]
            continue
        insn = line.split("\t", 1)[1].split() if "\t" in line else []
        op = insn[0] if insn else ""
        if (op == "sbb" and insn[1].endswith(",%edx") and
                last == ("rdtsc", "sub")):
            sites.add(fn)
        last = (last[1], op if op != "sub" or
                (len(insn) > 1 and insn[1].endswith(",%eax")) else "")
    return sites


def key_sites(vmlinux):
    """The functions that branch on one of NetSlice's static keys: every
    hook, its inline block test included, from the kernel's jump table.
    Each entry there is the branch's and its target's offsets from the
    entry (s32 each) and the key's (s64, its low two bits flags)."""
    syms, funcs = {}, []
    nm = subprocess.run(["nm", "-n", vmlinux], capture_output=True,
                        text=True, check=True).stdout
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        syms[parts[2]] = int(parts[0], 16)
        if parts[1] in "tT":
            funcs.append((int(parts[0], 16), parts[2]))
    lo, hi = syms.get("__start___jump_table"), syms.get("__stop___jump_table")
    keys = {syms[k] for k in HOOK_KEYS if k in syms}
    if lo is None or hi is None or not keys or not funcs:
        return set()		# not a linked kernel (an object, say)
    elf = subprocess.run(["readelf", "-S", "-W", vmlinux], capture_output=True,
                         text=True, check=True).stdout
    where = None
    for line in elf.splitlines():
        f = line.split("]", 1)[1].split() if "]" in line else []
        if len(f) > 4 and f[1] == "PROGBITS":
            addr, off, size = (int(x, 16) for x in f[2:5])
            if addr <= lo and hi <= addr + size:
                where = off + lo - addr
    if where is None:
        return set()
    with open(vmlinux, "rb") as f:
        f.seek(where)
        table = f.read(hi - lo)
    starts = [a for a, _ in funcs]
    sites = set()
    for i in range(0, len(table) - 15, 16):
        code, _, key = struct.unpack_from("<iiq", table, i)
        if (lo + i + 8 + key) & ~3 in keys:
            j = bisect.bisect_right(starts, lo + i + code) - 1
            if j >= 0:
                sites.add(funcs[j][1])
    return sites


def hook_sites(vmlinux):
    """The kernel's functions, NetSlice's own aside, that hold a hook:
    those that branch on its static keys, and those that hold a step.
    In a kernel with jump labels the first take in the second; without
    them (no jump table: a static key is a plain load and test) only the
    steps are found."""
    return {fn for fn in step_sites(vmlinux) | key_sites(vmlinux)
            if not netslice_code(fn)}


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
            addrs.append(addr)
            names.append(parts[2] + (" " + parts[3] if len(parts) > 3 else ""))
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


class UserMap:
    """nsdump's executable mappings, each with its file's symbols."""

    def __init__(self, path):
        self.maps = []		# (start, end, bias, name, addrs, names)
        if not os.path.exists(path):
            return
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 6 or "x" not in parts[1] or not parts[5].startswith("/"):
                    continue
                start, end = (int(x, 16) for x in parts[0].split("-"))
                bias = start - int(parts[2], 16)
                addrs, names = self.symbols(parts[5])
                self.maps.append((start, end, bias, os.path.basename(parts[5]), addrs, names))

    @staticmethod
    def symbols(path):
        syms = {}
        for dyn in ([], ["-D"]):
            try:
                out = subprocess.run(["nm", "--defined-only"] + dyn + [path],
                                     capture_output=True, text=True).stdout
            except OSError:
                return [], []
            for line in out.splitlines():
                p = line.split()
                if len(p) == 3 and p[1] in "tTwWiI":
                    syms.setdefault(int(p[0], 16), p[2].split("@")[0])
        order = sorted(syms)
        return order, [syms[a] for a in order]

    def name(self, vaddr):
        for start, end, bias, fname, addrs, names in self.maps:
            if start <= vaddr < end:
                i = bisect.bisect_right(addrs, vaddr - bias) - 1
                return "%s:%s" % (fname, names[i] if i >= 0 else "?")
        return "(user space)"


def load_snapshot(path):
    """{(vaddr, insns): (entries, iterations)}: the two differ only for a
    block of one REP instruction (a line with a fourth column)."""
    snap = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            execs = int(p[2])
            snap[(int(p[0], 16), int(p[1]))] = (execs, int(p[3]) if len(p) > 3 else execs)
    return snap


def deltas(b, e):
    """(vaddr, insns, (entries, iterations)) of each block between the
    snapshots B and E: what ran in between."""
    for (vaddr, insns), counts in e.items():
        before = b.get((vaddr, insns), (0, 0))
        yield vaddr, insns, (counts[0] - before[0], counts[1] - before[1])


def window_json(dirname, begin, end):
    b = load_snapshot(os.path.join(dirname, "snap." + begin))
    e = load_snapshot(os.path.join(dirname, "snap." + end))
    out = {"user": [0, 0], "kernel": [0, 0], "rep": []}
    for vaddr, insns, (entries, iters) in deltas(b, e):
        side = out["kernel" if vaddr >= KERNEL_START else "user"]
        side[0] += entries * insns
        side[1] += iters * insns
        if iters != entries and iters > 0:
            out["rep"].append({"vaddr": "%x" % vaddr, "entries": entries,
                               "iterations": iters})
    return out


class Profile:
    """The windows of DIR, counted per function."""

    def __init__(self, dirname, rep_iterations=False):
        self.dir = dirname
        # which of a snapshot's two counts is counted, and which is the other
        self.pick, self.other = (1, 0) if rep_iterations else (0, 1)
        self.syms = load_kallsyms(os.path.join(dirname, "kallsyms"))
        self.user = UserMap(os.path.join(dirname, "maps.nsdump"))
        self.user_names = {}
        self.snaps = {}
        # (workload, config) -> [(units, {function: insns})]
        self.windows = {}
        # (workload, config) -> [the other count's total per unit]
        self.others = {}
        with open(os.path.join(dirname, "windows")) as f:
            for line in f:
                wl, cfg, begin, end, units = line.split()
                counts = self.count(begin, end)
                other = counts.pop(None)
                self.windows.setdefault((wl, cfg), []).append((float(units), counts))
                self.others.setdefault((wl, cfg), []).append(other / float(units))
        # (workload, config) -> [{function: insns}]: nsdump's exits
        self.exits = {}
        path = os.path.join(dirname, "exits")
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    wl, cfg, begin, end = line.split()
                    counts = self.count(begin, end)
                    counts.pop(None)
                    self.exits.setdefault((wl, cfg), []).append(counts)

    def snapshot(self, n):
        """Snapshot N, from a cache of the last few: a window and the exit
        after it share a snapshot, and a full run holds hundreds of them,
        tens of MB each once read, too many to keep."""
        if n not in self.snaps:
            if len(self.snaps) >= 4:
                del self.snaps[next(iter(self.snaps))]
            self.snaps[n] = load_snapshot(os.path.join(self.dir, "snap." + n))
        return self.snaps[n]

    def count(self, begin, end):
        """{function: instructions} between two snapshots, and under the
        key None the total as the other count would have it."""
        b, e = self.snapshot(begin), self.snapshot(end)
        addrs, names = self.syms
        by_fn = {}
        other = 0
        for vaddr, insns, ran in deltas(b, e):
            other += ran[self.other] * insns
            ran = ran[self.pick]
            if ran <= 0:
                continue
            if vaddr < KERNEL_START:
                fn = self.user_names.get(vaddr)
                if fn is None:
                    fn = self.user_names[vaddr] = self.user.name(vaddr)
            else:
                i = bisect.bisect_right(addrs, vaddr) - 1
                fn = names[i] if i >= 0 else "(unknown kernel)"
            by_fn[fn] = by_fn.get(fn, 0) + ran * insns
        by_fn[None] = other
        return by_fn

    def workloads(self):
        seen = []
        for wl, _ in self.windows:
            if wl not in seen:
                seen.append(wl)
        return seen

    def configs(self, wl):
        return [c for w, c in self.windows if w == wl]

    def per_unit(self, wl, cfg):
        """Every round's total per unit, and the median round per function."""
        rounds = [(sum(c.values()) / u, {k: v / u for k, v in c.items()})
                  for u, c in self.windows[(wl, cfg)]]
        totals = [t for t, _ in rounds]
        mid = sorted(range(len(totals)), key=totals.__getitem__)[len(totals) // 2]
        return totals, rounds[mid][1]


def ratio_table(prof, wl, out, sites=()):
    base = statistics.median(prof.per_unit(wl, "II")[0])
    ii_fns = prof.per_unit(wl, "II")[1]
    obase = statistics.median(prof.others[(wl, "II")])
    unit = UNITS.get(wl, "unit")
    print("\n%s: instructions per %s (a REP instruction %s; other: %s; "
          "NetSlice: its own code's part)"
          % (wl, unit, *(("per iteration", "once") if prof.pick else
                         ("once", "per iteration"))))
    print("  %-8s %6s %14s %14s %8s %8s %10s"
          % ("", "rounds", "median", "min", "x II", "other", "NetSlice"))
    for cfg in prof.configs(wl):
        totals, fns = prof.per_unit(wl, cfg)
        med = statistics.median(totals)
        omed = statistics.median(prof.others[(wl, cfg)])
        own = sum(v for k, v in fns.items() if netslice_code(k))
        inline = sum(max(0, fns.get(k, 0) - ii_fns.get(k, 0)) for k in sites)
        own += inline
        print("  %-8s %6d %14.0f %14.0f %8.3f %8.3f %10.0f"
              % (cfg, len(totals), med, min(totals), med / base, omed / obase,
                 own))
        out.setdefault(wl, {})[cfg] = {"per_unit": med, "ratio": med / base,
                                       "other_ratio": omed / obase,
                                       "netslice_code": own,
                                       "inline": inline,
                                       "rounds": totals, "functions": fns}


def exit_table(prof, wl, out, top=5):
    """nsdump's process exit, after each window, once per capture."""
    cfgs = [c for c in prof.configs(wl) if (wl, c) in prof.exits]
    if not cfgs:
        return
    print("\n%s: nsdump's teardown and exit, once per capture, outside the windows" % wl)
    for cfg in cfgs:
        runs = prof.exits[(wl, cfg)]
        totals = [sum(c.values()) for c in runs]
        mid = sorted(range(len(totals)), key=totals.__getitem__)[len(totals) // 2]
        fns = sorted(runs[mid].items(), key=lambda kv: -kv[1])[:top]
        print("  %-8s %10.0f  (%s)" % (cfg, statistics.median(totals),
                                      ", ".join("%s %d" % kv for kv in fns)))
        out.setdefault(wl, {}).setdefault(cfg, {})["exit"] = statistics.median(totals)


def step_table(prof, wl, out):
    """What each stage adds to the one before it: in all, and in
    NetSlice's own code, the exact part (after ratio_table())."""
    chain = [c for c in STAGES if (wl, c) in prof.windows]
    if len(chain) < 2:
        return
    unit = UNITS.get(wl, "unit")
    print("\n%s: what each step adds, per %s (NetSlice's code: the same in "
          "every boot)" % (wl, unit))
    print("  %-18s %10s %16s  %s" % ("step", "in all", "NetSlice's code", "what"))
    for pcfg, cfg in zip(chain, chain[1:]):
        was, now = out[wl][pcfg], out[wl][cfg]
        step = {"from": pcfg, "all": now["per_unit"] - was["per_unit"],
                "netslice_code": now["netslice_code"] - was["netslice_code"]}
        now["step"] = step
        skipped = STAGES[STAGES.index(pcfg) + 1:STAGES.index(cfg) + 1]
        what = STEP_WHAT[cfg] if len(skipped) == 1 else \
            "the steps to %s together" % ", ".join(skipped)
        print("  %-18s %+10.0f %+16.0f  %s"
              % ("%s -> %s" % (pcfg, cfg), step["all"],
                 step["netslice_code"], what))


def diff_table(prof, wl, a, b, top):
    fa, fb = prof.per_unit(wl, a)[1], prof.per_unit(wl, b)[1]
    diff = {k: fb.get(k, 0) - fa.get(k, 0) for k in set(fa) | set(fb)}
    print("\n%s: %s less %s, per %s (%+.0f in all):"
          % (wl, b, a, UNITS.get(wl, "unit"), sum(diff.values())))
    for fn, d in sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:top]:
        print("  %+10.0f  %s" % (d, fn))


def check_budget(out, path):
    """Each line "workload config max_ratio" holds a ratio to II, and
    "workload config code max" NetSlice's own code per unit, to its
    budget and 2% over it."""
    budgets = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            words = line.split("#")[0].split()
            try:
                if len(words) == 4 and words[2] == "code":
                    budgets.append((words[0], words[1], "netslice_code",
                                    float(words[3])))
                elif len(words) == 3:
                    budgets.append((words[0], words[1], "ratio",
                                    float(words[2])))
                elif words:
                    raise ValueError("not 3 or 4 words")
            except ValueError as e:
                sys.exit("insnprof: %s:%d: %r is neither \"workload config "
                         "max_ratio\" nor \"workload config code max\" (%s)"
                         % (path, n, line.strip(), e))
    print("1..%d" % len(budgets))
    bad = 0
    for i, (wl, cfg, what, limit) in enumerate(budgets, 1):
        got = out.get(wl, {}).get(cfg)
        if got is None:
            print("not ok %d - insn budget %s %s: not measured" % (i, wl, cfg))
            bad += 1
            continue
        ok = got[what] <= limit * SLACK
        bad += not ok
        form = "ratio %.3f x II, budget %.3f" if what == "ratio" else \
            "NetSlice's code %.0f a unit, budget %.0f"
        print("%sok %d - insn budget %s %s: %s (+2%%)"
              % ("" if ok else "not ", i, wl, cfg, form % (got[what], limit)))
    print("%d passed, %d failed" % (len(budgets) - bad, bad))
    return bad == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--diff", nargs=2, metavar=("A", "B"))
    ap.add_argument("--json")
    ap.add_argument("--budget")
    ap.add_argument("--rep-iterations", action="store_true")
    ap.add_argument("--window", nargs=2, metavar=("BEGIN", "END"))
    ap.add_argument("--vmlinux")
    args = ap.parse_args()
    if args.window:
        json.dump(window_json(args.dir, *args.window), sys.stdout)
        print()
        return

    prof = Profile(args.dir, args.rep_iterations)
    sites = hook_sites(args.vmlinux) if args.vmlinux else set()
    out = {}
    for wl in prof.workloads():
        if (wl, "II") not in prof.windows:
            sys.exit("insnprof: %s has no II window for %s" % (args.dir, wl))
        ratio_table(prof, wl, out, sites)
        step_table(prof, wl, out)
        exit_table(prof, wl, out)
        pairs = [tuple(args.diff)] if args.diff else \
            [("II", c) for c in prof.configs(wl) if c != "II"]
        for a, b in pairs:
            if (wl, a) in prof.windows and (wl, b) in prof.windows:
                diff_table(prof, wl, a, b, args.top)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
    if args.budget and not check_budget(out, args.budget):
        sys.exit(1)


if __name__ == "__main__":
    main()
