#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""/dev/ns from Python, for the in-VM tests t_counters.sh and t_calib.sh.

The structs and ioctl numbers are written out here from include/netslice.h
(the _IOC encoding of asm-generic/ioctl.h), independently of the C code
under test, so a layout or numbering mistake on either side shows.

    nsioctl.py einval              bad NSIOCSEVENT/NSIOCSEMODE -> EINVAL (TAP)
    nsioctl.py calib [--reps N] [--event NAME]
                                   NSIOCGCALIB on every CPU, one JSON line each
    nsioctl.py switch N [--secs S] switch events N rounds under traffic while
                                   reading; checks every block read (TAP)
    nsioctl.py faultsend PORT PAGES SENDS
                                   send PAGES fresh (never touched) pages per
                                   send() SENDS times to a sink on 127.0.0.1,
                                   so the kernel's copy in tcp_sendmsg takes
                                   exactly one page fault per page
    nsioctl.py sink PORT           read and discard, one client, then exit
    nsioctl.py filter              NSIOCSFILTER's argument checks, then a
                                   program that refuses everything: under
                                   traffic no block is read and
                                   NSIOCGFILTERED counts them; the same at
                                   NSI (NSL_FILTER_FLOW): no block made (TAP)
    nsioctl.py sample N            NSIOCSSAMPLE's argument checks, then N
                                   datagrams over loopback sampled 1 in 4:
                                   every one decided once, a block for
                                   each taken and no other; then 1 in 2
                                   flows: each flow whole or absent (TAP)
    nsioctl.py emitted             the blocks the core has handed over

