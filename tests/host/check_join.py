# SPDX-License-Identifier: GPL-2.0
"""check_join.py DIR: the checks of t_join.sh on what it left in DIR.
TAP."""
import json
import os
import statistics
import sys
from collections import Counter, defaultdict

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))

from nsjson import nsdump_json  # noqa: E402
from tap import Tap  # noqa: E402

d = sys.argv[1]
t = Tap()


def path(name):
    return os.path.join(d, name)


def read(name):
    with open(path(name), encoding="utf-8") as f:
        return f.read()


def joined_pairs(lines):
    """[host, cpu, seq] of each joined block's send and receive block."""
    out = []
    for o in lines:
        if o.get("type") == "block" and "join" in o:
            j = o["join"]
            out.append((j["tx"]["host"], j["tx"]["cpu"], j["tx"]["seq"],
                        j["rx"]["host"], j["rx"]["cpu"], j["rx"]["seq"]))
    return out


def the(lines, kind):
    return [o for o in lines if o.get("type") == kind]


def wires(lines, sender):
    return [o["join"]["wire_us"] for o in lines
            if o.get("type") == "block" and "join" in o
            and o["join"]["from"] == sender]


def check_case(name):
    truth = json.loads(read(name + ".truth"))
    t.eq(read(name + ".rc").strip(), "0", "%s: exit status 0" % name)
    lines = nsdump_json(path(name + ".jsonl"))
    got = joined_pairs(lines)
    want = [tuple(p) for p in truth["pairs"]]
    t.ok(len(got) == len(set(got)), "%s: no pair twice" % name)
    t.eq(sorted(got), sorted(want), "%s: the %d pairs joined, exactly"
         % (name, len(want)))
    join = the(lines, "join")
    t.eq(len(join), 1, "%s: one join line" % name)
    counts = {"%d %s %s" % (c["host"], c["dir"], c["reason"]): c["n"]
              for c in join[0]["counts"]}
    t.eq(counts, truth["counts"], "%s: blocks by host, direction and reason"
         % name)
    unmatched = Counter("%d %s %s" % (u["host"], u["dir"], u["reason"])
                        for u in join[0]["unmatched"])
    t.eq(dict(unmatched), {k: v for k, v in truth["counts"].items()
                           if k.split()[2] not in ("joined", "local")},
         "%s: each unmatched block listed with its reason" % name)
    return truth, join[0]["clock"], lines


def check_offset(name, truth, clock, lines, tol=0.01):
    off, u = clock["offset_us"], clock["uncertainty_us"]
    want = truth["offset_ns"] / 1e3
    bias = truth["asym_ns"] / 2e3
    print("# %s: offset %.3f us (truth %.3f, asymmetry's bias %.3f) +- %.3f us"
          % (name, off, want, bias, u))
    t.ok(abs(off - (want + bias)) < tol,
         "%s: offset = truth + half the asymmetry" % name)
    t.ok(abs(off - want) <= u, "%s: truth within the uncertainty" % name)
    for h in (0, 1):
        w = wires(lines, h)
        t.ok(w and min(w) >= -u and max(w) < 110,
             "%s: wire times %d>%d in [-U, 110 us]" % (name, h, 1 - h))


def check_tables(sym_lines):
    tables = the(sym_lines, "table")
    t.eq([(x.get("from"), x.get("to")) for x in tables],
         [(path("sym.a"), path("sym.b")), (path("sym.b"), path("sym.a"))],
         "a table per direction, named by its files")
    for x in tables:
        regions = {r["region"]: r for r in x["regions"]}
        t.ok("wire" in regions and regions["wire"]["n"] == x["blocks"]
             and "nic" in regions and "rx-nic" in regions,
             "table %s>%s: send regions, wire, receive regions"
             % (x["from"][-1], x["to"][-1]))
    text = read("text")
    t.ok("sym.a>" in text and " by dir tx " in text and " wire " in text,
         "--by: per direction, wire among the regions")


def check_chrome(n_pairs):
    tr = json.loads(read("trace.json"))["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in tr
             if e["ph"] == "M" and e["name"] == "process_name"}
    t.eq(names, {1: "host 0 (the first file)", 2: "host 1 (the second file)"},
         "chrome: a process per host")
    flows = defaultdict(dict)
    for e in tr:
        if e["ph"] in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
    t.eq(len(flows), n_pairs, "chrome: an arrow per joined packet")
    t.ok(all(f["s"]["pid"] != f["f"]["pid"] and f["s"]["ts"] <= f["f"]["ts"]
             for f in flows.values()), "chrome: arrows from one host to the other")
    t.ok(not any(e["ph"] == "X" and e["name"] == "wire" for e in tr),
         "chrome: the wire is no host's slice")
    per_thread = defaultdict(list)
    for e in tr:
        if e["ph"] == "X":
            per_thread[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    bad = 0
    for spans in per_thread.values():
        stack = []
        for s, e in sorted(spans, key=lambda x: (x[0], -x[1])):
            while stack and stack[-1] <= s + 1e-9:
                stack.pop()
            if stack and e > stack[-1] + 1e-6:
                bad += 1
            stack.append(e)
    t.eq(bad, 0, "chrome: every thread's slices nest")
    page = read("page.html")
    t.ok("wire" in page and page.rstrip().endswith("</html>"),
         "html: the page draws the wire")


def main():
    truth, clock, sym = check_case("sym")
    check_offset("sym", truth, clock, sym)
    truth, clock, lines = check_case("asym")
    check_offset("asym", truth, clock, lines)
    truth, clock, lines = check_case("drift")
    print("# drift: %.3f +- %.3f ppm (truth %.3f), over %.1f s" %
          (clock["drift_ppm"], clock["drift_uncertainty_ppm"],
           truth["drift_ppm"], clock["span_s"]))
    t.ok(clock["drift_fitted"] and abs(clock["drift_ppm"] - truth["drift_ppm"])
         <= clock["drift_uncertainty_ppm"], "drift: recovered within its uncertainty")
    for h in (0, 1):
        w = wires(lines, h)
        t.ok(min(w) > 49 - clock["uncertainty_us"] and max(w) < 110,
             "drift: wire times %d>%d where they were" % (h, 1 - h))
    truth, clock, lines = check_case("udp")
    # the datagrams' least wire times differ by 42 ns between directions
    check_offset("udp", truth, clock, lines, 0.1)
    shifted = the(nsdump_json(path("shift.jsonl")), "join")[0]["clock"]
    sym_clock = the(sym, "join")[0]["clock"]
    print("# shift: tsc offset %d, was %d; first guess %d, was %d" %
          (shifted["tsc_offset"], sym_clock["tsc_offset"],
           shifted["tsc_offset_guess"], sym_clock["tsc_offset_guess"]))
    t.ok(abs(shifted["tsc_offset"] - sym_clock["tsc_offset"] - 9000000000) <= 1,
         "9e9 ticks added to one file: recovered to the tick")
    t.eq(sorted(joined_pairs(nsdump_json(path("shift.jsonl")))),
         sorted(joined_pairs(sym)), "the same pairs, whatever the first guess")
    check_tables(sym)
    t.eq(read("views.rc").strip(), "0", "--export chrome-trace and --html: exit 0")
    check_chrome(len(joined_pairs(sym)))
    for i, what in ((1, "-r three times"), (2, "-r twice with -w"),
                    (3, "-r - twice")):
        t.ok(read("rc%d" % i).strip() == "2" and
             len(read("e%d" % i).splitlines()) == 1,
             "%s: exit 2, one line" % what)
    return t.done()


sys.exit(main())
