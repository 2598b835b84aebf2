#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Both ends of MAGNeT's FTP example, for tests/vm/t_magnet.sh.

    magnet_peer.py server PORT [--out FILE]
        accept one connection, read until EOF; FILE gets
        {"bytes": N, "reads": N, "lport": P, "rport": P}
    magnet_peer.py client HOST PORT --out FILE [--writes N] [--size BYTES]
                   [--interval SEC] [--ss FILE] [--probe]
        N writes of BYTES each, one every SEC on an absolute schedule
        (so a late write does not shift the ones after it); then wait
        until every byte is acknowledged (SIOCOUTQ == 0), wait a moment,
        read TCP_INFO and run `ss -tin` for this connection (into the
        --ss FILE), optionally write one more byte (--probe: its
        SOCK_SEND record carries the TCP state at that instant), close.
        FILE gets what was done as JSON.
"""
import argparse
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import time

SIOCOUTQ = 0x5411	# TIOCOUTQ: bytes not yet acknowledged, for TCP


def tcp_info(s):
    raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    u8 = raw[:8]
    u32 = struct.unpack_from("=24I", raw, 8)
    return {
        "state": u8[0], "ca_state": u8[1],
        "rto_us": u32[0], "snd_mss": u32[2], "unacked": u32[4],
        "retrans": u32[7], "rtt_us": u32[15], "rttvar_us": u32[16],
        "snd_ssthresh": u32[17], "snd_cwnd": u32[18],
        "total_retrans": u32[23],
    }


def outq(s):
    buf = fcntl.ioctl(s.fileno(), SIOCOUTQ, b"\0" * 4)
    return struct.unpack("i", buf)[0]


def server(a):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", a.port))
    ls.listen(1)
    c, peer = ls.accept()
    total = reads = 0
    while True:
        d = c.recv(1 << 20)
        if not d:
            break
        total += len(d)
        reads += 1
    res = {"bytes": total, "reads": reads, "lport": a.port, "rport": peer[1]}
    c.close()
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f)
    return 0


def client(a):
    s = socket.create_connection((a.host, a.port))
    lport = s.getsockname()[1]
    buf = b"x" * a.size
    t0 = time.monotonic()
    stamps = []
    for i in range(a.writes):
        delay = t0 + i * a.interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        stamps.append(time.monotonic())
        s.sendall(buf)
    # Everything acknowledged, then a moment for the last ACK's effects.
    deadline = time.monotonic() + 30
    while outq(s) and time.monotonic() < deadline:
        time.sleep(0.01)
    left = outq(s)
    time.sleep(0.2)
    info = tcp_info(s)
    ss = ""
    if a.ss:
        ss = subprocess.run(["ss", "-tin", "sport = :%d" % lport],
                            capture_output=True, text=True).stdout
        with open(a.ss, "w") as f:
            f.write(ss)
    info_after = tcp_info(s)
    if a.probe:
        s.sendall(b"p")
    s.close()
    gaps = [b - c for c, b in zip(stamps, stamps[1:])]
    res = {"lport": lport, "rport": a.port, "writes": a.writes,
           "size": a.size, "bytes": a.writes * a.size + (1 if a.probe else 0),
           "probe": a.probe, "outq_left": left, "tcp_info": info,
           "tcp_info_after_ss": info_after,
           "app_gap_max_ms": max(gaps) * 1e3 if gaps else 0,
           "app_gap_min_ms": min(gaps) * 1e3 if gaps else 0}
    with open(a.out, "w") as f:
        json.dump(res, f)
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("server")
    sp.add_argument("port", type=int)
    sp.add_argument("--out")
    cp = sub.add_parser("client")
    cp.add_argument("host")
    cp.add_argument("port", type=int)
    cp.add_argument("--out", required=True)
    cp.add_argument("--writes", type=int, default=50)
    cp.add_argument("--size", type=int, default=10240)
    cp.add_argument("--interval", type=float, default=0.02)
    cp.add_argument("--ss")
    cp.add_argument("--probe", action="store_true")
    a = p.parse_args()
    return server(a) if a.cmd == "server" else client(a)


if __name__ == "__main__":
    sys.exit(main())
