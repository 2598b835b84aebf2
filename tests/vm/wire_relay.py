# SPDX-License-Identifier: GPL-2.0
"""wire_relay.py A B QA QB CTL: the wire between two QEMUs' -netdev dgram
NICs, on the host's loopback.  QEMU a sends its frames to 127.0.0.1:A and
listens on QA, QEMU b to B and on QB; each frame is passed on to the
other, after the delay CTL holds for the frames it names: "US [PORT...]"
(µs; IPv4 TCP and UDP frames from or to one of the ports, every frame
if none is named; nothing, or no CTL: no delay), read every 50 ms; once
a new setting applies, CTL.on holds it.  It stands in for tc netem,
which neither the host's kernel nor the test kernel has: every frame it
delays waits the same, in both directions, so a symmetric delay.  Runs
until killed."""
import heapq
import os
import select
import socket
import sys
import time

a_port, b_port, qa, qb = (int(x) for x in sys.argv[1:5])
ctl = sys.argv[5]


def sock(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 21)
    s.setblocking(False)
    return s


sa, sb = sock(a_port), sock(b_port)
# a frame from a goes out of b's socket to QEMU b, and the other way
route = {sa: (sb, qb), sb: (sa, qa)}
due = []
seq = 0
delay = 0.0
ports = set()
setting = ""
checked = 0.0


def read_delay():
    global delay, ports, setting
    try:
        with open(ctl) as f:
            text = f.read().strip()
    except OSError:
        text = ""
    if text == setting:
        return
    words = text.split() or ["0"]
    delay, ports, setting = int(words[0]) / 1e6, {int(w) for w in words[1:]}, text
    with open(ctl + ".on.tmp", "w") as f:
        f.write(text + "\n")
    os.replace(ctl + ".on.tmp", ctl + ".on")


def delayed(frame):
    """Whether the setting delays @frame: an Ethernet frame."""
    if not delay:
        return False
    if not ports:
        return True
    if len(frame) < 38 or frame[12:14] != b"\x08\x00" or frame[23] not in (6, 17):
        return False
    l4 = 14 + (frame[14] & 15) * 4
    sport = int.from_bytes(frame[l4:l4 + 2], "big")
    dport = int.from_bytes(frame[l4 + 2:l4 + 4], "big")
    return sport in ports or dport in ports


while True:
    now = time.monotonic()
    if now - checked > 0.05:
        read_delay()
        checked = now
    while due and due[0][0] <= now:
        _, _, out, port, frame = heapq.heappop(due)
        out.sendto(frame, ("127.0.0.1", port))
    timeout = 0.05 if not due else max(0.0, min(0.05, due[0][0] - now))
    ready, _, _ = select.select([sa, sb], [], [], timeout)
    now = time.monotonic()
    for s in ready:
        while True:
            try:
                frame = s.recv(65536)
            except BlockingIOError:
                break
            out, port = route[s]
            if not delayed(frame):
                out.sendto(frame, ("127.0.0.1", port))
                continue
            seq += 1
            heapq.heappush(due, (now + delay, seq, out, port, frame))
