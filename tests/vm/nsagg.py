#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Aggregate mode from Python (include/netslice.h, ABI 7), for t_serve.sh.

The snapshot's layout, the buckets and the values a block folds are
written out here again from the header's words, not from the module's C,
so that a mistake on either side shows.

    nsagg.py kernel       the module's aggregate mode against the blocks
                          themselves (TAP): argument checks; every block
                          delivered (NSL_AGG_ALL) and the histograms equal,
                          bucket for bucket and sum for sum, to the ones
                          the blocks read make; a fixed threshold and the
                          running p99 deliver only blocks above them;
                          NSIOCGAGG gives /dev/ns-hist's bytes; off
                          delivers every block again
    nsagg.py on [FLAGS]   aggregation on (flags: all, p99, reset), then
                          close: it stays on
    nsagg.py off          aggregation and collection off
    nsagg.py snap         the snapshot of /dev/ns-hist as one JSON line
"""
import ctypes
import errno
import fcntl
import json
import os
import struct
import sys
import time

import nsioctl as io
import nspath
from tap import Tap, note

AGG_DEV = "/dev/ns-hist"
NSL_R_MAX, SPAN, SUB, NBUCKETS = 18, 0, 8, 256
AGG_ON, AGG_P99, AGG_ALL, AGG_RESET, AGG_CORRECTED = 1, 2, 4, 8, 0x100
AGG_MAGIC = 0x4741534E
AGG_FMT = "=IIQ"                            # struct nsl_agg
HEAD_FMT = "=IIQQII" + "IIQ" + "QQ" + "Q" * 7 + "QQQ"
HIST_FMT = "=BBHHHIIQ%dI" % NBUCKETS
READ_FMT = "=QQ"                            # struct nsl_agg_read
HEAD_KEYS = ("magic", "abi_version", "load_id", "since_realtime_ns",
             "tsc_khz", "nhist", "flags", "region", "threshold_ns", "tau_o",
             "tau_b", "blocks", "trunc", "open", "exemplars",
             "threshold_ticks", "emitted", "other")
HIST_KEYS = ("region", "dir", "family", "proto", "group", "ifindex", "netns",
             "sum_ticks")
assert struct.calcsize(HEAD_FMT) == 144 and struct.calcsize(HIST_FMT) == 1048
NSIOCSAGG = io._ioc(io._IOC_WRITE, io.MAGIC, 0x0E, struct.calcsize(AGG_FMT))
NSIOCGAGG = io._ioc(io._IOC_READ | io._IOC_WRITE, io.MAGIC, 0x0F,
                    struct.calcsize(READ_FMT))
U64_MAX = (1 << 64) - 1
NSIOCSRCVBUF = io._ioc(io._IOC_WRITE, io.MAGIC, 0x01, 16)
RF_OPEN, RF_GAP, RF_SHARED = 1, 0x10, 0x20


def bucket(v):
    """Log-linear: 0..15 exact, then 8 buckets to each power of two."""
    if v < 2 * SUB:
        return v
    e = v.bit_length() - 1
    return min(SUB * (e - 2) + ((v >> (e - 3)) & (SUB - 1)), NBUCKETS - 1)


def bucket_low(i):
    return i if i < 2 * SUB else (SUB + i % SUB) << (i // SUB - 1)


def parse(buf):
    """A snapshot's bytes: (head dict, list of histogram dicts)."""
    hs = struct.calcsize(HEAD_FMT)
    v = struct.unpack_from(HEAD_FMT, buf)
    head = dict(zip(HEAD_KEYS, v[:len(HEAD_KEYS)]))
    if head["magic"] != AGG_MAGIC or len(buf) != \
            hs + head["nhist"] * struct.calcsize(HIST_FMT):
        raise SystemExit("snapshot of %d bytes: magic %#x, %d histograms"
                         % (len(buf), head["magic"], head["nhist"]))
    hists = []
    for i in range(head["nhist"]):
        v = struct.unpack_from(HIST_FMT, buf, hs + i * struct.calcsize(HIST_FMT))
        h = dict(zip(HIST_KEYS, v[:len(HIST_KEYS)]))
        h["bucket"] = list(v[len(HIST_KEYS):])
        hists.append(h)
    return head, hists


