#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The send path, in the VM, through the e1000 NIC and through loopback:
#  - integrity: every transmitted block has write, tcp (copy + header),
#    ip, link and nic, nested and ordered as defined, nothing left open;
#  - truth of counts: the blocks match independent counts of the same
#    packets, exactly: tcpdump on the sending interface sees each
#    transmitted skb once (before the driver, so a TSO skb is one
#    packet); the e1000 driver's tx_packets and TCP's OutSegs count the
#    segments (gso_segs) each skb became.  Packets that carry no block
#    (SYN, pure ACKs, FIN, ARP) are counted from the capture and
#    accounted for.  (The peer's rx_packets is no truth here: QEMU's e1000
#    TSO emulation puts more frames on the wire than the segments the
#    kernel asked for.)
#  - the same through software GSO: with TSO off, and through a tbf qdisc
#    that segments what exceeds its burst; every segment its own block;
#  - a writer appending to an skb that TCP splits at every send (a reader
#    with a 4 KiB window, splits.py): no block runs out of records (each
#    split leaves the copy a SHARED record; back-to-back ones are summed,
#    whichever CPU split),
#    every one whole over loopback (a retransmission the reader had
#    already, and one whose data joined another skb, end at rx-tcp);
#  - a reader's buffer shrunk under a queue it has not read, its head
#    skb partly read (splits.py --collapse, in rounds that wait for the
#    kernel, not for time): TCP collapses the queue, and each block
#    whose data it copied into a new skb ends its queue there,
#    COALESCED; a segment dropped for memory ends in rx-tcp, no more of
#    them than TCP's drops.
# TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
CHECK="host_run python3 $REPO/tests/vm/nscheck.py"

# OutSegs counts new segments; retransmitted ones go to RetransSegs.
outsegs() { awk '/^Tcp:/ { if (h) print $12 + $13; h = 1 }' /proc/net/snmp; }

insmod "$NS_MODULE" || die "insmod $NS_MODULE"
# A silent link: no IPv6 chatter, ARP resolved before counting starts.
sysctl -qw net.ipv6.conf.all.disable_ipv6=1
peer sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null || die "ping $NS_PEER_IP"
ifindex=$(cat "/sys/class/net/$NS_LOCAL_IF/ifindex")

# A bulk transfer to the peer namespace through the NIC, checked:
# nic_run <tag> <port> [all|some]: all or some of the blocks must be
# software GSO segments, each one wire packet (tbf lets a TSO skb within
# its burst through whole).
nic_run() {
	local tag=$1 port=$2 want_gso=${3:-} out blocks segs gso gso_multi data_skbs \
		other other_tcp tx0 tx1 os0 os1 srv tpid
	peer "$BENCH/tcp_stream" -s -n -p "$port" >"$W/srv.out" 2>&1 &
	srv=$!
	wait_listen "$port" peer || die "tcp_stream server did not start"
	quiesce
	nsdump_bg "$W/nsdump.err" -q -B 32M -w "$W/nic.nst" || die "nsdump did not start"
	capture_start "$NS_LOCAL_IF" "$W/nic.pcap" "$W/tcpdump.err" ||
		die "tcpdump on $NS_LOCAL_IF did not start"
	tpid=$!
	sleep 0.3
	tx0=$(stat_local tx_packets)
	os0=$(outsegs)
	"$BENCH/tcp_stream" -c "$NS_PEER_IP" -p "$port" -t 2 --json >"$W/cli.json"
	tap $? "$tag: tcp_stream to $NS_PEER_IP through $NS_LOCAL_IF"
	wait $srv
	quiesce			# TX completions and the closing handshake
	t1=$(date +%s.%N)
	tx1=$(stat_local tx_packets)
	os1=$(outsegs)
	capture_stop $tpid "$W/tcpdump.err" "$W/nic.pcap" "$NS_LOCAL_IF"
	tap $? "$tag: tcpdump on $NS_LOCAL_IF lost nothing"
	kill -INT $nsd
	wait $nsd
	tap $? "$tag: nsdump captured the run ($(tail -1 "$W/nsdump.err"))"
	grep -q " 0 dropped by kernel" "$W/nsdump.err"
	tap $? "$tag: no block dropped (a count is exact only if nothing was lost)"
	host_run -o "$X/nic.json" "$NSDUMP" -r "$W/nic.nst" --json 2>"$W/r.err"
	tap $? "$tag: nsdump -r reads the trace"

	rm -f "$X/counts"
	out=$($CHECK send-integrity "$X/nic.json" --ifindex "$ifindex" --counts-to "$X/counts")
	tap $? "$tag: blocks have all five regions, nested and ordered"
	echo "$out" | sed 's/^/# /'

	read -r blocks segs gso gso_multi <"$X/counts"
	data_skbs=$(count_pcap "$W/nic.pcap" "$payload")
	other=$(count_pcap "$W/nic.pcap" "not ($payload)" "$t1")
	other_tcp=$(count_pcap "$W/nic.pcap" "tcp and not ($payload)" "$t1")
	echo "# $tag: $blocks blocks ($gso software GSO segments), $segs segments; capture: $data_skbs data skbs, $other without payload ($other_tcp TCP); $NS_LOCAL_IF tx_packets +$((tx1 - tx0)), Tcp OutSegs+RetransSegs +$((os1 - os0))"
	((blocks == data_skbs && blocks > 0))
	tap $? "$tag: blocks ($blocks) == data skbs seen by tcpdump ($data_skbs)"
	((segs + other == tx1 - tx0))
	tap $? "$tag: segments in blocks ($segs) + packets without a block ($other) == driver tx_packets ($((tx1 - tx0)))"
	((segs + other_tcp == os1 - os0))
	tap $? "$tag: segments in blocks ($segs) + TCP packets without a block ($other_tcp) == Tcp OutSegs + RetransSegs ($((os1 - os0)))"
	if [[ -n $want_gso ]]; then
		((gso > 0))
		tap $? "$tag: software GSO segments carry their own blocks ($gso of $blocks; $gso_multi claim more than one wire packet)"
	fi
	if [[ $want_gso == all ]]; then
		((segs == blocks))
		tap $? "$tag: no TSO: every block is one wire packet ($segs segments, $blocks blocks)"
	fi
}

