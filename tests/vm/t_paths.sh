#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every path a packet takes besides IPv4 TCP (issue 10), in one VM:
#  - UDP over IPv4 and IPv6 through the e1000s: the send blocks of the flow
#    (picked by family, protocol and port from the flow every block now
#    carries) equal the datagrams sent and the sender's Udp OutDatagrams
#    (Udp6OutDatagrams); the receive blocks equal the datagrams read and
#    the receiver's InDatagrams; with the packets that carry no block
#    (tcpdump) they equal the sender's tx_packets, and the peer's receive
#    blocks its rx_packets and rx_bytes; every send block has write, udp, ip,
#    link and nic, every receive block rx-nic .. rx-udp, queue and copy,
#    closed, ordered and nested, none ABSORBED;
#  - UDP over loopback, IPv4 and IPv6: one block per datagram carrying
#    the whole journey from the write to the copy in the reader;
#  - TCP over IPv6: through the NIC the send blocks equal the data skbs
#    tcpdump sees leave and, with the packets that carry no block, the
#    driver's tx_packets; the peer's receive blocks its rx_packets; over
#    loopback (a ping-pong) one block per data
#    skb with the whole journey;
#  - into a container: a namespace behind a veth pair; UDP datagrams
#    sent into it keep one block across the veth (FORWARDED), from the
#    sender's write to the receiver's copy;
#  - a VLAN on the NIC and a bond over it (stacked devices: their xmit
#    hands the skb to the e1000's), and a container whose veth and the NIC are ports of a
#    bridge: counted against the sender's OutDatagrams and the peer's
#    InDatagrams, every record closed and nested;
#  - virtio-net (vnet0 to the peer's vnet1 on a second QEMU hub), a NAPI
#    driver with no NSI of its own: counted the same way, its receive
#    blocks with an rx-nic taken from the poll;
#  - on each of those paths, the devices every block names, in order, each
#    as (ifindex, network namespace inode, direction), against the ones
#    the test made: the NIC; lo twice; the veth's two ends in their two
#    namespaces; the VLAN or bond and then the NIC; the container's veth,
#    its host end (a bridge port) and the NIC; and each device's link,
#    qdisc and nic records on a device it sent on, rx-link on one it
#    received from (nspath.py check);
#  - copies of one skb reaching several drivers: a tc mirred mirror of
#    vnet0's traffic to a dummy device, and a bridge flooding datagrams
#    for an unknown MAC to three dummy ports: one block per transmission on
#    every device, N each, closed and nested; the port whose qdisc drops
#    everything (blackhole) has none, its N copies flagged NOXMIT.
# The flow's trace files are read by nspath.py from their bytes, not by
# nsdump.  TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
PATHS="host_run python3 $REPO/tests/vm/nspath.py"
RECV="host_run python3 $REPO/tests/vm/recv_check.py"
UDP_NIC=0
N=200		# datagrams per UDP run

insmod "$NS_MODULE" || die "insmod $NS_MODULE"
ipv6_up
if_local=$(cat "/sys/class/net/$NS_LOCAL_IF/ifindex")
if_peer=$(peer cat "/sys/class/net/$NS_PEER_IF/ifindex")
ns_init=$(stat -L -c %i /proc/self/ns/net)
ns_peer=$(peer stat -L -c %i /proc/self/ns/net)

# devs_are <tag> <file> <want> <selection...>: every selected block names
# exactly the devices <want> (ifindex@netns/tx|rx, in order, '>' between).
devs_are() {
	local tag=$1 file=$2 want=$3 got nb
	shift 3
	nb=$($PATHS count "$file" "$@")
	got=$($PATHS devs "$file" "$@")
	echo "# $tag: blocks by device path: $(echo $got)"
	[[ $got == "$nb $want" ]] && ((nb > 0))
	tap $? "$tag: all $nb blocks name the devices $want"
}