Exit 0 when every check holds, 1 otherwise.
"""
import ctypes
import errno
import fcntl
import json
import math
import mmap
import os
import select
import signal
import socket
import struct
import sys
import time

import nspath
from tap import Tap

DEV = os.environ.get("NSDUMP_DEV", "/dev/ns")

# asm-generic/ioctl.h: dir(2) size(14) type(8) nr(8), x86 numbering.
_IOC_WRITE, _IOC_READ = 1, 2


def _ioc(d, typ, nr, size):
    return (d << 30) | (size << 16) | (typ << 8) | nr


MAGIC = 0xB9
NSL_MAX_EVENTS = 4
NSL_MAX_RECORDS = 16
NSL_C_MAX = 6

# struct nsl_event: u32 type, u32 flags, u64 config, config1, config2
EVENT_FMT = "=IIQQQ"
# struct nsl_events: u32 nevents, u32 flags, struct nsl_event ev[4]
EVENTS_FMT = "=II" + EVENT_FMT[1:] * NSL_MAX_EVENTS
MODE_FMT = "=II"            # struct nsl_mode
STATE_FMT = "=II"           # struct nsl_state
# struct nsl_info: 6 x u32, 6 x u64
INFO_FMT = "=IIIIIIQQQQQQ"
# struct nsl_cost: u64 ticks, u64 min, u32 cv_ppm, u32 samples, u64 count[4]
COST_FMT = "QQII" + "Q" * NSL_MAX_EVENTS
CALIB_FMT = "=IIII" + COST_FMT * NSL_C_MAX

FILTER_FMT = "=IIQ"          # struct nsl_filter: u32 len, u32 flags, u64 insns
COUNT_FMT = "=Q"             # struct nsl_count
SAMPLE_FMT = "=IIQQ"         # struct nsl_sample: rate, flags, taken, skipped

SIZES = {name: struct.calcsize(fmt) for name, fmt in (
    ("events", EVENTS_FMT), ("mode", MODE_FMT), ("state", STATE_FMT),
    ("info", INFO_FMT), ("calib", CALIB_FMT), ("filter", FILTER_FMT),
    ("count", COUNT_FMT), ("sample", SAMPLE_FMT))}
# The header says every struct is a multiple of 8 bytes; these are its sizes.
assert SIZES == {"events": 136, "mode": 8, "state": 8, "info": 72,
                 "calib": 352, "filter": 16, "count": 8, "sample": 24}, SIZES

NSIOCSSTATE = _ioc(_IOC_WRITE, MAGIC, 0x02, SIZES["state"])
NSIOCSEVENT = _ioc(_IOC_WRITE, MAGIC, 0x03, SIZES["events"])
NSIOCSEMODE = _ioc(_IOC_WRITE, MAGIC, 0x04, SIZES["mode"])
NSIOCGINFO = _ioc(_IOC_READ, MAGIC, 0x07, SIZES["info"])
NSIOCGCALIB = _ioc(_IOC_READ | _IOC_WRITE, MAGIC, 0x08, SIZES["calib"])
NSIOCSFILTER = _ioc(_IOC_WRITE, MAGIC, 0x0a, SIZES["filter"])
NSIOCGFILTERED = _ioc(_IOC_READ, MAGIC, 0x0b, SIZES["count"])
NSIOCSSAMPLE = _ioc(_IOC_WRITE, MAGIC, 0x0c, SIZES["sample"])
NSIOCGSAMPLE = _ioc(_IOC_READ, MAGIC, 0x0d, SIZES["sample"])
NSL_FILTER_MAX_INSNS = 4096
NSL_FILTER_FLOW = 0x1
NSL_SAMPLE_FLOWS, NSL_SAMPLE_RATE_MAX = 0x1, 1 << 24

# linux/filter.h, linux/bpf_common.h: classic BPF
BPF_LD, BPF_LDX, BPF_RET, BPF_JMP = 0x00, 0x01, 0x06, 0x05
BPF_W, BPF_H, BPF_B = 0x00, 0x08, 0x10
BPF_ABS, BPF_IND, BPF_MSH, BPF_K, BPF_JA = 0x20, 0x40, 0xa0, 0x00, 0x00
SKF_AD_OFF, SKF_AD_PROTOCOL, SKF_AD_IFINDEX = -0x1000, 0, 8
SKF_NET_OFF, SKF_LL_OFF = -0x100000, -0x200000

# perf_event.h
PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE, PERF_TYPE_TRACEPOINT = 0, 1, 2
PERF_TYPE_BREAKPOINT = 5
SW = {"cpu-clock": 0, "task-clock": 1, "page-faults": 2,
      "context-switches": 3, "cpu-migrations": 4}
PERF_COUNT_SW_MAX = 12      # v6.12: ... CGROUP_SWITCHES = 11, MAX

NSL_MODE_DURATION, NSL_MODE_COUNT = 0, 1
BF_RX = 0x0020              # NSL_BF_RX: carries receive-path regions
NSL_RF_OPEN, NSL_RF_INVALID = 0x1, 0x2
NSL_ITEM_BLOCK, NSL_ITEM_LOSS, NSL_ITEM_EVENT, NSL_ITEM_SYSINFO = 1, 2, 3, 4
NSL_ITEM_CBLOCK = 5		# how an ABI 4 module sends a block
COST_NAMES = ("NSI", "NSS", "NST", "NSE", "NSO", "NSA")

def events_buf(evs, nevents=None, flags=0):
    """evs: list of (type, config[, flags, config1, config2])."""
    vals = [len(evs) if nevents is None else nevents, flags]
    for i in range(NSL_MAX_EVENTS):
        if i < len(evs):
            e = tuple(evs[i]) + (0, 0, 0)
            vals += [e[0], e[2], e[1], e[3], e[4]]
        else:
            vals += [0, 0, 0, 0, 0]
    return bytearray(struct.pack(EVENTS_FMT, *vals))


def ioctl_errno(fd, req, buf):
    try:
        fcntl.ioctl(fd, req, buf, True)
        return 0
    except OSError as e:
        return e.errno


def set_events(fd, names):
    evs = [(PERF_TYPE_SOFTWARE, SW[n]) for n in names]
    err = ioctl_errno(fd, NSIOCSEVENT, events_buf(evs))
    if err:
        return err
    mode = NSL_MODE_COUNT if names else NSL_MODE_DURATION
    return ioctl_errno(fd, NSIOCSEMODE, bytearray(struct.pack(MODE_FMT, mode, 0)))


def get_info(fd):
    buf = bytearray(SIZES["info"])
    fcntl.ioctl(fd, NSIOCGINFO, buf, True)
    v = struct.unpack(INFO_FMT, buf)
    keys = ("abi_version", "tsc_khz", "block_size", "ncpus", "max_records",
            "max_events", "ring_bytes", "ring_max", "ref_tsc",
            "ref_realtime_ns", "emitted", "nomem")
    return dict(zip(keys, v))


# ---- einval ----

def cmd_einval(argv):
    tap = Tap()
    fd = os.open(DEV, os.O_RDONLY)
    print("# ioctl numbers: NSIOCSEVENT %#x NSIOCSEMODE %#x NSIOCGCALIB %#x"
          % (NSIOCSEVENT, NSIOCSEMODE, NSIOCGCALIB))
    cc = (PERF_TYPE_SOFTWARE, SW["cpu-clock"])
    cases = [
        ("nevents 5", events_buf([cc] * 4, nevents=5)),
        ("nevents 0xffffffff", events_buf([], nevents=0xffffffff)),
        ("nsl_events.flags 1", events_buf([cc], flags=1)),
        ("nsl_events.flags 0x80000000", events_buf([cc], flags=0x80000000)),
        ("ev[0].flags 1", events_buf([(PERF_TYPE_SOFTWARE, 0, 1)])),
        ("unused ev[1] non-zero type (nevents 1)",
         events_buf([cc, (PERF_TYPE_SOFTWARE, 0)], nevents=1)),
        ("unused ev[3] non-zero config2 (nevents 1)",
         events_buf([cc, (0, 0), (0, 0), (0, 0, 0, 0, 1)], nevents=1)),
        ("unused ev[0] non-zero config (nevents 0)",
         events_buf([(0, 1)], nevents=0)),
        ("type 2 (tracepoint)", events_buf([(PERF_TYPE_TRACEPOINT, 1)])),
        ("type 5 (breakpoint)", events_buf([(PERF_TYPE_BREAKPOINT, 0)])),
        ("type 2 as the second event", events_buf([cc, (PERF_TYPE_TRACEPOINT, 0)])),
        ("software config %d (PERF_COUNT_SW_MAX)" % PERF_COUNT_SW_MAX,
         events_buf([(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_MAX)])),
        ("software config 1<<32", events_buf([(PERF_TYPE_SOFTWARE, 1 << 32)])),
        ("software config 9 (dummy)", events_buf([(PERF_TYPE_SOFTWARE, 9)])),
        ("software config 10 (bpf-output)", events_buf([(PERF_TYPE_SOFTWARE, 10)])),
    ]
    for what, buf in cases:
        err = ioctl_errno(fd, NSIOCSEVENT, buf)
        tap.ok(err == errno.EINVAL, "NSIOCSEVENT %s -> EINVAL (got %s)"
            % (what, errno.errorcode.get(err, err)))
    for mode, flags, what in ((7, 0, "mode 7"), (2, 0, "mode 2"),
                              (0xffffffff, 0, "mode 0xffffffff"),
                              (1, 1, "flags 1"), (0, 0x100, "flags 0x100")):
        err = ioctl_errno(fd, NSIOCSEMODE,
                          bytearray(struct.pack(MODE_FMT, mode, flags)))
        tap.ok(err == errno.EINVAL, "NSIOCSEMODE %s -> EINVAL (got %s)"
            % (what, errno.errorcode.get(err, err)))
    # The good ones still work after all that, and are undone.
    for names in (["cpu-clock"], ["page-faults", "context-switches"],
                  ["cpu-clock", "page-faults", "context-switches",
                   "cpu-migrations"], []):
        err = set_events(fd, names)
        tap.ok(err == 0, "NSIOCSEVENT+NSIOCSEMODE %s accepted (got %s)"
            % (",".join(names) or "none", errno.errorcode.get(err, err)))
    # A hardware event where no PMU takes it: ENODEV (perf's ENOENT).
    if not os.path.isdir("/sys/bus/event_source/devices/cpu"):
        err = ioctl_errno(fd, NSIOCSEVENT,
                          events_buf([(PERF_TYPE_HARDWARE, 0)]))
        tap.ok(err == errno.ENODEV, "NSIOCSEVENT cycles without a PMU -> ENODEV (got %s)"
            % errno.errorcode.get(err, err))
        # A failed set leaves the counters as they were (none): blocks keep
        # nevents 0, which the caller checks by capturing afterwards.
    os.close(fd)
    return tap.done()


# ---- filter ----

def insns_buf(insns):
    """[(code, jt, jf, k)] as struct sock_filter[]; the buffer and address."""
    raw = b"".join(struct.pack("=HBBI", c, jt, jf, k & 0xffffffff)
                   for c, jt, jf, k in insns)
    buf = ctypes.create_string_buffer(raw, max(len(raw), 1))
    return buf, ctypes.addressof(buf)


def set_filter(fd, insns, length=None, flags=0, addr=None):
    buf, a = insns_buf(insns)
    arg = struct.pack(FILTER_FMT, len(insns) if length is None else length,
                      flags, a if addr is None else addr)
    err = ioctl_errno(fd, NSIOCSFILTER, bytearray(arg))
    del buf
    return err


def get_filtered(fd):
    buf = bytearray(SIZES["count"])
    fcntl.ioctl(fd, NSIOCGFILTERED, buf, True)
    return struct.unpack(COUNT_FMT, buf)[0]


def cmd_filter(argv):
    """Argument checks, then 'ret #0' under traffic: nothing read."""
    secs = float(argv[0]) if argv else 3.0
    tap = Tap()
    fd = os.open(DEV, os.O_RDONLY | os.O_NONBLOCK)
    ret0 = [(BPF_RET | BPF_K, 0, 0, 0)]
    name = lambda e: errno.errorcode.get(e, e)
    cases = [
        ("len 4097", dict(insns=ret0, length=NSL_FILTER_MAX_INSNS + 1), errno.EINVAL),
        ("len 0xffffffff", dict(insns=ret0, length=0xffffffff), errno.EINVAL),
        ("flags 2", dict(insns=ret0, flags=2), errno.EINVAL),
        ("insns at address 8", dict(insns=ret0, addr=8), errno.EFAULT),
        ("insns at a kernel address",
         dict(insns=ret0, addr=0xffffffff81000000), errno.EFAULT),
        ("no return at the end", dict(insns=[(BPF_LD | BPF_W | BPF_ABS, 0, 0, 0)]),
         errno.EINVAL),
        ("a jump past the end",
         dict(insns=[(BPF_JMP | BPF_JA, 0, 0, 5), (BPF_RET | BPF_K, 0, 0, 0)]),
         errno.EINVAL),
        ("unknown opcode 0xff", dict(insns=[(0xff, 0, 0, 0)] + ret0), errno.EINVAL),
        ("ancillary load (SKF_AD_PROTOCOL)",
         dict(insns=[(BPF_LD | BPF_H | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_PROTOCOL)] + ret0),
         errno.EINVAL),
        ("ancillary load (SKF_AD_IFINDEX)",
         dict(insns=[(BPF_LD | BPF_W | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_IFINDEX)] + ret0),
         errno.EINVAL),
        ("SKF_NET_OFF load", dict(insns=[(BPF_LD | BPF_B | BPF_ABS, 0, 0, SKF_NET_OFF)] + ret0),
         errno.EINVAL),
        ("SKF_LL_OFF msh", dict(insns=[(BPF_LDX | BPF_B | BPF_MSH, 0, 0, SKF_LL_OFF)] + ret0),
         errno.EINVAL),
    ]
    for what, kw, want in cases:
        err = set_filter(fd, **kw)
        tap.ok(err == want, "NSIOCSFILTER %s -> %s (got %s)" % (what, name(want), name(err)))
    tap.ok(get_filtered(fd) == 0, "NSIOCGFILTERED 0 after refused programs")
    err = set_filter(fd, [])
    tap.ok(err == 0, "NSIOCSFILTER len 0 (no filter) accepted (got %s)" % name(err))
    # Refuse everything before the ring, then at NSI: traffic on loopback
    # makes blocks in the first case, none in the second; none is read.
    for flags, where in ((0, "before the ring"), (NSL_FILTER_FLOW, "at NSI")):
        err = set_filter(fd, ret0, flags=flags)
        tap.ok(err == 0, "NSIOCSFILTER 'ret #0' %s accepted (got %s)"
            % (where, name(err)))
        refuse_all(fd, tap, secs, flags)
        os.close(fd)
        fd = os.open(DEV, os.O_RDONLY | os.O_NONBLOCK)
        tap.ok(get_filtered(fd) == 0, "a new open: no filter, nothing counted (%d)"
            % get_filtered(fd))
    os.close(fd)
    return tap.done()


def loopback_tcp(secs, fd=None, kinds=None):
    """1000-byte writes over a loopback connection for @secs; reads what
    @fd has meanwhile into @kinds.  Returns the writes."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    cli = socket.create_connection(srv.getsockname())
    con, _ = srv.accept()
    end = time.time() + secs
    sent = 0
    while time.time() < end:
        cli.sendall(b"x" * 1000)
        con.recv(65536)
        sent += 1
        if fd is None:
            continue
        try:
            buf = os.read(fd, 1 << 20)
        except BlockingIOError:
            continue
        for kind in parse_kinds(buf):
            kinds[kind] = kinds.get(kind, 0) + 1
    cli.close()
    con.close()
    srv.close()
    return sent


