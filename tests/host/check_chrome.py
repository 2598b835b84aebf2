# SPDX-License-Identifier: GPL-2.0
"""check_chrome.py DIR: the checks of t_chrome_trace.sh on what it left in
DIR (trace.json, oracle.jsonl: nsdump --json -M of the same file; dev.json
and dev.jsonl of blocks with devices, netns: ours; the exit statuses and
messages of the option errors).  TAP."""
import os
import sys
from collections import defaultdict

# tap.py and nsjson.py live with the VM tests' helpers: one of each
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))

import devices
from nsjson import nsdump_json, strict_json
from tap import Tap

d = sys.argv[1]
t = Tap()


def read(name):
    with open(os.path.join(d, name), encoding="utf-8") as f:
        return f.read()


def ns(v):
    """µs with three decimals as integer ns: exact, so nesting is exact."""
    return round(v * 1000)


t.eq(read("rc").strip(), "0", "--export chrome-trace: exit 0")
t.eq(read("out"), "", "--export chrome-trace: no text on stdout (as -w)")


try:
    trace = strict_json(read("trace.json"))
except ValueError as e:
    t.ok(False, "the trace is strict JSON", e)
    sys.exit(t.done())
t.ok(isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list),
     "a JSON object with a traceEvents array")
t.ok(trace.get("displayTimeUnit") in ("ms", "ns"), "displayTimeUnit ms or ns")
t.eq(trace.get("otherData", {}).get("tsc_khz"), 3000000, "otherData: the file's tsc_khz")
events = trace["traceEvents"]

# ---- the Trace Event Format's required fields ----
NUM = (int, float)
bad = []
for e in events:
    ok = (isinstance(e.get("name"), str) and isinstance(e.get("ph"), str) and
          isinstance(e.get("ts"), NUM) and isinstance(e.get("pid"), int) and
          isinstance(e.get("tid"), int))
    ph = e.get("ph")
    if ph == "X":
        ok = ok and isinstance(e.get("dur"), NUM) and e["dur"] >= 0
    elif ph in ("s", "f"):
        ok = ok and "id" in e and isinstance(e.get("cat"), str)
        ok = ok and (ph == "s" or e.get("bp") == "e")
    elif ph == "i":
        ok = ok and e.get("s") in ("g", "p", "t")
    elif ph == "M":
        ok = ok and isinstance(e.get("args"), dict)
    else:
        ok = False
    if not ok:
        bad.append(e)
t.ok(not bad, "every event: name, ph, ts, pid, tid; dur for X, id for s/f, bp e on f",
     bad[:3])

# ---- counts against nsdump --json of the same file ----
oracle = nsdump_json(os.path.join(d, "oracle.jsonl"))
blocks = [o for o in oracle if o["type"] == "block"]
drawn = [sum("OPEN" not in r["flags"] for r in b["records"]) for b in blocks]
X = [e for e in events if e["ph"] == "X"]
t.eq(len(blocks), 400, "the oracle: 400 blocks")
t.eq(len(X), sum(drawn), "one slice per record, OPEN ones left out (%d records, %d OPEN)" %
     (sum(len(b["records"]) for b in blocks), sum(len(b["records"]) for b in blocks) - sum(drawn)))
per_block = defaultdict(list)
for e in X:
    per_block[e["args"]["block"]].append(e)
t.eq([len(per_block[i]) for i in range(len(blocks))], drawn,
     "each block's slices: one per record it drew, in the order of the blocks")
t.ok(all([e["name"] for e in sorted(per_block[i], key=lambda e: e["args"]["record"])] ==
         [r["region"] for r in b["records"] if "OPEN" not in r["flags"]]
         for i, b in enumerate(blocks)), "each slice named by its record's region")
marks = [e for e in events if e["ph"] == "i"]
t.eq(len([m for m in marks if m["cat"] == "magnet"]),
     len([o for o in oracle if o["type"] == "event"]), "an instant event per MAGNeT event record")
t.eq([m["args"]["lost"] for m in marks if m["cat"] == "loss"],
     [o["lost"] for o in oracle if o["type"] == "loss"], "an instant event per loss record, its count")

# ---- times: block 0 (genviews.h), from the TSC at the file's reference ----
b0 = {e["args"]["record"]: e for e in per_block[0]}
t.eq([(ns(b0[k]["ts"]), ns(b0[k]["dur"])) for k in sorted(b0)],
     [(0, 5000), (50, 400), (500, 2000), (2550, 200), (2800, 300), (3150, 1700),
      (3300, 1400), (5100, 8000)],
     "block 0's slices at start/3 GHz, for ticks/3 GHz, in ns")

# ---- nesting: a record inside its parent, exactly ----
def parent_of(recs, k):
    depth = recs[k]["depth"]
    for j in range(k - 1, -1, -1):
        if recs[j]["depth"] == depth - 1:
            return j
    return None


outside = []
for i, b in enumerate(blocks):
    by_rec = {e["args"]["record"]: e for e in per_block[i]}
    for k, e in by_rec.items():
        p = parent_of(b["records"], k)
        if p is None or p not in by_rec:
            continue
        pe = by_rec[p]
        s, f = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        ps, pf = ns(pe["ts"]), ns(pe["ts"]) + ns(pe["dur"])
        if not (ps <= s and f <= pf and (pe["pid"], pe["tid"]) == (e["pid"], e["tid"])):
            outside.append((i, k, p))
t.ok(not outside, "every slice inside its parent's, on its parent's track", outside[:5])

# every track: its slices nest or follow each other, never cross (what
# Perfetto and chrome://tracing need of a thread)
crossing = []
tracks = defaultdict(list)
for e in X:
    tracks[(e["pid"], e["tid"])].append((ns(e["ts"]), -ns(e["dur"]), e))
