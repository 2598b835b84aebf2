#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The receive path, in the VM (issue 5):
#  - counts: every frame an e1000 receives gets a block from the driver
#    hook (ARP, pure ACKs and ICMP included), so the rx blocks of an
#    interface equal its rx_packets delta exactly, and their bytes its
#    rx_bytes.  GRO merges frames into one skb, but a merged frame keeps
#    a block of its own (emitted when GRO frees it), so GRO does not make
#    the count inexact -- checked on the receiver's eth1 (data) and on the
#    sender's eth0 (the ACKs coming back).  No rx block may end with a
#    layer left open.
#  - loopback (lat_tcp ping-pong): every data block carries the send
#    regions and then the receive regions, in journey order (each starts
#    after the previous one ends, write containing tcp/ip/link); pure ACK,
#    SYN and FIN blocks are receive-only and counted against tcpdump;
#    queueing time (queue) is reported apart from service time and >= 0.
# TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
CHECK="host_run python3 $REPO/tests/vm/recv_check.py"

insmod "$NS_MODULE" || die "insmod $NS_MODULE"
sysctl -qw net.ipv6.conf.all.disable_ipv6=1
peer sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null || die "ping $NS_PEER_IP"
if_local=$(cat "/sys/class/net/$NS_LOCAL_IF/ifindex")
if_peer=$(peer cat "/sys/class/net/$NS_PEER_IF/ifindex")
command -v ethtool >/dev/null && echo "# ethtool: $(ethtool -k "$NS_LOCAL_IF" | grep generic-receive-offload)"
echo "# GRO on both e1000s (no ethtool needed: GRO is what is being checked)"

# --- through the e1000s: bulk data one way, ACKs the other, ARP, ICMP
peer "$BENCH/tcp_stream" -s -n -p 5701 >/dev/null 2>&1 &
srv=$!
wait_listen 5701 peer || die "tcp_stream server did not start"
quiesce
nsdump_bg "$W/nic.err" -q -B 16M -w "$W/nic.ns" || die "nsdump did not start"
{ read -r p0; read -r b0; } < <(stat_peer rx_packets rx_bytes)
{ read -r l0; read -r c0; } < <(stat_local rx_packets rx_bytes)
ip neigh flush dev "$NS_LOCAL_IF"	# ARP again, inside the capture
"$BENCH/tcp_stream" -c "$NS_PEER_IP" -p 5701 -t 3 >/dev/null
tap $? "tcp_stream to $NS_PEER_IP, 3 s"
ping -q -c 5 -i 0.1 "$NS_PEER_IP" >/dev/null
tap $? "ping $NS_PEER_IP"
wait $srv
quiesce			# the closing handshake, TX completions
{ read -r p1; read -r b1; } < <(stat_peer rx_packets rx_bytes)
{ read -r l1; read -r c1; } < <(stat_local rx_packets rx_bytes)
kill -INT $nsd
wait $nsd
tap $? "nsdump captured the NIC run ($(tail -1 "$W/nic.err"))"
echo "# frames received after the snapshot, before the capture stopped: peer +$(($(stat_peer rx_packets) - p1)), local +$(($(stat_local rx_packets) - l1))"
host_run -o "$X/nic.json" "$NSDUMP" -r "$W/nic.ns" --json 2>/dev/null
tap $? "nsdump -r reads the NIC trace"
tap_lines < <($CHECK nic "$X/nic.json" --ifindex "$if_peer" --name "peer $NS_PEER_IF" \
	--rx-packets $((p1 - p0)) --rx-bytes $((b1 - b0)))
tap_lines < <($CHECK nic "$X/nic.json" --ifindex "$if_local" --name "local $NS_LOCAL_IF" \
	--rx-packets $((l1 - l0)) --rx-bytes $((c1 - c0)))

# --- loopback ping-pong
"$BENCH/lat_tcp" -s -n -b 127.0.0.1 -p 5702 >/dev/null 2>&1 &
srv=$!
wait_listen 5702 || die "lat_tcp server did not start"
nsdump_bg "$W/lo.err" -q -B 16M -w "$W/lo.ns" || die "nsdump did not start"
capture_start lo "$W/lo.pcap" "$W/tcpdump-lo.err" || die "tcpdump on lo did not start"
tpid=$!
"$BENCH/lat_tcp" -c 127.0.0.1 -p 5702 -W 20 -N 300 >/dev/null
tap $? "lat_tcp over loopback, 320 round trips"
wait $srv
sleep 0.5
capture_stop $tpid "$W/tcpdump-lo.err" "$W/lo.pcap" lo
tap $? "tcpdump on lo lost nothing"
kill -INT $nsd
wait $nsd
tap $? "nsdump captured the loopback run ($(tail -1 "$W/lo.err"))"
host_run -o "$X/lo.json" "$NSDUMP" -r "$W/lo.ns" --json 2>/dev/null
tap $? "nsdump -r reads the loopback trace"
data=$(count_pcap "$W/lo.pcap" "$payload")
other=$(count_pcap "$W/lo.pcap" "not ($payload)")
tap_lines < <($CHECK loopback "$X/lo.json" --data "$data" --other "$other")

rmmod netslice
tap $? "rmmod netslice"
rm -rf "$W"
echo "1..$n"
((failed == 0))