def collect_off_drained(fd):
    """Collection off, and the blocks of skbs still in flight (the FINs,
    their ACKs) emitted as they are freed: returns the emitted count once
    it stops moving."""
    fcntl.ioctl(fd, NSIOCSSTATE, bytearray(struct.pack(STATE_FMT, 0, 0)), True)
    emitted = -1
    while emitted != get_info(fd)["emitted"]:
        emitted = get_info(fd)["emitted"]
        time.sleep(0.3)
    return emitted


def refuse_all(fd, tap, secs, flags):
    where = "at NSI" if flags & NSL_FILTER_FLOW else "before the ring"
    fcntl.ioctl(fd, NSIOCSSTATE, bytearray(struct.pack(STATE_FMT, 1, 0)), True)
    info0 = get_info(fd)
    kinds = {}
    sent = loopback_tcp(secs, fd, kinds)
    emitted = collect_off_drained(fd)
    try:
        buf = os.read(fd, 1 << 20)
        for kind in parse_kinds(buf):
            kinds[kind] = kinds.get(kind, 0) + 1
    except BlockingIOError:
        pass
    refused = get_filtered(fd)
    emitted -= info0["emitted"]
    fcntl.ioctl(fd, NSIOCSSTATE, bytearray(struct.pack(STATE_FMT, 1, 0)), True)
    print("# 'ret #0' %s: %d writes over loopback; items read by kind %s; "
          "%d refused, %d emitted by the core" % (where, sent, kinds, refused,
                                                 emitted))
    nblocks = kinds.get(NSL_ITEM_BLOCK, 0) + kinds.get(NSL_ITEM_CBLOCK, 0)
    tap.ok(nblocks == 0, "'ret #0' %s: no block read (%d)" % (where, nblocks))
    if flags & NSL_FILTER_FLOW:
        tap.ok(refused >= sent and emitted == 0,
            "'ret #0' at NSI: no block made (%d emitted), every packet refused "
            "(%d), at least one per write (%d)" % (emitted, refused, sent))
    else:
        tap.ok(refused >= sent and refused == emitted,
            "'ret #0' before the ring: every block emitted (%d) refused (%d), "
            "at least one per write (%d)" % (emitted, refused, sent))