# The drivers' own counters, for a flow through the e1000s: what the
# sender's e1000 sent is the flow's send blocks plus the packets that
# carry none (ARP, ND: tcpdump counts them, up to the snapshot); every
# frame the peer's e1000 received has a receive block (recv_check.py).
# tcpdump stamps a frame as it goes to the driver; the driver counts it
# in tx_packets when it reclaims it (TX completion), later.  So snapshot 1
# takes its time t1, then waits until the driver holds nothing it was
# handed (BQL's inflight bytes 0), and only then reads tx_packets: every
# frame stamped up to t1 is counted in it by then.
nic_drained() { # true once the local NIC's TX queue holds nothing in flight
	local q=/sys/class/net/$NS_LOCAL_IF/queues/tx-0/byte_queue_limits/inflight k
	[[ -r $q ]] || { echo "# no BQL inflight for $NS_LOCAL_IF: not waited"; return 0; }
	for ((k = 0; k < 200; k++)); do
		[[ $(cat "$q") == 0 ]] && return 0
		sleep 0.05
	done
	return 1
}
nic_snap() { # <0|1>: snapshot 0 before the traffic, 1 after it
	local i=$1
	if [[ $i == 1 ]]; then
		declare -g nic_t1=$(date +%s.%N)
		nic_drained || echo "# $NS_LOCAL_IF: TX still in flight after 10 s"
	fi
	declare -g nic_tx$i=$(stat_local tx_packets)
	{ read -r "nic_rp$i"; read -r "nic_rb$i"; } < <(stat_peer rx_packets rx_bytes)
}
nic_check() { # <tag> <trace> <pcap> <wire packets of the send blocks> <their filter>
	local other
	other=$(count_pcap "$3" "not ($5)" "$nic_t1")
	echo "# $1: $4 packets in send blocks, $other packets without one; tx_packets +$((nic_tx1 - nic_tx0)); peer rx_packets +$((nic_rp1 - nic_rp0))"
	(($4 + other == nic_tx1 - nic_tx0))
	tap $? "$1: packets in send blocks ($4) + packets without a block ($other) == the sender's tx_packets (+$((nic_tx1 - nic_tx0)))"
	host_run -o "$X/${2##*/}.json" "$NSDUMP" -r "$2" --json 2>/dev/null
	tap $? "$1: nsdump -r --json"
	tap_lines < <($RECV nic "$X/${2##*/}.json" --ifindex "$if_peer" --name "$1: peer $NS_PEER_IF" \
		--rx-packets $((nic_rp1 - nic_rp0)) --rx-bytes $((nic_rb1 - nic_rb0)))
}

