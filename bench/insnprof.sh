#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the instructions of lat_tcp's round trip go, counted exactly: runs
# inside a VM that bench/insn/insncount.so counts (make insnprof boots it),
# and marks a window around each configuration's round trips.  A window
# runs from just before the client starts to after nsdump has drained and
# closed its file; the plugin snapshots its counters at each mark, with
# the guest idle, and bench/insnprof.py takes the differences.
#
# Configurations, interleaved for R rounds in one boot:
#   II       the module loaded, nothing collecting
#   none .. records   III with each block's life cut short at a stage
#            (the module's cost_stage, as bench/sameboot.sh -L)
#   III      nsdump -q -w on tmpfs, every packet
#   IIIs     the same with --sample 10
#
#   bench/insnprof.sh [-R rounds] [-N round trips] [-c "II III ..."]
# Environment: INSN_DIR, the plugin's request directory as the guest
# sees it (default /mnt/scratch/insn).

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=3
ITERS=2000
CONFIGS="II none carry clock records III IIIs"
while (($#)); do
	case $1 in
	-R) ROUNDS=$2; shift ;;
	-N) ITERS=$2; shift ;;
	-c) CONFIGS=$2; shift ;;
	*) echo "usage: $0 [-R rounds] [-N round trips] [-c configs]" >&2; exit 2 ;;
	esac
	shift
done

KO=${NS_MODULE:-$REPO/kernel/ns_module/netslice.ko}
NSDUMP=${NS_NSDUMP:-$REPO/nsdump/nsdump}
INSN_DIR=${INSN_DIR:-/mnt/scratch/insn}
W=$(mktemp -d /dev/shm/nsinsn.XXXXXX)
trap 'rm -rf "$W"' EXIT
WARMUP=$((ITERS / 10))

die() { echo "insnprof: $*" >&2; exit 1; }

# mark <name>: the plugin's snapshot of every counter, taken while this
# guest is idle (both vCPUs halted: they execute nothing meanwhile).
mark() {
	local i
	sleep 0.3
	: >"$INSN_DIR/req.$1"
	for ((i = 0; i < 400; i++)); do
		[[ -e $INSN_DIR/snap.$1 ]] && { sleep 0.1; return 0; }
		sleep 0.05
	done
	die "no snapshot $1 from the plugin (is QEMU running it?)"
}

# One window: lat_tcp's client between two marks, under nsdump with
# @args unless the configuration is II; the stage set before.
window() {
	local name=$1 stage=$2 pf=$W/port srv nsd=
	shift 2
	rm -f "$pf" "$W/t.nst"
	[[ $stage == - ]] || echo "$stage" >"$STAGE"
	"$REPO/bench/lat_tcp" -s -n -b 127.0.0.1 -p 0 --port-file "$pf" \
		>/dev/null 2>&1 &
	srv=$!
	while [[ ! -s $pf ]]; do
		kill -0 $srv 2>/dev/null || die "lat_tcp server died"
		sleep 0.05
	done
	if [[ $stage != - ]]; then
		"$NSDUMP" -q -w "$W/t.nst" "$@" 2>"$W/nsdump.err" &
		nsd=$!
		while [[ ! -s $W/t.nst ]]; do
			kill -0 $nsd 2>/dev/null || { cat "$W/nsdump.err" >&2; die "nsdump"; }
			sleep 0.05
		done
	fi
	mark "$name.begin"
	"$REPO/bench/lat_tcp" -c 127.0.0.1 -p "$(cat "$pf")" \
		-W "$WARMUP" -N "$ITERS" >/dev/null
	if [[ -n $nsd ]]; then
		kill -INT $nsd
		wait $nsd
	fi
	mark "$name.end"
	wait $srv
	echo full >"$STAGE"
	echo "# $name: $((WARMUP + ITERS)) round trips${nsd:+; nsdump: $(tail -n 1 "$W/nsdump.err")}"
}

grep -q '^netslice ' /proc/modules && rmmod netslice
insmod "$KO" enable=0 || die "insmod $KO"
STAGE=/sys/module/netslice/parameters/cost_stage
[[ -w $STAGE ]] || die "the module has no $STAGE"
mkdir -p "$INSN_DIR"
cat /proc/kallsyms >"$INSN_DIR/kallsyms"
echo "round_trips $((WARMUP + ITERS))" >"$INSN_DIR/windows"
window warm-up - >/dev/null
for ((r = 1; r <= ROUNDS; r++)); do
	for cfg in $CONFIGS; do
		case $cfg in
		II) window "$cfg.$r" - ;;
		none|carry|clock|records) window "$cfg.$r" "$cfg" ;;
		III) window "$cfg.$r" full ;;
		IIIs) window "$cfg.$r" full --sample 10 ;;
		*) die "unknown configuration $cfg" ;;
		esac
		echo "$cfg $cfg.$r" >>"$INSN_DIR/windows"
	done
done