def set_sample(fd, rate, flags=0, taken=0, skipped=0):
    arg = bytearray(struct.pack(SAMPLE_FMT, rate, flags, taken, skipped))
    return ioctl_errno(fd, NSIOCSSAMPLE, arg)


def get_sample(fd):
    buf = bytearray(SIZES["sample"])
    fcntl.ioctl(fd, NSIOCGSAMPLE, buf, True)
    return dict(zip(("rate", "flags", "taken", "skipped"),
                    struct.unpack(SAMPLE_FMT, buf)))


def read_blocks(fd, out):
    """Every block @fd has now, decoded, appended to @out."""
    while True:
        try:
            buf = os.read(fd, 1 << 20)
        except BlockingIOError:
            return
        pos = 0
        while pos + 8 <= len(buf):
            kind, size, _ = struct.unpack_from("=HHI", buf, pos)
            if kind in (NSL_ITEM_BLOCK, NSL_ITEM_CBLOCK):
                out.append(nspath.decode_block(kind, buf[pos:pos + size]))
            elif kind == NSL_ITEM_LOSS:
                raise ValueError("blocks lost")
            pos += size


def flows_sampled(fd, tap, nflows=16, nloose=4, per=20):
    """1 in 2 flows: @nflows connected UDP flows over loopback and @nloose
    unconnected ones (sendto(); both decided at NSI, from the route's
    flow): each flow is in the trace whole or not at all."""
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    rx.bind(("127.0.0.1", 0))
    port = rx.getsockname()[1]
    txs = []
    for i in range(nflows + nloose):
        t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t.bind(("127.0.0.1", 0))
        if i < nflows:
            t.connect(("127.0.0.1", port))
        txs.append(t)
    tap.ok(set_sample(fd, 2, NSL_SAMPLE_FLOWS) == 0, "NSIOCSSAMPLE 1 in 2 flows")
    fcntl.ioctl(fd, NSIOCSSTATE, bytearray(struct.pack(STATE_FMT, 1, 0)), True)
    blocks = []
    for i in range(per):
        for j, t in enumerate(txs):
            if j < nflows:
                t.send(b"y" * 100)
            else:
                t.sendto(b"y" * 100, ("127.0.0.1", port))
            rx.recv(2048)
        read_blocks(fd, blocks)
    collect_off_drained(fd)
    read_blocks(fd, blocks)
    s = get_sample(fd)
    per_flow = {}
    for b in blocks:
        if b["proto"] == 17 and b["dport"] == port:
            per_flow[b["sport"]] = per_flow.get(b["sport"], 0) + 1
    counts = [per_flow.get(t.getsockname()[1], 0) for t in txs]
    for t in txs:
        t.close()
    rx.close()
    taken = sum(1 for c in counts if c)
    print("# 1 in 2 flows: blocks per flow %s; %s" % (counts, s))
    tap.ok(all(c in (0, per) for c in counts),
        "every flow whole or not at all (%s)" % counts)
    tap.ok(s["taken"] + s["skipped"] == per * len(txs) and
        s["taken"] == per * taken,
        "every datagram decided once (%d + %d == %d), taken those of the "
        "%d flows in the trace" % (s["taken"], s["skipped"], per * len(txs),
                                   taken))
    tap.ok(0 < sum(1 for c in counts[:nflows] if c) < nflows,
        "some connected flows in, some out (%d of %d in)"
        % (sum(1 for c in counts[:nflows] if c), nflows))