# udp_flow <tag> <4|6> <src-ns|-> <dst> <port> <want-tx> <want-rx> [tx filters]:
# N datagrams from this namespace (or src-ns) to the peer's dst:port.
udp_flow() {
	local tag=$1 fam=$2 src=$3 dst=$4 port=$5 want_tx=$6 want_rx=$7 got tx rx o0 o1 i0 i1
	shift 7
	local in_src=() i
	[[ $src != - ]] && in_src=(ip netns exec "$src")
	rm -f "$W/got"*
	peer bash -c "$(declare -f udp_recv); udp_recv $dst $port $N $W/got; wait \$rpid" &
	local waiter=$!
	for ((i = 0; i < 300; i++)); do [[ -e $W/got.ready ]] && break; sleep 0.1; done
	quiesce
	nsdump_bg "$W/f$port.err" -q -B 16M -w "$W/f$port.nst" || die "nsdump did not start"
	if ((UDP_NIC)); then
		capture_start "$NS_LOCAL_IF" "$W/f$port.pcap" "$W/f$port.tcpdump" ||
			die "tcpdump did not start"
		local tpid=$!
		nic_snap 0
	fi
	o0=$("${in_src[@]}" bash -c "$(declare -f snmp_in snmp snmp6 udp_out); udp_out $fam")
	i0=$(peer bash -c "$(declare -f snmp_in snmp snmp6 udp_in); udp_in $fam")
	"${in_src[@]}" bash -c "$(declare -f udp_send); udp_send $dst $port $N"
	wait $waiter
	got=$(cat "$W/got")
	quiesce
	((UDP_NIC)) && nic_snap 1
	o1=$("${in_src[@]}" bash -c "$(declare -f snmp_in snmp snmp6 udp_out); udp_out $fam")
	i1=$(peer bash -c "$(declare -f snmp_in snmp snmp6 udp_in); udp_in $fam")
	kill -INT $nsd
	wait $nsd
	grep -q " 0 dropped by kernel" "$W/f$port.err"
	tap $? "$tag: nothing dropped ($(tail -1 "$W/f$port.err"))"
	tx=$($PATHS count "$W/f$port.nst" --dir tx --family "$fam" --proto 17 --port "$port" "$@")
	rx=$($PATHS count "$W/f$port.nst" --dir rx --family "$fam" --proto 17 --port "$port")
	echo "# $tag: sent $N, read $got; send blocks $tx, OutDatagrams +$((o1 - o0)); receive blocks $rx, peer InDatagrams +$((i1 - i0))"
	((tx == N && tx == o1 - o0))
	tap $? "$tag: send blocks ($tx) == datagrams sent ($N) == OutDatagrams (+$((o1 - o0)))"
	((rx == got && rx == i1 - i0 && got == N))
	tap $? "$tag: receive blocks ($rx) == datagrams read ($got) == peer InDatagrams (+$((i1 - i0)))"
	if ((UDP_NIC)); then
		capture_stop $tpid "$W/f$port.tcpdump" "$W/f$port.pcap" "$NS_LOCAL_IF"
		tap $? "$tag: tcpdump lost nothing"
		nic_check "$tag" "$W/f$port.nst" "$W/f$port.pcap" "$tx" "udp port $port"
	fi
	tap_lines < <($PATHS check "$W/f$port.nst" --tag "$tag send" --dir tx \
		--family "$fam" --proto 17 --port "$port" --want "$want_tx" "$@")
	tap_lines < <($PATHS check "$W/f$port.nst" --tag "$tag receive" --dir rx \
		--family "$fam" --proto 17 --port "$port" --want "$want_rx")
}

# --- UDP through the NIC
UDP_RX=rx-nic,rx-link,rx-ip,rx-udp,queue,copy
UDP_NIC=1
udp_flow "UDP/IPv4 NIC" 4 - "$NS_PEER_IP" 6004 write,udp,ip,link,nic "$UDP_RX" \
	--ifindex "$if_local"
udp_flow "UDP/IPv6 NIC" 6 - "$PEER6" 6006 write,udp,ip,link,nic "$UDP_RX" \
	--ifindex "$if_local"
UDP_NIC=0
devs_are "UDP/IPv4 NIC send" "$W/f6004.nst" "$if_local@$ns_init/tx" \
	--dir tx --family 4 --proto 17 --port 6004
devs_are "UDP/IPv4 NIC receive" "$W/f6004.nst" "$if_peer@$ns_peer/rx" \
	--dir rx --family 4 --proto 17 --port 6004
devs_are "UDP/IPv6 NIC send" "$W/f6006.nst" "$if_local@$ns_init/tx" \
	--dir tx --family 6 --proto 17 --port 6006

