#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Per-packet truth against the kernel's own tracepoints (issue 13), in the
# VM: a paced UDP flow (500-byte datagrams, 1 ms apart) from eth0 to the
# peer's eth1, captured by nsdump twice -- once with the tracepoints off,
# once with net_dev_queue, net_dev_start_xmit, napi_gro_receive_entry,
# netif_receive_skb, skb_copy_datagram_iovec and every interrupt entry
# event recorded by tracefs on the x86-tsc trace clock, the TSC the
# blocks read.  truth.py then matches them packet by packet:
#  - each send block's link region brackets exactly the flow's
#    net_dev_queue and net_dev_start_xmit of one skb, in order, on its
#    CPU, and every such event lies in one block; the residual (link
#    minus the tracepoints' interval: the code before net_dev_queue and
#    what the events cost) stays, quantile by quantile up to p90, within
#    the untraced link plus two trace events' cost (half the traced -
#    untraced difference of the medians), packets an interrupt hit left
#    out; above p90 TCG's vCPU switching owns the tail;
#  - each receive block's rx-nic holds its napi_gro_receive_entry, and the
#    netif_receive_skb of that skb (its skbaddr) lies in its rx-link; the
#    residual of the span rx-nic.start .. rx-link.end (minus the interval
#    between those two events) is bounded as the send side's is.
# The distributions of the differences are printed on every run.
# TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
TRUTH="host_run python3 $REPO/tests/vm/truth.py"
N=400
T=/sys/kernel/tracing

insmod "$NS_MODULE" || die "insmod $NS_MODULE"
[[ -e $T/trace_clock ]] || mount -t tracefs nodev $T || die "mount tracefs"
grep -qw x86-tsc $T/trace_clock || die "no x86-tsc trace clock: $(cat $T/trace_clock)"
echo x86-tsc >$T/trace_clock
echo 0 >$T/tracing_on
echo 8192 >$T/buffer_size_kb
for e in net/net_dev_queue net/net_dev_start_xmit net/napi_gro_receive_entry \
	net/netif_receive_skb skb/skb_copy_datagram_iovec; do
	[[ -e $T/events/$e/enable ]] || die "no tracepoint $e"
done
sysctl -qw net.ipv6.conf.all.disable_ipv6=1
peer sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null || die "ping $NS_PEER_IP"

# flow <port> <file>: N datagrams to the peer, captured by nsdump -w <file>
flow() {
	local port=$1 out=$2 got
	rm -f "$W/got"*
	peer bash -c "$(declare -f udp_recv); udp_recv $NS_PEER_IP $port $N $W/got; wait \$rpid" &
	local waiter=$!
	for ((i = 0; i < 300; i++)); do [[ -e $W/got.ready ]] && break; sleep 0.1; done
	quiesce
	nsdump_bg "$out.err" -q -B 16M -w "$out" "udp port $port" || die "nsdump did not start"
	[[ $3 == traced ]] && echo 1 >$T/tracing_on
	udp_send "$NS_PEER_IP" "$port" "$N"
	wait $waiter
	echo 0 >$T/tracing_on
	got=$(cat "$W/got")
	kill -INT $nsd
	wait $nsd
	grep -q " 0 dropped by kernel" "$out.err"
	tap $? "port $port ($3): $got of $N datagrams read, nothing dropped ($(tail -1 "$out.err"))"
}

flow 6301 "$W/off.nst" untraced
echo >$T/trace
for e in net/net_dev_queue net/net_dev_start_xmit net/napi_gro_receive_entry \
	net/netif_receive_skb skb/skb_copy_datagram_iovec irq irq_vectors; do
	[[ -e $T/events/$e/enable ]] && echo 1 >$T/events/$e/enable
done
flow 6301 "$W/on.nst" traced
for e in net skb irq irq_vectors; do
	[[ -e $T/events/$e/enable ]] && echo 0 >$T/events/$e/enable
done
cat $T/per_cpu/cpu*/stats | awk '/^overrun/ { o += $2 } END { print "# trace buffer overruns: " o + 0 }'
awk '/^overrun/ { o += $2 } END { exit o > 0 }' $T/per_cpu/cpu*/stats
tap $? "tracefs lost no event"
cat $T/trace >"$W/trace.txt"
echo "# $(grep -vc '^#' "$W/trace.txt") trace events"

# The TSC's rate, as the trace's report gives it: truth.py runs on the
# host, which has no /dev/ns to ask.
khz=$(host_run "$NSDUMP" -r "$W/on.nst" -q 2>/dev/null |
	sed -n 's/.* tsc_khz \([0-9]*\).*/\1/p' | head -n1)
echo "# tsc_khz $khz"
# 500-byte payloads: 542 bytes on the wire at the driver, 528 from the IP
# header on when the receive side hands the skb to GRO.
tap_lines < <($TRUTH tx "$W/on.nst" "$W/trace.txt" --port 6301 --khz "$khz" \
	--dev "$NS_LOCAL_IF" --wire-len 542 --off "$W/off.nst")
tap_lines < <($TRUTH rx "$W/on.nst" "$W/trace.txt" --port 6301 --khz "$khz" \
	--dev "$NS_PEER_IF" --len 528 --payload 500 --off "$W/off.nst")

rmmod netslice
tap $? "rmmod netslice"
rm -rf "$W"
tap_finish
