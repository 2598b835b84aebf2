#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The filter in the kernel (NSIOCSFILTER, issues 11 and 12), in one VM:
#  - its argument checks (bad sizes, flags, pointers, programs the kernel's
#    checker refuses, ancillary loads) and a program that refuses
#    everything: no block read under traffic, every block the core emitted
#    counted as refused, nothing left after a new open (nsioctl.py);
#  - the same UDP traffic (IPv4 to two ports, IPv6 to a third, through
#    the e1000s) captured unfiltered and then with an expression that
#    nsdump hands to the kernel: the filtered trace holds exactly the
#    blocks of the matching flows -- per direction as many as the
#    unfiltered trace holds of them and as the datagrams sent and read,
#    and not one other (counted by nspath.py from the files' bytes) --,
#    each received one whole from rx-nic on;
#    nsdump's own run of the same program drops none of what the kernel
#    passed (received by filter == captured + refused in the kernel);
#  - where the kernel runs it: an expression that reads only the flow is
#    run at NSI (NSL_FILTER_FLOW), so the other flows' packets never get
#    a block (the core's emitted count grows by what nsdump captured, not
#    by the 4N refused; the skb extensions asked for, skb_ext_add()'s
#    calls counted by a kprobe, are exactly the blocks made); one that
#    reads a length is run before the ring
#    (the refused blocks were made and handed over);
#  - the cost ladder's stages (the module's cost_stage, bench/sameboot.sh
#    -L) under the same traffic: none makes no block (no extension
#    allocated), carry and records make one for every packet as collecting
#    does and deliver none; an unknown stage is refused and changes
#    nothing;
#  - sampling at NSI (nsioctl.py sample), before IPv6 is up, so that the
#    loopback traffic is all there is: 1 in 4 datagrams, every one decided
#    once, a block for each one taken; 1 in 2 flows, each whole or absent.
# TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
PATHS="host_run python3 $REPO/tests/vm/nspath.py"
N=200		# datagrams per flow

insmod "$NS_MODULE" || die "insmod $NS_MODULE"
for cmd in "sample 2000" "filter 3"; do
	python3 "$REPO/tests/vm/nsioctl.py" $cmd >"$W/nsioctl.tap" 2>&1
	rc=$?
	tap_pipe <"$W/nsioctl.tap"
	tap $rc "nsioctl.py $cmd: every check ran and held"
done
ipv6_up

# The skb extensions NetSlice asks for (a block made), counted between
# ext_count_begin and ext_count_end, which prints the count: the calls
# of skb_ext_add(), by a kprobe.  Its allocations cannot be the count any
# more: while collecting, an extension mostly comes from the CPU's spare
# (patch 0019), which the slab's tracepoint does not see, and
# __skb_ext_alloc() starts with a static key's jump, which kprobes
# refuse.  In this test's traffic only NetSlice adds an extension.
T=/sys/kernel/tracing
[[ -e $T/trace_clock ]] || mount -t tracefs nodev $T || die "mount tracefs"
echo 'p:nsl/ext_add skb_ext_add' >>$T/kprobe_events ||
	die "a kprobe on skb_ext_add: $(tail -3 $T/error_log)"
ext_count_begin() {
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 1 >$T/events/nsl/ext_add/enable &&
		echo 1 >$T/tracing_on
}
ext_count_end() {
	echo 0 >$T/tracing_on
	echo 0 >$T/events/nsl/ext_add/enable
	awk '/^overrun/ { o += $2 } END { exit o > 0 }' $T/per_cpu/cpu*/stats ||
		return 1
	# grep -c fails on a count of 0, which is a count too.
	grep -c ' ext_add:' $T/trace || true
}

