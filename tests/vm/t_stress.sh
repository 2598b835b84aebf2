#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# /dev/ns under stress (issue 13), in the VM: threads issue every ioctl
# with random, boundary and hostile arguments, read into bad buffers, poll,
# toggle O_NONBLOCK, open while others close, while TCP and UDP run through
# the NIC and over loopback and another process unloads and reloads the
# module and sets its cost_stage (the cost ladder's static key) at random;
# then 100 load/capture/unload cycles under traffic (25 on the debug
# kernel) (stress/allows.c says
# what each answer may be).  Afterwards collection still works and counts
# exactly: the helper's own capture (packets == read + dropped, from
# NSIOCGPACKETS and NSIOCGDROPS), and nsdump's of a tcp_stream (captured +
# dropped == what the core emitted meanwhile).
# TAP on stdout; exit 0 pass, 1 fail.

. "${NS_REPO:?}/tests/vm/lib.sh"
KO=${NS_MODULE:-$REPO/kernel/ns_module/netslice.ko}
MK=$REPO/tests/vm/t_stress.mk
HELPER=$REPO/build/tests/bin/stress

# Built on the host (run-tests.sh runs tests/vm/*.mk first); if it is
# missing or stale, into /tmp here: the 9p root is read-only.
if ! make -s -q -f "$MK" 2>/dev/null; then
	HELPER=/tmp/bin/stress
	make -s -f "$MK" OUT=/tmp/bin >&2
fi
tap $? "helper $HELPER ready"
[[ -x $HELPER && -f $KO ]] || { tap 1 "module $KO exists"; tap_finish; }

# On the debug kernel a load/capture/unload cycle takes about 5 s (rmmod
# under KASAN and kmemleak): 25 cycles there, which still run every
# path of the cycle, and the 100 on the other kernel.
if [[ -e /sys/kernel/debug/kmemleak && -z ${NS_STRESS_CYCLES:-} ]]; then
	export NS_STRESS_CYCLES=25
	echo "# a debug kernel (kmemleak): $NS_STRESS_CYCLES load/capture/unload cycles"
fi
"$HELPER" run "$KO" >"$W/run.tap" 2>&1
status=$?
tap_pipe <"$W/run.tap"
tap $status "stress run: exit status $status"

insmod "$KO"
tap $? "insmod after the stress"
"$HELPER" capture >"$W/capture.tap" 2>&1
status=$?
tap_pipe <"$W/capture.tap"
tap $status "stress capture: exit status $status"

# nsdump holds /dev/ns alone, so its packets are the core's emitted count
# between two quiet moments, read by the helper before and after.  With
# rings of 64 KiB, runs of 4 KiB and more are written from the ring
# itself, each ring given back at a quarter full: losses come, and are
# counted as such.
capture_stream() {
	local ring=$1 port=$2 e0 e1 captured dropped reread srv

	peer "$BENCH/tcp_stream" -s -n -p "$port" >"$W/srv.out" 2>&1 &
	srv=$!
	wait_listen "$port" peer || die "tcp_stream server did not start"
	quiesce
	e0=$("$HELPER" emitted)
	tap $? "-B $ring: emitted count before nsdump: $e0"
	nsdump_bg "$W/nsdump.err" -q -B "$ring" -w "$W/stress.nst" ||
		die "nsdump did not start"
	"$BENCH/tcp_stream" -c "$NS_PEER_IP" -p "$port" -t 1 >"$W/cli.out"
	tap $? "-B $ring: tcp_stream to $NS_PEER_IP"
	wait $srv
	quiesce			# TX completions and the closing handshake
	kill -INT $nsd
	wait $nsd
	tap $? "-B $ring: nsdump captured the run ($(tail -1 "$W/nsdump.err"))"
	e1=$("$HELPER" emitted)
	tap $? "-B $ring: emitted count after nsdump: $e1"
	read -r captured dropped < <(sed -n 's/^\([0-9]*\) blocks captured, \([0-9]*\) dropped by kernel.*/\1 \2/p' "$W/nsdump.err")
	((captured > 0 && captured + dropped == e1 - e0))
	tap $? "-B $ring: nsdump: captured $captured + dropped $dropped == emitted $((e1 - e0)) (packets)"
	"$NSDUMP" -r "$W/stress.nst" -q 2>"$W/r.err" >/dev/null
	reread=$(sed -n 's/^\([0-9]*\) blocks captured.*/\1/p' "$W/r.err")
	[[ $reread == "$captured" ]]
	tap $? "-B $ring: nsdump -r reads back the $captured blocks it wrote ($reread)"
}
capture_stream 32M 5311
capture_stream 64 5312

# While collecting, an extension freed on one CPU is kept for the next
# block (patch 0019): a spare and a stash a CPU, and a pool they share.
# A loopback tcp_stream sent from CPU 0 to a receiver on CPU 1 frees
# blocks on the CPU that did not make them, which fills a stash and the
# pool.  Once nsdump has closed /dev/ns, collection is off and every kept
# extension is back in the slab but a spare a CPU kept as it stopped:
# the cache, shrunk (its CPU slabs flushed), has that many in use.
# Extensions still on live skbs are not kept ones: a receiver's last
# skbs wait in the allocating CPU's defer list (skb_attempt_defer_free)
# until NET_RX next runs there, up to 31 of them.  A datagram over
# loopback from each CPU runs NET_RX on it, which frees them first.
ext_in_use() {
	local c
	for ((c = 0; c < $(nproc); c++)); do
		taskset -c "$c" bash -c 'echo >/dev/udp/127.0.0.1/9' 2>/dev/null
	done
	sleep 0.2
	echo 1 >/sys/kernel/slab/skbuff_ext_cache/shrink &&
		awk '$1 == "skbuff_ext_cache" { print $2 }' /proc/slabinfo
}
ext_drained() {
	local port=5313 ncpu before kept after srv

	ncpu=$(nproc)
	before=$(ext_in_use)
	tap $? "skbuff_ext_cache in use before the capture: $before"
	taskset -c 1 "$BENCH/tcp_stream" -s -n -b 127.0.0.1 -p "$port" >"$W/lo.out" 2>&1 &
	srv=$!
	wait_listen "$port" || die "tcp_stream server on lo did not start"
	nsdump_bg "$W/lo.err" -q -w "$W/lo.nst" || die "nsdump did not start"
	taskset -c 0 "$BENCH/tcp_stream" -c 127.0.0.1 -p "$port" -t 1 >"$W/lo-cli.out"
	tap $? "tcp_stream over lo, CPU 0 to CPU 1"
	wait $srv
	sleep 0.5		# the closing handshake's skbs freed
	kept=$(ext_in_use)
	tap $? "skbuff_ext_cache in use while collecting, the flow over: $kept"
	kill -INT $nsd
	wait $nsd
	tap $? "nsdump stopped ($(tail -1 "$W/lo.err"))"
	after=$(ext_in_use)
	((kept > before + ncpu))
	tap $? "extensions kept while collecting: $kept in use > $before before + $ncpu spares"
	((after <= before + ncpu))
	tap $? "collection off: $after in use <= $before before + $ncpu spares"
}
if (($(nproc) >= 2)); then
	ext_drained
else
	skip "kept extensions given back" "one CPU: no flow between two"
fi

rmmod netslice
tap $? "rmmod netslice"
((failed)) && cp -r "$W" "$NS_SCRATCH/t_stress.failed"
rm -rf "$W"
tap_finish