nic_run NIC 5301
# Software GSO where the device has no TSO (validate_xmit_skb), and where
# a qdisc segments itself: tbf splits what exceeds its burst.
ethtool -K "$NS_LOCAL_IF" tso off || die "ethtool -K $NS_LOCAL_IF tso off"
nic_run "NIC, TSO off" 5303 all
ethtool -K "$NS_LOCAL_IF" tso on || die "ethtool -K $NS_LOCAL_IF tso on"
tc qdisc add dev "$NS_LOCAL_IF" root tbf rate 400mbit burst 4000 latency 200ms ||
	die "tc qdisc add tbf"
nic_run "NIC through tbf" 5304 some
tc qdisc del dev "$NS_LOCAL_IF" root

# --- through loopback: a ping-pong
"$BENCH/lat_tcp" -s -n -b 127.0.0.1 -p 5302 >"$W/lsrv.out" 2>&1 &
srv=$!
wait_listen 5302 || die "lat_tcp server did not start"
nsdump_bg "$W/nsdump-lo.err" -q -B 32M -w "$W/lo.nst" || die "nsdump did not start"
capture_start lo "$W/lo.pcap" "$W/tcpdump-lo.err" ||
	die "tcpdump on lo did not start"
tpid=$!
"$BENCH/lat_tcp" -c 127.0.0.1 -p 5302 -W 20 -N 300 --json >"$W/lat.json"
tap $? "lat_tcp over loopback"
wait $srv
sleep 0.5
capture_stop $tpid "$W/tcpdump-lo.err" "$W/lo.pcap" lo
tap $? "tcpdump on lo lost nothing"
kill -INT $nsd
wait $nsd
host_run -o "$X/lo.json" "$NSDUMP" -r "$W/lo.nst" --json 2>/dev/null
tap $? "nsdump -r reads the loopback trace"
rm -f "$X/counts"
out=$($CHECK send-integrity "$X/lo.json" --loopback --counts-to "$X/counts")
tap $? "loopback blocks: all five regions, nested and ordered"
echo "$out" | sed 's/^/# /'
read -r blocks segs _ <"$X/counts"
data_skbs=$(count_pcap "$W/lo.pcap" "$payload")
echo "# loopback: $blocks blocks; capture: $data_skbs data skbs of $(count_pcap "$W/lo.pcap" "") packets; lat_tcp did 320 round trips"
((blocks == data_skbs && blocks >= 640))
tap $? "loopback: blocks ($blocks) == data skbs seen by tcpdump ($data_skbs), >= 2 per round trip"

# --- a TCP skb split at every send while its writer appends to it

