#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the instructions of a unit of network work go, counted exactly:
# runs inside a VM that bench/insn/insncount.so counts (make insnprof
# boots it), and marks a window around each configuration's workload.  A
# window runs from the workload's start (lat_tcp: after its warm-up) to
# after nsdump has drained and closed its file: capture start-up (and the
# calibration it triggers) is outside, the final drain inside.  nsdump's
# teardown that follows (unmapping the rings, closing /dev/ns, where the
# hooks' static key goes off, its process exit) is counted on its own,
# once per capture (the "exits" file).  The guest executes a marker instruction
# (bench/insn/nsmark, lat_tcp --insn-mark, bench/insn/markexit.so
# preloaded into nsdump); the plugin snapshots every counter as it does,
# and bench/insnprof.py takes the differences.
#
# Workloads (-w):
#   lat_tcp     4 B messages over loopback, per round trip
#   tcp_stream  bulk over loopback, per MiB received
#   lat_nic     lat_tcp through the e1000 path: the client here, its server
#               in the peer namespace behind the other e1000 (the two NICs
#               share a QEMU hub), both stacks in the count; per round trip
# Configurations (-c), interleaved for R rounds in one boot:
#   II       the module loaded, nothing collecting
#   none .. records   III with each block's life cut short at a stage
#            (the module's cost_stage, as bench/sameboot.sh -L)
#   III      nsdump -q -w on tmpfs, every packet
#   IIIs     the same with --sample 10
#   IIIf     the same with a filter that passes no packet (decided at NSI)
#   IV       III with a counter per region (cpu-clock: TCG has no PMU)
#   agg      always on: every packet folded into the module's histograms
#            (aggregate mode, tests/vm/nsagg.py on), no reader
#
#   bench/insnprof.sh [-R rounds] [-N round trips] [-T seconds]
#                     [-w "lat_tcp tcp_stream"] [-c "II III ..."] [-P cpus|C/S]
#
# -P pins the workload's client and server to @cpus (taskset -c), in
# every configuration; -P C/S pins the client to C and the server to S,
# so that a round trip crosses CPUs as it does unpinned.  Unpinned, the
# scheduler's search for an idle CPU at each wake-up (select_task_rq_fair)
# takes one of two paths for a whole window, 204 or 372 instructions a
# lat_tcp round trip, and which one II's windows took moves every ratio
# of the boot by 0.66%; a task allowed one CPU skips the search.  nsdump
# is not pinned.
# Environment: INSN_DIR, the plugin's snapshot directory as the guest
# sees it (default /mnt/scratch/insn).

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=3
ITERS=2000
SECS=2
WORKLOADS=lat_tcp
CONFIGS="II none carry clock records III IIIs IIIf IV agg"
PIN=()
SPIN=()	# the server's, as PIN unless -P C/S
while (($#)); do
	case $1 in
	-R) ROUNDS=$2; shift ;;
	-N) ITERS=$2; shift ;;
	-T) SECS=$2; shift ;;
	-w) WORKLOADS=$2; shift ;;
	-c) CONFIGS=$2; shift ;;
	-P) PIN=(taskset -c "${2%/*}"); SPIN=(taskset -c "${2#*/}"); shift ;;
	*) echo "usage: $0 [-R rounds] [-N round trips] [-T seconds] [-w workloads] [-c configs] [-P cpus|C/S]" >&2
	   exit 2 ;;
	esac
	shift
done

KO=${NS_MODULE:-$REPO/kernel/ns_module/netslice.ko}
NSDUMP=${NS_NSDUMP:-$REPO/nsdump/nsdump}
EXITMARK=$REPO/bench/insn/markexit.so
INSN_DIR=${INSN_DIR:-/mnt/scratch/insn}
W=$(mktemp -d /dev/shm/nsinsn.XXXXXX)
trap 'rm -rf "$W"' EXIT
WARMUP=$((ITERS / 10))

die() { echo "insnprof: $*" >&2; exit 1; }

coproc MARK { "$REPO/bench/insn/nsmark"; }

# The plugin numbers snapshots by every marker the guest executes: the
# count of nsmark's and lat_tcp --insn-mark's, in $SNAP.
SNAP=0
marked() {
	SNAP=$((SNAP + 1))
	[[ -s $INSN_DIR/snap.$SNAP ]] ||
		die "no snapshot $SNAP from the plugin (is QEMU running it?)"
}

# mark: a snapshot now, taken as nsmark executes the marker.  The file
# is written before the instruction retires, so it is there once nsmark
# answers.
mark() {
	local n
	echo >&"${MARK[1]}"
	read -r n <&"${MARK[0]}" || die "nsmark died"
	marked
}

# Where the workload's server listens.
server_ip() {
	[[ $WL == lat_nic ]] && echo "$NS_PEER_IP" || echo 127.0.0.1
}

# The workload's client; the window's first snapshot in $BEGIN.  lat_tcp
# marks after its warm-up, so that the window counts its round trips and
# not its start; tcp_stream's start is a small part of seconds of bulk.
client() {
	local port=$1
	case $WL in
	lat_tcp|lat_nic)
		"${PIN[@]}" "$REPO/bench/lat_tcp" -c "$(server_ip)" -p "$port" --insn-mark \
			-W "$WARMUP" -N "$ITERS" >/dev/null || die "lat_tcp client"
		marked
		BEGIN=$SNAP ;;
	tcp_stream)
		mark
		BEGIN=$SNAP
		"${PIN[@]}" "$REPO/bench/tcp_stream" -c 127.0.0.1 -p "$port" -t "$SECS" \
			--json >"$W/client.json" 2>/dev/null || die "tcp_stream client" ;;
	esac
}

