#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Receive-path assertions, for tests/vm/t_recv.sh.

    recv_check.py nic FILE.json --ifindex N --rx-packets P --rx-bytes B
                  --name NAME
        rx blocks on interface N against the interface's own counters.
    recv_check.py loopback FILE.json --data D --other O
        the journey of each block over loopback; D and O: packets with and
        without TCP payload that tcpdump saw on lo.

FILE.json is `nsdump -r trace --json` output.  Output: "ok ..." /
"fail ..." / "# ..." lines; exit 0 when every assertion held.
"""
import argparse
import collections
import statistics
import sys

import tap

from nsjson import items
from tap import check, failed, note

SEND = ("write", "tcp", "tcp", "ip", "link", "nic")
RECV = ("rx-link", "rx-ip", "rx-tcp", "queue", "copy")
# Queues timed apart, and the region each lies in: the TCP write queue (a
# GAP record between the copy and the header build), the qdisc, the CPU's
# input backlog (netif_rx), the socket backlog.
QUEUES = {"sndq": "write", "qdisc": "link", "backlog": "rx-link",
          "sk-backlog": "rx-tcp"}
# A retransmission's block starts at the fork (write, then the header
# build's tcp); the receiver keeps its data, or drops it in rx-tcp as a
# duplicate when the first transmission got there (a spurious RTO, as a
# loaded host can cause).
RESENT = ("write", "tcp", "ip", "link", "nic")


def resent(b):
    return bool({"RETRANS", "RESENT"} & set(b["flags"]))


def dropped_dup(b):
    """A retransmission TCP dropped on receipt: its journey ends in rx-tcp."""
    return resent(b) and not any(r["region"] in ("queue", "copy")
                                 for r in b["records"])


def load(path):
    it = items(path)
    return it["block"], it["loss"]


def end(r):
    return r["start"] + r["ticks"]


def is_open(r):
    return "OPEN" in r["flags"]


def shape(b):
    return " ".join(r["region"] + ("(open)" if is_open(r) else "")
                    for r in b["records"])


def nic(a):
    blocks, losses = load(a.json)
    check(not losses, "%s: no items lost (%d loss items)" % (a.name, len(losses)))
    rx = [b for b in blocks if b["dir"] == "rx" and b["ifindex"] == a.ifindex]
    note("%s (ifindex %d): %d rx blocks, rx_packets delta %d", a.name,
         a.ifindex, len(rx), a.rx_packets)
    check(len(rx) == a.rx_packets,
          "%s: rx blocks %d == rx_packets delta %d (every frame the e1000 "
          "received, one block each)" % (a.name, len(rx), a.rx_packets))
    # The driver measures the frame; the block's len is past the
    # Ethernet header (eth_type_trans), rx_bytes is not.
    blen = sum(b["len"] for b in rx) + 14 * len(rx)
    note("%s: sum of block len + 14 per frame %d, rx_bytes delta %d",
         a.name, blen, a.rx_bytes)
    # Not asserted: seen equal on eth1 in every run, once 60 bytes (one
    # minimum frame) apart on eth0 with the packet counts equal.
    check(all(b["records"] and b["records"][0]["region"] == "rx-nic" and
              not is_open(b["records"][0]) for b in rx),
          "%s: every rx block starts with a closed rx-nic (the driver's "
          "NSI)" % a.name)
    kinds = collections.Counter()
    for b in rx:
        regs = [r["region"] for r in b["records"]]
        if "ABSORBED" in b["flags"]:
            k = "merged into another skb by GRO (ABSORBED)"
        elif "rx-ip" not in regs and b["proto"] == 0 and len(regs) == 2 \
                and is_open(b["records"][1]):
            k = "non-IP or merged by GRO, rx-link open"
        elif "copy" in regs:
            k = "data read by the application"
        elif "rx-tcp" in regs and b["conn"]:
            k = "TCP, socket known, not read (coalesced/FIN)"
        elif "rx-tcp" in regs:
            k = "TCP, no socket (pure ACK, or coalesced in the backlog)"
        else:
            k = shape(b)
        kinds[k] += 1
    for k, v in kinds.most_common():
        note("  %5d  %s", v, k)
    small = collections.Counter("%s len %d proto %d flags %s" % (
        shape(b), b["len"], b["proto"], ",".join(b["flags"]) or "-")
        for b in rx if b["len"] < 52)
    for k, v in small.most_common(6):
        note("  small: %5d  %s", v, k)
    # GRO: a frame merged into another skb keeps its own block; say so
    # and close what it had open.
    opened = [b for b in rx if any(is_open(r) and r["region"] != "queue"
                                   for r in b["records"])]
    ex = collections.Counter(shape(b) + " len %d proto %d" % (b["len"], b["proto"])
                             for b in opened)
    for k, v in ex.most_common(4):
        note("  open: %5d  %s", v, k)
    check(not opened, "%s: no rx block ends with rx-nic/rx-link/rx-ip/rx-tcp "
          "open (%d do)" % (a.name, len(opened)))
    return 1 if failed() else 0


def journey(b):
    """Problems with the regions of one data block over loopback."""
    errs = []
    queues = [r for r in b["records"] if r["region"] in QUEUES]
    recs = [r for r in b["records"] if r["region"] not in QUEUES]
    # An skb split off another one also has the copy made before the split
    # (SHARED): more than one copy interval before the header build.  The
    # earlier ones must come in order, each ending before the next starts.
    tcp_at = [i for i, r in enumerate(recs) if r["region"] == "tcp"]
    first_copy = recs[tcp_at[0]] if tcp_at else None
    extra = tcp_at[:-2]
    for i in extra:
        if end(recs[i]) > recs[i + 1]["start"] or recs[i + 1]["region"] != "tcp":
            errs.append("copy interval %d out of order" % i)
    recs = [r for i, r in enumerate(recs) if i not in extra]
    names = tuple(r["region"] for r in recs)
    if resent(b):
        return resent_journey(recs, names)
    if names != SEND + RECV:
        return ["regions %s" % " ".join(r["region"] for r in b["records"])]
    if not any(q["region"] == "backlog" for q in queues):
        errs.append("no backlog record (loopback goes through netif_rx)")
    for q in queues:
        if q["region"] == "sndq":	# from the first copy to the header build
            lo, hi = end(first_copy), recs[2]["start"]
        else:
            r = recs[names.index(QUEUES[q["region"]])]
            lo, hi = r["start"], end(r)
        if q["start"] < lo or end(q) > hi:
            errs.append("%s [%d,%d] out of place" % (q["region"], q["start"],
                                                     end(q)))
    for r in recs:
        if is_open(r):
            errs.append("%s open" % r["region"])
        if r["ticks"] >= 1 << 62:
            errs.append("%s negative" % r["region"])
    write = recs[0]
    inner = recs[1:5]
    for r in inner:			# tcp, tcp, ip, link inside write
        if r["start"] < write["start"] or end(r) > end(write):
            errs.append("%s [%d,%d] outside write [%d,%d]" % (
                r["region"], r["start"], end(r), write["start"], end(write)))
    chain = inner + [recs[5]] + recs[6:]
    prev = inner[0]
    for r in chain[1:]:
        p = write if r is recs[5] else prev
        if r["start"] < end(p):
            errs.append("%s starts at %d before %s ends at %d" % (
                r["region"], r["start"], p["region"], end(p)))
        prev = r
    return errs


def resent_journey(recs, names):
    """A retransmission's regions: in journey order, closed, one after another."""
    if names not in (RESENT + RECV, RESENT + RECV[:3]):
        return ["retransmission's regions %s" % " ".join(names)]
    errs = ["%s open" % r["region"] for r in recs if is_open(r)]
    for p, r in zip(recs[1:], recs[2:]):	# write holds the rest of the send
        if r["start"] < p["start"]:
            errs.append("%s starts before %s" % (r["region"], p["region"]))
    return errs


