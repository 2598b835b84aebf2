#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel with the NetSlice core built in and no module loaded passes
# traffic normally: through the NIC and over loopback, with the kernel's
# own TCP counters moving by at least what the workloads sent.
# TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
outsegs() { awk '/^Tcp:/ { if (h) print $12; h = 1 }' /proc/net/snmp; }

! grep -qw netslice /proc/modules
tap $? "netslice.ko is not loaded"
[[ ! -e /dev/ns ]]
tap $? "no /dev/ns without the module"
s0=$(outsegs)
peer "$BENCH/tcp_stream" -s -n -p 5311 --json >/tmp/srv.json 2>&1 &
srv=$!
wait_listen 5311 peer || die "tcp_stream server did not start"
"$BENCH/tcp_stream" -c "$NS_PEER_IP" -p 5311 -t 2 --json >/tmp/cli.json
tap $? "tcp_stream through the NIC"
wait $srv
tap $? "tcp_stream server saw every byte"
"$BENCH/lat_tcp" -s -n -b 127.0.0.1 -p 5312 >/dev/null 2>&1 &
srv=$!
wait_listen 5312 || die "lat_tcp server did not start"
"$BENCH/lat_tcp" -c 127.0.0.1 -p 5312 -W 10 -N 200 >/dev/null
tap $? "lat_tcp over loopback"
wait $srv
s1=$(outsegs)
sent=$(python3 -c 'import json,sys; print(json.load(open("/tmp/cli.json"))["bytes_sent"])')
# At least one segment per 64 KiB sent plus the 420 ping-pong messages.
((s1 - s0 >= sent / 65536 + 420))
tap $? "Tcp OutSegs grew by $((s1 - s0)) for $sent bytes and 420 messages"
echo "1..$n"
((failed == 0))