# --- UDP over loopback: the whole journey in one block
udp_lo() { # <4|6> <addr> <port>
	local fam=$1 addr=$2 port=$3 tag="UDP/IPv$1 loopback" got nblk o0 o1
	rm -f "$W/got"*
	udp_recv "$addr" "$port" "$N" "$W/got" || die "udp receiver did not start"
	local waiter=$rpid
	nsdump_bg "$W/l$fam.err" -q -B 16M -w "$W/l$fam.nst" || die "nsdump did not start"
	o0=$(udp_out "$fam")
	udp_send "$addr" "$port" "$N"
	wait $waiter
	got=$(cat "$W/got")
	o1=$(udp_out "$fam")
	kill -INT $nsd
	wait $nsd
	nblk=$($PATHS count "$W/l$fam.nst" --family "$fam" --proto 17 --port "$port" --flag LOOPBACK)
	echo "# $tag: sent $N, read $got, $nblk blocks, OutDatagrams +$((o1 - o0))"
	((nblk == N && got == N && o1 - o0 == N))
	tap $? "$tag: one block per datagram ($nblk), all $N read ($got), OutDatagrams +$((o1 - o0))"
	tap_lines < <($PATHS check "$W/l$fam.nst" --tag "$tag" --family "$fam" --proto 17 \
		--port "$port" --flag LOOPBACK \
		--want write,udp,ip,link,nic,rx-link,rx-ip,rx-udp,queue,copy)
}
udp_lo 4 127.0.0.1 6104
udp_lo 6 ::1 6106
devs_are "UDP/IPv4 loopback" "$W/l4.nst" "1@$ns_init/tx>1@$ns_init/rx" \
	--family 4 --proto 17 --port 6104 --flag LOOPBACK

# --- TCP over IPv6 through the NIC, counted as t_send counts IPv4
payload6='ip6 and tcp and (ip6[4:2] - ((ip6[52] & 0xf0) >> 2)) > 0'
peer "$BENCH/tcp_stream" -s -n -b "$PEER6" -p 5601 >"$W/srv6.out" 2>&1 &
srv=$!
wait_listen 5601 peer || die "tcp_stream server did not start"
quiesce
nsdump_bg "$W/t6.err" -q -B 32M -w "$W/t6.nst" || die "nsdump did not start"
capture_start "$NS_LOCAL_IF" "$W/t6.pcap" "$W/tcpdump6.err" || die "tcpdump did not start"
tpid=$!
nic_snap 0
"$BENCH/tcp_stream" -c "$PEER6" -p 5601 -t 2 >/dev/null
tap $? "TCP/IPv6 NIC: tcp_stream to $PEER6"
wait $srv
quiesce
nic_snap 1
capture_stop $tpid "$W/tcpdump6.err" "$W/t6.pcap" "$NS_LOCAL_IF"
tap $? "TCP/IPv6 NIC: tcpdump lost nothing"
kill -INT $nsd
wait $nsd
blocks=$($PATHS count "$W/t6.nst" --dir tx --family 6 --proto 6 --port 5601 --ifindex "$if_local")
segs=$($PATHS segs "$W/t6.nst" --dir tx --family 6 --proto 6 --port 5601 --ifindex "$if_local")
data_skbs=$(count_pcap "$W/t6.pcap" "$payload6")
echo "# TCP/IPv6 NIC: $blocks blocks, $segs segments; capture: $data_skbs data skbs"
((blocks == data_skbs && blocks > 0))
tap $? "TCP/IPv6 NIC: send blocks ($blocks) == data skbs seen by tcpdump ($data_skbs)"
nic_check "TCP/IPv6 NIC" "$W/t6.nst" "$W/t6.pcap" "$segs" "$payload6"
tap_lines < <($PATHS check "$W/t6.nst" --tag "TCP/IPv6 NIC send" --dir tx --family 6 --proto 6 \
	--port 5601 --ifindex "$if_local" --want write,tcp,ip,link,nic)

