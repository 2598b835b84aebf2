#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What NSS+NST cost per region, in duration mode (TSC only) and in count
# mode with 1 and with 4 counter events: the kernel's own calibration
# (NSIOCGCALIB, `nsdump --calibrate`) run under each configuration.
#
#   bench/macro_cost.sh            in the test VM (make vm), software events
#   bench/macro_cost.sh --local    on this machine (root, netslice.ko built)
#   EVENTS1=cycles EVENTS4=cycles,instructions,cache-misses,branch-misses
#                                  hardware events, where there is a PMU
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
EVENTS1=${EVENTS1:-cpu-clock}
EVENTS4=${EVENTS4:-cpu-clock,task-clock,page-faults,context-switches}

if [[ ${1:-} != --local ]]; then
	exec "$REPO/tests/vm/run-vm.sh" \
		"EVENTS1=$EVENTS1 EVENTS4=$EVENTS4 bench/macro_cost.sh --local"
fi
NSDUMP=$REPO/nsdump/nsdump
grep -qw netslice /proc/modules ||
	insmod "$REPO/kernel/ns_module/netslice.ko" || exit 1

# ns per NSS+NST pair and the empty region (tau_o) for one configuration.
cost() { # <label> [-e events]
	local label=$1
	shift
	"$NSDUMP" --calibrate "$@" 2>/dev/null | awk -v label="$label" '
		/^cpu / { cpu = $2 }
		$1 == "NSS" { nss[cpu] = $3 }
		$1 == "NST" { nst[cpu] = $3 }
		$1 == "NSO" { nso[cpu] = $3 }
		$1 == "NSA" { nsa[cpu] = $3 }
		END {
			for (c in nss)
				printf "%-28s cpu %-3s NSS %7.1f  NST %7.1f  NSS+NST %7.1f  tau_o %7.1f  tau_beta %7.1f ns\n",
					label, c, nss[c], nst[c], nss[c] + nst[c], nso[c], nsa[c]
		}'
}

echo "# NetSlice macro cost per region on $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
cost "duration (TSC only)"
cost "count, 1 event ($EVENTS1)" -e "$EVENTS1"
cost "count, 4 events" -e "$EVENTS4"
echo "# 4 events: $EVENTS4"
