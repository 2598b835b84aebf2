# SPDX-License-Identifier: GPL-2.0
#
# What every in-VM test script shares; source it first:
#   . "${NS_REPO:?}/tests/vm/lib.sh"
# TAP on stdout through tests/tap.sh: tap <status> <description> (status
# 0 is a pass, like an exit status), skip <description> <reason>, and at
# the end `tap_finish`; die <reason> fails and exits.
set -u
REPO=${NS_REPO:?}
NSDUMP=${NS_NSDUMP:-$REPO/nsdump/nsdump}
BENCH=$REPO/bench
W=$(mktemp -d)

. "$REPO/tests/tap.sh"
die() { echo "# $*"; not_ok "$*"; tap_plan; exit 1; }

# ---- Analysis on the host
# host_run [-o FILE] [-i] [NAME=value...] <command> [args...]: runs an
# analysis of files (nsdump -r, the Python checks) natively on the host
# through run-vm.sh's hostrun.sh; under TCG, Python alone took 1-2 s to
# start and 25-40 s to parse one NIC run's JSON, most of a test's time.
# Its stdout (or FILE), stderr and status are the command's; its stdin is
# ours with -i (a script on a here-document), else /dev/null; NAME=value
# go to its environment.  A file argument in $W (tmpfs, which the host
# cannot see) is first copied to $X, in the scratch share (each time: most
# calls run in a subshell, which could not remember a copy); write what
# the analysis produces to $X.  Without NS_HOSTRUN (a VM started some
# other way) it runs here, and $X is $W.
if [[ -n ${NS_HOSTRUN:-} && -d ${NS_HOSTRUN:-} ]]; then
	X=$(mktemp -d "$NS_SCRATCH/x.XXXXXX")
else
	NS_HOSTRUN='' X=$W
