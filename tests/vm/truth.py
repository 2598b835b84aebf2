#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Each block of one UDP flow against the kernel's own tracepoints, for
t_truth.sh: an independent measurement at the same points, on the same
clock (tracefs's x86-tsc trace clock reads the TSC the blocks use).

    truth.py tx TRACE.nst TRACE.txt --port P --dev eth0 --wire-len L
             [--off OFF.nst]
    truth.py rx TRACE.nst TRACE.txt --port P --dev eth1 --len L
             --payload N [--off OFF.nst]

tx: every send block's `link` region (from __dev_queue_xmit() to the
driver hand-off) must contain, on its CPU, exactly one net_dev_queue and
one net_dev_start_xmit of the flow's skb (the same skbaddr), in that
order, and every such event of the flow must fall in exactly one block:
    link.start <= net_dev_queue <= net_dev_start_xmit <= link.end
A link record flagged MIGRATED ended on another CPU: the qdisc was run
there (net_tx_action on the CPU that took the NIC's interrupt, the queue
having been stopped), so its start_xmit is on that CPU, and the sender
may have queued its next datagram meanwhile.  Its skb's own pair is
then the one queue event on the record's CPU and the one start_xmit on
any CPU inside the region with the same skbaddr; such packets are left
out of the residual (two CPUs' work).
The residual r = link - (start_xmit - queue) is the code the tracepoints
do not bracket (before net_dev_queue: the egress hook, the tx queue's
pick) plus what the tracepoints themselves cost inside the region.  With
--off (the same flow captured with the events disabled), the events' own
cost is measured as (median link traced - median link untraced) / 2, and
each packet's residual may exceed the median residual by no more than
the cost of those two events: beyond that, the block measured something
the tracepoints did not see.  Packets during which the CPU took an
interrupt (irq, softirq, local timer, IPI: their events on the same CPU
inside the window) are counted and left out of that bound only.

rx: every receive block's rx-nic region contains its napi_gro_receive_entry,
its rx-link the netif_receive_skb of the same skb (and its copy region
the skb_copy_datagram_iovec of the payload, where UDP's copy is traced),
each on the record's CPU, and every such event of the flow lies in
exactly one block.  With --off, the span from rx-nic's start to rx-link's
end is bounded as the send side's link: its residual (span minus the
interval between the two events) stays, quantile by quantile up to p90,
within the untraced span plus two events' cost.

Prints "ok ..." / "fail ..." / "# ..." lines (tap_lines in lib.sh).
"""
import argparse
import os
import re
import sys

import tap
from tap import check

import nsioctl
import nspath

LINE = re.compile(r"^\s*(.*?)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+):\s+([\w:]+):\s*(.*)$")
IRQ = ("irq_handler_entry", "softirq_entry", "local_timer_entry",
       "call_function_entry", "call_function_single_entry",
       "reschedule_entry", "irq_work_entry", "error_apic_entry",
       "spurious_apic_entry", "thermal_apic_entry", "x86_platform_ipi_entry")


def events(path):
    """(cpu, tsc, name, fields) of each line of a tracefs `trace` file."""
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = LINE.match(line)
            if not m:
                continue
            fields = dict(kv.split("=", 1) for kv in m.group(5).split()
                          if "=" in kv)
            out.append((int(m.group(2)), int(m.group(3)),
                        m.group(4).rsplit(":", 1)[-1], fields))
    return out


def flow_blocks(path, direction, port):
    return [b for b in nspath.blocks(path)
            if b["dir"] == direction and b["proto"] == 17
            and port in (b["sport"], b["dport"])]


def region(b, name):
    rs = [r for r in b["records"] if r["region"] == name]
    if len(rs) != 1:
        return None
    r = rs[0]
    s = b["tsc0"] + r["start"]
    return r["cpu"], s, s + r["ticks"]


def migrated(b, name):
    """Whether @b's one record of region @name ended on another CPU."""
    return any(r["region"] == name and r["flags"] & nspath.RF["MIGRATED"]
               for r in b["records"])


def own_pair(qs, x_cpu, s, e):
    """The queue event of @qs and the start_xmit on any CPU in [s, e] of
    the same skb, in order: the one pair, or None."""
    xs = [x for c in x_cpu for x in inside(x_cpu, c, s, e)]
    pairs = [(q, x) for q in qs for x in xs
             if q[3].get("skbaddr") == x[3].get("skbaddr") and q[1] <= x[1]]
    return pairs[0] if len(pairs) == 1 else None


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] if xs else 0


def dist(xs, khz):
    ns = [x * 1e6 / khz for x in xs]
    return ("n %d min %.0f p50 %.0f p90 %.0f p99 %.0f max %.0f ns"
            % (len(ns), min(ns), pct(ns, 50), pct(ns, 90), pct(ns, 99),
               max(ns))) if ns else "n 0"


