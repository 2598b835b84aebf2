#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A TCP sender that keeps appending to an skb TCP splits at every send.

    splits.py PORT SECONDS [--collapse]

300-byte writes (TCP_NODELAY) over loopback to a reader with a 4 KiB
receive buffer that reads 512 bytes every half millisecond: the window
admits part of the write queue's tail skb at a time, so tso_fragment()
splits it at each transmission while the writer appends to what is left.

--collapse: TCP collapses the reader's queue (tcp_collapse(): queued
segments' data copied into new skbs), in rounds that do not depend on
timing.  Each round writes 100 segments to a reader with a 1 MiB buffer
that does not read, waits until all of them are queued, reads 100 bytes
(so the head skb is partly read, which makes it worth collapsing),
shrinks the buffer to 4 KiB and writes 20 more.  They find the queue over
its buffer: TCP collapses it, then drops what still does not fit (TcpExt
TCPRcvQDrop), which comes again once the reader has read everything and
grown its buffer back.  Five rounds, for about SECONDS in all; then 50
segments, each read as it arrives.

Prints "sent N got N" (and, with --collapse, how TcpExt TCPRcvCollapsed
grew); exit 0 when every byte arrived.
"""
import fcntl
import socket
import struct
import sys
import termios
import threading
import time

port, secs = int(sys.argv[1]), float(sys.argv[2])
collapse = sys.argv[3:] == ["--collapse"]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
               1 << 20 if collapse else 4096)
srv.bind(("127.0.0.1", port))
srv.listen(1)
cli = socket.create_connection(("127.0.0.1", port))
cli.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
con, _ = srv.accept()
sent, got = 0, 0


def write(n):
    global sent
    for _ in range(n):
        cli.sendall(b"z" * 300)
        sent += 300


def queued():
    """Bytes in the reader's receive queue (FIONREAD)"""
    buf = fcntl.ioctl(con.fileno(), termios.FIONREAD, b"\0" * 4)
    return struct.unpack("i", buf)[0]


def collapsed():
    """TcpExt TCPRcvCollapsed, from /proc/net/netstat"""
    with open("/proc/net/netstat") as f:
        rows = [line.split() for line in f]
    for keys, vals in zip(rows[::2], rows[1::2]):
        if keys[0] == "TcpExt:":
            return int(vals[keys.index("TCPRcvCollapsed")])
    sys.exit("no TcpExt TCPRcvCollapsed in /proc/net/netstat")


def reader():
    global got
    while True:
        b = con.recv(512)
        if not b:
            break
        got += len(b)
        time.sleep(0.0005)


if collapse:
    c0, rounds, pause = collapsed(), 5, secs / 5
    for _ in range(rounds):
        write(100)
        deadline = time.time() + 10
        while queued() < sent - got and time.time() < deadline:
            time.sleep(0.001)
        got += len(con.recv(100))
        con.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        write(20)
        time.sleep(pause)
        con.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        while got < sent:
            got += len(con.recv(65536))
    # A connection over its trouble: each segment read as it comes.
    for _ in range(50):
        write(1)
        while got < sent:
            got += len(con.recv(512))
    cli.close()
    if con.recv(1):
        sys.exit("more bytes than were sent")
    extra = ", TCPRcvCollapsed +%d in %d rounds" % (collapsed() - c0, rounds)
else:
    t = threading.Thread(target=reader)
    t.start()
    end = time.time() + secs
    while time.time() < end:
        write(1)
    cli.close()
    t.join()
    extra = ""
print("sent %d got %d%s" % (sent, got, extra))
sys.exit(0 if sent == got else 1)
