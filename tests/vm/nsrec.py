#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""NSIOCSRECORDS on the real /dev/ns, for tests/vm/t_magnet.sh.

    nsrec.py einval
        bad arguments are refused with EINVAL, good ones accepted.
    nsrec.py toggle --count N [--port P] --raw OUT.bin -- CMD...
        read /dev/ns, start CMD (the traffic) and, once blocks (of port P)
        flow, switch event records on (everything) and off N times; CMD
        must outlast that and exit 0; the items read go to OUT.bin.
    nsrec.py stream --raw OUT.bin [--template T.ns --ns OUT.ns]
        check those items one by one (kinds, sizes, per-CPU seq without a
        gap that no loss item explains, event types, flags and padding);
        with --template (any nsdump -w file of this boot) also write them
        as an nsdump trace file, for nsdump -r.  Runs on the host (host_run):
        decoding a few hundred thousand blocks in Python took 40 s under TCG.

Output: "ok ..." / "fail ..." / "# ..." lines; exit 0 when all held.
"""
import argparse
import errno
import fcntl
import os
import struct
import subprocess
import sys
import threading
import time

import nspath
import nstrace
from tap import check, failed

DEV = os.environ.get("NSDUMP_DEV", "/dev/ns")

# include/netslice.h
NSL_IOC_MAGIC = 0xB9
NSL_REC_ON, NSL_REC_TCP, NSL_REC_IP, NSL_REC_ADDR = 1, 2, 4, 8
NSL_REC_ALL = 0xF
NSL_REC_FLOWADDR = 0x10
NSL_ITEM_BLOCK, NSL_ITEM_LOSS, NSL_ITEM_EVENT, NSL_ITEM_SYSINFO = 1, 2, 3, 4
NSL_ITEM_CBLOCK = 5		# blocks, compact, since ABI 4
NSL_ABI_VERSION = 5
NSL_EV_MAX = 11
NSL_EVF_ALL = 0x1F
NSL_MAX_RECORDS = 16
EVENT_SIZE = 8 + 8 * 3 + 4 * 4 + (12 * 4 + 2 * 2 + 2 + 2) + 16 + 32	# ABI 4: saddr6, daddr6
SYSINFO_SIZE = 8 + 4 * 4 + 8 * 2
LOSS_SIZE = 8 + 8 * 3


def _IOC(d, t, nr, size):
    return (d << 30) | (size << 16) | (t << 8) | nr


def _IOW(t, nr, size):
    return _IOC(1, t, nr, size)


NSIOCSSTATE = _IOW(NSL_IOC_MAGIC, 0x02, 8)	# struct nsl_state
NSIOCSRECORDS = _IOW(NSL_IOC_MAGIC, 0x09, 8)	# struct nsl_record_opts


def set_records(fd, flags, pad=0):
    """0 or the errno of NSIOCSRECORDS."""
    try:
        fcntl.ioctl(fd, NSIOCSRECORDS, struct.pack("=II", flags, pad))
        return 0
    except OSError as e:
        return e.errno


def einval(a):
    fd = os.open(DEV, os.O_RDONLY)
    print("# NSIOCSRECORDS = 0x%08x" % NSIOCSRECORDS)
    bad = [(0x20, 0, "unknown flag 0x20"),
           (0x80000000, 0, "unknown flag 0x80000000"),
           (NSL_REC_ALL | 0x100, 0, "known flags plus unknown 0x100"),
           (NSL_REC_ON, 1, "pad 1"),
           (0, 0xFFFFFFFF, "flags 0, pad 0xffffffff"),
           (NSL_REC_TCP, 0, "TCP without ON"),
           (NSL_REC_IP, 0, "IP without ON"),
           (NSL_REC_ADDR, 0, "ADDR without ON"),
           (NSL_REC_TCP | NSL_REC_IP | NSL_REC_ADDR, 0, "all state without ON"),
           (NSL_REC_FLOWADDR | NSL_REC_TCP, 0, "TCP state with block addresses, without ON")]
    for flags, pad, what in bad:
        e = set_records(fd, flags, pad)
        check(e == errno.EINVAL, "NSIOCSRECORDS %s (flags 0x%x pad 0x%x): %s"
              % (what, flags, pad, errno.errorcode.get(e, e) if e else "accepted"))
    for flags in (NSL_REC_ON, NSL_REC_ON | NSL_REC_TCP, NSL_REC_ALL,
                  NSL_REC_FLOWADDR, NSL_REC_ALL | NSL_REC_FLOWADDR, 0):
        e = set_records(fd, flags)
        check(e == 0, "NSIOCSRECORDS flags 0x%x accepted (%s)"
              % (flags, os.strerror(e) if e else "ok"))
    # The size is part of the command: a wrong one is another command.
    try:
        fcntl.ioctl(fd, _IOW(NSL_IOC_MAGIC, 0x09, 16), b"\1" + b"\0" * 15)
        e = 0
    except OSError as x:
        e = x.errno
    check(e == errno.ENOTTY, "NSIOCSRECORDS encoded with size 16: ENOTTY (%s)"
          % (errno.errorcode.get(e, e) if e else "accepted"))
    os.close(fd)
    return 1 if failed() else 0


class Reader(threading.Thread):
    def __init__(self, fd):
        super().__init__(daemon=True)
        self.fd = fd
        self.chunks = []
        self.stop = False
        self.err = None

    def run(self):
        try:
            while True:
                try:
                    d = os.read(self.fd, 1 << 20)
                except BlockingIOError:
                    if self.stop:
                        return
                    time.sleep(0.005)
                    continue
                if d:
                    self.chunks.append(d)
                elif self.stop:
                    return
                else:
                    time.sleep(0.005)
        except OSError as e:
            self.err = e


def parse(data):
    """Checks every item; returns (items, problems, counts)."""
    probs = []
    items = []
    off = 0
    nextseq = {}
    cnt = {"block": 0, "event": 0, "loss": 0, "lost": 0, "sysinfo": 0,
           "event_types": {}}
    while off < len(data):
        if len(data) - off < 8:
            probs.append("%d trailing bytes" % (len(data) - off))
            break
        kind, size, cpu = struct.unpack_from("=HHI", data, off)
        if size < 8 or size % 8 or off + size > len(data):
            probs.append("item at %d: kind %d size %d" % (off, kind, size))
            break
        it = data[off:off + size]
        items.append(it)
        off += size
        if kind == NSL_ITEM_CBLOCK:
            seq = struct.unpack_from("=Q", it, 8)[0]
            try:
                nspath.decode_cblock(it)
            except SystemExit as e:
                probs.append("block seq %d: %s" % (seq, e))
            cnt["block"] += 1
        elif kind == NSL_ITEM_BLOCK:
            probs.append("a whole block (kind 1) from an ABI %d module"
                         % NSL_ABI_VERSION)
            seq = struct.unpack_from("=Q", it, 8)[0]
            cnt["block"] += 1
        elif kind == NSL_ITEM_EVENT:
            seq = struct.unpack_from("=Q", it, 8)[0]
            typ, nbytes, flags, pad = struct.unpack_from("=IIII", it, 32)
            if size != EVENT_SIZE or not 1 <= typ < NSL_EV_MAX or \
                    flags & ~NSL_EVF_ALL or pad:
                probs.append("event seq %d: size %d type %d flags 0x%x pad %d"
                             % (seq, size, typ, flags, pad))
            cnt["event"] += 1
            cnt["event_types"][typ] = cnt["event_types"].get(typ, 0) + 1
        elif kind == NSL_ITEM_LOSS:
            lost, first = struct.unpack_from("=QQ", it, 8)
            if size != LOSS_SIZE or lost == 0:
                probs.append("loss item size %d lost %d" % (size, lost))
            exp = nextseq.get(cpu)
            if exp is not None and first != exp:
                probs.append("cpu %d: loss starts at seq %d, expected %d"
                             % (cpu, first, exp))
            nextseq[cpu] = first + lost
            cnt["loss"] += 1
            cnt["lost"] += lost
            continue
        elif kind == NSL_ITEM_SYSINFO:
            if size != SYSINFO_SIZE or cnt["block"] + cnt["event"]:
                probs.append("sysinfo size %d at item %d" % (size, len(items)))
            cnt["sysinfo"] += 1
            continue
        else:
            probs.append("unknown kind %d size %d" % (kind, size))
            continue
        exp = nextseq.get(cpu, 0)
        if seq != exp:
            probs.append("cpu %d: seq %d, expected %d" % (cpu, seq, exp))
        nextseq[cpu] = seq + 1
    return items, probs, cnt


def nsfile(template, items, cnt, out):
    """An nsdump trace: @template's header records, then @items."""
    with open(template, "rb") as f:
        t = f.read()
    head = []
    try:
        for off, kind, payload in nstrace.records(t):
            if kind == nstrace.DATA:	# the items begin
                break
            head.append(nstrace.record(kind, payload))
    except nstrace.TraceError as e:
        return "template: %s" % e

    out_b = [t[:nstrace.HEADER]] + head
    ndata, buf = 0, b""
    for it in items:
        if len(buf) + len(it) > 65536:
            out_b.append(nstrace.record(nstrace.DATA, buf))
            ndata += 1
            buf = b""
        buf += it
    if buf:
        out_b.append(nstrace.record(nstrace.DATA, buf))
        ndata += 1
    vals = [("blocks", cnt["block"]), ("lost", cnt["lost"]),
            ("loss_items", cnt["loss"]), ("data_records", ndata),
            ("event_records", cnt["event"])]
    out_b.append(nstrace.record(nstrace.TRAILER,
                                b"".join(struct.pack("=24sQ", n.encode(), v)
                                         for n, v in vals)))
    with open(out, "wb") as f:
        f.write(b"".join(out_b))
    return None


