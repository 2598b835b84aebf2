#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The harness itself: both namespaces reach each other over the two e1000
# NICs, and the interfaces' own counters saw the packets.
set -u

fail() { echo "FAIL: $*"; exit 1; }

rx_packets() { # <netns or ""> <ifname>
	if [[ -n $1 ]]; then
		ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_packets"
	else
		cat "/sys/class/net/$2/statistics/rx_packets"
	fi
}

dev_rx() { # <ifname>: received packets, the 2nd number in /proc/net/dev
	awk -v ifn="$1:" '$1 == ifn { print $3 }' /proc/net/dev
}

[[ $(ip -br addr show dev "$NS_LOCAL_IF") == *"$NS_LOCAL_IP/24"* ]] ||
	fail "$NS_LOCAL_IF has no $NS_LOCAL_IP"
ip link show "$NS_PEER_IF" >/dev/null 2>&1 && fail "$NS_PEER_IF still in the root netns"
[[ $(ip -n "$NS_PEER_NS" -br addr show dev "$NS_PEER_IF") == *"$NS_PEER_IP/24"* ]] ||
	fail "$NS_PEER_IF in netns $NS_PEER_NS has no $NS_PEER_IP"

count=20
local_rx0=$(dev_rx "$NS_LOCAL_IF")
peer_rx0=$(rx_packets "$NS_PEER_NS" "$NS_PEER_IF")
ping -q -c "$count" -i 0.05 -W 2 "$NS_PEER_IP" || fail "ping $NS_PEER_IP"
ip netns exec "$NS_PEER_NS" ping -q -c 3 -i 0.05 -W 2 "$NS_LOCAL_IP" ||
	fail "ping $NS_LOCAL_IP from netns $NS_PEER_NS"
local_rx1=$(dev_rx "$NS_LOCAL_IF")
peer_rx1=$(rx_packets "$NS_PEER_NS" "$NS_PEER_IF")

# Every echo request reached the peer and every reply came back (ARP and
# the reverse ping add a few more): counters must have grown by >= count.
(( peer_rx1 - peer_rx0 >= count )) ||
	fail "peer $NS_PEER_IF rx_packets grew by $((peer_rx1 - peer_rx0)), expected >= $count"
(( local_rx1 - local_rx0 >= count )) ||
	fail "/proc/net/dev $NS_LOCAL_IF rx grew by $((local_rx1 - local_rx0)), expected >= $count"

# The scratch share is writable and is the host's.
echo ok >"$NS_SCRATCH/t_boot" || fail "cannot write $NS_SCRATCH"
echo "peer rx +$((peer_rx1 - peer_rx0)), local rx +$((local_rx1 - local_rx0)) packets"
exit 0
