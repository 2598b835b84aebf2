#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks on what nsdump reports, for the in-VM tests.

    nscheck.py send-integrity FILE.json [--ifindex N] [--loopback]
    nscheck.py count FILE.json --ifindex N [--loopback]
        prints: blocks, segments, blocks of software GSO segments, and
        of those the ones that claim more than one segment (must be 0)
    send-integrity ... --counts-to OUT also writes count's line to OUT:
        one parse of the JSON for both (under TCG a NIC run's takes ~30 s)

FILE.json is `nsdump -r trace --json` output: one object per line.
Exit 0 when every assertion holds, 1 otherwise, with one line per failure
(the first 20) on stdout.
"""
import sys

from nsjson import items

SEND_REGIONS = ("write", "tcp", "ip", "link", "nic")


def load(path):
    it = items(path)
    return it["block"], it["loss"]


def selected(blocks, ifindex, loopback):
    out = []
    for b in blocks:
        if b["dir"] != "tx" or "NOXMIT" in b["flags"]:
            continue
        if ifindex is not None and b["ifindex"] != ifindex:
            continue
        if loopback and "LOOPBACK" not in b["flags"]:
            continue
        out.append(b)
    return out


def end(r):
    return r["start"] + r["ticks"]


def check_send_block(b):
    """Returns the list of problems with one transmitted block."""
    errs = []
    recs = b["records"]
    by = {}
    for r in recs:
        by.setdefault(r["region"], []).append(r)
        if "OPEN" in r["flags"]:
            errs.append("%s never stopped" % r["region"])
        if r["ticks"] < 0 or r["ticks"] >= 1 << 62:
            errs.append("%s negative duration %d" % (r["region"], r["ticks"]))
    # The queues inside write: the TCP write queue (a GAP record between
    # the copy and the header build) and the qdisc (inside link).
    sndq = by.pop("sndq", [])
    qdisc = by.pop("qdisc", [])
    recs = [r for r in recs if r["region"] not in ("sndq", "qdisc")]
    for name in SEND_REGIONS:
        if name not in by:
            errs.append("no %s region" % name)
    if errs:
        return errs
    if len(by["write"]) != 1 or len(by["ip"]) != 1 or len(by["link"]) != 1 \
            or len(by["nic"]) != 1:
        errs.append("write/ip/link/nic must appear once each: %s"
                    % [r["region"] for r in recs])
        return errs
    write, ip, link, nic = (by[n][0] for n in ("write", "ip", "link", "nic"))
    tcps = by["tcp"]
    retrans = "RETRANS" in b["flags"]
    # Copy then header build; an skb split off another one also has the
    # copy made before the split (SHARED): more than one copy interval.
    if retrans and len(tcps) != 1 or not retrans and len(tcps) < 2:
        errs.append("%d tcp intervals, expected %s"
                    % (len(tcps), "1 (header)" if retrans
                       else "copies + header"))
    if recs[0] is not write:
        errs.append("write is not the first region: %s"
                    % [r["region"] for r in recs])
    # Nesting: tcp, ip and link lie inside write, one level deeper.
    for r in tcps + [ip, link]:
        if r["start"] < write["start"] or end(r) > end(write):
            errs.append("%s [%d,%d] not inside write [%d,%d]"
                        % (r["region"], r["start"], end(r),
                           write["start"], end(write)))
        if r["depth"] != write["depth"] + 1:
            errs.append("%s depth %d, write depth %d"
                        % (r["region"], r["depth"], write["depth"]))
    # Order: tcp (copy, header) then ip then link; nic after write.
    chain = tcps + [ip, link]
    for a, c in zip(chain, chain[1:]):
        if end(a) > c["start"]:
            errs.append("%s ends at %d after %s starts at %d"
                        % (a["region"], end(a), c["region"], c["start"]))
    if nic["start"] < end(write):
        errs.append("nic starts at %d before write ends at %d"
                    % (nic["start"], end(write)))
    if nic["depth"] != 0 or write["depth"] != 0:
        errs.append("write/nic not top level")
    for q in sndq:
        if "GAP" not in q["flags"] or retrans:
            errs.append("sndq must be a GAP record of a first transmission")
        if q["start"] < end(tcps[0]) or end(q) > tcps[-1]["start"]:
            errs.append("sndq [%d,%d] not between the copy and the header"
                        % (q["start"], end(q)))
    for q in qdisc:
        if q["start"] < link["start"] or end(q) > end(link):
            errs.append("qdisc not inside link")
    if b["segs"] < 1:
        errs.append("gso segs %d" % b["segs"])
    return errs


def count(blocks, sel, out):
    gso = [b for b in sel if "GSO" in b["flags"]]
    print(len(sel), sum(b["segs"] for b in sel), len(gso),
          sum(b["segs"] != 1 for b in gso), file=out)
    noxmit = [b for b in blocks if "NOXMIT" in b["flags"]]
    if noxmit:
        print("# %d NOXMIT blocks (never reached a driver): %s" % (
            len(noxmit), [(b["cpu"], b["seq"], b["len"]) for b in noxmit[:5]]),
            file=sys.stderr)


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    cmd, path = argv[1], argv[2]
    ifindex, loopback = None, "--loopback" in argv
    if "--ifindex" in argv:
        ifindex = int(argv[argv.index("--ifindex") + 1])
    blocks, losses = load(path)
    sel = selected(blocks, ifindex, loopback)
    if cmd == "count":
        count(blocks, sel, sys.stdout)
        return 0
    if cmd != "send-integrity":
        print("unknown command", cmd)
        return 2
    if "--counts-to" in argv:
        with open(argv[argv.index("--counts-to") + 1], "w") as f:
            count(blocks, sel, f)
    bad = 0
    for b in sel:
        errs = check_send_block(b)
        if errs:
            bad += 1
            if bad <= 20:
                print("block cpu %d seq %d: %s" % (b["cpu"], b["seq"],
                                                    "; ".join(errs)))
    print("%d blocks checked, %d bad, %d retransmissions, %d loss items"
          % (len(sel), bad, sum("RETRANS" in b["flags"] for b in sel),
             len(losses)))
    if not sel:
        print("no blocks selected")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