class FlowWatch:
    """Whether a block of a flow (a TCP or UDP port) has been read yet.

    Walks the item headers once, from where the last call stopped, and
    decodes only a block's fixed header: the reader may hold megabytes by
    then, and decoding all of it under TCG takes seconds (once, the
    traffic was over before the switching began)."""

    def __init__(self, rd, port):
        self.rd, self.port = rd, port
        self.data, self.nchunks, self.off = b"", 0, 0

    def seen(self):
        chunks = self.rd.chunks[self.nchunks:]
        self.nchunks += len(chunks)
        self.data = self.data[self.off:] + b"".join(chunks)
        self.off = 0
        while len(self.data) - self.off >= nspath.CBLOCK_HDR:
            kind, size = struct.unpack_from("=HH", self.data, self.off)
            if size < 8 or size % 8:
                return True	# garbled: check() says so, not this
            if self.off + size > len(self.data):
                break
            if kind == NSL_ITEM_CBLOCK:
                b = dict(zip(nspath.CBLOCK_KEYS, struct.unpack_from(
                    nspath.CBLOCK_FMT, self.data, self.off)))
                if self.port is None or \
                        self.port in (b["sport"], b["dport"]):
                    return True
            self.off += size
        return False


def toggle(a):
    """The live half, in the guest: read, switch, keep the raw stream."""
    fd = os.open(DEV, os.O_RDONLY | os.O_NONBLOCK)
    # Collection may have been left off (by nsdump's exit, say).
    fcntl.ioctl(fd, NSIOCSSTATE, struct.pack("=II", 1, 0))
    rd = Reader(fd)
    rd.start()
    # The traffic starts once the device is read, and records are switched
    # only while its own blocks flow (--port): a lossy emulated link can
    # hold a connection in SYN or RTO backoff for seconds, Python starts
    # slowly under TCG, and other blocks may be in flight already.
    traffic = subprocess.Popen(a.traffic, stdout=subprocess.DEVNULL)
    watch = FlowWatch(rd, a.port)
    t0 = time.monotonic()
    flowing = watch.seen()
    while not flowing and time.monotonic() - t0 < a.wait_s and \
            traffic.poll() is None:
        time.sleep(0.05)
        flowing = watch.seen()
    waited = time.monotonic() - t0
    if not check(flowing, "blocks of %s flow %.2f s after the traffic "
                 "started (limit %g s)"
                 % ("port %d" % a.port if a.port else "any flow", waited,
                    a.wait_s)):
        traffic.kill()
        traffic.wait()
        rd.stop = True
        rd.join(10)
        return 1
    errs = 0
    t0 = time.monotonic()
    for i in range(a.count):
        errs += set_records(fd, NSL_REC_ALL) != 0
        time.sleep(a.on_ms / 1000.0)
        errs += set_records(fd, 0) != 0
        time.sleep(a.off_ms / 1000.0)
    dt = time.monotonic() - t0
    check(traffic.poll() is None,
          "the traffic outlasted the switching (%.2f s, begun %.2f s after "
          "it started)" % (dt, waited))
    try:
        st = traffic.wait(60)
    except subprocess.TimeoutExpired:
        traffic.kill()
        st = "killed after 60 s"
    check(st == 0, "%s ran through the switching (exit %s)"
          % (os.path.basename(a.traffic[0]), st))
    time.sleep(0.5)		# the last items, then stop reading
    rd.stop = True
    rd.join(10)
    os.close(fd)
    check(errs == 0, "%d NSIOCSRECORDS on/off pairs in %.2f s, %d refused"
          % (a.count, dt, errs))
    check(rd.err is None, "read() of /dev/ns: %s" % (rd.err or "no error"))
    with open(a.raw, "wb") as f:
        f.write(b"".join(rd.chunks))
    return 1 if failed() else 0


