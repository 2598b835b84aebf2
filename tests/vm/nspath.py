#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Blocks of one path in a trace file, read without nsdump, for t_paths.sh.

The trace file (nsdump -w of this build) is parsed here from its bytes:
records (kind, len, crc, 0) whose CRC is checked, DATA records split into
items, blocks decoded in either form (ABI 2's whole block, ABI 4's
compact one).  The blocks of one path are
picked by their flow (direction, family, protocol, a port) and checked.

    nspath.py count FILE [filters]
        prints the number of blocks that pass the filters
    nspath.py segs FILE [filters]
        prints the wire packets they stand for (their gso_segs summed)
    nspath.py flows FILE --pcap PCAP [filters]
        checks every block that passes against the TCP packet with its
        ports and sequence number in PCAP (read by tshark): the family,
        the addresses (if the block has them), the ports and both header
        lengths as the packet's headers say; prints "ok ..." / "fail ..."
    nspath.py check FILE --want write,udp,ip,link,nic [filters]
        checks every block that passes: each region of --want present,
        nothing else but the queues (qdisc, backlog, sk-backlog, sndq)
        and the regions --may names,
        every record closed, records in time order, each nested inside
        the one it started in, no ABSORBED flag (nothing merges these
        packets); prints "ok ..." / "fail ..." lines

