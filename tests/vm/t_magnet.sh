#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# MAGNeT event records, in the VM, against what the application did and
# what the kernel itself reports (issue 5):
#  - MAGNeT's FTP example: 10240 bytes written every 20 ms, 50 times, from
#    the root namespace to the peer's over the e1000s.  SOCK_SEND records:
#    exactly 50, 10240 bytes each, spaced 20 ms (median, +-3 ms: TCG
#    delays single writes by tens of ms, the schedule is absolute so the
#    mean holds too); TCP_SEND no larger than the mss unless flagged TSO;
#    IP_SEND = TCP_SEND + headers, DEV_SEND = IP_SEND + 14; bytes: TCP_SEND
#    less retransmitted payload (RETRANS blocks) == SOCK_SEND == written;
#    the receiver's DEV/IP/TCP_RECV and SOCK_RECV account for the same
#    payload; nsdump -M's Table III shows the same.
#  - TCP state: a 4 MB bulk transfer, then (everything acknowledged) ss -tin
#    and a 1-byte probe write whose SOCK_SEND record is taken before
#    anything changes: cwnd, srtt and total_retrans exactly as ss says
#    (and the payload of the RETRANS blocks before it is ss's
#    bytes_retrans); the last data record: total_retrans exact, srtt within
#    50%, cwnd below ss's by at most the packets it had out (ACKs that came
#    after it).
#  - UDP: 100 datagrams of 500 bytes to the peer; the sender's socket has
#    100 each of SOCK_SEND, UDP_SEND, IP_SEND, DEV_SEND, the receiver's of
#    DEV_RECV, IP_RECV, UDP_RECV, SOCK_RECV, in that order per datagram,
#    the UDP events carrying the 500-byte payload; Table III has the UDP
#    rows next to the socket's; the packet events' addresses are the
#    packet's, each socket's row has its local and remote address; the
#    same over IPv6, whose events carry IPv6 addresses (ADDR6);
#  - NSIOCSRECORDS: bad arguments give EINVAL; records switched on and off
#    100 times under traffic leave a stream that decodes item by item and
#    that nsdump reads; no WARNING (the harness fails on one).
# TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
PEERPY="python3 $REPO/tests/vm/magnet_peer.py"
CHECK="host_run python3 $REPO/tests/vm/magnet_check.py"
NSREC="python3 $REPO/tests/vm/nsrec.py"