# --- TCP over IPv6 loopback: a ping-pong, each message one block
"$BENCH/lat_tcp" -s -n -b ::1 -p 5602 >"$W/lsrv6.out" 2>&1 &
srv=$!
wait_listen 5602 || die "lat_tcp server did not start"
nsdump_bg "$W/lt6.err" -q --addr -B 32M -w "$W/lt6.nst" || die "nsdump did not start"
capture_start lo "$W/lo6.pcap" "$W/tcpdump-lo6.err" || die "tcpdump on lo did not start"
tpid=$!
"$BENCH/lat_tcp" -c ::1 -p 5602 -W 20 -N 300 >/dev/null
tap $? "TCP/IPv6 loopback: lat_tcp"
wait $srv
capture_stop $tpid "$W/tcpdump-lo6.err" "$W/lo6.pcap" lo
kill -INT $nsd
wait $nsd
blocks=$($PATHS count "$W/lt6.nst" --family 6 --proto 6 --port 5602 --flag LOOPBACK --dir tx)
data_skbs=$(count_pcap "$W/lo6.pcap" "$payload6")
echo "# TCP/IPv6 loopback: $blocks data blocks; capture: $data_skbs data skbs"
((blocks == data_skbs && blocks >= 640))
tap $? "TCP/IPv6 loopback: blocks ($blocks) == data skbs seen by tcpdump ($data_skbs), >= 2 per round trip"
tap_lines < <($PATHS check "$W/lt6.nst" --tag "TCP/IPv6 loopback" --family 6 --proto 6 \
	--port 5602 --flag LOOPBACK --dir tx \
	--want write,tcp,ip,link,nic,rx-link,rx-ip,rx-tcp,queue,copy)
# A TCP block's flow comes from its socket at the fork: what the packet's
# headers say, whatever the socket's family.
tap_lines < <($PATHS flows "$W/lt6.nst" --pcap "$W/lo6.pcap" --tag "TCP/IPv6 loopback" \
	--family 6 --proto 6 --port 5602 --flag LOOPBACK --dir tx)

# --- TCP over loopback between IPv6 sockets at an IPv4-mapped address:
# IPv4 packets
"$BENCH/lat_tcp" -s -n -b ::ffff:127.0.0.1 -p 5603 >"$W/lsrvm.out" 2>&1 &
srv=$!
wait_listen 5603 || die "lat_tcp server did not start"
nsdump_bg "$W/ltm.err" -q --addr -B 32M -w "$W/ltm.nst" || die "nsdump did not start"
capture_start lo "$W/lom.pcap" "$W/tcpdump-lom.err" || die "tcpdump on lo did not start"
tpid=$!
"$BENCH/lat_tcp" -c ::ffff:127.0.0.1 -p 5603 -W 20 -N 100 >/dev/null
tap $? "TCP/IPv4-mapped loopback: lat_tcp between IPv6 sockets"
wait $srv
capture_stop $tpid "$W/tcpdump-lom.err" "$W/lom.pcap" lo
kill -INT $nsd
wait $nsd
tap_lines < <($PATHS flows "$W/ltm.nst" --pcap "$W/lom.pcap" \
	--tag "TCP/IPv4-mapped loopback" --family 4 --proto 6 --port 5603 \
	--flag LOOPBACK --dir tx)

# --- into a container: a namespace behind a veth pair
ip netns add ctr || die "ip netns add ctr"
ip link add vh type veth peer name vc netns ctr || die "ip link add veth"
ip addr add 10.9.0.1/24 dev vh
ip link set vh up
ip -n ctr addr add 10.9.0.2/24 dev vc
ip -n ctr link set vc up
ip -n ctr link set lo up
ping -q -c 2 -i 0.2 10.9.0.2 >/dev/null || die "ping 10.9.0.2 over the veth"
if_vh=$(cat /sys/class/net/vh/ifindex)
rm -f "$W/got"*
ip netns exec ctr bash -c "$(declare -f udp_recv); udp_recv 10.9.0.2 6204 $N $W/got; wait \$rpid" &
waiter=$!
for ((i = 0; i < 300; i++)); do [[ -e $W/got.ready ]] && break; sleep 0.1; done
nsdump_bg "$W/v.err" -q -B 16M -w "$W/v.nst" || die "nsdump did not start"
udp_send 10.9.0.2 6204 "$N"
wait $waiter
got=$(cat "$W/got")
kill -INT $nsd
wait $nsd
nblk=$($PATHS count "$W/v.nst" --family 4 --proto 17 --port 6204 --flag FORWARDED --ifindex "$if_vh")
split=$($PATHS count "$W/v.nst" --family 4 --proto 17 --port 6204 --dir rx)
echo "# veth: sent $N, read $got in the container; $nblk blocks cross the veth, $split start on its far side"
((nblk == N && got == N && split == 0))
tap $? "veth: one block per datagram across the veth ($nblk of $N, read $got), none cut in two ($split)"
tap_lines < <($PATHS check "$W/v.nst" --tag "veth UDP" --family 4 --proto 17 --port 6204 \
	--flag FORWARDED --want write,udp,ip,link,nic,rx-link,rx-ip,rx-udp,queue,copy)