def inside(evs, cpu, s, e):
    """The events of @evs (sorted by tsc, of one CPU) within [s, e]."""
    return [x for x in evs.get(cpu, ()) if s <= x[1] <= e]


def by_cpu(evs):
    out = {}
    for x in evs:
        out.setdefault(x[0], []).append(x)
    return out


def bound(resid, untraced, tc, khz, side, what):
    """Each quantile of @resid up to p90 against the same quantile of the
    @untraced interval plus two events of @tc ticks each.  What the
    tracepoints do not bracket is part of the interval's own work plus
    what the two events cost inside it, so it cannot exceed that.  Up to
    p90 only: above it, under TCG, any interval may hold the other vCPU's
    time slice (the untraced interval's own tail shows it)."""
    rows, worse = [], []
    for q in (10, 25, 50, 75, 90):
        r, lim = pct(resid, q), pct(untraced, q) + 2 * tc
        rows.append("p%d %.0f <= %.0f" % (q, r * 1e6 / khz, lim * 1e6 / khz))
        if r > lim:
            worse.append("p%d" % q)
    print("# %s: residual vs untraced %s + 2 events (ns): %s"
          % (side, what, ", ".join(rows)))
    check(resid and untraced and not worse,
          "%s: the residual, quantile by quantile up to p90, within the "
          "untraced %s plus two trace events' cost%s"
          % (side, what, " (beyond at %s)" % ", ".join(worse) if worse else ""))


def cmd_tx(a, khz):
    blocks = flow_blocks(a.nst, 0, a.port)
    evs = events(a.trace)
    dev = lambda x: x[3].get("dev") == a.dev and \
        x[3].get("len") == str(a.wire_len)
    queue = [x for x in evs if x[2] == "net_dev_queue" and dev(x)]
    xmit = [x for x in evs if x[2] == "net_dev_start_xmit" and dev(x)]
    irqs = by_cpu([x for x in evs if x[2] in IRQ])
    q_cpu, x_cpu = by_cpu(queue), by_cpu(xmit)
    print("# %d send blocks of port %d; on %s with len %d: %d net_dev_queue,"
          " %d net_dev_start_xmit" % (len(blocks), a.port, a.dev, a.wire_len,
                                      len(queue), len(xmit)))
    seen_q, seen_x = set(), set()
    bad, resid, links, interrupted, moved, shared = [], [], [], 0, 0, 0
    d_start, d_end = [], []
    for b in blocks:
        lk = region(b, "link")
        if lk is None:
            bad.append("seq %d: no single link record" % b["seq"])
            continue
        cpu, s, e = lk
        qs, xs = inside(q_cpu, cpu, s, e), inside(x_cpu, cpu, s, e)
        pair = own_pair(qs, x_cpu, s, e) if migrated(b, "link") else None
        if pair:
            seen_q.add(pair[0][:2])
            seen_x.add(pair[1][:2])
            moved += 1
            continue
        if len(qs) != 1 or len(xs) != 1:
            # Packets that overlap in the qdisc (the driver's queue
            # stopped, as a loaded host makes it): the link also holds
            # the next one's queue or the last one's start_xmit, and
            # still its own skb's pair, in order.
            pair = own_pair(qs, x_cpu, s, e)
            if pair:
                seen_q.add(pair[0][:2])
                seen_x.add(pair[1][:2])
                shared += 1
                continue
            bad.append("seq %d cpu %d: %d net_dev_queue, %d start_xmit in "
                       "its link [%d, %d]" % (b["seq"], cpu, len(qs),
                                              len(xs), s, e))
            continue
        q, x = qs[0], xs[0]
        if q[3].get("skbaddr") != x[3].get("skbaddr") or q[1] > x[1]:
            bad.append("seq %d: queue %s at %d, start_xmit %s at %d"
                       % (b["seq"], q[3].get("skbaddr"), q[1],
                          x[3].get("skbaddr"), x[1]))
            continue
        seen_q.add(q[:2])
        seen_x.add(x[:2])
        links.append(e - s)
        d_start.append(q[1] - s)
        d_end.append(e - x[1])
        r = (e - s) - (x[1] - q[1])
        if inside(irqs, cpu, s, e):
            interrupted += 1
            continue
        resid.append(r)
    for w in bad[:5]:
        print("#   " + w)
    check(not bad and blocks, "tx: each of %d send blocks' link brackets one "
          "net_dev_queue and the net_dev_start_xmit of the same skb, in "
          "order, on its CPU (%d do not)" % (len(blocks), len(bad)))
    check(len(seen_q) == len(queue) and len(seen_x) == len(xmit),
          "tx: every net_dev_queue (%d) and net_dev_start_xmit (%d) of the "
          "flow lies in one block's link (%d, %d)"
          % (len(queue), len(xmit), len(seen_q), len(seen_x)))
    print("# tx: %d links ended on another CPU (the qdisc run there), each "
          "holding its skb's queue and start_xmit" % moved)
    print("# tx: %d links overlapped another packet's in the qdisc, each "
          "holding its skb's queue and start_xmit" % shared)
    print("# tx: link region %s" % dist(links, khz))
    print("# tx: link.start -> net_dev_queue %s" % dist(d_start, khz))
    print("# tx: net_dev_start_xmit -> link.end %s" % dist(d_end, khz))
    print("# tx: residual link - (start_xmit - queue), uninterrupted "
          "packets: %s; %d interrupted inside the region"
          % (dist(resid, khz), interrupted))
    if not a.off:
        return
    off = [region(b, "link") for b in flow_blocks(a.off, 0, a.port)]
    off = [e - s for _, s, e in (x for x in off if x)]
    tc = max(0, (pct(links, 50) - pct(off, 50)) / 2)
    print("# tx: link untraced %s; one trace event costs (median traced - "
          "median untraced) / 2 = %.0f ns" % (dist(off, khz), tc * 1e6 / khz))
    bound(resid, off, tc, khz, "tx", "link")