fi
# What the host read is evidence of a failure; a pass leaves nothing.
trap '((failed)) || [[ $X == "$W" ]] || rm -rf "$X"' EXIT
hr_seq=0
# The path of <file> in $W as the host can read it: a copy in $X.
hr_file() {
	local to=$X/${1#"$W"/}
	mkdir -p "$(dirname "$to")" && cp "$1" "$to" && echo "$to"
}
host_run() {
	local out='' in='' args=() a id rc i
	if [[ $1 == -o ]]; then out=$2; shift 2; fi
	if [[ $1 == -i ]]; then in=1; shift; fi
	if [[ -z $NS_HOSTRUN ]]; then
		[[ -n $in ]] && in=/dev/stdin || in=/dev/null
		if [[ -n $out ]]; then env "$@" <"$in" >"$out"; else env "$@" <"$in"; fi
		return
	fi
	for a in "$@"; do
		[[ $a == "$W"/* && -f $a ]] && { a=$(hr_file "$a") || return 125; }
		args+=("$a")
	done
	# Unique while it waits: calls in concurrent subshells differ in
	# $BASHPID, those in one shell in their sequence number.
	id=$NS_HOSTRUN/$BASHPID.$((++hr_seq))
	if [[ -n $in ]]; then
		in=$X/.stdin.$BASHPID.$hr_seq
		cat >"$in" || return 125
	fi
	printf '%s\0' "$out" "$in" "${args[@]}" >"$id.req" && mv "$id.req" "$id.go" || return 125
	# An hour: a debug kernel's whole test is bounded by the VM's timeout.
	for ((i = 0; i < 72000; i++)); do
		[[ -e $id.rc ]] && break
		sleep 0.05
	done
	if [[ ! -e $id.rc ]]; then
		echo "# host_run: no answer from the host for: $*" >&2
		return 125
	fi
	cat "$id.err" >&2
	[[ -n $out ]] || cat "$id.out"
	read -r rc <"$id.rc"
	rm -f "$id".* ${in:+"$in"}
	return "$rc"
}

# Run a command in the peer network namespace (eth1, $NS_PEER_IP).
peer() { ip netns exec "$NS_PEER_NS" "$@"; }

# A Python helper's "ok ..." / "fail ..." / "# ..." lines as our TAP.
tap_lines() {
	local st rest
	while read -r st rest; do
		case $st in
		ok) tap 0 "$rest" ;;
		fail) tap 1 "$rest" ;;
		'#') echo "# $rest" ;;
		*) echo "# $st $rest" ;;
		esac
	done
}
# Renumber the TAP lines of a helper into ours; the rest as comments.
tap_pipe() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) tap 0 "${line#ok * - }" ;;
		"not ok "*) tap 1 "${line#not ok * - }" ;;
		1..*) ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done
}

# Packets with TCP payload / without, in a capture.
payload='tcp and (ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2)) > 0'
# count_pcap <pcap> <filter> [until]: the packets matching <filter>, or
# only those stamped at or before <until> (`date +%s.%N` on this clock):
# a capture runs on past a test's last counter snapshot while
# capture_stop waits for the file to settle, and what the link sends
# then is in the file but not in the counters.
count_pcap() {
	tcpdump -tt -nn -r "$1" "$2" 2>/dev/null | awk -v until="${3:-}" '
		BEGIN { split(until, u, "."); us = substr(u[2] "000000", 1, 6) + 0 }
		until == "" { n++; next }
		{ split($1, t, "."); if (t[1] + 0 < u[1] + 0 || (t[1] == u[1] && t[2] + 0 <= us)) n++ }
		END { print n + 0 }'
}

# Wait until something listens on TCP port <port> (in the peer namespace
# with "peer" as the second argument); a fixed sleep is too short under a
# loaded TCG.
wait_listen() { # <port> [peer]
	local i
	for ((i = 0; i < 300; i++)); do
		[[ -n $(${2:+peer} ss -Hltn "sport = :$1") ]] && return 0
		sleep 0.1
	done
	echo "# nothing listens on port $1 after 30 s"
	return 1
}

# Interface statistics (rx_packets, tx_bytes, ...), one line each, of the
# local NIC and of the peer's (one exec in the namespace for them all).
stat_local() { (cd "/sys/class/net/$NS_LOCAL_IF/statistics" && cat "$@"); }
stat_peer() {
	peer sh -c 'cd "/sys/class/net/$0/statistics" && cat "$@"' "$NS_PEER_IF" "$@"
}

# Wait until the link between the two namespaces is quiet (60 s at most):
# both ends' rx and tx packet counters unchanged for a second, and no
# neighbour entry about to send an ARP probe (DELAY, PROBE, INCOMPLETE:
# an entry learnt from a request and then used probes 5 s later).  Called
# before a test starts a capture and takes its counter snapshot, and
# before it takes the last one: the closing handshake, the TX completions
# and the ARP probes of a slow (debug) kernel outlast any fixed sleep.
link_state() {
	stat_local rx_packets tx_packets
	stat_peer rx_packets tx_packets
	{ ip neigh show dev "$NS_LOCAL_IF"; peer ip neigh show dev "$NS_PEER_IF"; } |
		grep -E 'DELAY|PROBE|INCOMPLETE'
}
quiesce() {
	local prev cur end=$((SECONDS + 60))
	cur=$(link_state)
	while ((SECONDS < end)); do
		prev=$cur
		sleep 1
		cur=$(link_state)
		[[ $cur == "$prev" && $cur != *[A-Z]* ]] && return 0
	done
	echo "# the link did not go quiet in 60 s: $cur"
	return 1
}

# nsdump <args> in the background, stderr to <log>, its pid in $nsd;
# returns once it says it is listening (collection on), like tcpdump.
nsdump_bg() { # <log> <nsdump args...>
	local log=$1 i
	shift
	"$NSDUMP" "$@" 2>"$log" &
	nsd=$!
	for ((i = 0; i < 300; i++)); do
		if grep -q "^nsdump: listening on" "$log" 2>/dev/null; then
			# Every capture takes its items in place from the mapping.
			grep -q "^nsdump: listening on .* ring per CPU mapped, " "$log" &&
				return 0
			echo "# nsdump did not map the rings: $(head -1 "$log")"
			return 1
		fi
		kill -0 "$nsd" 2>/dev/null || break
		sleep 0.1
	done
	echo "# nsdump did not start listening: $(tail -1 "$log")"
	return 1
}

# tcpdump writes "listening on" once its socket is bound: wait for it.
# On lo a packet shows once, as sent; elsewhere keep only what is sent.
# The pid is in $!.
capture_start() { # <iface> <pcap> <log>
	local dir=(-Q out) i
	[[ $1 == lo ]] && dir=()
	tcpdump -i "$1" "${dir[@]}" -nn -s 96 -B 16384 -U -w "$2" 2>"$3" &
	for ((i = 0; i < 100; i++)); do
		grep -q "listening on" "$3" && return 0
		sleep 0.1
	done
	return 1
}
# Stop tcpdump once its file has stopped growing (SIGINT makes it quit
# without reading what is still queued on its socket).  Stopped means
# unchanged for longer than libpcap's 1 s block timeout: before that, a
# first block of packets may not have reached tcpdump yet.  Fails unless it
# wrote every packet its filter took: on lo, where each packet is seen
# going out and coming in, "captured" is half of "received by filter";
# with -Q out the incoming ones are filtered after counting, so there the
# caller's exact counts are the check.
capture_stop() { # <pid> <log> <pcap> <iface>
	local size=-1 i cap rcv same=0
	for ((i = 0; i < 100; i++)); do
		if [[ $(stat -c %s "$3") == "$size" ]]; then
			((++same >= 3)) && break
		else
			same=0
		fi
		size=$(stat -c %s "$3")
		sleep 0.5
	done
	kill -INT "$1"
	wait "$1"
	cap=$(awk '/packets captured/ { print $1 }' "$2")
	rcv=$(awk '/packets received by filter/ { print $1 }' "$2")
	echo "# tcpdump: $cap captured, $rcv received by filter"
	grep -q "^0 packets dropped by kernel" "$2" || return 1
	[[ $4 != lo ]] || ((2 * cap == rcv))
}

# ---- UDP traffic counted against the kernel (t_paths, t_filter)

# snmp <Proto> <Field>: a counter of /proc/net/snmp (this namespace);
# netstat_ext the same of /proc/net/netstat (TcpExt, IpExt)
snmp_in() {
	awk -v p="$2:" -v f="$3" '$1 == p {
		if (!h) { for (i = 2; i <= NF; i++) if ($i == f) c = i; h = 1 }
		else print $c }' "$1"
}
snmp() { snmp_in /proc/net/snmp "$@"; }
netstat_ext() { snmp_in /proc/net/netstat "$@"; }
# snmp6 <Field>: a counter of /proc/net/snmp6
snmp6() { awk -v f="$1" '$1 == f { print $2 }' /proc/net/snmp6; }
udp_out() { if [[ $1 == 6 ]]; then snmp6 Udp6OutDatagrams; else snmp Udp OutDatagrams; fi; }
udp_in() { if [[ $1 == 6 ]]; then snmp6 Udp6InDatagrams; else snmp Udp InDatagrams; fi; }

# A UDP receiver: binds <addr> <port>, reads <n> datagrams (30 s at most),
# prints how many it read once it is done.  Ready when the port is bound.
udp_recv() { # <addr> <port> <n> <out>
	python3 - "$@" <<-'PY' &
	import socket, sys
	addr, port, n, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
	fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
	s = socket.socket(fam, socket.SOCK_DGRAM)
	s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
	s.bind((addr, port))
	open(out + ".ready", "w").close()
	# The first datagram may come minutes later (nsdump's start calibrates
	# every CPU: slow on a debug kernel); then they come back to back.
	s.settimeout(600)
	got = 0
	try:
	    while got < n:
	        s.recv(2048)
	        got += 1
	        s.settimeout(30)
	except socket.timeout:
	    pass
	open(out, "w").write("%d\n" % got)
	PY
	rpid=$!
	local i
	for ((i = 0; i < 300; i++)); do
		[[ -e $4.ready ]] && return 0
		sleep 0.1
	done
	return 1
}
# udp_send <addr> <port> <n> [connect]: n datagrams of 500 bytes, 1 ms
# apart, from a connected socket with "connect" (its flow known at NSI).
udp_send() {
	python3 - "$@" <<-'PY'
	import socket, sys, time
	addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
	s = socket.socket(fam, socket.SOCK_DGRAM)
	if sys.argv[4:] == ["connect"]:
	    s.connect((addr, port))
	    send = lambda b: s.send(b)
	else:
	    send = lambda b: s.sendto(b, (addr, port))
	for i in range(n):
	    send(b"%04d" % i + b"x" * 496)
	    time.sleep(0.001)
	PY
}

# IPv6 on both e1000s with fixed addresses (no DAD wait), $LOCAL6 and
# $PEER6; ARP and ND resolved before any counting.  No router
# solicitations: the kernel sends them without end (backing off from 4 s),
# and one sent while a test reads the driver's counters is a packet the
# counters have and its capture does not yet (seen: tx_packets +201 for
# 200 datagrams and no other packet up to the snapshot).
ipv6_up() {
	local c
	LOCAL6=2001:db8::1 PEER6=2001:db8::2
	for c in all default "$NS_LOCAL_IF"; do
		sysctl -qw "net.ipv6.conf.$c.router_solicitations=0"
	done
	for c in all default "$NS_PEER_IF"; do
		peer sysctl -qw "net.ipv6.conf.$c.router_solicitations=0"
	done
	sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0
	peer sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0
	ip addr add "$LOCAL6/64" dev "$NS_LOCAL_IF" nodad || die "ip addr add $LOCAL6"
	peer ip addr add "$PEER6/64" dev "$NS_PEER_IF" nodad || die "ip addr add $PEER6"
	ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null || die "ping $NS_PEER_IP"
	ping -q -c 2 -i 0.2 "$PEER6" >/dev/null || die "ping $PEER6"
}