def cmd_emitted(argv):
    """Prints the core's count of blocks handed to the module."""
    fd = os.open(DEV, os.O_RDONLY | os.O_NONBLOCK)
    print(get_info(fd)["emitted"])
    os.close(fd)
    return 0


def cmd_sample(argv):
    """Argument checks; N datagrams over loopback, 1 in 4 sampled."""
    n = int(argv[0]) if argv else 2000
    tap = Tap()
    name = lambda e: errno.errorcode.get(e, e)
    fd = os.open(DEV, os.O_RDONLY | os.O_NONBLOCK)
    s = get_sample(fd)
    tap.ok(s == {"rate": 1, "flags": 0, "taken": 0, "skipped": 0},
        "a new open: every packet, nothing counted (%s)" % s)
    for what, kw, want in [
            ("flags 2", dict(rate=4, flags=2), errno.EINVAL),
            ("rate 2^24 + 1", dict(rate=NSL_SAMPLE_RATE_MAX + 1), errno.EINVAL),
            ("rate 2^32 - 1", dict(rate=0xffffffff), errno.EINVAL),
            ("taken 1", dict(rate=4, taken=1), errno.EINVAL),
            ("skipped 1", dict(rate=4, skipped=1), errno.EINVAL),
            ("rate 2^24 flows", dict(rate=NSL_SAMPLE_RATE_MAX,
                                     flags=NSL_SAMPLE_FLOWS), 0),
            ("rate 0", dict(rate=0), 0)]:
        err = set_sample(fd, **kw)
        tap.ok(err == want, "NSIOCSSAMPLE %s -> %s (got %s)"
            % (what, name(want), name(err)))
    s = get_sample(fd)
    tap.ok(s["rate"] == 1 and s["flags"] == 0,
        "rate 0 reads back as 1 in 1 (%s)" % s)

    # Unconnected sends: the flow is not known at NSI, packet sampling
    # does not need it.  Each datagram crosses loopback, its receive side
    # in the block its send side was given, or in none.
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    rx.bind(("127.0.0.1", 0))
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    port = rx.getsockname()[1]
    tap.ok(set_sample(fd, 4) == 0, "NSIOCSSAMPLE 1 in 4 packets")
    fcntl.ioctl(fd, NSIOCSSTATE, bytearray(struct.pack(STATE_FMT, 1, 0)), True)
    blocks = []
    got = 0
    for i in range(n):
        tx.sendto(b"%05d" % i + b"x" * 195, ("127.0.0.1", port))
        rx.recv(2048)
        got += 1
        if i % 64 == 63:
            read_blocks(fd, blocks)
    collect_off_drained(fd)
    read_blocks(fd, blocks)
    s = get_sample(fd)
    udp = [b for b in blocks if b["proto"] == 17 and port in
           (b["sport"], b["dport"])]
    rx_only = [b for b in udp if b["dir"] == 1]
    whole = [b for b in udp if b["dir"] == 0 and b["flags"] & BF_RX]
    print("# %d datagrams sent and read over loopback, 1 in 4: %s; "
          "%d UDP blocks (%d send+receive, %d receive only)"
          % (got, s, len(udp), len(whole), len(rx_only)))
    tap.ok(s["taken"] + s["skipped"] == n,
        "every datagram decided once: taken %d + skipped %d == %d sent"
        % (s["taken"], s["skipped"], n))
    tap.ok(len(udp) == s["taken"] and len(whole) == len(udp),
        "a block per datagram taken (%d == %d), each with its receive side "
        "(%d)" % (len(udp), s["taken"], len(whole)))
    tap.ok(not rx_only, "no receive side sampled on its own (%d)" % len(rx_only))
    tap.ok(n // 8 <= s["taken"] <= n // 2,
        "1 in 4: %d taken of %d (between 1 in 8 and 1 in 2)" % (s["taken"], n))
    tx.close()
    rx.close()
    flows_sampled(fd, tap)
    os.close(fd)
    fd = os.open(DEV, os.O_RDONLY | os.O_NONBLOCK)
    s = get_sample(fd)
    tap.ok(s["rate"] == 1 and s["taken"] == 0 and s["skipped"] == 0,
        "a new open: sampling off, nothing counted (%s)" % s)
    os.close(fd)
    return tap.done()