# The window's units of work, read after it closed.
units() {
	case $WL in
	lat_tcp|lat_nic) echo "$ITERS" ;;
	tcp_stream)
		python3 -c 'import json,sys
print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["bytes_received_by_server"] / 1048576)' \
			"$W/client.json" ;;
	esac
}

# One window: the workload's client between two marks, under nsdump with
# @args unless the stage is "-"; the stage set before.
window() {
	local cfg=$1 stage=$2 pf=$W/port srv nsd= end= units
	shift 2
	rm -f "$pf" "$W/t.nst"
	[[ $stage == - || $stage == agg ]] || echo "$stage" >"$STAGE"
	if [[ $WL == lat_nic ]]; then
		ip netns exec "$NS_PEER_NS" "${SPIN[@]}" "$REPO/bench/lat_tcp" -s -n \
			-b "$NS_PEER_IP" -p 0 --port-file "$pf" >/dev/null 2>&1 &
	else
		"${SPIN[@]}" "$REPO/bench/$WL" -s -n -b 127.0.0.1 -p 0 --port-file "$pf" \
			>/dev/null 2>&1 &
	fi
	srv=$!
	while [[ ! -s $pf ]]; do
		kill -0 $srv 2>/dev/null || die "$WL server died"
		sleep 0.05
	done
	if [[ $stage == agg ]]; then
		python3 "$REPO/tests/vm/nsagg.py" on reset || die "aggregate mode"
	elif [[ $stage != - ]]; then
		# At fixed addresses (no ASLR), so that its map names its
		# functions in every window: insnprof.py reads maps.nsdump.
		INSNPROF_MARK_AFTER=$W/t.nst LD_PRELOAD=$EXITMARK \
			setarch -R "$NSDUMP" -q -w "$W/t.nst" "$@" \
			2>"$W/nsdump.err" &
		nsd=$!
		while [[ ! -s $W/t.nst ]]; do
			kill -0 $nsd 2>/dev/null || { cat "$W/nsdump.err" >&2; die "nsdump"; }
			sleep 0.05
		done
		cat "/proc/$nsd/maps" >"$INSN_DIR/maps.nsdump"
		sleep 0.5	# the calibration a capture's start triggers
	fi
	client "$(cat "$pf")"
	if [[ -n $nsd ]]; then
		kill -INT $nsd
		wait $nsd
		# The mark markexit.so took as nsdump closed its file;
		# nothing forks before the next, so that the teardown and
		# the exit are all it counts.
		[[ -s $INSN_DIR/snap.$((SNAP + 1)) ]] ||
			die "no mark from nsdump's exit ($EXITMARK preloaded)"
		marked
		end=$SNAP
	fi
	mark
	[[ -n $end ]] || end=$SNAP
	[[ -z $nsd ]] || grep -q '^insnprof: marked at exit' "$W/nsdump.err" ||
		die "nsdump exited without the exit marker ($EXITMARK)"
	[[ $stage != agg ]] || python3 "$REPO/tests/vm/nsagg.py" off
	wait $srv || true
	echo full >"$STAGE"
	[[ $cfg == - ]] && return 0
	units=$(units)
	echo "$WL $cfg $BEGIN $end $units" >>"$INSN_DIR/windows"
	[[ -z $nsd ]] || echo "$WL $cfg $end $SNAP" >>"$INSN_DIR/exits"
	echo "# $WL $cfg: $units units${nsd:+; nsdump: $(grep -v '^insnprof:' "$W/nsdump.err" | tail -n 1)}"
}

grep -q '^netslice ' /proc/modules && rmmod netslice
insmod "$KO" enable=0 || die "insmod $KO"
STAGE=/sys/module/netslice/parameters/cost_stage
[[ -w $STAGE ]] || die "the module has no $STAGE"
mkdir -p "$INSN_DIR"
rm -f "$INSN_DIR"/windows "$INSN_DIR"/exits
cat /proc/kallsyms >"$INSN_DIR/kallsyms"
for WL in $WORKLOADS; do
	case $WL in
	lat_tcp|tcp_stream) [[ -x $REPO/bench/$WL ]] || die "no workload $WL" ;;
	lat_nic)
		[[ -x $REPO/bench/lat_tcp ]] || die "no workload lat_tcp"
		[[ -n ${NS_PEER_NS:-} && -n ${NS_PEER_IP:-} ]] ||
			die "lat_nic: no peer namespace (NS_PEER_NS, NS_PEER_IP; tests/vm/run-vm.sh sets them)"
		# ARP resolved before any window: no neighbour work in one.
		ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null ||
			die "lat_nic: no answer from $NS_PEER_IP" ;;
	*) die "unknown workload $WL" ;;
	esac
	window - - >/dev/null
	for ((r = 1; r <= ROUNDS; r++)); do
		for cfg in $CONFIGS; do
			case $cfg in
			II) window "$cfg" - ;;
			none|carry|clock|records) window "$cfg" "$cfg" ;;
			III) window "$cfg" full ;;
			IIIs) window "$cfg" full --sample 10 ;;
			IIIf) window "$cfg" full port 9 ;;
			IV) window "$cfg" full -e cpu-clock ;;
			agg) window "$cfg" agg ;;
			*) die "unknown configuration $cfg" ;;
			esac
		done
	done
done
