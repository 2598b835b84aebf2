#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Assertions on MAGNeT event records, for tests/vm/t_magnet.sh.

    magnet_check.py ftp FILE.json TEXT --lport L --rport R --writes N
                    --size S --interval-ms MS --tol-ms T
        MAGNeT's FTP example: N writes of S bytes every MS ms from L to R.
    magnet_check.py state FILE.json --lport L --rport R --client CLI.json
                    --ss SS.txt
        TCP state in the records against `ss -tin` read at the end.
    magnet_check.py udp FILE.json --lport 0 --rport P --writes N --size S
        N datagrams of S bytes to port P: UDP's events between the socket's
        and IP's, on each side, one per datagram, with its payload.

FILE.json is `nsdump -r trace --json -M`, TEXT `nsdump -r trace -M`.
Output: one line per assertion, "ok DESCRIPTION" or "fail DESCRIPTION",
and "# ..." lines with the measured numbers; the caller makes TAP of it.
Exit status 0 when every assertion held.
"""
import json
import re
import statistics
import sys

import tap

from nsjson import items
from tap import check, failed, note

NSL_TSO = "TSO"


def load(path):
    it = items(path)
    return it["event"], it["block"], it["loss"], it["conn"], it["table"]


def time_order(events, table):
    """Printed in time order across CPUs, but for the records nsdump
    counted as late (arrived after its horizon): here, none."""
    inversions, top = 0, 0
    for e in events:
        if e["tsc"] < top:
            inversions += 1
        top = max(top, e["tsc"])
    late = table[0].get("events_late") if table else None
    cpus = sorted({e["cpu"] for e in events})
    note("event records from CPUs %s; %d printed before an older one; "
         "nsdump counted %s late", cpus, inversions, late)
    check(inversions == late == 0,
          "event records in time order across CPUs (%d inversions, %s "
          "counted late)" % (inversions, late))


def of_conn(events, sport, dport):
    """Events of the socket with local port @sport and remote @dport."""
    conn = {e["conn"] for e in events
            if e.get("sport") == sport and e.get("dport") == dport}
    return [e for e in events if e["conn"] in conn], conn


def typed(evs, name):
    return [e for e in evs if e["event"] == "MAGNET_" + name]


def by_seq(evs):
    return sorted(evs, key=lambda e: (e["tsc"], e["cpu"], e["seq"]))


def rx_triples(evs):
    """DEV_RECV, IP_RECV, TCP_RECV of one skb: produced back to back on one
    CPU (other items may come between), the same IP header."""
    out, bad = [], 0
    last = {}
    for e in sorted(evs, key=lambda e: (e["cpu"], e["seq"])):
        k = e["event"]
        if k in ("MAGNET_DEV_RECV", "MAGNET_IP_RECV"):
            last[(e["cpu"], k)] = e
        elif k == "MAGNET_TCP_RECV":
            dev = last.pop((e["cpu"], "MAGNET_DEV_RECV"), None)
            ip = last.pop((e["cpu"], "MAGNET_IP_RECV"), None)
            if dev and ip and dev.get("ip") == ip.get("ip") == e.get("ip"):
                out.append((dev, ip, e))
            else:
                bad += 1
    return out, bad


def retrans_payload(blocks, conns, flag="RETRANS"):
    """Payload bytes of the blocks of @conns flagged @flag, and how many."""
    total = n = 0
    for b in blocks:
        if b["dir"] == "tx" and b["conn"] in conns and flag in b["flags"]:
            total += b["len"] - b["nhlen"] - b["thlen"]
            n += 1
    return total, n


def table3_row(text, lport, rport, event):
    """The Table III row of @event for the connection lport -> rport."""
    cur = False
    for line in text.splitlines():
        m = re.match(r"conn \S+ local [\d.]+:(\d+) remote [\d.]+:(\d+)", line)
        if m:
            cur = (int(m.group(1)), int(m.group(2))) == (lport, rport)
            continue
        f = line.split()
        if cur and f and f[0] == "MAGNET_" + event:
            return f
    return None


def ftp(a, path, text_path):
    events, blocks, losses, conns, table = load(path)
    with open(text_path) as f:
        text = f.read()
    N, S = a.writes, a.size
    check(not losses, "no items lost (%d loss items)" % len(losses))
    time_order(events, table)
    tx, tx_conn = of_conn(events, a.lport, a.rport)
    rx, rx_conn = of_conn(events, a.rport, a.lport)
    note("sender conn %s: %d records; receiver conn %s: %d records",
         sorted(tx_conn), len(tx), sorted(rx_conn), len(rx))
    check(len(tx_conn) == 1 and len(rx_conn) == 1,
          "one connection id at each end (%d, %d)"
          % (len(tx_conn), len(rx_conn)))

    # --- the application's writes
    ss = by_seq(typed(tx, "SOCK_SEND"))
    sizes = sorted({e["bytes"] for e in ss})
    note("SOCK_SEND: %d records, sizes %s", len(ss), sizes)
    check(len(ss) == N, "SOCK_SEND count %d == writes %d" % (len(ss), N))
    check(all(e["bytes"] == S for e in ss),
          "every SOCK_SEND is exactly %d bytes" % S)
    gaps = [(b["time_ns"] - p["time_ns"]) / 1e6 for p, b in zip(ss, ss[1:])]
    if gaps:
        med = statistics.median(gaps)
        mean = statistics.mean(gaps)
        note("SOCK_SEND spacing: median %.3f ms, mean %.3f ms, min %.3f, "
             "max %.3f (TCG: a late write is followed by a short gap)",
             med, mean, min(gaps), max(gaps))
        check(abs(med - a.interval_ms) <= a.tol_ms,
              "SOCK_SEND spacing median %.3f ms == %g ms +- %g ms"
              % (med, a.interval_ms, a.tol_ms))

    # --- what TCP and IP made of them
    ts = by_seq(typed(tx, "TCP_SEND"))
    ips = by_seq(typed(tx, "IP_SEND"))
    devs = by_seq(typed(tx, "DEV_SEND"))
    mss = {e["tcp"]["mss"] for e in ts if "tcp" in e}
    big = [e for e in ts if "tcp" in e and e["bytes"] > e["tcp"]["mss"]]
    tso = [e for e in ts if NSL_TSO in e["flags"]]
    note("TCP_SEND: %d records, %d bytes, mss %s, largest %d; %d larger "
         "than the mss, %d flagged TSO", len(ts),
         sum(e["bytes"] for e in ts), sorted(mss),
         max([e["bytes"] for e in ts] or [0]), len(big), len(tso))
    check(bool(ts) and all("tcp" in e for e in ts), "TCP_SEND records carry TCP state")
    check(all(NSL_TSO in e["flags"] for e in big),
          "TCP_SEND larger than the mss are flagged TSO (%d of %d)"
          % (sum(NSL_TSO in e["flags"] for e in big), len(big)))
    check(all(e["bytes"] > e["tcp"]["mss"] for e in tso if "tcp" in e),
          "TCP_SEND flagged TSO are larger than the mss")
    check(len(ips) == len(ts) and len(devs) == len(ts),
          "one IP_SEND and one DEV_SEND per TCP_SEND (%d, %d, %d)"
          % (len(ts), len(ips), len(devs)))
    # IP adds its and TCP's headers, the device the Ethernet header.
    iph = {i["bytes"] - t["bytes"] for t, i in zip(ts, ips)}
    ethh = {d["bytes"] - i["bytes"] for i, d in zip(ips, devs)}
    note("IP_SEND - TCP_SEND: %s bytes; DEV_SEND - IP_SEND: %s bytes",
         sorted(iph), sorted(ethh))
    check(len(iph) == 1 and 40 <= min(iph) <= 120,
          "IP_SEND == TCP_SEND + one header size (%s)" % sorted(iph))
    check(ethh == {14}, "DEV_SEND == IP_SEND + 14 (%s)" % sorted(ethh))

    # --- byte totals: the application's bytes, once each, on the wire
    sock_sum = sum(e["bytes"] for e in ss)
    tcp_sum = sum(e["bytes"] for e in ts)
    rbytes, rn = retrans_payload(blocks, tx_conn)
    sbytes, sn = retrans_payload(blocks, tx_conn, "RESENT")
    tr = max([e["tcp"]["total_retrans"] for e in tx if "tcp" in e] or [0])
    note("bytes: SOCK_SEND %d, TCP_SEND %d, retransmitted %d in %d blocks, "
         "resent after a failed attempt %d in %d (TCP state total_retrans %d)",
         sock_sum, tcp_sum, rbytes, rn, sbytes, sn, tr)
    check(rn == 0 or tr > 0, "RETRANS blocks only if TCP counted a retransmission")
    check(tcp_sum - rbytes - sbytes == sock_sum == N * S,
          "TCP_SEND bytes %d - retransmitted %d - resent %d == SOCK_SEND "
          "bytes %d == %d" % (tcp_sum, rbytes, sbytes, sock_sum, N * S))

    # --- the receiver
    trip, orphans = rx_triples(rx)
    devr, ipr, tcpr = (typed(rx, n) for n in ("DEV_RECV", "IP_RECV",
                                                "TCP_RECV"))
    sr = typed(rx, "SOCK_RECV")
    tcpr_sum = sum(e["bytes"] for e in tcpr)
    sr_sum = sum(e["bytes"] for e in sr)
    note("receiver: %d DEV_RECV (%d bytes), %d IP_RECV (%d bytes), "
         "%d TCP_RECV (%d bytes), %d SOCK_RECV (%d bytes)",
         len(devr), sum(e["bytes"] for e in devr), len(ipr),
         sum(e["bytes"] for e in ipr), len(tcpr), tcpr_sum, len(sr), sr_sum)
    check(tcpr_sum == N * S, "TCP_RECV bytes %d == written %d"
          % (tcpr_sum, N * S))
    check(sr_sum == N * S, "SOCK_RECV bytes %d == written %d" % (sr_sum, N * S))
    check(orphans == 0 and len(trip) == len(devr) == len(ipr),
          "DEV_RECV, IP_RECV, TCP_RECV come in triples (%d triples, %d "
          "incomplete)" % (len(trip), orphans))
    hdr = {i["bytes"] - t["bytes"] for d, i, t in trip if t["bytes"]}
    # An skb that waited out of order may have had the segments after it
    # coalesced into it (tcp_ooo_try_coalesce): its TCP_RECV then carries
    # more than its own IP header announced; those segments have no
    # events of their own, and the byte totals above hold either way.
    ooo = [(i["bytes"], t["bytes"]) for d, i, t in trip
           if t["bytes"] and i["bytes"] - t["bytes"] < min(iph)]
    bad_ip = [(i["bytes"], t["bytes"]) for d, i, t in trip
              if t["bytes"] and i["bytes"] - t["bytes"] not in iph and
              (i["bytes"], t["bytes"]) not in ooo]
    note("IP_RECV - TCP_RECV of data skbs: %s bytes (send side: %s); %d "
         "skbs carry out-of-order segments coalesced into them %s",
         sorted(hdr)[:8], sorted(iph), len(ooo), ooo[:4])
    check(not bad_ip, "IP_RECV == TCP_RECV + the header size, for every "
          "data skb but those (%d wrong, e.g. IP %s)"
          % (len(bad_ip), bad_ip[:4]))
    bad_dev = [(d["bytes"], i["bytes"]) for d, i, t in trip
               if d["bytes"] != i["bytes"]]
    check(not bad_dev, "DEV_RECV == IP_RECV for every skb (%d differ, e.g. "
          "(dev, ip) %s)" % (len(bad_dev), bad_dev[:4]))
    dev_payload = sum(d["bytes"] for d, i, t in trip) - \
        sum(i["bytes"] - t["bytes"] for d, i, t in trip)
    check(dev_payload == N * S, "DEV_RECV bytes less headers %d == written %d"
          % (dev_payload, N * S))

    # --- Table III, as nsdump -M prints it
    row = table3_row(text, a.lport, a.rport, "SOCK_SEND")
    note("Table III SOCK_SEND row: %s", row)
    if check(row is not None and len(row) >= 5,
             "Table III has a SOCK_SEND row for %d -> %d" % (a.lport, a.rport)):
        n, mean, spacing = int(row[1]), float(row[2]), row[5]
        check(n == N and mean == float(S),
              "Table III SOCK_SEND: n %d == %d, mean size %.1f == %d"
              % (n, N, mean, S))
        # The writes follow an absolute schedule: the mean gap is the span
        # over N - 1 and does not drift, whatever TCG does to one gap.
        sp = float(spacing) / 1000.0 if spacing != "-" else -1
        check(abs(sp - a.interval_ms) <= a.tol_ms,
              "Table III SOCK_SEND mean spacing %.3f ms == %g ms +- %g ms"
              % (sp, a.interval_ms, a.tol_ms))
    row = table3_row(text, a.lport, a.rport, "TCP_SEND")
    if check(row is not None, "Table III has a TCP_SEND row"):
        check(int(row[1]) == len(ts) and int(row[-1]) == len(tso),
              "Table III TCP_SEND: n %s == %d, TSO %s == %d"
              % (row[1], len(ts), row[-1], len(tso)))
    return 1 if failed() else 0


def parse_ss(path):
    with open(path) as f:
        s = f.read()
    m = re.search(r"\bcwnd:(\d+)", s)
    r = re.search(r"\brtt:([\d.]+)/", s)
    t = re.search(r"\bretrans:\d+/(\d+)", s)
    b = re.search(r"\bbytes_retrans:(\d+)", s)
    if not m or not r:
        return None
    return {"cwnd": int(m.group(1)), "srtt_us": round(float(r.group(1)) * 1000),
            "total_retrans": int(t.group(1)) if t else 0,
            "bytes_retrans": int(b.group(1)) if b else 0}


def state(a, path):
    events, blocks, losses, conns, table = load(path)
    with open(a.client) as f:
        cli = json.load(f)
    ss = parse_ss(a.ss)
    if not check(ss is not None, "ss -tin shows the connection"):
        return 1
    note("ss -tin after the last write: cwnd %d, srtt %d us, total_retrans %d",
         ss["cwnd"], ss["srtt_us"], ss["total_retrans"])
    check(not losses, "no items lost (%d loss items)" % len(losses))
    time_order(events, table)
    tx, tx_conn = of_conn(events, a.lport, a.rport)
    tx = [e for e in by_seq(tx) if "tcp" in e]
    socks = typed(tx, "SOCK_SEND")
    check(len(socks) == cli["writes"] + 1,
          "SOCK_SEND count %d == writes %d + the probe"
          % (len(socks), cli["writes"]))
    tcp_sum = sum(e["bytes"] for e in typed(tx, "TCP_SEND"))
    rbytes, rn = retrans_payload(blocks, tx_conn)
    sbytes, sn = retrans_payload(blocks, tx_conn, "RESENT")
    check(tcp_sum - rbytes - sbytes == cli["bytes"],
          "TCP_SEND bytes %d - retransmitted %d - resent %d == written %d"
          % (tcp_sum, rbytes, sbytes, cli["bytes"]))
    if not check(socks and socks[-1]["bytes"] == 1, "the probe's SOCK_SEND"):
        return 1
    probe = socks[-1]
    # RETRANS exactly where TCP counts a retransmission: ss ran once
    # everything was acknowledged, before the probe.
    early = [bl for bl in blocks if bl["tsc0"] < probe["tsc"]]
    rb, _ = retrans_payload(early, tx_conn)
    check(rb == ss["bytes_retrans"],
          "retransmitted payload in RETRANS blocks %d == ss bytes_retrans %d"
          % (rb, ss["bytes_retrans"]))
    # The last records of the transfer: before the probe, data carried.
    data = [e for e in tx if e["tsc"] < probe["tsc"] and
            e["event"] in ("MAGNET_TCP_SEND", "MAGNET_IP_SEND",
                           "MAGNET_DEV_SEND")]
    last = data[-1]["tcp"]
    pt = probe["tcp"]
    note("last data record (%s): cwnd %d, srtt %d us, total_retrans %d, "
         "packets_out %d", data[-1]["event"], last["snd_cwnd"],
         last["srtt_us"], last["total_retrans"], last["packets_out"])
    note("probe SOCK_SEND: cwnd %d, srtt %d us, total_retrans %d, ssthresh %d",
         pt["snd_cwnd"], pt["srtt_us"], pt["total_retrans"],
         pt["snd_ssthresh"])
    # At the probe's sendmsg() nothing happened since ss: exact.
    check(pt["snd_cwnd"] == ss["cwnd"],
          "probe record cwnd %d == ss %d" % (pt["snd_cwnd"], ss["cwnd"]))
    check(abs(pt["srtt_us"] - ss["srtt_us"]) <= 1,
          "probe record srtt %d us == ss %d us (+-1 us: ss prints ms)"
          % (pt["srtt_us"], ss["srtt_us"]))
    check(pt["total_retrans"] == ss["total_retrans"],
          "probe record total_retrans %d == ss %d"
          % (pt["total_retrans"], ss["total_retrans"]))
    # The last data record precedes the ACKs of its packets_out segments;
    # without loss each ACKed segment grows cwnd by at most one.  After a
    # recovery, an undo (the retransmissions found spurious by DSACK or
    # timestamps) puts back the cwnd from before the recovery without a
    # further retransmission: the bound is then that cwnd, the largest
    # any earlier record showed, plus the packets out.
    grow = ss["cwnd"] - last["snd_cwnd"]
    if ss["total_retrans"] != last["total_retrans"]:
        note("a retransmission after the last data record: cwnd not compared")
    elif ss["total_retrans"] == 0:
        check(0 <= grow <= last["packets_out"],
              "last data record cwnd %d: ss cwnd %d is %+d, within "
              "[0, packets_out %d] (ACKs after it)"
              % (last["snd_cwnd"], ss["cwnd"], grow, last["packets_out"]))
    else:
        peak = max(e["tcp"]["snd_cwnd"] for e in data)
        top = max(peak, last["snd_cwnd"]) + last["packets_out"]
        check(last["snd_cwnd"] <= ss["cwnd"] <= top,
              "last data record cwnd %d: ss cwnd %d within [it, largest "
              "cwnd before %d + packets_out %d] (recovery undone after it)"
              % (last["snd_cwnd"], ss["cwnd"], peak, last["packets_out"]))
    # The ACKs of its packets_out segments each move srtt by an eighth
    # of their sample's difference from it, after the record: how far
    # depends on samples no record shows (21.1 ms before 456 ACKs, 12.5
    # ms after them, in a loaded run).  The probe's srtt above is exact.
    check(last["srtt_us"] > 0,
          "last data record srtt %d us > 0 (ss %d us after its %d "
          "packets_out were ACKed)"
          % (last["srtt_us"], ss["srtt_us"], last["packets_out"]))
    check(last["total_retrans"] == ss["total_retrans"],
          "last data record total_retrans %d == ss %d"
          % (last["total_retrans"], ss["total_retrans"]))
    return 1 if failed() else 0


def udp(a, path):
    """The sockets are the blocks' (a block's conn is its socket's cookie,
    as the events' is): the sender's send blocks and the receiver's
    receive blocks of the flow to port --rport."""
    events, blocks, losses, conns, _ = load(path)
    check(not losses, "udp: no items lost (%d loss items)" % len(losses))
    flow = [b for b in blocks if b.get("proto") == 17 and b.get("dport") == a.rport]
    tx = {b["conn"] for b in flow if b["dir"] == "tx"}
    rx = {b["conn"] for b in flow if b["dir"] == "rx"}
    note("udp: %d send blocks on %d socket(s), %d receive blocks on %d",
         sum(b["dir"] == "tx" for b in flow), len(tx),
         sum(b["dir"] == "rx" for b in flow), len(rx))
    check(len(tx) == 1 and len(rx) == 1, "udp: one sending and one receiving "
          "socket (%d, %d)" % (len(tx), len(rx)))
    if len(tx) != 1 or len(rx) != 1:
        return 1
    send = by_seq([e for e in events if e["conn"] in tx])
    recv = by_seq([e for e in events if e["conn"] in rx])
    rows = []
    for side, evs, names in (("send", send, ("SOCK_SEND", "UDP_SEND", "IP_SEND", "DEV_SEND")),
                             ("receive", recv, ("DEV_RECV", "IP_RECV", "UDP_RECV", "SOCK_RECV"))):
        per = {n: typed(evs, n) for n in names}
        rows.append("%s: %s" % (side, ", ".join("%s %d" % (n, len(v)) for n, v in per.items())))
        check(all(len(v) == a.writes for v in per.values()),
              "udp %s: %d events of each of %s" % (side, a.writes, ", ".join(names)))
        u = per[names[1] if side == "send" else names[2]]
        bad = [e["bytes"] for e in u if e["bytes"] != a.size]
        check(u and not bad, "udp %s: every UDP event carries the %d-byte payload "
              "(%d do not: %s)" % (side, a.size, len(bad), bad[:5]))
        # The datagrams go one at a time: the i-th of each kind belong
        # together, in the journey's order.
        order = 0
        if all(len(v) == a.writes for v in per.values()):
            for i in range(a.writes):
                t = [per[n][i]["tsc"] for n in names]
                order += t != sorted(t)
        check(order == 0, "udp %s: each datagram's events in the order %s "
              "(%d out of order)" % (side, " <= ".join(names), order))
    note("udp events: %s", "; ".join(rows))
    if a.saddr:
        udp_addrs(a, send, recv, conns, tx, rx)
    # Table III has UDP's rows, between the socket's and IP's.
    for c in conns:
        if c["conn"] in tx | rx:
            got = [l["event"] for l in c["layers"]]
            want = "MAGNET_UDP_SEND" if c["conn"] in tx else "MAGNET_UDP_RECV"
            n = {l["event"]: l["n"] for l in c["layers"]}
            note("udp: Table III of conn %d: %s", c["conn"], got)
            check(n.get(want) == a.writes and
                  got.index(want) == got.index(want.replace("UDP", "SOCK")) +
                  (1 if c["conn"] in tx else -1),
                  "udp: Table III row %s (n %s) next to the socket's"
                  % (want, n.get(want)))
    return 1 if failed() else 0


def udp_addrs(a, send, recv, conns, tx, rx):
    """--saddr/--daddr: the addresses the events and Table III give: a
    packet's events (IP, DEV) the packet's, source first; the connection
    rows local first, as the socket sees them."""
    pkt = [e for e in send + recv
           if e["event"] in ("MAGNET_IP_SEND", "MAGNET_DEV_SEND",
                             "MAGNET_DEV_RECV", "MAGNET_IP_RECV")]
    v6 = ":" in a.saddr
    flag = [e for e in pkt if ("ADDR6" in e["flags"]) != v6]
    bad = [(e["event"], e.get("saddr"), e.get("daddr")) for e in pkt
           if (e.get("saddr"), e.get("daddr")) != (a.saddr, a.daddr)]
    check(pkt and not flag, "udp addresses: %d packet events, every one %s "
          "ADDR6 (%d are not)" % (len(pkt), "flagged" if v6 else "without",
                                  len(flag)))
    check(pkt and not bad, "udp addresses: every packet event says %s > %s "
          "(%d do not: %s)" % (a.saddr, a.daddr, len(bad), bad[:3]))
    rows = {c["conn"]: (c.get("laddr"), c.get("raddr")) for c in conns}
    want = {}
    for c in tx:
        want[c] = (a.saddr, a.daddr)
    for c in rx:
        want[c] = (a.daddr, a.saddr)
    wrong = {c: rows.get(c) for c in want if rows.get(c) != want[c]}
    note("udp addresses: Table III rows %s", {c: rows.get(c) for c in want})
    check(not wrong, "udp addresses: each socket's Table III row has local "
          "and remote address right (%d wrong: %s)" % (len(wrong), wrong))


def main(argv):
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=("ftp", "state", "udp"))
    p.add_argument("json")
    p.add_argument("text", nargs="?")
    p.add_argument("--lport", type=int, required=True)
    p.add_argument("--rport", type=int, required=True)
    p.add_argument("--writes", type=int)
    p.add_argument("--size", type=int)
    p.add_argument("--interval-ms", type=float, default=20.0)
    p.add_argument("--tol-ms", type=float, default=3.0)
    p.add_argument("--client")
    p.add_argument("--ss")
    p.add_argument("--saddr", help="udp: the sender's address")
    p.add_argument("--daddr", help="udp: the receiver's address")
    a = p.parse_args(argv[1:])
    if a.cmd == "ftp":
        return ftp(a, a.json, a.text)
    if a.cmd == "udp":
        return udp(a, a.json)
    return state(a, a.json)


if __name__ == "__main__":
    sys.exit(tap.run(main, sys.argv))