def cmd_rx(a, khz):
    blocks = flow_blocks(a.nst, 1, a.port)
    evs = events(a.trace)
    gro = [x for x in evs if x[2] == "napi_gro_receive_entry"
           and x[3].get("dev") == a.dev and x[3].get("len") == str(a.len)]
    rcv = [x for x in evs if x[2] == "netif_receive_skb"
           and x[3].get("dev") == a.dev and x[3].get("len") == str(a.len)]
    check(len(rcv) == len(blocks) == len(gro),
          "rx: %d receive blocks, %d napi_gro_receive_entry, %d "
          "netif_receive_skb of the flow" % (len(blocks), len(gro), len(rcv)))
    cpy = [x for x in evs if x[2] == "skb_copy_datagram_iovec"
           and x[3].get("len") == str(a.payload)]
    print("# %d receive blocks of port %d; %d napi_gro_receive_entry, %d "
          "netif_receive_skb on %s with len %d, %d skb_copy_datagram_iovec "
          "of %d" % (len(blocks), a.port, len(gro), len(rcv), a.dev, a.len,
                     len(cpy), a.payload))
    pairs = [("napi_gro_receive_entry", "rx-nic", gro)]
    # udp_recvmsg() copies a linear skb with copy_linear_skb(), which has
    # no tracepoint; only a paged one goes through skb_copy_datagram_iter().
    if cpy:
        pairs.append(("skb_copy_datagram_iovec", "copy", cpy))
    else:
        print("# rx: no skb_copy_datagram_iovec of the flow (linear skbs are "
              "copied by copy_linear_skb, untraced): copy not compared")
    for name, reg, evl in pairs:
        per = by_cpu(evl)
        seen, bad, lead, lag = set(), [], [], []
        for b in blocks:
            rg = region(b, reg)
            if rg is None:
                bad.append("seq %d: no single %s record" % (b["seq"], reg))
                continue
            cpu, s, e = rg
            got = inside(per, cpu, s, e)
            if len(got) != 1:
                bad.append("seq %d cpu %d: %d %s in its %s"
                           % (b["seq"], cpu, len(got), name, reg))
                continue
            seen.add(got[0][:2])
            lead.append(got[0][1] - s)
            lag.append(e - got[0][1])
        for w in bad[:5]:
            print("#   " + w)
        if reg == "rx-nic":
            spans = rx_link_by_skb(blocks, evs, per, a.dev, khz)
            if a.off:
                off = [rx_span(b) for b in flow_blocks(a.off, 1, a.port)]
                rx_bound(spans, [x for x in off if x],
                         by_cpu([x for x in evs if x[2] in IRQ]), khz)
        print("# rx: %s.start -> %s %s; %s -> %s.end %s"
              % (reg, name, dist(lead, khz), name, reg, dist(lag, khz)))
        check(blocks and not bad and len(seen) == len(evl),
              "rx: each of %d receive blocks' %s holds one %s, and each of "
              "the %d lies in one block (%d do not, %d events matched)"
              % (len(blocks), reg, name, len(evl), len(bad), len(seen)))


def rx_span(b):
    """(cpu, rx-nic.start, rx-link.end) of a block whose rx-nic and
    rx-link are single records on one CPU, else None."""
    nic, lk = region(b, "rx-nic"), region(b, "rx-link")
    if nic is None or lk is None or nic[0] != lk[0]:
        return None
    return nic[0], nic[1], lk[2]


