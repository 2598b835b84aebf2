#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo` runs this inside the VM: load netslice.ko, profile the TCP
# send path through the emulated e1000 NIC (a bulk transfer to the peer
# namespace) and over loopback (a 4-byte ping-pong), and print nsdump's
# per-layer report for each, with MAGNeT event records for a short
# MAGNeT-style transfer (10 KB written every 20 ms).
# The tests' helpers (wait_listen, nsdump_bg); none of their TAP output.
. "${NS_REPO:?}/tests/vm/lib.sh"

insmod "$NS_MODULE" || exit 1
sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ping -q -c 1 "$NS_PEER_IP" >/dev/null

banner() { printf '\n==== %s ====\n' "$*"; }

banner "NetSlice on $(uname -r), $(nproc) CPUs, QEMU TCG (emulated TSC: compare ratios, not absolute µs)"
"$NSDUMP" --calibrate 2>&1 | head -20

banner "1. TCP bulk transfer through the e1000 NIC (tcp_stream, 3 s) to $NS_PEER_IP"
peer "$BENCH/tcp_stream" -s -n -p 5401 >/dev/null 2>&1 &
wait_listen 5401 peer || exit 1
nsdump_bg "$W/nic.err" -q -B 32M -w "$W/nic.ns" || exit 1
"$BENCH/tcp_stream" -c "$NS_PEER_IP" -p 5401 -t 3
sleep 1
kill -INT $nsd; wait $nsd
"$NSDUMP" -q --dir tx -r "$W/nic.ns" 2>&1

banner "2. TCP ping-pong over loopback (lat_tcp, 4-byte messages)"
"$BENCH/lat_tcp" -s -n -b 127.0.0.1 -p 5402 >/dev/null 2>&1 &
wait_listen 5402 || exit 1
nsdump_bg "$W/lo.err" -q -B 32M -w "$W/lo.ns" || exit 1
"$BENCH/lat_tcp" -c 127.0.0.1 -p 5402 -W 50 -N 1000
sleep 0.5
kill -INT $nsd; wait $nsd
"$NSDUMP" -q -r "$W/lo.ns" 2>&1

banner "3. MAGNeT event records: 10 KB written every 20 ms through the NIC"
peer python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5403)); s.listen(1); c, _ = s.accept()
while c.recv(65536): pass' &
srv=$!
wait_listen 5403 peer || exit 1
nsdump_bg "$W/mag.err" -q -M -w "$W/mag.ns" || exit 1
python3 -c '
import socket, time
s = socket.create_connection(("'"$NS_PEER_IP"'", 5403))
for i in range(25):
    s.sendall(b"x" * 10240); time.sleep(0.02)
s.close()'
wait $srv
sleep 0.5
kill -INT $nsd; wait $nsd
"$NSDUMP" -M -r "$W/mag.ns" 2>&1 | grep MAGNET_ | head -12
echo "..."
"$NSDUMP" -q -M -r "$W/mag.ns" 2>&1 | tail -25
rmmod netslice
rm -rf "$W"