def parse_kinds(buf):
    pos = 0
    while pos + 8 <= len(buf):
        kind, size = struct.unpack_from("=HH", buf, pos)
        if size < 8:
            break
        yield kind
        pos += size


# ---- calib ----

def cmd_calib(argv):
    reps = 0
    names = []
    if "--reps" in argv:
        reps = int(argv[argv.index("--reps") + 1])
    if "--event" in argv:
        names = argv[argv.index("--event") + 1].split(",")
    fd = os.open(DEV, os.O_RDONLY)
    info = get_info(fd)
    if names and set_events(fd, names):
        print("set_events failed", file=sys.stderr)
        return 1
    rc = 0
    for cpu in range(info["ncpus"]):
        buf = bytearray(struct.pack("=IIII", cpu, reps, 0, 0)
                        + bytes(SIZES["calib"] - 16))
        err = ioctl_errno(fd, NSIOCGCALIB, buf)
        out = {"cpu": cpu, "errno": err, "tsc_khz": info["tsc_khz"]}
        if not err:
            v = struct.unpack(CALIB_FMT, buf)
            out["nevents"] = v[3]
            per = 4 + NSL_MAX_EVENTS
            for i, name in enumerate(COST_NAMES):
                c = v[4 + i * per: 4 + (i + 1) * per]
                out[name] = {"ticks": c[0], "min": c[1], "cv_ppm": c[2],
                             "samples": c[3], "count": list(c[4:4 + v[3]])}
        else:
            rc = 1
        print(json.dumps(out))
    # A bad request: flags, nevents (an out field) set, CPU out of range.
    for what, hdr in (("flags 2", (0, 0, 2, 0)), ("nevents 1", (0, 0, 0, 1)),
                      ("cpu ncpus+1000", (info["ncpus"] + 1000, 0, 0, 0)),
                      ("reps 65537", (0, 65537, 0, 0)),
                      ("reps 15", (0, 15, 0, 0))):
        buf = bytearray(struct.pack("=IIII", *hdr) + bytes(SIZES["calib"] - 16))
        err = ioctl_errno(fd, NSIOCGCALIB, buf)
        print(json.dumps({"bad": what, "errno": err}))
    print(json.dumps(calib_interrupted(fd)))
    os.close(fd)
    return rc