if_vc=$(ip netns exec ctr cat /sys/class/net/vc/ifindex)
ns_ctr=$(ip netns exec ctr stat -L -c %i /proc/self/ns/net)
devs_are "veth" "$W/v.nst" "$if_vh@$ns_init/tx>$if_vc@$ns_ctr/rx" \
	--family 4 --proto 17 --port 6204 --flag FORWARDED

# --- UDP over a VLAN on the NIC: vlan's xmit hands the skb to the e1000's
# (a stacked device); the block closes both devices' link and nic.
ip link add link "$NS_LOCAL_IF" name vlan100 type vlan id 100 || die "ip link add vlan"
ip addr add 10.100.0.1/24 dev vlan100
ip link set vlan100 up
peer ip link add link "$NS_PEER_IF" name vlan100 type vlan id 100 || die "peer vlan"
peer ip addr add 10.100.0.2/24 dev vlan100
peer ip link set vlan100 up
ping -q -c 2 -i 0.2 10.100.0.2 >/dev/null || die "ping over the VLAN"
udp_flow "UDP over VLAN 100" 4 - 10.100.0.2 6404 write,udp,ip,link,nic "$UDP_RX" \
	--ifindex "$if_local"
devs_are "UDP over VLAN 100" "$W/f6404.nst" \
	"$(cat /sys/class/net/vlan100/ifindex)@$ns_init/tx>$if_local@$ns_init/tx" \
	--dir tx --family 4 --proto 17 --port 6404

# --- UDP through a bond (active-backup, the NIC its one slave): another
# stacked device, whose xmit hands the skb to the e1000's.
ip addr flush dev "$NS_LOCAL_IF"
ip link add nsbond type bond mode active-backup miimon 100 || die "ip link add bond"
ip link set "$NS_LOCAL_IF" down
ip link set "$NS_LOCAL_IF" master nsbond || die "enslave $NS_LOCAL_IF"
ip link set nsbond up
ip addr add "$NS_LOCAL_IP/24" dev nsbond
for ((i = 0; i < 300; i++)); do
	ping -q -c 1 -W 1 "$NS_PEER_IP" >/dev/null 2>&1 && break
	sleep 0.1
done
ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null || die "ping through the bond"
udp_flow "UDP through a bond" 4 - "$NS_PEER_IP" 6454 write,udp,ip,link,nic "$UDP_RX" \
	--ifindex "$if_local"
devs_are "UDP through a bond" "$W/f6454.nst" \
	"$(cat /sys/class/net/nsbond/ifindex)@$ns_init/tx>$if_local@$ns_init/tx" \
	--dir tx --family 4 --proto 17 --port 6454
ip link del nsbond
ip link set "$NS_LOCAL_IF" up
for ((i = 0; i < 600; i++)); do
	[[ $(cat "/sys/class/net/$NS_LOCAL_IF/carrier" 2>/dev/null) == 1 ]] && break
	sleep 0.1
done

# --- a container on a bridge: namespace ctr2 behind a veth whose host
# end and the NIC are ports of br0; its datagrams cross the veth, the
# bridge and the NIC in one block each.
ip netns add ctr2 || die "ip netns add ctr2"
ip link add vh2 type veth peer name vc2 netns ctr2 || die "ip link add veth"
ip link add br0 type bridge || die "ip link add bridge"
ip link set br0 type bridge stp_state 0 forward_delay 0
ip addr flush dev "$NS_LOCAL_IF"
ip link set "$NS_LOCAL_IF" master br0
ip link set vh2 master br0
ip addr add "$NS_LOCAL_IP/24" dev br0
ip link set vh2 up
ip link set br0 up
ip -n ctr2 addr add 192.0.2.3/24 dev vc2
ip -n ctr2 link set vc2 up
for ((i = 0; i < 300; i++)); do
	ip netns exec ctr2 ping -q -c 1 -W 1 "$NS_PEER_IP" >/dev/null 2>&1 && break
	sleep 0.1