jget() { host_run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

# nsdump -M in the background; the trace in $W/$1.ns.
nsd_start() {
	nsdump_bg "$W/$1.err" -q -M --addr -B 16M -w "$W/$1.ns" ||
		die "nsdump -M did not start"
}
nsd_stop() { # <name> <what>
	kill -INT "$nsd"
	wait "$nsd"
	tap $? "nsdump -M captured $2 ($(tail -1 "$W/$1.err"))"
}

insmod "$NS_MODULE" || die "insmod $NS_MODULE"
sysctl -qw net.ipv6.conf.all.disable_ipv6=1
peer sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null || die "ping $NS_PEER_IP"

# --- NSIOCSRECORDS argument checks (the device is free)
tap_lines < <($NSREC einval)

# --- MAGNeT's FTP example
writes=50 size=10240
peer $PEERPY server 5601 --out "$W/ftp-srv.json" &
srv=$!
wait_listen 5601 peer || die "FTP receiver did not start"
nsd_start ftp
$PEERPY client "$NS_PEER_IP" 5601 --out "$W/ftp-cli.json" --writes $writes \
	--size $size --interval 0.02
tap $? "client: $writes writes of $size bytes every 20 ms"
wait $srv
sleep 0.5			# the closing handshake, TX completions
nsd_stop ftp "the FTP example"
host_run -o "$X/ftp.json" "$NSDUMP" -r "$W/ftp.ns" --json -M 2>"$W/ftp-r.err"
tap $? "nsdump -r --json -M reads the trace"
"$NSDUMP" -r "$W/ftp.ns" -q -M >"$W/ftp.txt" 2>&1
lport=$(jget "$W/ftp-cli.json" lport)
echo "# connection 192.0.2.1:$lport -> $NS_PEER_IP:5601; receiver read $(jget "$W/ftp-srv.json" bytes) bytes"
tap_lines < <($CHECK ftp "$X/ftp.json" "$W/ftp.txt" --lport "$lport" \
	--rport 5601 --writes $writes --size $size --interval-ms 20 --tol-ms 3)
sed -n "/local 192.0.2.1:$lport /,/^conn\|^[0-9]/p" "$W/ftp.txt" | sed 's/^/# /'

# --- TCP state at the end of a bulk transfer
peer $PEERPY server 5602 --out "$W/bulk-srv.json" &
srv=$!
wait_listen 5602 peer || die "bulk receiver did not start"
nsd_start bulk
$PEERPY client "$NS_PEER_IP" 5602 --out "$W/bulk-cli.json" --writes 64 \
	--size 65536 --interval 0 --ss "$W/bulk-ss.txt" --probe
tap $? "client: 4 MB bulk, ss -tin, a 1-byte probe"
wait $srv
sleep 0.5
nsd_stop bulk "the bulk transfer"
host_run -o "$X/bulk.json" "$NSDUMP" -r "$W/bulk.ns" --json -M 2>/dev/null
lport=$(jget "$W/bulk-cli.json" lport)
sed 's/^/# ss: /' "$W/bulk-ss.txt"
tap_lines < <($CHECK state "$X/bulk.json" --lport "$lport" --rport 5602 \
	--client "$W/bulk-cli.json" --ss "$W/bulk-ss.txt")

# --- UDP: its own events between the socket's and IP's, on both sides;
# over IPv4, then over IPv6, whose events carry IPv6 addresses (ADDR6)
udp_run() { # <name> <src> <dst> <port> <what>
	local name=$1 src=$2 dst=$3 port=$4 what=$5 waiter i
	rm -f "$W/got"*
	peer bash -c "$(declare -f udp_recv); udp_recv $dst $port 100 $W/got; wait \$rpid" &
	waiter=$!
	for ((i = 0; i < 300; i++)); do [[ -e $W/got.ready ]] && break; sleep 0.1; done
	nsd_start "$name"
	udp_send "$dst" "$port" 100
	wait $waiter
	echo "# receiver read $(cat "$W/got") datagrams"
	sleep 0.5			# TX completions
	nsd_stop "$name" "100 $what datagrams"
	host_run -o "$X/$name.json" "$NSDUMP" -r "$W/$name.ns" --json -M 2>/dev/null
	tap_lines < <($CHECK udp "$X/$name.json" --lport 0 --rport "$port" --writes 100 \
		--size 500 --saddr "$src" --daddr "$dst" | sed "s/^\(ok\|fail\) /\1 $what /")
	"$NSDUMP" -r "$W/$name.ns" -q -M 2>&1 | sed -n '/^# application vs wire/,$p' | sed 's/^/# /'
}
udp_run udp "$NS_LOCAL_IP" "$NS_PEER_IP" 5604 IPv4
ipv6_up
udp_run udp6 "$LOCAL6" "$PEER6" 5606 IPv6

# --- records on and off under traffic
peer "$REPO/bench/tcp_stream" -s -n -p 5603 >/dev/null 2>&1 &
srv=$!
wait_listen 5603 peer || die "tcp_stream server did not start"
# The switching took 4.5 s alone and 8.3 s on a busy host: the traffic
# runs long enough for either.
tap_lines < <($NSREC toggle --count 100 --port 5603 --raw "$W/toggle.bin" -- \
	"$REPO/bench/tcp_stream" -c "$NS_PEER_IP" -p 5603 -t 16)
wait $srv
tap_lines < <(host_run python3 "$REPO/tests/vm/nsrec.py" stream --raw "$W/toggle.bin" \
	--template "$W/ftp.ns" --ns "$X/toggle.ns")
read -r blocks events lost <"$X/toggle.ns.counts"
host_run -o "$X/toggle.json" "$NSDUMP" -r "$X/toggle.ns" --json -M 2>"$W/toggle-r.err"
tap $? "nsdump -r reads the toggled stream ($(tail -1 "$W/toggle-r.err"))"
nb=$(grep -c '"type":"block"' "$X/toggle.json")
ne=$(grep -c '"type":"event"' "$X/toggle.json")
((nb == blocks && ne == events))
tap $? "nsdump decodes the same $blocks blocks ($nb) and $events event records ($ne)"

rmmod netslice
tap $? "rmmod netslice"
rm -rf "$W"
echo "1..$n"
((failed == 0))
