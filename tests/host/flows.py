#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""flows.py LISTING EXPR [--ifindex N] [--upto K]

How many of the blocks in LISTING (mkblocks -f -D: a block's flow per
line) the pcap-filter expression EXPR takes, worked out here by a
predicate written by hand for each expression the tests use, not by
libpcap.  With --ifindex, only blocks on that interface too (nsdump -i);
with --upto K, the number of blocks read up to and including the K-th
match (what the filter received before -c K stopped).

A block without IP (family 0) matches no expression, whatever it says.
"""
import argparse
import ipaddress
import json
import sys

AF_INET, AF_INET6 = 2, 10
TCP, UDP, ICMP, ICMP6 = 6, 17, 1, 58


def addr(text):
    return ipaddress.ip_address(text) if text else None


def v4(f):
    return f["family"] == AF_INET


def v6(f):
    return f["family"] == AF_INET6


def has_ports(f):
    return f["proto"] in (TCP, UDP)


def port(f, p):
    return has_ports(f) and p in (f["sport"], f["dport"])


def host(f, a, which=("saddr", "daddr")):
    return any(addr(f[k]) == addr(a) for k in which)


def net(f, n):
    n = ipaddress.ip_network(n)
    return any(addr(f[k]) in n for k in ("saddr", "daddr")
               if addr(f[k]) and addr(f[k]).version == n.version)


EXPRESSIONS = {
    "tcp": lambda f: f["proto"] == TCP,
    "udp": lambda f: f["proto"] == UDP,
    "ip": v4,
    "ip6": v6,
    "tcp port 5201 and host 192.0.2.2":
        lambda f: f["proto"] == TCP and port(f, 5201) and host(f, "192.0.2.2"),
    "src port 80": lambda f: has_ports(f) and f["sport"] == 80,
    "net 10.0.0.0/8": lambda f: net(f, "10.0.0.0/8"),
    "dst host 2001:db8::2": lambda f: host(f, "2001:db8::2", ("daddr",)),
    "icmp or icmp6":
        lambda f: (v4(f) and f["proto"] == ICMP) or (v6(f) and f["proto"] == ICMP6),
    "not tcp": lambda f: f["proto"] != TCP,
    "udp and dst port 53": lambda f: f["proto"] == UDP and f["dport"] == 53,
    "portrange 5000-6000":
        lambda f: has_ports(f) and any(5000 <= f[k] <= 6000 for k in ("sport", "dport")),
    "greater 1000": lambda f: f["len"] >= 1000,
    "ip6 multicast": lambda f: v6(f) and addr(f["daddr"]).is_multicast,
    "tcp and less 100": lambda f: f["proto"] == TCP and f["len"] <= 100,
    "host 192.0.2.1": lambda f: host(f, "192.0.2.1"),
    "port 5201": lambda f: port(f, 5201),
    "tcp port 5201": lambda f: f["proto"] == TCP and port(f, 5201),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("listing")
    ap.add_argument("expr")
    ap.add_argument("--ifindex", type=int)
    ap.add_argument("--upto", type=int)
    a = ap.parse_args()
    take = EXPRESSIONS[a.expr]
    flows = [json.loads(line) for line in open(a.listing)]
    matched = 0
    for n, f in enumerate(flows, 1):
        if f["family"] not in (AF_INET, AF_INET6):
            continue
        if a.ifindex is not None and f["ifindex"] != a.ifindex:
            continue
        if take(f):
            matched += 1
            if matched == a.upto:
                print(n)
                return
    if a.upto:
        sys.exit(f"fewer than {a.upto} matches")
    print(matched)


main()