def loopback(a):
    blocks, losses = load(a.json)
    check(not losses, "loopback: no items lost (%d loss items)" % len(losses))
    lo = [b for b in blocks if b["ifindex"] == 1]
    data = [b for b in lo if b["dir"] == "tx"]
    other = [b for b in lo if b["dir"] == "rx"]
    note("loopback: %d blocks: %d sent (data), %d received only; tcpdump: "
         "%d with payload, %d without", len(lo), len(data), len(other),
         a.data, a.other)
    check(len(data) == a.data, "loopback: data blocks %d == packets with "
          "payload %d" % (len(data), a.data))
    check(len(other) == a.other, "loopback: receive-only blocks %d == "
          "packets without payload %d (SYN, pure ACK, FIN)"
          % (len(other), a.other))
    check(all("LOOPBACK" in b["flags"] and "RX" in b["flags"] for b in data),
          "loopback: every data block flagged LOOPBACK and RX")
    bad = 0
    for b in data:
        errs = journey(b)
        if errs:
            bad += 1
            if bad <= 10:
                note("block cpu %d seq %d flags %s: %s; records %s", b["cpu"],
                     b["seq"], ",".join(b["flags"]), "; ".join(errs[:4]),
                     " ".join("%s(%s)" % (r["region"], ",".join(r["flags"]))
                              for r in b["records"]))
    check(data and not bad, "loopback: every data block has write tcp tcp ip "
          "link nic rx-link rx-ip rx-tcp queue copy, nested and in journey "
          "order, a backlog record inside rx-link, the queues (sndq, qdisc, "
          "sk-backlog) in their places, none open (%d bad of %d)"
          % (bad, len(data)))
    qs = collections.Counter(r["region"] for b in data for r in b["records"]
                             if r["region"] in QUEUES)
    note("data blocks with a sndq (write-queue GAP) record: %d, with qdisc: "
         "%d, backlog: %d, sk-backlog: %d", qs["sndq"], qs["qdisc"],
         qs["backlog"], qs["sk-backlog"])
    shapes = collections.Counter(shape(b) for b in other)
    for k, v in shapes.most_common():
        note("  receive-only: %4d  %s", v, k)
    check(all(not any(r["region"] in SEND for r in b["records"]) and
              not any(r["region"] == "copy" for r in b["records"])
              for b in other),
          "loopback: receive-only blocks carry no send region and no copy")
    q = [r["ticks"] for b in data for r in b["records"] if r["region"] == "queue"]
    qus = [r["us"] for b in data for r in b["records"] if r["region"] == "queue"]
    svc = [sum(r["us"] for r in b["records"]
               if r["region"] in ("rx-link", "rx-ip", "rx-tcp", "copy")) -
           sum(r["us"] for r in b["records"]
               if r["region"] in ("backlog", "sk-backlog"))
           for b in data]
    if q:
        note("queue (waiting on the socket): mean %.1f us, p50 %.1f us; "
             "receive service (rx-link+rx-ip+rx-tcp+copy less the backlogs): "
             "mean %.1f us, "
             "p50 %.1f us (raw, TCG)", statistics.mean(qus),
             statistics.median(qus), statistics.mean(svc),
             statistics.median(svc))
    dups = sum(dropped_dup(b) for b in data)
    note("retransmissions dropped by the receiver as duplicates: %d", dups)
    check(len(q) == len(data) - dups and all(0 <= x < 1 << 62 for x in q),
          "loopback: queueing time reported apart, >= 0, in every data block "
          "the receiver kept (%d of %d; %d duplicates dropped)"
          % (len(q), len(data), dups))
    return 1 if failed() else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=("nic", "loopback"))
    p.add_argument("json")
    p.add_argument("--ifindex", type=int)
    p.add_argument("--rx-packets", type=int)
    p.add_argument("--rx-bytes", type=int)
    p.add_argument("--name", default="")
    p.add_argument("--data", type=int)
    p.add_argument("--other", type=int)
    a = p.parse_args()
    return nic(a) if a.cmd == "nic" else loopback(a)


if __name__ == "__main__":
    sys.exit(tap.run(main))