def snap_dev():
    with open(AGG_DEV, "rb") as f:
        return f.read()


def key(h):
    return (h["region"], h["dir"], h["family"], h["proto"], h["ifindex"],
            h["netns"])


def inside(recs, i, j):
    o, r = recs[i], recs[j]
    if any(recs[k]["depth"] <= o["depth"] for k in range(i + 1, j + 1)):
        return False
    if r["start"] < o["start"]:
        return False
    if o["nmerged"] > 1 and not o["flags"] & RF_GAP:
        return True
    return r["start"] - o["start"] < o["ticks"]


def values(b, tau_o, tau_b):
    """{region: value} a block folds, the span as region 0: from the
    earliest start (signed: it may precede NSI) to the latest end."""
    recs, val, gone = b["records"], {}, set()
    ends = []
    for i, r in enumerate(recs):
        if r["rid"] >= NSL_R_MAX or r["rid"] == SPAN:
            continue
        if r["flags"] & RF_OPEN:
            gone.add(r["rid"])
            continue
        start = r["start"] - (1 << 64 if r["start"] >> 63 else 0)
        ends += [start, start + r["ticks"]]
        if r["flags"] & RF_SHARED:
            continue
        t = r["ticks"]
        if not r["flags"] & RF_GAP:
            k = sum(recs[j]["nmerged"] or 1 for j in range(i + 1, len(recs))
                    if not recs[j]["flags"] & (RF_OPEN | RF_GAP)
                    and inside(recs, i, j))
            t = max(t - (r["nmerged"] or 1) * tau_o - k * tau_b, 0)
        val[r["rid"]] = val.get(r["rid"], 0) + t
    for g in gone:
        val.pop(g, None)
    if ends:
        val[SPAN] = max(ends) - min(ends)
    return val


def block_key(b):
    netns = 0
    for d in b["devs"]:
        if d["ifindex"] == b["ifindex"]:
            netns = d["netns"]
    return (b["dir"], b["family"], b["proto"], b["ifindex"], netns)


def fold(blocks, tau_o, tau_b):
    """The histograms @blocks make, keyed as key() keys the kernel's."""
    hists = {}
    for b in blocks:
        d, fam, proto, ifindex, netns = block_key(b)
        for r, v in values(b, tau_o, tau_b).items():
            h = hists.setdefault((r, d, fam, proto, ifindex, netns),
                                 {"bucket": [0] * NBUCKETS, "sum_ticks": 0})
            h["bucket"][bucket(v)] += 1
            h["sum_ticks"] += v
    return hists


def set_agg(fd, flags, region=0, threshold_ns=0):
    arg = bytearray(struct.pack(AGG_FMT, flags, region, threshold_ns))
    return io.ioctl_errno(fd, NSIOCSAGG, arg)


def set_state(fd, on):
    fcntl.ioctl(fd, io.NSIOCSSTATE,
                bytearray(struct.pack(io.STATE_FMT, on, 0)), True)


def read_all(fd, out):
    """Every block @fd has now into @out; returns the blocks lost."""
    lost = 0
    while True:
        try:
            buf = os.read(fd, 1 << 20)
        except BlockingIOError:
            return lost
        pos = 0
        while pos + 8 <= len(buf):
            kind, size, _ = struct.unpack_from("=HHI", buf, pos)
            if kind in (io.NSL_ITEM_BLOCK, io.NSL_ITEM_CBLOCK):
                out.append(nspath.decode_block(kind, buf[pos:pos + size]))
            elif kind == io.NSL_ITEM_LOSS:
                lost += struct.unpack_from("=Q", buf, pos + 8)[0]
            pos += size


def traffic_round(fd, secs):
    """Collection on for @secs of loopback writes, then off and drained:
    (blocks read, lost, blocks the core emitted meanwhile)."""
    e0 = io.get_info(fd)["emitted"]
    set_state(fd, 1)
    blocks = []
    end = time.time() + secs
    lost = 0
    while time.time() < end:
        io.loopback_tcp(0.1)
        lost += read_all(fd, blocks)
    e1 = io.collect_off_drained(fd)
    lost += read_all(fd, blocks)
    return blocks, lost, e1 - e0


