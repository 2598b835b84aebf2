#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-launcher: tests/vm/two-vm.sh
#
# Two hosts for real: two VMs of the NetSlice kernel, each its own QEMU,
# joined by a dgram netdev through tests/vm/wire_relay.py on the host's
# loopback (two-vm.sh starts them and runs this script as each one's
# command: "t_join2.sh a" or "t_join2.sh b").  Each guest runs its own
# nsdump and tcpdump on the wire NIC while paced TCP and UDP flows go
# both ways: ports 5801 and 5802, whose frames the relay holds
# JOIN2_DELAY_US (2000) more each way, and at the same time 5811 and
# 5812, which it passes at once (the base, measured under the same load
# of the host: under TCG a wire's time moved by a third between runs).
# Each guest leaves its trace, pcap and NIC counters in the scratch
# share, which two-vm.sh then checks on the host (join2_check.py): every
# data segment joined, the counts the NICs' own, no delayed frame seen
# before the delay and the delayed median moved by it, an offset added
# to one file recovered.
. "${NS_REPO:?}/tests/vm/lib.sh"
role=${1:?a or b}
[[ $role == a ]] && { me=198.51.100.1 peer=198.51.100.2 them=b pmac=52:54:00:00:04:02; } ||
	{ me=198.51.100.2 peer=198.51.100.1 them=a pmac=52:54:00:00:04:01; }
S=$NS_SCRATCH
N=${JOIN2_N:-150} GAP_MS=${JOIN2_GAP_MS:-40}

# The wire NIC: the e1000 two-vm.sh adds, by its MAC.
wif=
for d in /sys/class/net/*; do
	[[ $(cat "$d/address") == 52:54:00:00:04:0[12] ]] && wif=${d##*/}
done
[[ -n $wif ]] || die "no wire NIC (52:54:00:00:04:0x)"
sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip addr add "$me/24" dev "$wif" && ip link set "$wif" up || die "wire NIC setup"
ip neigh replace "$peer" lladdr "$pmac" dev "$wif" nud permanent
# Software GSO, a block per segment on the wire, and no GRO: a frame GRO
# takes into another (ABSORBED) has no flow in its block (family 0), so
# it cannot be joined; seen with a GSO send's 604-byte tail.
ethtool -K "$wif" tso off gro off 2>/dev/null
insmod "$NS_MODULE" || die "insmod $NS_MODULE"
echo "# wire NIC $wif: $(ethtool -k "$wif" 2>/dev/null | grep -E '^(tcp-segmentation-offload|generic-receive-offload):' | tr '\n' ' ')"
for ((i = 0; i < 300; i++)); do
	ip -br link show "$wif" | grep -q LOWER_UP && break
	sleep 0.1
done

barrier() { # <name>: both guests reach it
	: >"$S/$1.$role"
	for ((i = 0; i < 1800; i++)); do
		[[ -e $S/$1.$them ]] && return 0
		sleep 0.1
	done
	die "the other guest did not reach $1"
}

phase() { # <name>: one capture of the traffic both ways
	local p=$1 tx0 rx0 tcpd
	capture_start "$wif" "$W/$p.pcap" "$W/$p.tcpdump" || die "tcpdump"
	tcpd=$!
	nsdump_bg "$W/$p.err" -q --addr -B 8M -w "$W/$p.ns" || die "nsdump"
	read -r tx0 < "/sys/class/net/$wif/statistics/tx_packets"
	read -r rx0 < "/sys/class/net/$wif/statistics/rx_packets"
	local port pids=()
	for port in 5801 5811; do
		python3 "$REPO/tests/vm/join2_traffic.py" "$me" "$peer" "$N" \
			"$GAP_MS" "$S/$p.up$port.$role" "$S/$p.up$port.$them" \
			"$port" >"$W/$p.traffic$port" &
		pids+=($!)
	done
	wait "${pids[@]}" || die "traffic"
	barrier "$p.done"
	sleep 1	# the last TX completions
	echo "{\"tx_packets\": $(($(cat "/sys/class/net/$wif/statistics/tx_packets") - tx0)), \"rx_packets\": $(($(cat "/sys/class/net/$wif/statistics/rx_packets") - rx0)), \"traffic\": [$(cat "$W/$p.traffic5801"), $(cat "$W/$p.traffic5811")]}" >"$W/$p.counts"
	kill -INT "$nsd"
	wait "$nsd" || die "nsdump: $(tail -1 "$W/$p.err")"
	capture_stop "$tcpd" "$W/$p.tcpdump" "$W/$p.pcap" "$wif" || die "tcpdump lost packets"
	for f in ns pcap counts err; do cp "$W/$p.$f" "$S/$p.$role.$f"; done
	echo "# $p: $(cat "$W/$p.counts")"
}

# the relay delays 5801 and 5802's frames (a asks, both wait for it)
delay="${JOIN2_DELAY_US:-2000} 5801 5802"
[[ $role == a ]] && echo "$delay" >"$S/wire.delay"
for ((i = 0; i < 600; i++)); do
	[[ $(cat "$S/wire.delay.on" 2>/dev/null) == "$delay" ]] && break
	sleep 0.1
done
barrier go
phase run
ok "guest $role: a capture, traffic both ways"
tap_finish
