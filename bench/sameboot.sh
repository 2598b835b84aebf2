#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What collecting adds to lat_tcp's round trip, measured in one boot:
# II (module loaded, idle), IIIf (collecting, an expression no packet
# passes, run at NSI: what NetSlice costs the packets nobody asked about)
# and III (collecting every packet, nsdump -q -w on tmpfs), interleaved
# for R rounds.  overhead.sh boots a fresh VM for every configuration and
# round, which under QEMU TCG moves the round trip by more than the
# effects it compares; within one boot the minimum round trip is steady,
# so differences of a few microseconds between two kernels show.
#
# -L (the cost ladder) runs, in place of IIIf, III with each block's life
# cut short at a stage (the module's cost_stage parameter, enum nsl_stage
# in linux/netslice.h), each stage doing all the one before it does:
#   none     nsdump collecting, but NSI makes no block
#   carry    blocks made, forked, handed to the driver, received, ended at
#            NSE and freed, those hooks doing their part; NSS and NST
#            return at once; nothing delivered
#   clock    NSS and NST read the TSC, and record nothing
#   records  NSS and NST record; nothing delivered
# and then III, which delivers every block.  What each adds to the stage
# before it is where the cost of collecting goes.
#
#   make vm CMD='bench/sameboot.sh [-L] [-R rounds] [-N iterations]'
#   KIMAGE=<other bzImage> NS_MODULE=<its netslice.ko> tests/vm/run-vm.sh \
#       "$PWD/bench/sameboot.sh"          (the same for another kernel)
#
# Prints one line per configuration and round, then per configuration the
# median of the round medians and the minimum of the round minima, and
# what each adds to II's minimum and to the configuration before it.
# Runs inside the VM, as root.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=3
ITERS=4000
LADDER=
while (($#)); do
	case $1 in
	-L) LADDER=1 ;;
	-R) ROUNDS=$2; shift ;;
	-N) ITERS=$2; shift ;;
	*) echo "usage: $0 [-L] [-R rounds] [-N iterations]" >&2; exit 2 ;;
	esac
	shift
done

KO=${NS_MODULE:-$REPO/kernel/ns_module/netslice.ko}
NSDUMP=${NS_NSDUMP:-$REPO/nsdump/nsdump}
W=$(mktemp -d /dev/shm/nssame.XXXXXX)
trap 'rm -rf "$W"' EXIT

# lat_tcp once; prints "<config> <median_us> <min_us>".
lat() {
	local pf=$W/port srv
	rm -f "$pf"
	"$REPO/bench/lat_tcp" -s -n -b 127.0.0.1 -p 0 --port-file "$pf" \
		>/dev/null 2>&1 &
	srv=$!
	while [[ ! -s $pf ]]; do
		kill -0 $srv 2>/dev/null || { echo "sameboot: lat_tcp server died" >&2; return 1; }
		sleep 0.05
	done
	"$REPO/bench/lat_tcp" -c 127.0.0.1 -p "$(cat "$pf")" \
		-W $((ITERS / 10)) -N "$ITERS" --json >"$W/lat.json"
	wait $srv
	python3 -c 'import json, sys
d = json.load(open(sys.argv[2]))
print(sys.argv[1], d["median_us"], d["min_us"])' "$1" "$W/lat.json"
}

# lat_tcp under nsdump with @args; the capture's own summary on stderr.
collect() {
	local cfg=$1 nsd
	shift
	"$NSDUMP" -q -w "$W/t.nst" "$@" 2>"$W/nsdump.err" &
	nsd=$!
	while [[ ! -s $W/t.nst ]]; do
		kill -0 $nsd 2>/dev/null || { cat "$W/nsdump.err" >&2; return 1; }
		sleep 0.05
	done
	lat "$cfg"
	kill -INT $nsd
	wait $nsd
	echo "# $cfg: $(tail -n 1 "$W/nsdump.err")" >&2
}

# lat_tcp under nsdump collecting every packet, blocks cut short at @stage.
staged() {
	echo "$1" >"$STAGE" || return 1
	[[ $(cat "$STAGE") == "$1" ]] || { echo "sameboot: cost_stage is not $1" >&2; return 1; }
	collect "$1"
	echo full >"$STAGE"
}

grep -q '^netslice ' /proc/modules && rmmod netslice
insmod "$KO" enable=0
STAGE=/sys/module/netslice/parameters/cost_stage
if [[ $LADDER ]]; then
	[[ -w $STAGE ]] || { echo "sameboot: -L needs a module with $STAGE" >&2; exit 1; }
	CONFIGS="II none carry clock records III"
else
	CONFIGS="II IIIf III"
fi
# The first round trips after boot come out slow: one run to warm up.
lat warm-up >/dev/null
for ((r = 1; r <= ROUNDS; r++)); do
	lat II
	if [[ $LADDER ]]; then
		for stage in none carry clock records; do
			staged $stage
		done
	else
		collect IIIf 'port 9'
	fi
	collect III
done | tee "$W/rows" | sed 's/^/# /'

python3 - "$W/rows" $CONFIGS <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    cfg, median, low = line.split()
    rows.setdefault(cfg, []).append((float(median), float(low)))
configs = sys.argv[2:]
print("%-8s %7s %14s %12s %12s %12s" % ("", "rounds", "p50 (median)", "min",
                                      "min - II", "min - prev"))
low = {}
prev = None
for cfg in configs:
    med = statistics.median(m for m, _ in rows[cfg])
    low[cfg] = min(l for _, l in rows[cfg])
    step = "" if prev is None else "%+9.1f us" % (low[cfg] - low[prev])
    print("%-8s %7d %11.1f us %9.1f us %+9.1f us %12s"
          % (cfg, len(rows[cfg]), med, low[cfg], low[cfg] - low["II"], step))
    prev = cfg
print("1.10 x II's minimum allows %+.1f us" % (low["II"] / 10))
EOF