def check_args(fd, t):
    cases = (("unknown flag", (0x10, 0, 0), errno.EINVAL),
             ("region 18", (AGG_ON, NSL_R_MAX, 0), errno.EINVAL),
             ("threshold past 2^64 ticks", (AGG_ON, 0, U64_MAX), errno.ERANGE))
    for what, args, want in cases:
        t.eq(set_agg(fd, *args), want, "NSIOCSAGG %s" % what)
    rd = bytearray(struct.pack(READ_FMT, 0, 8))
    t.eq(io.ioctl_errno(fd, NSIOCGAGG, rd), errno.ENOSPC,
         "NSIOCGAGG into 8 bytes: ENOSPC")
    t.eq(struct.unpack(READ_FMT, rd)[1], 144, "... and says 144 are needed")
    rd = bytearray(struct.pack(READ_FMT, 8, 1 << 20))
    t.eq(io.ioctl_errno(fd, NSIOCGAGG, rd), errno.EFAULT,
         "NSIOCGAGG to a bad pointer: EFAULT")


def same_hists(t, kernel, mine, what):
    got = {key(h): h for h in kernel}
    diff = [k for k in set(got) | set(mine)
            if k not in got or k not in mine or
            got[k]["bucket"] != mine[k]["bucket"] or
            got[k]["sum_ticks"] != mine[k]["sum_ticks"]]
    detail = []
    for k in sorted(diff)[:4]:
        g = got.get(k, {"bucket": [0] * NBUCKETS, "sum_ticks": 0})
        m = mine.get(k, {"bucket": [0] * NBUCKETS, "sum_ticks": 0})
        detail.append("%s: sum %d, blocks say %d; buckets (i, kernel, "
                      "blocks) %s" % (k, g["sum_ticks"], m["sum_ticks"],
                      [(i, x, y) for i, (x, y) in
                       enumerate(zip(g["bucket"], m["bucket"])) if x != y]))
    t.ok(not diff and got, "%s: %d histograms, every bucket and sum equal "
         "to the blocks read" % (what, len(got)), "\n".join(detail))


def check_all(fd, t):
    """Every block delivered: the kernel's histograms are the blocks'."""
    io.collect_off_drained(fd)
    rb = bytearray(struct.pack("=QII", io.get_info(fd)["ring_max"], 0, 0))
    fcntl.ioctl(fd, NSIOCSRCVBUF, rb, True)
    t.eq(set_agg(fd, AGG_ON | AGG_ALL | AGG_RESET), 0, "NSIOCSAGG on, all")
    blocks, lost, emitted = traffic_round(fd, 3)
    head, hists = parse(snap_dev())
    note("%d blocks read, %d lost, %d emitted; tau_o %d tau_b %d" %
            (len(blocks), lost, emitted, head["tau_o"], head["tau_b"]))
    t.ok(head["flags"] & AGG_CORRECTED and head["tau_o"] > 0,
         "the histograms are corrected (tau_o %d ticks)" % head["tau_o"])
    t.eq(lost, 0, "all: no block lost")
    t.eq(head["blocks"], emitted, "blocks folded == blocks emitted")
    t.eq(head["exemplars"], len(blocks) + lost, "exemplars == blocks read")
    span = sum(sum(h["bucket"]) for h in hists if h["region"] == SPAN)
    t.eq(span, emitted, "the span histograms count every block")
    same_hists(t, hists, fold(blocks, head["tau_o"], head["tau_b"]), "all")
    return head, hists


def median_ticks(hists, region):
    b = [0] * NBUCKETS
    for h in hists:
        if h["region"] == region:
            b = [x + y for x, y in zip(b, h["bucket"])]
    half, seen = sum(b) / 2, 0
    for i, n in enumerate(b):
        seen += n
        if seen >= half:
            return bucket_low(i)
    return 0