class Interrupted(Exception):
    pass


def calib_interrupted(fd):
    """The largest calibration, interrupted by a signal 50 ms in: Python
    retries an ioctl that returned EINTR unless the handler raises, so the
    handler raises and the call ends with the kernel's EINTR."""
    def on_alarm(signum, frame):
        raise Interrupted()
    reps = 1 << 16
    buf = bytearray(struct.pack("=IIII", 0, reps, 0, 0)
                    + bytes(SIZES["calib"] - 16))
    old = signal.signal(signal.SIGALRM, on_alarm)
    err = 0
    t0 = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    try:
        fcntl.ioctl(fd, NSIOCGCALIB, buf, True)
    except Interrupted:
        err = errno.EINTR
    except OSError as e:
        err = e.errno
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return {"interrupted": "reps %d, SIGALRM after 50 ms" % reps,
            "errno": err, "ms": round((time.monotonic() - t0) * 1000)}


# ---- reading items ----

def parse_items(buf, tsc_khz):
    """Yields ("block", dict) / ("loss", lost) / (kind, None)."""
    pos = 0
    while pos + 8 <= len(buf):
        kind, size, cpu = struct.unpack_from("=HHI", buf, pos)
        if size < 8 or size % 8 or pos + size > len(buf):
            raise ValueError("bad item size %d at %d" % (size, pos))
        if kind in (NSL_ITEM_BLOCK, NSL_ITEM_CBLOCK):
            try:
                b = nspath.decode_block(kind, buf[pos:pos + size])
            except SystemExit as e:
                raise ValueError(str(e))
            recs = [dict(r, region=r["rid"]) for r in b["records"]]
            yield "block", {"cpu": cpu, "seq": b["seq"],
                            "nevents": b["nevents"], "mode": b["mode"],
                            "records": recs}
        elif kind == NSL_ITEM_LOSS:
            yield "loss", struct.unpack_from("=Q", buf, pos + 8)[0]
        else:
            yield kind, None
        pos += size
    if pos != len(buf):
        raise ValueError("read() returned a partial item")


class Checker:
    """Sanity of blocks read while the events change under them."""

    def __init__(self, tsc_khz):
        self.tsc_khz = tsc_khz
        self.blocks = self.lost = self.recs = self.invalid = 0
        self.by_nevents = {}
        self.problems = []

    def problem(self, msg):
        if len(self.problems) < 20:
            self.problems.append(msg)

    def block(self, b):
        self.blocks += 1
        n = b["nevents"]
        self.by_nevents[n] = self.by_nevents.get(n, 0) + 1
        if n > NSL_MAX_EVENTS:
            self.problem("seq %d: nevents %d" % (b["seq"], n))
        if (n == 0) != (b["mode"] == NSL_MODE_DURATION):
            self.problem("seq %d: nevents %d with mode %d"
                         % (b["seq"], n, b["mode"]))
        for r in b["records"]:
            self.recs += 1
            if r["flags"] & NSL_RF_OPEN:
                continue
            if r["ticks"] >= 1 << 40:
                self.problem("seq %d region %d: ticks %d" % (b["seq"],
                             r["region"], r["ticks"]))
            if r["flags"] & NSL_RF_INVALID:
                self.invalid += 1
                continue
            for c in r["count"]:
                if c >= 1 << 40:
                    self.problem("seq %d region %d: valid count %d (u64 wrap?)"
                                 % (b["seq"], r["region"], c))