done
ip netns exec ctr2 ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null ||
	die "ping from the container through the bridge"
udp_flow "container: veth, bridge, NIC" 4 ctr2 "$NS_PEER_IP" 6504 \
	write,udp,ip,link,nic,rx-link "$UDP_RX" --ifindex "$if_local" --flag FORWARDED
devs_are "container: veth, bridge, NIC" "$W/f6504.nst" \
	"$(ip netns exec ctr2 cat /sys/class/net/vc2/ifindex)@$(ip netns exec ctr2 stat -L -c %i /proc/self/ns/net)/tx>$(cat /sys/class/net/vh2/ifindex)@$ns_init/rx>$if_local@$ns_init/tx" \
	--dir tx --family 4 --proto 17 --port 6504

# --- virtio-net, the NIC of most cloud VMs: a NAPI driver without an NSI
# of its own, so its receive blocks take rx-nic from the poll's mark.
ip link set "$NS_VIRTIO_PEER_IF" netns "$NS_PEER_NS" || die "move $NS_VIRTIO_PEER_IF"
ip addr add 198.51.100.1/24 dev "$NS_VIRTIO_IF"
ip link set "$NS_VIRTIO_IF" up
peer ip addr add 198.51.100.2/24 dev "$NS_VIRTIO_PEER_IF"
peer ip link set "$NS_VIRTIO_PEER_IF" up
for ((i = 0; i < 300; i++)); do
	ping -q -c 1 -W 1 198.51.100.2 >/dev/null 2>&1 && break
	sleep 0.1
done
ping -q -c 2 -i 0.2 198.51.100.2 >/dev/null || die "ping over virtio-net"
if_virt=$(cat "/sys/class/net/$NS_VIRTIO_IF/ifindex")
udp_flow "UDP/IPv4 virtio-net" 4 - 198.51.100.2 6604 write,udp,ip,link,nic "$UDP_RX" \
	--ifindex "$if_virt"
devs_are "UDP/IPv4 virtio-net send" "$W/f6604.nst" "$if_virt@$ns_init/tx" \
	--dir tx --family 4 --proto 17 --port 6604