Filters: --dir tx|rx, --family 4|6, --proto N, --port P (source or
destination), --ifindex N, --flag NAME (must carry it), --without NAME
(must not), --region NAME (must have a record of it), --no-region NAME
(must not).
"""
import argparse
import ipaddress
import struct
import subprocess
import sys

import nstrace
import tap

BLOCK_FMT = "=HHIQQQIIIHHHHBBBBIHHHHI16s16s"
BLOCK_KEYS = ("kind", "size", "cpu", "seq", "tsc0", "conn", "flags", "len",
              "ifindex", "gso_segs", "proto", "nhlen", "thlen", "dir", "nrec",
              "nevents", "mode", "tcp_seq", "family", "pad", "sport", "dport",
              "pad2", "saddr", "daddr")
BLOCK_HDR = struct.calcsize(BLOCK_FMT)
REC_FMT = "=BBHHHQQ4Q"
REC = struct.calcsize(REC_FMT)
assert BLOCK_HDR == 104 and REC == 56

REGIONS = (None, "write", "tcp", "ip", "link", "nic", "rx-nic", "rx-link",
           "rx-ip", "rx-tcp", "queue", "copy", "sndq", "qdisc", "backlog",
           "sk-backlog", "udp", "rx-udp")
QUEUES = {"qdisc", "backlog", "sk-backlog", "sndq"}
RF = {"OPEN": 1, "INVALID": 2, "MIGRATED": 4, "MERGED": 8, "GAP": 16,
      "SHARED": 32}
BF = {"RETRANS": 1, "GSO": 2, "NOXMIT": 4, "TRUNC": 8, "LOOPBACK": 16,
      "RX": 32, "ABSORBED": 64, "RESENT": 128, "FORWARDED": 256,
      "COPY": 512, "COALESCED": 1024, "DEVTRUNC": 2048}
AF = {2: 4, 10: 6}


def items(path):
    with open(path, "rb") as f:
        yield from nstrace.items(f.read())


# include/netslice.h: NSL_ITEM_CBLOCK (ABI 4), what files hold since format 2
NSL_ITEM_BLOCK, NSL_ITEM_CBLOCK = 1, 5
CBLOCK_FMT = "=HHIQQQIIIIHHHHHBBBBBB"
CBLOCK_KEYS = ("kind", "size", "cpu", "seq", "tsc0", "conn", "flags", "len",
               "ifindex", "tcp_seq", "gso_segs", "nhlen", "sport", "dport",
               "rcpu", "proto", "thlen", "family", "nrec", "nevents",
               "cflags")
CBLOCK_HDR = struct.calcsize(CBLOCK_FMT)
CREC_FMT, CREC_EXT_FMT = "=BBHII", "=HHII"
CB_RX, CB_COUNT, CB_ADDR = 1, 2, 4
CB_NDEV_SHIFT, NSL_MAX_DEVS = 3, 6     # ABI 6: devices after the addresses
CDEV_FMT = "=IIBBH"                    # struct nsl_cdev
RF_EXT, RF_HCPU = 0x8000, 0x4000     # HCPU: on hdr.cpu, not rcpu (ABI 5)
CB_LOG = 0x40                        # ABI 8: the records as a log
LOG_START, LOG_STOP, LOG_SEAL, LOG_DEV, LOG_GAP = 1, 2, 3, 4, 5
LOG_SHARE = 6                        # ABI 9: closed records SHARED
LOG_NEXT = 7                         # ABI 10: a STOP and a START at once
LOG_DEV_START = 8                    # ABI 10: a device's first START
assert CBLOCK_HDR == 64 and struct.calcsize(CREC_FMT) == 12


def record(region, depth, flags, nmerged, cpu, start, ticks, counts):
    return {"region": REGIONS[region] if region < len(REGIONS)
            else "#%d" % region, "rid": region, "depth": depth, "flags": flags,
            "nmerged": nmerged, "cpu": cpu, "start": start, "ticks": ticks,
            "count": counts}


def replay_log(b, log):
    """The records a block's log of steps makes (include/netslice.h's
    nsl_log_replay()), read again here: each START opens a record, or
    resumes the last one of its region if nothing came between since the
    block was sealed; each STOP closes its region's latest open record;
    a NEXT is a STOP and then a START at one time, a DEV_START a device's
    first record and its START."""
    recs, last, merge = [], {}, None      # last: region -> open indices
    m64 = (1 << 64) - 1

    def start(region, t, now, cpu):
        nonlocal merge
        r = recs[-1] if recs and merge == region else None
        if r and r["rid"] == region and \
                not r["flags"] & (RF["OPEN"] | RF["SHARED"]):
            r["flags"] |= RF["MERGED"] | RF["OPEN"]
            r["nmerged"] += 1
            if r["cpu"] != cpu:
                r["flags"] |= RF["MIGRATED"]
        elif len(recs) >= 16:
            b["flags"] |= BF["TRUNC"]
            return
        else:
            r = record(region, sum(map(len, last.values())),
                       RF["OPEN"], 1, cpu, t, 0, [])
            recs.append(r)
            merge = region
        last.setdefault(region, []).append(len(recs) - 1)
        r["ticks"] = (r["ticks"] - now) & m64

    def stop(region, now, cpu):
        if not last.get(region):
            return
        r = recs[last[region].pop()]
        r["ticks"] = (r["ticks"] + now) & m64
        r["flags"] &= ~RF["OPEN"]
        if r["cpu"] != cpu:
            r["flags"] |= RF["MIGRATED"]

    for e in log:
        t, region = e & 0xffffffff, (e >> 32) & 0xff
        step, cpu = (e >> 40) & 15, e >> 48
        now = b["tsc0"] + t
        if step == LOG_START:
            start(region, t, now, cpu)
        elif step == LOG_STOP:
            stop(region, now, cpu)
        elif step == LOG_NEXT and (e >> 44) & 15:
            stop(region, now, cpu)
            start((e >> 44) & 15, t, now, cpu)
        elif step == LOG_DEV_START and (e >> 44) & 15 < len(b["devs"]):
            b["devs"][(e >> 44) & 15]["first"] = len(recs)
            start(region, t, now, cpu)
        elif step == LOG_SEAL:
            merge = None
        elif step == LOG_DEV:
            b["devs"][region]["first"] = len(recs)
        elif step == LOG_GAP:
            tcp = [r for r in recs if r["rid"] == REGIONS.index("tcp")
                   and not r["flags"] & RF["OPEN"]]
            if not recs or len(recs) >= 16 or \
                    recs[-1]["flags"] & RF["OPEN"] or not tcp:
                continue
            first = min(tcp, key=lambda r: r["start"])
            copied = sum(r["ticks"] for r in tcp)
            if t < first["start"] + copied:
                continue
            recs.append(record(REGIONS.index("sndq"),
                               sum(map(len, last.values())),
                               RF["GAP"] | (RF["MERGED"] if len(tcp) > 1
                                            else 0), len(tcp), cpu,
                               (first["start"] + first["ticks"]) & m64,
                               t - first["start"] - copied, []))
        elif step == LOG_SHARE:
            for r in recs:
                if not r["flags"] & RF["OPEN"]:
                    r["flags"] |= RF["SHARED"]
        else:
            raise SystemExit("compact block's log: step %d" % step)
    return recs


def decode_cblock(it):
    """A compact block as the dict decode_block() makes of a whole one."""
    b = dict(zip(CBLOCK_KEYS, struct.unpack_from(CBLOCK_FMT, it)))
    ndev = (b["cflags"] >> CB_NDEV_SHIFT) & 7
    if b["cflags"] & ~(CB_RX | CB_COUNT | CB_ADDR | CB_LOG |
                       7 << CB_NDEV_SHIFT) or \
            b["nrec"] > 16 or b["nevents"] > 4 or ndev > NSL_MAX_DEVS:
        raise SystemExit("compact block: cflags 0x%x nrec %d nevents %d"
                         % (b["cflags"], b["nrec"], b["nevents"]))
    b["dir"] = 1 if b["cflags"] & CB_RX else 0
    b["mode"] = 1 if b["cflags"] & CB_COUNT else 0
    b["saddr"] = b["daddr"] = bytes(16)
    pos = CBLOCK_HDR
    if b["cflags"] & CB_ADDR:
        b["saddr"], b["daddr"] = it[pos:pos + 16], it[pos + 16:pos + 32]
        pos += 32
    b["devs"] = []
    for _ in range(ndev):
        ifindex, netns, first, d, pad = struct.unpack_from(CDEV_FMT, it, pos)
        if pad or d > 1:
            raise SystemExit("compact device: dir %d pad %d" % (d, pad))
        b["devs"].append({"ifindex": ifindex, "netns": netns,
                          "first": first, "dir": d})
        pos += 12
    if b["cflags"] & CB_LOG:
        if b["nrec"] or b["nevents"] or any(d["first"] for d in b["devs"]):
            raise SystemExit("compact block: a log and records")
        pos = (pos + 7) // 8 * 8
        b["records"] = replay_log(b, struct.unpack_from(
            "=%dQ" % ((len(it) - pos) // 8), it, pos))
        b["nrec"] = len(b["records"])
        return b
    b["records"] = []
    for _ in range(b["nrec"]):
        region, dm, flags, start, ticks = \
            struct.unpack_from(CREC_FMT, it, pos)
        pos += 12
        depth, nmerged = dm & 15, (dm >> 4) + 1
        cpu = b["cpu"] if flags & RF_HCPU else b["rcpu"]
        if flags & RF_EXT and flags & RF_HCPU:
            raise SystemExit("compact record: RF_EXT and RF_HCPU")
        if flags & RF_EXT:
            depth = dm
            nmerged, cpu, shi, thi = struct.unpack_from(CREC_EXT_FMT, it, pos)
            start |= shi << 32
            ticks |= thi << 32
            pos += 12
        counts = struct.unpack_from("=%dQ" % b["nevents"], it, pos)
        pos += 8 * b["nevents"]
        b["records"].append(record(region, depth,
                                   flags & ~(RF_EXT | RF_HCPU), nmerged,
                                   cpu, start, ticks, list(counts)))
    if (pos + 7) // 8 * 8 != len(it) or any(it[pos:]):
        raise SystemExit("compact block of %d bytes: its parts take %d"
                         % (len(it), pos))
    return b


def decode_block(kind, it):
    """A block item of either form (NSL_ITEM_BLOCK, NSL_ITEM_CBLOCK)."""
    if kind == NSL_ITEM_CBLOCK:
        return decode_cblock(it)
    b = dict(zip(BLOCK_KEYS, struct.unpack_from(BLOCK_FMT, it)))
    if len(it) != BLOCK_HDR + b["nrec"] * REC:
        raise SystemExit("block of %d bytes with %d records"
                         % (len(it), b["nrec"]))
    b["records"] = []
    for i in range(b["nrec"]):
        r = struct.unpack_from(REC_FMT, it, BLOCK_HDR + i * REC)
        b["records"].append(record(r[0], r[1], r[2], r[3], r[4], r[5], r[6],
                                   list(r[7:7 + b["nevents"]])))
    return b


def blocks(path):
    for kind, it in items(path):
        if kind in (NSL_ITEM_BLOCK, NSL_ITEM_CBLOCK):
            yield decode_block(kind, it)


def selected(b, a):
    if a.dir and b["dir"] != (a.dir == "rx"):
        return False
    if a.family and AF.get(b["family"]) != a.family:
        return False
    if a.proto is not None and b["proto"] != a.proto:
        return False
    if a.port and a.port not in (b["sport"], b["dport"]):
        return False
    if a.ifindex is not None and b["ifindex"] != a.ifindex:
        return False
    if any(b["flags"] & BF[f] for f in a.without or []):
        return False
    names = [r["region"] for r in b["records"]]
    if a.region and a.region not in names:
        return False
    if a.no_region and a.no_region in names:
        return False
    return all(b["flags"] & BF[f] for f in a.flag or [])


def end(r):
    return r["start"] + r["ticks"]


def dev_of(b, i):
    """The device record @i was opened on: the last one whose first record
    is at or before it; the first device for records before any."""
    devs = b.get("devs") or []
    on = [d for d in devs if d["first"] <= i]
    return on[-1] if on else (devs[0] if devs else None)


def dev_path(b):
    """The devices crossed, as ifindex@netns/tx|rx joined by '>'."""
    return ">".join("%d@%d/%s" % (d["ifindex"], d["netns"],
                                   "rx" if d["dir"] else "tx")
                    for d in b.get("devs") or [])


# The regions a device's queue and driver time (its link, qdisc and nic on
# the way out, its hand-up to the stack on the way in).
TX_DEV, RX_DEV = ("link", "qdisc", "nic"), ("rx-link",)


def shared_run(b):
    """Whether two back-to-back SHARED records of one region and depth sit
    before @b's first device: the kernel sums those at each split, on any
    CPU."""
    devs = b.get("devs") or []
    recs = b["records"][:devs[0]["first"] if devs else len(b["records"])]
    return any(p["flags"] & r["flags"] & RF["SHARED"] and
               not (p["flags"] | r["flags"]) & RF["OPEN"] and
               p["region"] == r["region"] and p["depth"] == r["depth"]
               for p, r in zip(recs, recs[1:]))


def problems(b, want, may=()):
    errs = []
    recs = b["records"]
    names = [r["region"] for r in recs]
    for w in want:
        if w not in names:
            errs.append("no %s" % w)
    for n in names:
        if n not in want and n not in QUEUES and n not in may:
            errs.append("unexpected %s" % n)
    if b["flags"] & BF["ABSORBED"]:
        errs.append("ABSORBED")
    # Each device's regions are on a device of that direction.
    if b.get("devs") is not None and not b["flags"] & BF["DEVTRUNC"]:
        for i, r in enumerate(recs):
            want_dir = 0 if r["region"] in TX_DEV else \
                1 if r["region"] in RX_DEV else None
            if want_dir is None or r["flags"] & RF["SHARED"]:
                continue
            d = dev_of(b, i)
            if d is None or d["dir"] != want_dir:
                errs.append("%s on device %s" % (r["region"], d))
    for i, r in enumerate(recs):
        if r["flags"] & RF["OPEN"]:
            errs.append("%s left open" % r["region"])
        if r["ticks"] >= 1 << 62:
            errs.append("%s negative" % r["region"])
        # Time order: a record starts no earlier than the one before it
        # (a GAP record is placed after the fact).
        if i and not (r["flags"] & RF["GAP"]) and \
                r["start"] < recs[i - 1]["start"]:
            errs.append("%s starts before %s" % (r["region"],
                                                 recs[i - 1]["region"]))
        # Nesting: inside the last record of one level less that started
        # before it.
        if r["depth"]:
            parents = [p for p in recs[:i] if p["depth"] == r["depth"] - 1
                       and not (p["flags"] & RF["GAP"])]
            if not parents:
                errs.append("%s at depth %d has no parent" % (r["region"],
                                                            r["depth"]))
            else:
                p = parents[-1]
                if not (p["flags"] & RF["MERGED"]) and \
                        (r["start"] < p["start"] or end(r) > end(p)):
                    errs.append("%s [%d,%d] not inside %s [%d,%d]"
                                % (r["region"], r["start"], end(r),
                                   p["region"], p["start"], end(p)))
    return errs


# What tshark says of each TCP packet with payload, in this order.
PKT_FIELDS = ("ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "ip.hdr_len",
              "tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.hdr_len")


def packets(pcap):
    """{(sport, dport, seq): (family, saddr, daddr, nhlen, thlen)} of the
    TCP packets with payload in @pcap, as tshark decodes their headers."""
    cmd = ["tshark", "-n", "-r", pcap, "-Y", "tcp.len > 0", "-T", "fields",
           "-E", "separator=/t", "-E", "occurrence=f"]
    for f in PKT_FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    pkts = {}
    for line in out.stdout.splitlines():
        v = dict(zip(PKT_FIELDS, line.split("\t")))
        six = bool(v["ipv6.src"])
        src, dst = (v["ipv6.src"], v["ipv6.dst"]) if six else \
            (v["ip.src"], v["ip.dst"])
        key = (int(v["tcp.srcport"]), int(v["tcp.dstport"]),
               int(v["tcp.seq_raw"]))
        pkts[key] = (6 if six else 4, ipaddress.ip_address(src).packed,
                     ipaddress.ip_address(dst).packed,
                     40 if six else int(v["ip.hdr_len"]),
                     int(v["tcp.hdr_len"]))
    return pkts


def flow_errors(b, pkts):
    """How @b's flow differs from its packet's headers."""
    p = pkts.get((b["sport"], b["dport"], b["tcp_seq"]))
    if p is None:
        return ["no packet %d > %d seq %d" % (b["sport"], b["dport"],
                                               b["tcp_seq"])]
    fam, src, dst, nhlen, thlen = p
    got = (AF.get(b["family"]), b["nhlen"], b["thlen"])
    errs = [] if got == (fam, nhlen, thlen) else \
        ["family, nhlen, thlen %s, the packet's %s" % (got, (fam, nhlen,
                                                              thlen))]
    have = (b["saddr"][:len(src)], b["daddr"][:len(dst)])
    if b["saddr"] != bytes(16) and have != (src, dst):
        errs.append("addresses %s > %s, the packet's %s > %s"
                    % (b["saddr"].hex(), b["daddr"].hex(), src.hex(),
                       dst.hex()))
    return errs


def check_flows(sel, pcap, tag):
    pkts = packets(pcap)
    bad = [(b, flow_errors(b, pkts)) for b in sel]
    bad = [(b, e) for b, e in bad if e]
    addr = sum(b["saddr"] != bytes(16) for b in sel)
    if bad:
        print("# first bad block: seq %d: %s" % (bad[0][0]["seq"],
                                                 "; ".join(bad[0][1])))
    fail = bad or not sel
    print("%s %s%d of %d blocks' flows (family, ports, header lengths, and "
          "%d with addresses) are their packets' as tshark reads them"
          % ("fail" if fail else "ok", tag, len(sel) - len(bad), len(sel),
             addr))
    return 1 if fail else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=("count", "segs", "check", "devs",
                                    "shared-runs", "flows"))
    ap.add_argument("file")
    ap.add_argument("--pcap")
    ap.add_argument("--want", default="")
    ap.add_argument("--may", default="")
    ap.add_argument("--dir", choices=("tx", "rx"))
    ap.add_argument("--family", type=int, choices=(4, 6))
    ap.add_argument("--proto", type=int)
    ap.add_argument("--port", type=int)
    ap.add_argument("--ifindex", type=int)
    ap.add_argument("--flag", action="append", choices=sorted(BF))
    ap.add_argument("--without", action="append", choices=sorted(BF))
    ap.add_argument("--region")
    ap.add_argument("--no-region")
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    sel = [b for b in blocks(a.file) if selected(b, a)]
    if a.cmd == "count":
        print(len(sel))
        return 0
    if a.cmd == "shared-runs":
        print(sum(shared_run(b) for b in sel))
        return 0
    if a.cmd == "segs":
        print(sum(b["gso_segs"] for b in sel))
        return 0
    if a.cmd == "devs":
        paths = {}
        for b in sel:
            paths[dev_path(b)] = paths.get(dev_path(b), 0) + 1
        for p, n in sorted(paths.items(), key=lambda x: -x[1]):
            print(n, p or "-")
        return 0
    tag = a.tag + ": " if a.tag else ""
    if a.cmd == "flows":
        return check_flows(sel, a.pcap, tag)
    want = [w for w in a.want.split(",") if w]
    may = [w for w in a.may.split(",") if w]
    # A block that ran out of records (TRUNC: more regions than it has
    # records; a TCP skb split again and again while its sender appends
    # to it did so until back-to-back SHARED records were summed on any
    # CPU) lacks the regions past its last record, and says so:
    # those are not held against it, everything else is.  Such blocks
    # may be a few, not the rule.
    trunc = [b for b in sel if b["flags"] & BF["TRUNC"]]
    bad = [(b, [e for e in problems(b, want, may)
                if not (b["flags"] & BF["TRUNC"] and e.startswith("no "))])
           for b in sel]
    bad = [(b, e) for b, e in bad if e]
    if bad:
        b, e = bad[0]
        print("# first bad block: seq %d cpu %d flags 0x%x: %s; regions %s"
              % (b["seq"], b["cpu"], b["flags"], "; ".join(e),
                 [(r["region"], r["depth"], r["start"], r["ticks"],
                   r["flags"]) for r in b["records"]]))
    if trunc:
        print("# %s%d of %d blocks ran out of records (TRUNC): their regions "
              "past the last record not required" % (tag, len(trunc), len(sel)))
    fail = bad or not sel or 4 * len(trunc) > len(sel)
    print("%s %s%d of %d blocks have %s, closed, ordered and nested%s"
          % ("fail" if fail else "ok", tag, len(sel) - len(bad),
             len(sel), "+".join(want),
             " (%d TRUNC, at most a quarter)" % len(trunc) if trunc else ""))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(tap.run(main))
