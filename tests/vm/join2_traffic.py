# SPDX-License-Identifier: GPL-2.0
"""join2_traffic.py ME PEER N MS READY PEER_READY PORT: t_join2.sh's traffic,
from one guest, both ways at once with the other guest's: a TCP server
(port PORT) and a UDP receiver (PORT + 1) on ME; once PEER_READY exists (the other guest's
READY, which this one writes when its own are up), N writes of 1000
bytes to PEER over TCP (no Nagle) and N datagrams of 200 to 231 bytes
in turn, each MS ms after the one before (a write late for its turn
does not catch up: equal datagrams stay 32 turns apart).  Prints what it sent and received, as JSON."""
import json
import os
import socket
import sys
import threading
import time

me, peer, n, ms, ready, peer_ready, port = sys.argv[1:8]
port = int(port)
n, gap = int(n), int(ms) / 1000.0
got = {"tcp_bytes": 0, "udp": 0}


def tcp_server(s):
    c, _ = s.accept()
    while True:
        b = c.recv(65536)
        if not b:
            break
        got["tcp_bytes"] += len(b)


def udp_server(s):
    s.settimeout(60)
    try:
        while got["udp"] < n:
            s.recv(2048)
            got["udp"] += 1
            s.settimeout(10)
    except socket.timeout:
        pass


def tcp_client():
    for _ in range(300):
        try:
            c = socket.create_connection((peer, port), timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for i in range(n):	# never sooner: a late write does not catch up
        c.sendall(b"%06d" % i + b"t" * 994)
        time.sleep(gap)
    c.close()


def udp_client():
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    time.sleep(gap / 2)
    for i in range(n):
        # lengths in turn: a datagram is its flow and length (the blocks
        # carry no IP ID), so equal ones go 32 apart
        u.sendto(b"%06d" % i + b"u" * (194 + i % 32), (peer, port + 1))
        time.sleep(gap)


ts = socket.socket()
ts.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ts.bind((me, port))
ts.listen(1)
us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
us.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
us.bind((me, port + 1))
servers = [threading.Thread(target=tcp_server, args=(ts,)),
           threading.Thread(target=udp_server, args=(us,))]
for t in servers:
    t.start()
open(ready, "w").close()
for _ in range(1200):
    if os.path.exists(peer_ready):
        break
    time.sleep(0.1)
clients = [threading.Thread(target=tcp_client), threading.Thread(target=udp_client)]
for t in clients:
    t.start()
for t in clients + servers:
    t.join()
print(json.dumps({"port": port, "sent": n, "tcp_bytes_in": got["tcp_bytes"],
                  "udp_in": got["udp"]}))
