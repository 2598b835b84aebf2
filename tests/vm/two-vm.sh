#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# two-vm.sh <test>: a VM test of two hosts (t_join2.sh).  Two VMs of the
# NetSlice kernel, each its own QEMU under run-vm.sh, each with one more
# e1000 (MAC 52:54:00:00:04:01 in a, :02 in b) on a -netdev dgram whose
# frames go through tests/vm/wire_relay.py on the host's loopback (the
# wire, and the delay the test asks of it through the scratch share).
# Each runs "<test> a" or "<test> b"; then, on the host, "<test>'s
# checker" (join2_check.py) reads what they left in the shared scratch
# and prints the TAP.  Run as run-vm.sh is (run-tests.sh's vm phase, a
# "# vm-launcher:" line in the test names this script): KIMAGE,
# VM_MODULE, VM_SCRATCH (shared by the two), VM_OUTPUT_LOG (the TAP;
# each guest's output beside it, -a.log and -b.log), VM_CONSOLE_LOG
# (likewise), VM_TIMEOUT.  Exit status: the checker's, or a guest's
# run-vm.sh status if one failed.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
t=${1:?usage: two-vm.sh <test>}
t=${t##*/}	# as run-vm.sh takes it: a path
SCR=${VM_SCRATCH:-$REPO/build/vm-scratch-two}
OUT=${VM_OUTPUT_LOG:-$REPO/build/vm-output.log}
CON=${VM_CONSOLE_LOG:-$REPO/build/vm-console.log}
mkdir -p "$SCR" "$(dirname "$OUT")"
SCR=$(cd "$SCR" && pwd)
rm -f "$SCR"/run.* "$SCR"/start.* "$SCR"/go.* "$SCR"/wire.delay*

# Four free UDP ports on the loopback: the relay's two, QEMU's two.
read -r pa pb qa qb < <(python3 -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
# Real-time priority where allowed: the two TCG vCPU threads keep both
# cores busy, and a frame due now must not wait for a time slice.
rt=(chrt -f 10)
"${rt[@]}" true 2>/dev/null || rt=()
"${rt[@]}" python3 "$REPO/tests/vm/wire_relay.py" "$pa" "$pb" "$qa" "$qb" "$SCR/wire.delay" &
relay=$!
trap 'kill "$relay" 2>/dev/null' EXIT

nic() { # <local port> <relay port> <mac>
	echo "-netdev dgram,id=wire,local.type=inet,local.host=127.0.0.1,local.port=$1,remote.type=inet,remote.host=127.0.0.1,remote.port=$2 -device e1000,netdev=wire,mac=$3"
}
guest() { # <role> <local port> <relay port> <mac>
	date +%s%N >"$SCR/start.$1"
	QEMU_EXTRA="${QEMU_EXTRA:-} $(nic "$2" "$3" "$4")" VM_SCRATCH=$SCR \
	VM_OUTPUT_LOG=${OUT%.log}-$1.log VM_CONSOLE_LOG=${CON%.log}-$1.log \
		"$REPO/tests/vm/run-vm.sh" "$REPO/tests/vm/$t $1" \
		>"${OUT%.log}-$1.stdout" 2>&1
}
t0=$SECONDS
guest a "$qa" "$pa" 52:54:00:00:04:01 &
ga=$!
guest b "$qb" "$pb" 52:54:00:00:04:02 &
gb=$!
wait "$ga"; ra=$?
wait "$gb"; rb=$?
echo "# the two guests: a exit $ra, b exit $rb, ${SECONDS}s after the start (from $t0)" | tee "$OUT"
for r in a b; do
	sed "s/^/# $r: /" "${OUT%.log}-$r.log" 2>/dev/null | grep -v '^# .: ok ' | tee -a "$OUT"
done
((ra == 0)) || { tail -5 "${OUT%.log}-a.stdout" | tee -a "$OUT"; exit "$ra"; }
((rb == 0)) || { tail -5 "${OUT%.log}-b.stdout" | tee -a "$OUT"; exit "$rb"; }
make -s --no-print-directory -C "$REPO/tests/host" obj/mkpair >/dev/null || exit 1
python3 "$REPO/tests/vm/join2_check.py" "$SCR" "$REPO/nsdump/nsdump" \
	"$REPO/tests/host/obj/mkpair" | tee -a "$OUT"
exit "${PIPESTATUS[0]}"