def rx_bound(spans, off, irqs, khz):
    """The receive side's residual, bounded as the send side's: the span
    from rx-nic's start to rx-link's end holds the flow's
    napi_gro_receive_entry and the netif_receive_skb of the same skb;
    what the tracepoints do not bracket (the driver's descriptor work
    before the first, the protocol hand-off after the second) plus the two
    events' own cost is r = span - (netif_receive_skb - gro_entry).  At
    each quantile up to p90 it may not exceed the same span untraced plus
    two events, one event costing (median span traced - median span
    untraced) / 2.  Packets an interrupt hit inside the span are left
    out of the bound and counted."""
    resid, traced, interrupted = [], [], 0
    for cpu, s, e, g, r in spans:
        traced.append(e - s)
        if inside(irqs, cpu, s, e):
            interrupted += 1
            continue
        resid.append((e - s) - (r - g))
    base = [e - s for _, s, e in off]
    tc = max(0, (pct(traced, 50) - pct(base, 50)) / 2)
    print("# rx: span rx-nic.start .. rx-link.end traced %s" % dist(traced, khz))
    print("# rx: span untraced %s; one trace event costs (median traced - "
          "median untraced) / 2 = %.0f ns" % (dist(base, khz), tc * 1e6 / khz))
    print("# rx: residual span - (netif_receive_skb - napi_gro_receive_entry)"
          ", uninterrupted packets: %s; %d interrupted inside the span"
          % (dist(resid, khz), interrupted))
    bound(resid, base, tc, khz, "rx", "span")


def rx_link_by_skb(blocks, evs, gro_cpu, dev, khz):
    """rx-link against netif_receive_skb, matched by the skb: GRO lists
    packets and hands them up at the end of the poll, so one block's
    rx-link may hold another skb's netif_receive_skb too.  The skb of a
    block is the one whose napi_gro_receive_entry its rx-nic holds; its
    netif_receive_skb is the next one of that skbaddr."""
    rcv = {}
    for x in evs:
        if x[2] == "netif_receive_skb" and x[3].get("dev") == dev:
            rcv.setdefault(x[3].get("skbaddr"), []).append(x)
    bad, lead, lag, spans, n = [], [], [], [], 0
    for b in blocks:
        nic, lk = region(b, "rx-nic"), region(b, "rx-link")
        if nic is None or lk is None:
            bad.append("seq %d: no single rx-nic and rx-link" % b["seq"])
            continue
        g = inside(gro_cpu, *nic)
        if len(g) != 1:
            continue        # counted by the rx-nic check
        n += 1
        later = [x for x in rcv.get(g[0][3].get("skbaddr"), ())
                 if x[1] >= g[0][1]]
        cpu, s, e = lk
        if not later or not s <= later[0][1] <= e or later[0][0] != cpu:
            bad.append("seq %d cpu %d: netif_receive_skb of %s %s, rx-link "
                       "[%d, %d]" % (b["seq"], cpu, g[0][3].get("skbaddr"),
                                     later[0][:2] if later else "missing",
                                     s, e))
            continue
        lead.append(later[0][1] - s)
        lag.append(e - later[0][1])
        sp = rx_span(b)
        if sp is not None:
            spans.append(sp + (g[0][1], later[0][1]))
    for w in bad[:5]:
        print("#   " + w)
    print("# rx: rx-link.start -> netif_receive_skb %s; netif_receive_skb -> "
          "rx-link.end %s" % (dist(lead, khz), dist(lag, khz)))
    check(blocks and n == len(blocks) and not bad,
          "rx: the netif_receive_skb of each block's skb (by skbaddr, after "
          "its napi_gro_receive_entry) lies in its rx-link, on its CPU (%d "
          "of %d do not)" % (len(bad), len(blocks)))
    return spans


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=("tx", "rx"))
    p.add_argument("nst")
    p.add_argument("trace")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--dev", required=True)
    p.add_argument("--wire-len", type=int)
    p.add_argument("--len", type=int)
    p.add_argument("--payload", type=int)
    p.add_argument("--off")
    p.add_argument("--khz", type=int,
                   help="the TSC's kHz (default: the device's, NSIOCGINFO)")
    a = p.parse_args(argv)
    khz = a.khz
    if not khz:
        fd = os.open(nsioctl.DEV, os.O_RDONLY)
        khz = nsioctl.get_info(fd)["tsc_khz"]
        os.close(fd)
    (cmd_tx if a.cmd == "tx" else cmd_rx)(a, khz)
    return 0


if __name__ == "__main__":
    sys.exit(tap.run(main, sys.argv[1:]))