# tx_copies <tag> <port> <dst> <ifindex>...: N datagrams to <dst>:<port>
# while another device gets a copy of each; every copy reaching a driver
# has its own block, N per device, each closed and nested.
tx_copies() {
	local tag=$1 port=$2 dst=$3 ifx c o0 o1 copies=0
	shift 3
	quiesce
	nsdump_bg "$W/c$port.err" -q -B 16M -w "$W/c$port.nst" || die "nsdump did not start"
	o0=$(udp_out 4)
	udp_send "$dst" "$port" "$N"
	o1=$(udp_out 4)
	kill -INT $nsd
	wait $nsd
	grep -q " 0 dropped by kernel" "$W/c$port.err"
	tap $? "$tag: nothing dropped ($(tail -1 "$W/c$port.err"))"
	for ifx in "$@"; do
		c=$($PATHS count "$W/c$port.nst" --dir tx --proto 17 --port "$port" --ifindex "$ifx")
		echo "# $tag: $c send blocks on ifindex $ifx for $N datagrams, OutDatagrams +$((o1 - o0))"
		((c == N && o1 - o0 == N))
		tap $? "$tag: one block per transmission on ifindex $ifx ($c of $N)"
		tap_lines < <($PATHS check "$W/c$port.nst" --tag "$tag, ifindex $ifx" --dir tx \
			--proto 17 --port "$port" --ifindex "$ifx" --want write,udp,ip,link,nic)
		c=$($PATHS count "$W/c$port.nst" --dir tx --proto 17 --port "$port" \
			--ifindex "$ifx" --flag COPY)
		echo "# $tag: $c blocks flagged COPY on ifindex $ifx"
		copies=$((copies + c))
	done
	# Each datagram: one original, a copy for every other device.
	((copies == N * ($# - 1)))
	tap $? "$tag: $copies blocks flagged COPY == $N datagrams x $(($# - 1)) extra device(s)"
}

# --- tc's mirred: each datagram leaving the virtio NIC mirrored to a
# dummy device (a clone of the skb transmitted by a second driver).
ip link add nsdum0 type dummy && ip link set nsdum0 up || die "ip link add dummy"
tc qdisc add dev "$NS_VIRTIO_IF" clsact || die "tc qdisc add clsact"
tc filter add dev "$NS_VIRTIO_IF" egress matchall action mirred egress mirror dev nsdum0 ||
	die "tc filter add mirred"
tx_copies "mirred mirror" 6704 198.51.100.2 "$if_virt" "$(cat /sys/class/net/nsdum0/ifindex)"
tc qdisc del dev "$NS_VIRTIO_IF" clsact

# --- bridge flooding: datagrams to a neighbour whose MAC no port has
# learnt are flooded to every port of the bridge (clones, the last port
# the original: the bridge walks its ports newest first).  A third port
# drops all it is given (a blackhole qdisc): its copies reached the
# bridge's driver but not their own, and are flagged NOXMIT.
ip link add nsbr1 type bridge || die "ip link add nsbr1"
ip link set nsbr1 type bridge stp_state 0 forward_delay 0
for d in nsdum1 nsdum2 nsdum3; do
	ip link add $d type dummy && ip link set $d master nsbr1 && ip link set $d up ||
		die "bridge port $d"
done
tc qdisc add dev nsdum3 root blackhole || die "tc qdisc add blackhole"
ip link set nsbr1 up
ip addr add 203.0.113.1/24 dev nsbr1
ip neigh add 203.0.113.9 lladdr 02:00:00:00:00:09 dev nsbr1 || die "ip neigh add"
ifx1=$(cat /sys/class/net/nsdum1/ifindex) ifx2=$(cat /sys/class/net/nsdum2/ifindex)
ifx3=$(cat /sys/class/net/nsdum3/ifindex) ifbr=$(cat /sys/class/net/nsbr1/ifindex)
tx_copies "bridge flood" 6804 203.0.113.9 "$ifx1" "$ifx2"
f=$W/c6804.nst
on3=$($PATHS count "$f" --dir tx --proto 17 --port 6804 --ifindex "$ifx3")
nox=$($PATHS count "$f" --dir tx --proto 17 --port 6804 --flag NOXMIT)
noxbr=$($PATHS count "$f" --dir tx --proto 17 --port 6804 --flag NOXMIT --ifindex "$ifbr")
nox12=$(($($PATHS count "$f" --dir tx --proto 17 --port 6804 --flag NOXMIT --ifindex "$ifx1") +
	$($PATHS count "$f" --dir tx --proto 17 --port 6804 --flag NOXMIT --ifindex "$ifx2")))
echo "# bridge flood: $on3 blocks on the blackholed port, $nox NOXMIT ($noxbr on the bridge, $nox12 on the ports that sent)"
((on3 == 0))
tap $? "bridge flood: no block says it reached the blackholed port's driver ($on3)"
((nox == N))
tap $? "bridge flood: the copies the blackhole dropped are flagged NOXMIT ($nox of $N)"
((noxbr == N))
tap $? "bridge flood: each NOXMIT copy ends at the bridge, the last driver it reached ($noxbr of $N)"
((nox12 == 0))
tap $? "bridge flood: none of the transmitted copies is flagged NOXMIT ($nox12)"

rmmod netslice
tap $? "rmmod netslice"
((failed)) && cp -r "$W" "$NS_SCRATCH/t_paths.failed"
rm -rf "$W"
tap_finish
