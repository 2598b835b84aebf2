#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A TCP sender that keeps appending to an skb TCP splits at every send.

    splits.py PORT SECONDS [--collapse]

300-byte writes (TCP_NODELAY) over loopback to a reader with a 4 KiB
receive buffer that reads 512 bytes every half millisecond: the window
admits part of the write queue's tail skb at a time, so tso_fragment()
splits it at each transmission while the writer appends to what is left.

--collapse: the reader starts with a 1 MiB buffer and reads 512 bytes
every 5 ms, so that small segments queue up while the window stays open;
after a second it shrinks the buffer to 4 KiB and reads on without a
pause.  The segments that arrive next find the queue over its buffer, and
TCP collapses it (tcp_collapse(): the queued segments' data copied into
new skbs).

Prints "sent N got N"; exit 0 when every byte arrived.
"""
import socket
import sys
import threading
import time

port, secs = int(sys.argv[1]), float(sys.argv[2])
collapse = sys.argv[3:] == ["--collapse"]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
               1 << 20 if collapse else 4096)
srv.bind(("127.0.0.1", port))
srv.listen(1)
got = [0]


def reader():
    con, _ = srv.accept()
    pause = 0.005 if collapse else 0.0005
    shrink = time.time() + 1
    while True:
        b = con.recv(512)
        if not b:
            break
        got[0] += len(b)
        if collapse and pause and time.time() >= shrink:
            con.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            pause = 0
        time.sleep(pause)


t = threading.Thread(target=reader)
t.start()
cli = socket.create_connection(("127.0.0.1", port))
cli.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
end = time.time() + secs
sent = 0
while time.time() < end:
    cli.sendall(b"z" * 300)
    sent += 300
cli.close()
t.join()
print("sent %d got %d" % (sent, got[0]))
sys.exit(0 if sent == got[0] else 1)