for key, evs in tracks.items():
    evs.sort(key=lambda x: (x[0], x[1]))
    stack = []
    for s, negdur, e in evs:
        f = s - negdur
        while stack and stack[-1] <= s:
            stack.pop()
        if stack and f > stack[-1]:
            crossing.append((key, e["args"]["block"], e["name"]))
        stack.append(f)
t.ok(not crossing, "every track's slices nest (%d tracks)" % len(tracks), crossing[:5])

# ---- arrows ----
flows = defaultdict(dict)
for e in events:
    if e["ph"] in ("s", "f"):
        flows[e["id"]][e["ph"]] = e
t.ok(all(set(v) == {"s", "f"} for v in flows.values()), "every arrow id has one s and one f")


def inside(ev):
    return any(ns(x["ts"]) <= ns(ev["ts"]) <= ns(x["ts"]) + ns(x["dur"])
               for _, _, x in tracks[(ev["pid"], ev["tid"])])


t.ok(all(inside(v["s"]) and inside(v["f"]) and v["s"]["ts"] <= v["f"]["ts"]
         and v["s"]["pid"] == 1 and v["f"]["pid"] == 2 for v in flows.values()),
     "each arrow from inside a send slice to inside a later receive slice")
loopback = sum("LOOPBACK" in b["flags"] for b in blocks)
tx = {(e["args"]["flow"], e["args"]["tcp_seq"]) for e in X
      if e["pid"] == 1 and e["args"]["depth"] == 0 and e["args"]["dir"] == "tx"
      and "LOOPBACK" not in e["args"]["block_flags"]}
rx = [(e["args"]["flow"], e["args"]["tcp_seq"]) for e in X
      if e["args"]["record"] == 0 and e["args"]["dir"] == "rx"]
pairs = sum(k in tx for k in rx)
t.eq(len(flows), loopback + pairs,
     "arrows: one in each loopback block (%d), one per rx block of a segment sent in the trace (%d)"
     % (loopback, pairs))
t.ok(pairs > 0 and loopback > 0, "both kinds of arrow are there to count")

# ---- metadata ----
names = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
procs = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
used = {(e["pid"], e["tid"]) for e in events if e["ph"] in ("X", "i")}
t.ok(used <= names, "every track with events is named", sorted(used - names)[:5])
t.eq(procs, {1, 2, 3}, "processes named: send path, receive path, markers")

# ---- devices ----
t.ok(not any("dev" in e.get("args", {}) or "dev_path" in e.get("args", {}) for e in events),
     "blocks without devices: no dev or dev_path in any event's args")


def check_devices():
    """mkblocks -W: each drawn record's device by the ABI's first rule,
    each outermost slice the packet's path, numbers (a file)."""
    ours = int(read("netns"))
    dblocks = [o for o in nsdump_json(os.path.join(d, "dev.jsonl")) if o["type"] == "block"]
    dX = [e for e in strict_json(read("dev.json"))["traceEvents"] if e["ph"] == "X"]
    want = {(i, k): dev for i, b in enumerate(dblocks)
            for k, dev in enumerate(devices.record_devs(b))
            if "OPEN" not in b["records"][k]["flags"]}
    got = {(e["args"]["block"], e["args"]["record"]): e["args"].get("dev") for e in dX}
    t.eq(len(dblocks), 30, "devices: the oracle, 30 blocks")
    t.ok(got == want and all(want.values()),
         "devices: each record's dev is the device it belongs to (the last whose first is at or before it)",
         sorted((k, got.get(k), v) for k, v in want.items() if got.get(k) != v)[:5])
    t.eq([got[(0, k)] for k in range(7)],
         ["if9@%d/tx" % ours] * 5 + ["if1@%d/tx" % ours] * 2,
         "devices: block 0 (gen.h's VLAN over lo): write, tcp, tcp, ip, link on if9, link, nic on if1")
    paths = {(e["args"]["block"], e["args"]["record"]): e["args"].get("dev_path") for e in dX}
    outer = {k: v for k, v in paths.items() if dblocks[k[0]]["records"][k[1]]["depth"] == 0}
    t.ok(all(v == devices.path(dblocks[i]) for (i, _), v in outer.items()) and
         not any(v for k, v in paths.items() if k not in outer),
         "devices: each outermost slice's dev_path the packet's path, nested ones none",
         sorted((k, v, devices.path(dblocks[k[0]])) for k, v in outer.items()
                if v != devices.path(dblocks[k[0]]))[:5])
    t.eq([paths[(i, 0)] for i in range(3)],
         ["if9@%d/tx>if1@%d/tx" % (ours, ours), "if8@%d/tx>if2@4026532253/rx" % ours,
          "if6@%d/tx" % ours], "devices: gen.h's three paths, in order")


check_devices()

# ---- the option's errors ----
for rc, err, what, want in (("rc1", "e1", "--export chrome-trace without a file",
                             "nsdump: --export chrome-trace needs a file"),
                            ("rc2", "e2", "--export svg",
                             "nsdump: --export svg: the format is chrome-trace or pcapng"),
                            ("rc3", "e3", "--export - and --html - together",
                             "nsdump: only one of -w, --html and --export can write to stdout ('-')")):
    t.ok(read(rc).strip() == "2" and read(err).splitlines()[0] == want,
         what + ": exit 2, one line", read(err))
t.ok(read("rc4").strip() == "1" and read("e4").startswith(
    "nsdump: /nonexistent/x.json: No such file or directory"),
    "a file that cannot be made: exit 1, said before anything is read", read("e4"))
t.eq(read("rc5").strip(), "0", "--export chrome-trace -: the trace on stdout parses")
sys.exit(t.done())