PATHS="host_run python3 $REPO/tests/vm/nspath.py"
# splits_capture NAME PORT [--collapse]: splits.py under nsdump, into
# $W/NAME.nst; the receive side's drops for memory in $drops
splits_capture() {
	local d0
	quiesce
	d0=$(rcv_drops)
	nsdump_bg "$W/$1.err" -q -B 32M -w "$W/$1.nst" || die "nsdump did not start"
	out=$(python3 "$REPO/tests/vm/splits.py" "$2" 3 ${3:+"$3"})
	tap $? "$1: splits.py: $out"
	quiesce
	kill -INT "$nsd"
	wait "$nsd"
	drops=$(($(rcv_drops) - d0))
}
# Segments TCP drops on receive for want of memory (its data comes again):
# at the queue, out of order, or pruned from the out-of-order queue.
rcv_drops() {
	echo $(($(netstat_ext TcpExt TCPRcvQDrop) + $(netstat_ext TcpExt TCPOFODrop) +
		$(netstat_ext TcpExt OfoPruned)))
}
# splits_check NAME PORT TAG: every send block over loopback whole, but
# where the receiver ran short of memory (a loaded host, or --collapse):
#  - a segment TCP dropped ends in rx-tcp, and there are no more such
#    blocks than drops;
#  - a segment TCP collapsed, its data copied into a new skb, ends its
#    queue (and any copy it had begun) there, COALESCED.
splits_check() {
	local short sel=(--port "$2" --dir tx --flag LOOPBACK --without RETRANS)
	tap_lines < <($PATHS check "$W/$1.nst" --tag "$3" "${sel[@]}" \
		--without COALESCED --region queue \
		--want write,tcp,ip,link,nic,rx-link,rx-ip,rx-tcp,queue,copy)
	short=$($PATHS count "$W/$1.nst" "${sel[@]}" --without COALESCED --no-region queue)
	((short <= drops))
	tap $? "$3: $short blocks end in rx-tcp, no more than TCP's receive drops for memory ($drops)"
	((short == 0)) ||
		tap_lines < <($PATHS check "$W/$1.nst" --tag "$3, dropped" "${sel[@]}" \
			--without COALESCED --no-region queue \
			--want write,tcp,ip,link,nic,rx-link,rx-ip,rx-tcp)
	tap_lines < <($PATHS check "$W/$1.nst" --tag "$3, coalesced" "${sel[@]}" \
		--flag COALESCED --want write,tcp,ip,link,nic,rx-link,rx-ip,rx-tcp \
		--may queue,copy)
}

splits_capture split 5701
blocks=$($PATHS count "$W/split.nst" --port 5701 --dir tx --flag LOOPBACK)
trunc=$($PATHS count "$W/split.nst" --port 5701 --flag TRUNC)
runs=$($PATHS shared-runs "$W/split.nst" --port 5701 --dir tx)
echo "# split at every send: $blocks data blocks, $trunc out of records"
((blocks > 0 && trunc == 0))
tap $? "split at every send: none of the $blocks blocks ran out of records ($trunc TRUNC)"
# How many splits a block sees, and on which CPUs, is the scheduler's:
# that each one was summed into the record before it is not.
((runs == 0))
tap $? "split at every send: no block keeps two SHARED records of one region back to back before its first device ($runs do)"
splits_check split 5701 "split at every send"

# --- a reader's buffer shrunk under a queue of small segments: TCP
# collapses its receive queue, copying the data of queued segments into
# new skbs that have no block
c0=$(netstat_ext TcpExt TCPRcvCollapsed)
splits_capture collapse 5702 --collapse
c1=$(netstat_ext TcpExt TCPRcvCollapsed)
ended=$($PATHS count "$W/collapse.nst" --port 5702 --dir tx --flag COALESCED --region queue)
echo "# collapse: TcpExt TCPRcvCollapsed +$((c1 - c0)); $ended blocks COALESCED with a queue of their own"
# Each collapsed skb is counted; one without a block (a collapse's own
# skb collapsed again) has no block to flag.
((c1 > c0 && ended > 0 && ended <= c1 - c0))
tap $? "collapse: TCP collapsed the queue ($((c1 - c0)) skbs), and $ended blocks end their queue there, COALESCED"
splits_check collapse 5702 collapse

rmmod netslice
tap $? "rmmod netslice"
# Keep the evidence of a failure where the host can see it.
((failed)) && cp -r "$W" "$NS_SCRATCH/t_send.failed"
rm -rf "$W"
echo "1..$n"
((failed == 0))