def stream(a):
    """The other half, natively on the host: the stream item by item."""
    with open(a.raw, "rb") as f:
        data = f.read()
    items, probs, cnt = parse(data)
    print("# %d bytes read: %d blocks, %d event records %s, %d loss items "
          "(%d items lost), %d sysinfo" % (len(data), cnt["block"], cnt["event"],
                                           sorted(cnt["event_types"].items()),
                                           cnt["loss"], cnt["lost"], cnt["sysinfo"]))
    for p in probs[:10]:
        print("# " + p)
    check(not probs, "every item well formed, per-CPU seqs without an "
          "unexplained gap (%d problems)" % len(probs))
    check(cnt["sysinfo"] == 1, "one SYSINFO, first")
    check(cnt["event"] > 0 and cnt["block"] > 0,
          "blocks (%d) and event records (%d) both arrived"
          % (cnt["block"], cnt["event"]))
    if a.template:
        why = nsfile(a.template, items, cnt, a.ns)
        check(why is None, "trace file written from the stream (%s)"
              % (why or os.path.basename(a.ns)))
        with open(a.ns + ".counts", "w") as f:
            f.write("%d %d %d\n" % (cnt["block"], cnt["event"], cnt["lost"]))
    return 1 if failed() else 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("einval")
    t = sub.add_parser("toggle")
    t.add_argument("--count", type=int, default=100)
    t.add_argument("--on-ms", type=float, default=10)
    t.add_argument("--off-ms", type=float, default=10)
    t.add_argument("--wait-s", type=float, default=20)
    t.add_argument("--port", type=int,
                   help="switch once a block of this port is read")
    t.add_argument("--raw", required=True)
    t.add_argument("traffic", nargs="+",
                   help="the traffic, started once the device is read")
    c = sub.add_parser("stream")
    c.add_argument("--raw", required=True)
    c.add_argument("--template")
    c.add_argument("--ns")
    a = p.parse_args()
    return {"einval": einval, "toggle": toggle, "stream": stream}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