# capture <name> [expression]: N datagrams to the peer's 6201 and 6202
# (IPv4) and 6206 (IPv6) under nsdump -w $W/<name>.nst; each receiver's
# count in $W/<name>-<port>.
capture() {
	local name=$1 port dst pids=() i
	shift
	rm -f "$W/got"*
	for port in 6201 6202 6206; do
		dst=$NS_PEER_IP
		[[ $port == 6206 ]] && dst=$PEER6
		peer bash -c "$(declare -f udp_recv); udp_recv $dst $port $N $W/got$port; wait \$rpid" &
		pids+=($!)
	done
	for port in 6201 6202 6206; do
		for ((i = 0; i < 300; i++)); do [[ -e $W/got$port.ready ]] && break; sleep 0.1; done
	done
	quiesce
	emitted0=$(python3 "$REPO/tests/vm/nsioctl.py" emitted)
	nsdump_bg "$W/$name.err" -v -q -B 16M -w "$W/$name.nst" "$@" ||
		die "nsdump $* did not start"
	ext_count_begin || die "the kprobe nsl/ext_add in $T"
	udp_send "$NS_PEER_IP" 6201 "$N" connect
	udp_send "$NS_PEER_IP" 6202 "$N" connect
	udp_send "$PEER6" 6206 "$N" connect
	wait "${pids[@]}"
	quiesce
	exts=$(ext_count_end) || die "the trace buffer overran: extensions not counted"
	kill -INT "$nsd"
	wait "$nsd"
	tap $? "$name: nsdump -w ${*:-(no expression)} ($(tail -1 "$W/$name.err"))"
	made=$(($(python3 "$REPO/tests/vm/nsioctl.py" emitted) - emitted0))
	for port in 6201 6202 6206; do
		cp "$W/got$port" "$W/$name-$port"
	done
}

# count <file> <dir> <family> <port>: blocks of that UDP flow.
count() { $PATHS count "$1" --dir "$2" --family "$3" --proto 17 --port "$4"; }

capture all
for port in 6201 6202 6206; do
	fam=4
	[[ $port == 6206 ]] && fam=6
	echo "# unfiltered: port $port read $(cat "$W/all-$port"), blocks tx $(count "$W/all.nst" tx $fam $port) rx $(count "$W/all.nst" rx $fam $port)"
done

# The cost ladder: blocks made, extensions allocated and blocks captured
# when each block's life stops at a stage.
STAGE=/sys/module/netslice/parameters/cost_stage
[[ $(cat $STAGE) == full ]]
tap $? "cost_stage reads full after load"
! echo bogus 2>/dev/null >$STAGE && [[ $(cat $STAGE) == full ]]
tap $? "cost_stage: an unknown stage is refused and the stage stays full"
for stage in none carry records; do
	echo $stage >$STAGE || die "cost_stage $stage"
	capture "stage-$stage"
	echo full >$STAGE
	read -r cap < <(awk '/blocks captured/ { print $1 }' "$W/stage-$stage.err")
	got=$(($(cat "$W/stage-$stage-6201") + $(cat "$W/stage-$stage-6202") + $(cat "$W/stage-$stage-6206")))
	echo "# cost_stage $stage: $exts extensions allocated, $made blocks made, $cap captured, $got datagrams read"
	((got == 3 * N))
	tap $? "cost_stage $stage: every datagram read ($got)"
	((made == 0 && cap == 0))
	tap $? "cost_stage $stage: no block delivered (made $made, captured $cap)"
	if [[ $stage == none ]]; then
		((exts == 0))
		tap $? "cost_stage none: no extension allocated ($exts)"
	else
		# A send and a receive block per datagram, as collecting.
		((exts >= 6 * N))
		tap $? "cost_stage $stage: a block made for every packet ($exts >= $((6 * N)))"
	fi
done

