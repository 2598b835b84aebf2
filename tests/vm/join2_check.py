# SPDX-License-Identifier: GPL-2.0
"""join2_check.py SCRATCH NSDUMP MKPAIR: t_join2.sh's checks, on the host,
of what the two guests left in SCRATCH (per guest, a and b:
run.<guest>.ns, .pcap of what it sent on the wire, .counts of the NIC's
counters and the traffic; start.<guest>, when its QEMU started, ns).
TAP."""
import json
import os
import statistics
import struct
import subprocess
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))

from nsjson import strict_json  # noqa: E402
from tap import Tap  # noqa: E402

scr, nsdump, mkpair = sys.argv[1:4]
t = Tap()
ADDR = {"a": "198.51.100.1", "b": "198.51.100.2"}
DELAY_US = float(os.environ.get("JOIN2_DELAY_US", "2000"))
SHIFT = 3 * 10**9	# ticks added to b's blocks: about a second


def f(name):
    return os.path.join(scr, name)


def pcap_frames(path):
    """(proto, payload bytes) of each IPv4 frame of a pcap, others None."""
    out = []
    with open(path, "rb") as fp:
        head = fp.read(24)
        endian = "<" if head[:4] == b"\xd4\xc3\xb2\xa1" else ">"
        while True:
            h = fp.read(16)
            if len(h) < 16:
                break
            _, _, incl, orig = struct.unpack(endian + "IIII", h)
            p = fp.read(incl)
            if len(p) < 34 or p[12:14] != b"\x08\x00":
                out.append(None)
                continue
            ihl = (p[14] & 15) * 4
            total = struct.unpack(">H", p[16:18])[0]
            proto = p[23]
            th = p[14 + ihl:]
            if proto == 6 and len(th) >= 13:
                out.append((6, total - ihl - (th[12] >> 4) * 4))
            elif proto == 17:
                out.append((17, total - ihl - 8))
            else:
                out.append((proto, 0))
    return out


def join(a, b):
    # equal datagrams go 1280 ms apart at least (join2_traffic.py): 500 ms
    # of wire at most leaves each one send (a vCPU may wait 100 ms or more
    # for a host core under TCG)
    r = subprocess.run([nsdump, "--json", "-r", a, "-r", b, "--join-window", "500"],
                       capture_output=True, text=True)
    return r.returncode, [strict_json(x) for x in r.stdout.splitlines()]


def joined(lines, sender, proto=None):
    return [o for o in lines if o.get("type") == "block" and "join" in o
            and o["join"]["from"] == sender
            and (proto is None or o["proto"] == proto)]


def the(lines, kind):
    x = [o for o in lines if o.get("type") == kind]
    return x[0] if x else {}


def check_counts(p, lines):
    """Every data segment joined; the counts the NICs' own."""
    counts = {g: json.load(open(f("%s.%s.counts" % (p, g)))) for g in "ab"}
    unmatched = the(lines, "join").get("unmatched", [])
    frames = {g: pcap_frames(f("%s.%s.pcap" % (p, g))) for g in "ab"}
    for h, g in enumerate("ab"):
        o = "ba"[h]
        fr = frames[g]
        tcp = sum(1 for x in fr if x and x[0] == 6 and x[1] > 0)
        udp = sum(1 for x in fr if x and x[0] == 17)
        jt, ju = len(joined(lines, h, 6)), len(joined(lines, h, 17))
        # a segment sent twice whose copies the clock cannot tell apart
        # is reported, not guessed: ambiguous on the receive side
        amb = sum(1 for u in unmatched if u["host"] == 1 - h and u["proto"] == 6
                  and u["dir"] == "rx" and u["reason"] == "ambiguous")
        sent = sum(x["sent"] for x in counts[g]["traffic"])
        print("# %s %s>%s: %d TCP data frames, %d joined, %d ambiguous; %d UDP, "
              "%d joined; %d frames sent, tx_packets %d, %s's rx_packets %d"
              % (p, g, o, tcp, jt, amb, udp, ju, len(fr), counts[g]["tx_packets"],
                 o, counts[o]["rx_packets"]))
        t.ok(tcp > 0 and jt + amb == tcp and amb <= 4,
             "%s %s>%s: every TCP data segment joined (or a copy reported)" % (p, g, o))
        t.ok(udp == sent and ju == udp,
             "%s %s>%s: every datagram joined" % (p, g, o))
        t.ok(len(fr) == counts[g]["tx_packets"] == counts[o]["rx_packets"],
             "%s %s>%s: frames sent = its tx_packets = the other's rx_packets"
             % (p, g, o))
    bad = [u for u in unmatched if u["reason"] not in ("ambiguous", "not-seen")
           or (u["reason"] == "not-seen" and "RETRANS" not in u["flags"]
               and u["dir"] == "tx" and not any(
                   v["tcp_seq"] == u["tcp_seq"] and v["reason"] == "ambiguous"
                   for v in unmatched))]
    t.ok(not bad, "%s: nothing else of the wire left unmatched" % p, bad)