def check_threshold(fd, t, head0, hists0):
    """Above a fixed threshold on the span: those blocks and no other."""
    ticks = median_ticks(hists0, SPAN)
    ns = ticks * 1000000 // head0["tsc_khz"] + 1
    thr = ns * head0["tsc_khz"] // 1000000
    t.eq(set_agg(fd, AGG_ON | AGG_RESET, SPAN, ns), 0,
         "NSIOCSAGG on, span over %d ns" % ns)
    blocks, lost, emitted = traffic_round(fd, 3)
    head, hists = parse(snap_dev())
    t.eq(head["threshold_ticks"], thr, "threshold %d ns is %d ticks" %
         (ns, thr))
    vals = [values(b, head["tau_o"], head["tau_b"]).get(SPAN, 0)
            for b in blocks]
    t.ok(all(v > thr for v in vals) and lost == 0,
         "every one of %d blocks delivered is over it (%d lost)" %
         (len(vals), lost))
    b = [0] * NBUCKETS
    for h in hists:
        if h["region"] == SPAN:
            b = [x + y for x, y in zip(b, h["bucket"])]
    at = bucket(thr)
    lo, hi = sum(b[at + 1:]), sum(b[at:])
    t.ok(lo <= len(vals) <= hi, "and as many as the histogram holds over "
         "it: %d <= %d <= %d" % (lo, len(vals), hi))
    t.eq(head["exemplars"], len(vals), "exemplars == blocks read")


def check_p99(fd, t):
    t.eq(set_agg(fd, AGG_ON | AGG_P99 | AGG_RESET, SPAN), 0,
         "NSIOCSAGG on, span over the running p99")
    blocks, lost, emitted = traffic_round(fd, 4)
    head, hists = parse(snap_dev())
    frac = len(blocks) / max(head["blocks"], 1)
    note("p99: %d of %d blocks delivered, threshold %d ticks" %
            (len(blocks), head["blocks"], head["threshold_ticks"]))
    t.ok(head["threshold_ticks"] < U64_MAX and 0 < frac <= 0.05,
         "p99: a threshold set, %.2f%% of the blocks delivered" % (100 * frac))
    vals = [values(b, head["tau_o"], head["tau_b"]).get(SPAN, 0)
            for b in blocks]
    floor = median_ticks(hists, SPAN)
    t.ok(all(v > floor for v in vals), "p99: each one over the median "
         "(%d ticks): %s" % (floor, sorted(vals)[:3]))


def check_read_same(fd, t):
    rd_buf = bytearray(1 << 20)
    addr = buf_addr(rd_buf)
    rd = bytearray(struct.pack(READ_FMT, addr, len(rd_buf)))
    t.eq(io.ioctl_errno(fd, NSIOCGAGG, rd), 0, "NSIOCGAGG")
    n = struct.unpack(READ_FMT, rd)[1]
    t.ok(bytes(rd_buf[:n]) == snap_dev(), "NSIOCGAGG's %d bytes are "
         "/dev/ns-hist's, collection off" % n)


def buf_addr(buf):
    return ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))


def check_off(fd, t):
    t.eq(set_agg(fd, 0), 0, "NSIOCSAGG off")
    head, hists = parse(snap_dev())
    t.ok(head["flags"] == 0 and not hists, "off: no histograms")
    blocks, lost, emitted = traffic_round(fd, 1)
    t.eq(len(blocks) + lost, emitted, "off: every block is read again")


def cmd_kernel(argv):
    t = Tap()
    fd = os.open(io.DEV, os.O_RDONLY | os.O_NONBLOCK)
    check_args(fd, t)
    head, hists = check_all(fd, t)
    check_threshold(fd, t, head, hists)
    check_p99(fd, t)
    check_read_same(fd, t)
    check_off(fd, t)
    os.close(fd)
    return t.done()


def cmd_on(argv):
    names = {"all": AGG_ALL, "p99": AGG_P99, "reset": AGG_RESET}
    flags = AGG_ON
    for a in argv:
        flags |= names[a]
    fd = os.open(io.DEV, os.O_RDONLY)
    ret = set_agg(fd, flags)
    set_state(fd, 1)
    os.close(fd)
    return 1 if ret else 0


def cmd_off(argv):
    fd = os.open(io.DEV, os.O_RDONLY)
    ret = set_agg(fd, 0)
    set_state(fd, 0)
    os.close(fd)
    return 1 if ret else 0


def cmd_snap(argv):
    head, hists = parse(snap_dev())
    print(json.dumps({"head": head, "hists": hists}))
    return 0


def main(argv):
    cmds = {"kernel": cmd_kernel, "on": cmd_on, "off": cmd_off,
            "snap": cmd_snap}
    if len(argv) < 2 or argv[1] not in cmds:
        sys.exit(__doc__)
    return cmds[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