# filtered <name> <nsi|ring> <expression> <port:family...>: the flows it
# must keep, and where the kernel must run it.
filtered() {
	local name=$1 where=$2 expr=$3 total keep=0 p fam tx rx atx arx refused rcv cap
	shift 3
	capture "$name" "$expr"
	total=$($PATHS count "$W/$name.nst")
	for p in "$@"; do
		fam=${p#*:} p=${p%:*}
		tx=$(count "$W/$name.nst" tx "$fam" "$p")
		rx=$(count "$W/$name.nst" rx "$fam" "$p")
		atx=$(count "$W/all.nst" tx "$fam" "$p")
		arx=$(count "$W/all.nst" rx "$fam" "$p")
		((tx == N && rx == N && atx == N && arx == N &&
		  $(cat "$W/$name-$p") == N))
		tap $? "'$expr': port $p send blocks $tx, receive blocks $rx == unfiltered ($atx, $arx) == $N sent and read"
		# A frame the e1000 received is timed from the driver on
		# (rx-nic), and whole.
		tap_lines < <($PATHS check "$W/$name.nst" --tag "'$expr': port $p receive" \
			--dir rx --family "$fam" --proto 17 --port "$p" \
			--want rx-nic,rx-link,rx-ip,rx-udp,queue,copy)
		keep=$((keep + tx + rx))
	done
	((total == keep))
	tap $? "'$expr': the trace holds those $keep blocks and no other ($total)"
	refused=$(awk '/blocks refused by the filter in the kernel/ { print $1 }' "$W/$name.err")
	read -r cap rcv < <(awk '/blocks captured/ { print $1, $4 }' "$W/$name.err")
	echo "# '$expr': $refused refused in the kernel; nsdump: $cap captured, $rcv received by filter"
	((refused >= 2 * N && cap == total && rcv == cap + refused))
	tap $? "'$expr': the kernel refused the other flows' blocks ($refused >= $((2 * N))), nsdump dropped none it passed ($rcv == $cap + $refused)"
	# The blocks the core made: at NSI the refused packets got none (a
	# stray ARP frame, with no flow, still gets one, refused later).
	echo "# '$expr': the core made $made blocks for $cap captured, $refused refused ($where); $exts skb extensions allocated"
	if [[ $where == nsi ]]; then
		grep -q 'filters at NSI' "$W/$name.err" &&
			((made >= cap && made - cap < N / 4 && refused >= (3 - $#) * 2 * N))
		tap $? "'$expr' at NSI: no block made for the $refused refused packets ($made made, $cap captured)"
		# Not even one made and dropped: the e1000's NSI, before the
		# headers, allocated one for every frame it received (808
		# allocated for 402 blocks made, before).
		((exts == made))
		tap $? "'$expr' at NSI: no extension allocated for the refused packets: every one allocated ($exts) is a block made ($made)"
	else
		grep -q 'filters before the ring' "$W/$name.err" &&
			((made == cap + refused))
		tap $? "'$expr' before the ring: every block made was captured or refused ($made == $cap + $refused)"
	fi
}

filtered port nsi 'udp dst port 6201' 6201:4
filtered ip6 nsi 'ip6 and udp' 6206:6
filtered host nsi "udp and host $NS_PEER_IP and (port 6202 or port 6201)" 6201:4 6202:4
filtered len ring 'udp dst port 6202 and len >= 28' 6202:4

rmmod netslice
tap $? "rmmod netslice"

# The bench that reads the ladder (it loads the module itself): one row
# per configuration, every stage short of full delivering nothing, III a
# block per message at least (a send and its receive over loopback are
# one block), and each minimum no more than its median.
LN=200
bash "$REPO/bench/sameboot.sh" -L -R 1 -N $LN >"$W/ladder.out" 2>"$W/ladder.err"
tap $? "bench/sameboot.sh -L ran ($(tail -1 "$W/ladder.out"))"
tap_lines < <(host_run python3 "$REPO/tests/vm/ladder_check.py" \
	"$W/ladder.out" "$W/ladder.err" $((2 * (LN + LN / 10))))
grep -q '^netslice ' /proc/modules && rmmod netslice
echo '-:nsl/ext_add' >>$T/kprobe_events
rm -rf "$W"
echo "1..$n"
((failed == 0))
