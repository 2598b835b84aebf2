# SPDX-License-Identifier: GPL-2.0
"""check_pcapng.py DIR LUA: the checks of t_pcapng.sh on what it left in
DIR (v.pcapng and v.jsonl: nsdump --export pcapng and --json -M of the
same file; dev.*: blocks with devices, raw values; vm.*: a capture the
NetSlice kernel made in the VM (data/vm.nst); f.*: after an
expression; edit.pcapng and merged.pcapng: editcap's and mergecap's
rewrites; the option errors' exit statuses and messages), read by tshark
with the dissector LUA.  Each failure names the term that differs.  TAP."""
import os
import subprocess
import sys
from decimal import Decimal

# tap.py and nsjson.py live with the VM tests' helpers: one of each
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))

from nsjson import nsdump_json  # noqa: E402
from tap import Tap  # noqa: E402

d, lua = sys.argv[1], os.path.abspath(sys.argv[2])
t = Tap()
REGIONS = ["write", "tcp", "ip", "link", "nic", "rx-nic", "rx-link", "rx-ip", "rx-tcp",
           "queue", "copy", "sndq", "qdisc", "backlog", "sk-backlog", "udp", "rx-udp"]
FIELDS = ["frame.time_epoch", "frame.len", "frame.interface_name", "ip.src", "ip.dst",
          "ipv6.src", "ipv6.dst", "tcp.srcport", "tcp.dstport", "udp.srcport",
          "udp.dstport", "netslice.kind", "netslice.cpu", "netslice.seq", "netslice.conn",
          "netslice.dir", "netslice.flags", "netslice.len", "netslice.tcp_seq",
          "netslice.dev", "netslice.record.region", "netslice.record.us",
          "netslice.record.flags", "netslice.record.count", "netslice.counter",
          "netslice.event", "netslice.event.bytes", "netslice.loss.lost",
          "netslice.loss.first_seq"] + ["netslice.region." + r for r in REGIONS]


def path(name):
    return os.path.join(d, name)


def read(name):
    with open(path(name), encoding="utf-8") as f:
        return f.read()