def wire(lines, h, ports):
    return sorted(o["join"]["wire_us"] for o in joined(lines, h)
                  if o["sport"] in ports or o["dport"] in ports)


def check_phase(p):
    rc, lines = join(f(p + ".a.ns"), f(p + ".b.ns"))
    t.eq(rc, 0, "%s: nsdump -r a -r b exits 0" % p)
    check_counts(p, lines)
    c = the(lines, "join").get("clock", {})
    print("# %s clock: offset %s us +- %s us, drift %s +- %s ppm (fitted %s) over %s s, "
          "tsc offset %s (anchors' guess %s)"
          % (p, c.get("offset_us"), c.get("uncertainty_us"), c.get("drift_ppm"),
             c.get("drift_uncertainty_ppm"), c.get("drift_fitted"),
             c.get("span_s"), c.get("tsc_offset"), c.get("tsc_offset_guess")))
    return lines, c


def check_truth(c, lines):
    """QEMU TCG: a guest's TSC is the host's less its value when the VM
    started, so b's less a's is minus the time between their starts, and
    the two run at one rate: a drift is the guests' tsc_khz disagreeing."""
    khz = [h["tsc_khz"] for h in the(lines, "join")["hosts"]]
    starts = [int(open(f("start." + g)).read()) for g in "ab"]
    want = -(starts[1] - starts[0]) * khz[0] / 1e6
    print("# truth: QEMUs started %.3f ms apart: tsc offset about %.0f, "
          "estimated %d (the rest: each QEMU's start up to its vCPUs')"
          % ((starts[1] - starts[0]) / 1e6, want, c["tsc_offset"]))
    t.ok(abs(c["tsc_offset"] - want) < khz[0] * 1e3 * 2,
         "the TSC offset within 2 s of the QEMUs' start times")
    apparent = (khz[0] / khz[1] - 1) * 1e6
    print("# truth: tsc_khz %d and %d: an apparent drift of %.3f ppm" %
          (khz[0], khz[1], apparent))
    if c.get("drift_fitted"):
        t.ok(abs(c["drift_ppm"] - apparent) <= c["drift_uncertainty_ppm"] + 1,
             "the drift is the guests' tsc_khz disagreeing, within its uncertainty")


def check_shift(c):
    shifted = f("run.b.shifted.ns")
    subprocess.run([mkpair, "-s", str(SHIFT), f("run.b.ns"), shifted], check=True)
    rc, lines = join(f("run.a.ns"), shifted)
    s = the(lines, "join")["clock"]
    khz_b = the(lines, "join")["hosts"][1]["tsc_khz"]
    moved = s["offset_us"] - c["offset_us"]
    want = SHIFT * 1e3 / khz_b
    print("# shift: %d ticks added to b's blocks: offset moved %.3f us, "
          "want %.3f us, uncertainty %.3f us; tsc offset moved %d"
          % (SHIFT, moved, want, c["uncertainty_us"],
             s["tsc_offset"] - c["tsc_offset"]))
    t.ok(rc == 0 and abs(moved - want) <= c["uncertainty_us"],
         "an offset of %d ticks added to one file: recovered within the uncertainty" % SHIFT)
    t.ok(abs(s["tsc_offset"] - c["tsc_offset"] - SHIFT) <= 1,
         "... and to the tick")


def main():
    lines, c = check_phase("run")
    # The relay holds each delayed frame for the delay after it has read
    # it, by the host's clock, which is the guests' TSC under TCG: no
    # delayed frame can be seen sooner than the delay, less the clock's
    # uncertainty.  The base beside it is not one number: under TCG it
    # spreads over hundreds of us and follows each flow's burst pattern,
    # so the median moves by the delay only to within 10%.
    for h, name in ((0, "a>b"), (1, "b>a")):
        u, d = wire(lines, h, (5811, 5812)), wire(lines, h, (5801, 5802))
        mb, md = statistics.median(u), statistics.median(d)
        print("# wire %s: undelayed min %.3f median %.3f us; delayed %.0f us: "
              "min %.3f median %.3f us (moved %.3f us)"
              % (name, u[0], mb, DELAY_US, d[0], md, md - mb))
        t.ok(d[0] >= DELAY_US - c["uncertainty_us"],
             "wire %s: no delayed frame seen before the delay" % name)
        t.ok(abs(md - mb - DELAY_US) <= 0.10 * DELAY_US,
             "wire %s: the delay moves the median by the delay, within 10%%" % name)
    check_truth(c, lines)
    check_shift(c)
    return t.done()


sys.exit(main())