def read_some(fd, checker, bufsize, timeout=0.0, max_reads=1 << 30):
    """Reads what is there (waiting at most @timeout, at most @max_reads
    read() calls); returns items read."""
    got = 0
    for _ in range(max_reads):
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            return got
        try:
            buf = os.read(fd, bufsize)
        except BlockingIOError:
            return got
        timeout = 0.0
        for kind, val in parse_items(buf, checker.tsc_khz):
            got += 1
            if kind == "block":
                checker.block(val)
            elif kind == "loss":
                checker.lost += val
    return got


def cmd_switch(argv):
    rounds = int(argv[0])
    tap = Tap()
    fd = os.open(DEV, os.O_RDONLY | os.O_NONBLOCK)
    info = get_info(fd)
    chk = Checker(info["tsc_khz"])
    bufsize = 64 * info["block_size"]
    err = ioctl_errno(fd, NSIOCSSTATE, bytearray(struct.pack(STATE_FMT, 1, 0)))
    tap.ok(err == 0, "NSIOCSSTATE on")
    seq = [["cpu-clock"], ["page-faults"], ["context-switches"], []]
    fails = 0
    t0 = time.monotonic()
    for i in range(rounds):
        for names in seq:
            if set_events(fd, names):
                fails += 1
            # A sample of what comes (parsing all of it in Python would
            # take minutes under TCG); the rest is dropped and counted.
            read_some(fd, chk, bufsize, 0.01, max_reads=4)
    dt = time.monotonic() - t0
    tap.ok(fails == 0, "%d event switches (%d rounds of cpu-clock, page-faults, "
        "context-switches, none) in %.1f s, %d refused"
        % (rounds * len(seq), rounds, dt, fails))
    # Drain what is still coming (rings hold at most a few MB).
    while read_some(fd, chk, bufsize, 0.5, max_reads=2000):
        pass
    print("# read %d blocks (%s by nevents), %d records, %d INVALID, %d lost"
          % (chk.blocks, ", ".join("%d: %d" % kv for kv in sorted(chk.by_nevents.items())),
             chk.recs, chk.invalid, chk.lost))
    tap.ok(chk.blocks > 0 and len(chk.by_nevents) >= 2,
        "blocks were read in more than one event configuration")
    for p in chk.problems:
        print("# " + p)
    tap.ok(not chk.problems, "every block read during the switches is sane "
        "(nevents <= 4 and matches mode, valid counts and ticks < 2^40)")
    os.close(fd)
    return tap.done()


# ---- the page-fault workload ----

def cmd_sink(argv):
    port = int(argv[0])
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(1)
    print("listening", flush=True)
    c, _ = ls.accept()
    buf = bytearray(1 << 20)
    total = 0
    while True:
        n = c.recv_into(buf)
        if not n:
            break
        total += n
    print("sink received %d" % total, flush=True)
    return 0


def cmd_faultsend(argv):
    port, pages, sends = int(argv[0]), int(argv[1]), int(argv[2])
    page = mmap.PAGESIZE
    length = pages * page
    mm = mmap.mmap(-1, length, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        try:
            mm.madvise(mmap.MADV_NOHUGEPAGE)
        except OSError:
            pass
    mv = memoryview(mm)
    s = socket.create_connection(("127.0.0.1", port))
    sent = 0
    for _ in range(sends):
        # Never touched by user space: the kernel's copy faults each page
        # in (the zero page, read-only), once.
        off = 0
        while off < length:
            off += s.send(mv[off:])
        sent += length
        mm.madvise(mmap.MADV_DONTNEED)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    s.close()
    mv.release()
    mm.close()
    print(json.dumps({"pages": pages * sends, "bytes": sent,
                      "page_size": page}))
    return 0


def main(argv):
    cmds = {"einval": cmd_einval, "calib": cmd_calib, "switch": cmd_switch,
            "faultsend": cmd_faultsend, "sink": cmd_sink, "filter": cmd_filter,
            "sample": cmd_sample, "emitted": cmd_emitted}
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__)
        return 2
    return cmds[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