def tshark(*args):
    """tshark with the dissector (after -G, which must come first): its lines."""
    out = subprocess.run(["tshark"] + list(args) + ["-X", "lua_script:" + lua],
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def frames(pcapng, display_filter=None):
    """The one helper: each frame's FIELDS, every occurrence, as a dict of lists."""
    args = ["-r", path(pcapng), "-T", "fields", "-E", "occurrence=a",
            "-E", "aggregator=|", "-E", "separator=\t"]
    args += ["-Y", display_filter] if display_filter else []
    for f in FIELDS:
        args += ["-e", f]
    rows = []
    for line in tshark(*args):
        cols = line.split("\t")
        rows.append({f: (c.split("|") if c else []) for f, c in zip(FIELDS, cols)})
    return rows


def one(frame, field):
    v = frame[field]
    return v[0] if v else None


def key(x):
    """An item's place in its stream: its ring and sequence."""
    if "netslice.cpu" in x:
        return (int(one(x, "netslice.cpu")), int(one(x, "netslice.seq") or
                                                 one(x, "netslice.loss.first_seq")))
    return (x["cpu"], x.get("seq", x.get("first_seq")))


# What the dissector registered: flag bits and region ids by name (tshark -G),
# so that its names are held against nsdump's too.
FLAG_BITS = {}
for line in tshark("-G", "fields"):
    c = line.split("\t")
    if len(c) > 6 and c[0] == "F" and c[2].startswith(("netslice.flags.", "netslice.record.flags.")):
        FLAG_BITS[(c[2].rsplit(".", 1)[0], c[1])] = int(c[6], 16)
REGION_ID = {}
for line in tshark("-G", "values"):
    c = line.split("\t")
    if len(c) == 4 and c[1] == "netslice.record.region":
        REGION_ID[c[3]] = c[2]


def bits(field, names):
    return sum(FLAG_BITS.get((field, n), 1 << 31) for n in names)


def value(rec):
    """The value nsdump shows for a record: corrected where it corrected."""
    return rec.get("us_corrected", rec["us"])


def dev_path(b):
    return ">".join("if%d@%d/%s" % (x["ifindex"], x["netns"], x["dir"]) for x in b["devices"])


def expected_block(b):
    """What the frame of block @b must hold, field by field."""
    recs = b["records"]
    exp = {
        "netslice.kind": ["1"], "netslice.dir": ["0" if b["dir"] == "tx" else "1"],
        "netslice.flags": ["0x%08x" % bits("netslice.flags", b["flags"])],
        "netslice.len": [str(b["len"])], "netslice.tcp_seq": [str(b["tcp_seq"])],
        "netslice.conn": ["0x%016x" % b["conn"]],
        "netslice.dev": [dev_path(b)] if b["devices"] else [],
        "frame.interface_name": [dev_path(b).split("/")[0] if b["devices"] else
                                 "if%d" % b["ifindex"] if b["ifindex"] else "netslice"],
        "netslice.record.region": [REGION_ID.get(r["region"], "?") for r in recs],
        "netslice.record.flags": ["0x%04x" % bits("netslice.record.flags", r["flags"])
                                  for r in recs],
        "netslice.record.count": [str(c) for r in recs
                                  for c in r.get("count_corrected", r["count"])],
    }
    return exp | expected_headers(b)


def expected_headers(b):
    """The made-up headers: the flow's, or a bare IPv4 header (protocol 253)."""
    v6 = b["family"] == 6
    src, dst = ("ipv6.src", "ipv6.dst") if v6 else ("ip.src", "ip.dst")
    zero = "::" if v6 else "0.0.0.0"
    proto = {6: "tcp", 17: "udp"}.get(b["proto"]) if b["family"] else None
    exp = {src: [b.get("saddr", zero)], dst: [b.get("daddr", zero)],
           "frame.len": [str(max(b["len"], 20 + 20 * v6 + {"tcp": 20, "udp": 8}.get(proto, 0)))]}
    if proto:
        exp.update({proto + ".srcport": [str(b["sport"])], proto + ".dstport": [str(b["dport"])]})
    return exp


def near(got, want, tol):
    """Within @tol, or the 15 digits Lua prints of a large value (an OPEN
    record's ticks, as the VM's capture has)."""
    return len(got) == len(want) and all(abs(float(g) - w) <= max(tol, abs(w) * 1e-14)
                                         for g, w in zip(got, want))


def block_differences(f, b):
    """The terms of frame @f that differ from block @b: [] if none."""
    bad = [(k, f[k], v) for k, v in expected_block(b).items() if f[k] != v]
    if not near(f["netslice.record.us"], [value(r) for r in b["records"]], 0.0011):
        bad.append(("netslice.record.us", f["netslice.record.us"],
                    [value(r) for r in b["records"]]))
    for r in REGIONS:
        want = [value(x) for x in b["records"] if x["region"] == r and "OPEN" not in x["flags"]]
        if not near(f["netslice.region." + r], want, 0.0011):
            bad.append(("netslice.region." + r, f["netslice.region." + r], want))
    ns = int(Decimal(one(f, "frame.time_epoch")) * 1000000000)
    if abs(ns - b["time_ns"]) > 1000:
        bad.append(("frame.time_epoch", one(f, "frame.time_epoch"), b["time_ns"]))
    return bad


def check_blocks(name, pcapng, jsonl):
    """Every block one frame, each frame's fields its block's."""
    blocks = {key(o): o for o in nsdump_json(path(jsonl)) if o["type"] == "block"}
    got = {key(f): f for f in frames(pcapng) if one(f, "netslice.kind") == "1"}
    t.eq(sorted(got), sorted(blocks), name + ": a frame per block, by ring and sequence")
    bad = [(k, block_differences(got[k], b)) for k, b in blocks.items() if k in got]
    bad = [x for x in bad if x[1]]
    t.ok(not bad, name + ": each frame's netslice fields, flow, length and time are its block's "
         "(%d blocks)" % len(blocks), bad[:3])
    return blocks


blocks = check_blocks("views capture", "v.pcapng", "v.jsonl")
check_blocks("devices, raw", "dev.pcapng", "dev.jsonl")
check_blocks("a capture of the VM's kernel", "vm.pcapng", "vm.jsonl")
check_blocks("after nsdump's expression", "f.pcapng", "f.jsonl")

# ---- the files ----
t.eq((read("rc").strip(), read("out")), ("0", ""), "--export pcapng: exit 0, no text on stdout")
names = [line.split("=", 1)[1].strip() for line in subprocess.run(
    ["capinfos", "-I", path("dev.pcapng")], capture_output=True, text=True).stdout.splitlines()
    if line.strip().startswith("Name =")]
want = ["netslice"]
for o in nsdump_json(path("dev.jsonl")):
    want += [n for n in (dev_path({"devices": [x]}).rsplit("/", 1)[0] for x in o.get("devices", []))
             if n not in want]
t.eq(names, want, "capinfos: an interface per device the blocks name, in order, after netslice")

# ---- event records and losses: packets of their own on interface netslice ----
oracle = nsdump_json(path("v.jsonl"))
all_frames = frames("v.pcapng")
events = {key(o): (o["event"], str(o["bytes"])) for o in oracle if o["type"] == "event"}
got = {key(f): (one(f, "netslice.event"), one(f, "netslice.event.bytes"))
       for f in all_frames if one(f, "netslice.kind") == "2"}
t.eq(got, events, "a frame per MAGNeT event record: its type and bytes (%d)" % len(events))
losses = sorted((o["cpu"], o["first_seq"], o["lost"]) for o in oracle if o["type"] == "loss")
got = sorted((int(one(f, "netslice.cpu")), int(one(f, "netslice.loss.first_seq")),
              int(one(f, "netslice.loss.lost")))
             for f in all_frames if one(f, "netslice.kind") == "3")
t.eq(got, losses, "a frame per loss, its count")
t.ok(all(one(f, "frame.interface_name") == "netslice" for f in all_frames
         if one(f, "netslice.kind") in ("2", "3")), "event records and losses on interface netslice")


# ---- display filters: the frames each selects, against nsdump's values ----
def queue_tail(b):
    return [value(r) for r in b["records"] if r["region"] == "queue" and "OPEN" not in r["flags"]]


queues = sorted(v for b in blocks.values() for v in queue_tail(b))
T = queues[len(queues) // 2]
flt = nsdump_json(path("f.jsonl"))
CASES = [
    ("netslice.region.queue > %g" % T, lambda b: any(v > T for v in queue_tail(b))),
    ("netslice.region.rx-nic >= 0.25", lambda b: any(
        value(r) >= 0.25 for r in b["records"] if r["region"] == "rx-nic")),
    ("netslice.flags.retrans == 1", lambda b: "RETRANS" in b["flags"]),
    ("netslice.record.flags.open == 1", lambda b: any("OPEN" in r["flags"] for r in b["records"])),
    ("udp or tcp.port == 7000", lambda b: key(b) in {key(o) for o in flt if o["type"] == "block"}),
]
for expr, pick in CASES:
    got = sorted(key(f) for f in frames("v.pcapng", expr) if one(f, "netslice.kind") == "1")
    want = sorted(k for k, b in blocks.items() if pick(b))
    t.ok(got == want and want and len(want) < len(blocks),
         "-Y '%s' selects the %d blocks nsdump's values say" % (expr, len(want)),
         "got %d %s, want %d %s" % (len(got), got[:5], len(want), want[:5]))


# ---- rewritten by editcap and mergecap ----
def dump(pcapng):
    return sorted(tuple((k, tuple(v)) for k, v in sorted(f.items())) for f in frames(pcapng))


t.eq(dump("edit.pcapng"), dump("v.pcapng"), "editcap's copy: every frame's fields the same")
t.eq(dump("merged.pcapng"), sorted(dump("v.pcapng") + dump("dev.pcapng")),
     "mergecap of the two files: every frame's fields the same")

# ---- the option's errors ----
for rc, err, what, want in (
        ("rc1", "e1", "--export pcapng without a file: exit 2",
         "nsdump: --export pcapng needs a file"),
        ("rc2", "e2", "a file that cannot be made: exit 1, said before anything is read",
         "nsdump: /nonexistent/x.pcapng: No such file or directory"),
        ("rc3", "e3", "a full disk (/dev/full): exit 1, the file said to be cut short",
         "nsdump: /dev/full: No space left on device; the file is cut short")):
    lines = read(err).splitlines()
    t.ok(read(rc).strip() == what.split("exit ")[1][0] and lines and lines[0].startswith(want),
         what, "exit %s, %r" % (read(rc).strip(), lines[:2]))
t.ok(read("rc4").strip() == "0" and "nsdump:" not in read("e4"),
     "a reader gone from the pipe (head -c 100): exit 0, no error", read("e4"))
sys.exit(t.done())
