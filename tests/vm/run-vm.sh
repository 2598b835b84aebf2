#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the NetSlice kernel under QEMU with the host's / as a read-only
# virtio-9p root, run one command in the guest and return its exit status.
#
#   tests/vm/run-vm.sh 'command'     run it (as /bin/sh -c) and power off
#   tests/vm/run-vm.sh               interactive shell on the terminal
#
# The guest's PID 1 is tests/vm/init.sh.  The command's exit status comes
# back on a virtio-serial port backed by a host file (the "verdict"), written
# by init only after the command and everything else finished; console noise
# can never fake it.  This script fails (see exit codes) when the verdict is
# missing or garbled, on timeout, or when the kernel log shows a panic, Oops,
# BUG, WARNING, KASAN report, lockdep splat, leak or call trace.
#
# While the VM runs, tests/vm/hostrun.sh serves the guest's host_run
# requests (tests/vm/lib.sh): the tests' analysis of their traces runs
# natively here, not under TCG.
#
# Environment:
#   KIMAGE          kernel image (default build/linux-netslice/.../bzImage)
#   VM_MODULE       netslice.ko the tests load (NS_MODULE in the guest;
#                   default kernel/ns_module/netslice.ko)
#   VM_TIMEOUT      seconds before the VM is killed (default 600)
#   VM_SCRATCH      host dir shared read-write, guest /mnt/scratch
#                   (default build/vm-scratch)
#   VM_CONSOLE_LOG  kernel console log (default build/vm-console.log)
#   VM_OUTPUT_LOG   copy of the command's output (default build/vm-output.log)
#   VM_MEM, VM_SMP  guest memory and CPUs (default 2G, 2)
#   VM_TCG          TCG options (default thread=single: with one host thread
#                   per vCPU, QEMU does not keep the kernel's cross-CPU code
#                   patching (static keys, text_poke_bp) coherent, and a vCPU
#                   can trap on an int3 already patched away; seen as an
#                   "Oops: int3" in inet_ehashfn during DO_ONCE)
#   VM_APPEND       extra kernel command line
#   QEMU_EXTRA      extra QEMU arguments (word-split)
#   QEMU            QEMU binary (default qemu-system-x86_64)
#
# Exit status: the command's, or 124 timeout, 125 no/garbled verdict or
# guest setup failure, 126 kernel problem in the console log (overrides the
# command's status), 127 harness usage/environment error.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KIMAGE=${KIMAGE:-$REPO/build/linux-netslice/arch/x86/boot/bzImage}
VM_TIMEOUT=${VM_TIMEOUT:-600}
VM_SCRATCH=${VM_SCRATCH:-$REPO/build/vm-scratch}
VM_CONSOLE_LOG=${VM_CONSOLE_LOG:-$REPO/build/vm-console.log}
VM_OUTPUT_LOG=${VM_OUTPUT_LOG:-$REPO/build/vm-output.log}
VM_MEM=${VM_MEM:-2G}
VM_TCG=${VM_TCG:-thread=single}
VM_SMP=${VM_SMP:-2}
VM_APPEND=${VM_APPEND:-}
QEMU_EXTRA=${QEMU_EXTRA:-}
QEMU=${QEMU:-qemu-system-x86_64}

# What the kernel log must never contain.
BAD_CONSOLE='Kernel panic|Oops|BUG:|WARNING:|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|Call Trace|unreferenced object|detected stall|blocked for more than'

die() { echo "run-vm: $*" >&2; exit 127; }

(($# <= 1)) || die "usage: $0 ['command']"
CMD=${1-}
[[ -f $KIMAGE ]] || die "kernel image $KIMAGE missing: run 'make kernel' (or set KIMAGE=)"
command -v "$QEMU" >/dev/null || die "$QEMU not found: apt-get install qemu-system-x86"
[[ $VM_TIMEOUT =~ ^[0-9]+$ ]] || die "VM_TIMEOUT=$VM_TIMEOUT is not a number of seconds"

mkdir -p "$REPO/build" "$VM_SCRATCH" "$(dirname "$VM_CONSOLE_LOG")" "$(dirname "$VM_OUTPUT_LOG")"
VM_SCRATCH=$(cd "$VM_SCRATCH" && pwd)

# Per-run control directory, read by the guest through the 9p root (so it
# must not be on a path the guest mounts over, such as /tmp).
CTL=$(mktemp -d "$REPO/build/vm-run.XXXXXX")
# host_run's queue (tests/vm/hostrun.sh) in the scratch share.
HOSTRUN_Q=.hostrun.${CTL##*.}
# Logs are written and checked inside the run directory, then copied to
# VM_CONSOLE_LOG / VM_OUTPUT_LOG: concurrent runs in one repository never
# see each other's kernel messages.
CONSOLE=$CTL/console.log
OUTPUT=$CTL/output.log
save_logs() {
	[[ -n ${HOSTRUN_PID:-} ]] && kill "$HOSTRUN_PID" 2>/dev/null
	rm -rf "${VM_SCRATCH:?}/$HOSTRUN_Q"
	cp "$CONSOLE" "$VM_CONSOLE_LOG.$$" 2>/dev/null && mv -f "$VM_CONSOLE_LOG.$$" "$VM_CONSOLE_LOG"
	cp "$OUTPUT" "$VM_OUTPUT_LOG.$$" 2>/dev/null && mv -f "$VM_OUTPUT_LOG.$$" "$VM_OUTPUT_LOG"
	rm -rf "$CTL"
}
trap save_logs EXIT
chmod 755 "$CTL"
printf '%s\n' "$CMD" >"$CTL/cmd"
if [[ -z $CMD ]]; then
	# The guest's shell gets the host terminal's size.
	stty size 2>/dev/null >"$CTL/interactive" || : >"$CTL/interactive"
fi
cat >"$CTL/env" <<EOF
export NS_REPO='$REPO'
export NS_SCRATCH=/mnt/scratch
export NS_NSDUMP='$REPO/nsdump/nsdump'
export NS_MODULE='${VM_MODULE:-$REPO/kernel/ns_module/netslice.ko}'
export NS_PEER_NS=peer
export NS_LOCAL_IF=eth0 NS_PEER_IF=eth1
export NS_VIRTIO_IF=vnet0 NS_VIRTIO_PEER_IF=vnet1
export NS_LOCAL_IP=192.0.2.1 NS_PEER_IP=192.0.2.2
export NS_HOSTRUN=/mnt/scratch/$HOSTRUN_Q
EOF
: >"$CTL/verdict"
: >"$CONSOLE"
: >"$OUTPUT"

# msize: the virtio transport's maximum is 125 pages.
ninep=trans=virtio,version=9p2000.L,msize=512000
append="console=ttyS0 loglevel=7 panic=-1 panic_on_warn=1 oops=panic"
append+=" root=/dev/root rootfstype=9p rootflags=$ninep,cache=loose ro"
append+=" init=$REPO/tests/vm/init.sh nsvm.ctl=$CTL nsvm.ninep=$ninep"
# Under TCG a debug kernel's boot can starve a vCPU for seconds (a
# stop_machine): RCU then reports a stall that no NetSlice code can cause,
# since none of it runs before the module is loaded.  Stalls after boot
# still fail the run.
append+=" rcupdate.rcu_cpu_stall_suppress_at_boot=1"
# After boot, the host can still deschedule a TCG vCPU for many seconds
# when it is loaded (seen: 13.7 s, then a 21 s "stall" while init.sh set
# up the NICs, before the module was loaded): a stall is reported after
# 60 s, not 21, which no host hiccup reaches and a real one (a CPU stuck
# with preemption off) still does, well inside the VM's timeout.
append+=" rcupdate.rcu_cpu_stall_timeout=60"
# No IO-APIC: the e1000s' interrupts go through the 8259 PIC to CPU 0.
# With the IO-APIC, synchronize_irq() also waits for the line's remote
# IRR, and the two vCPUs of single-threaded TCG livelock there for 2 s
# to minutes whenever an e1000 interrupt is in flight on the other vCPU:
# e1000_open() raises a link-change interrupt and the 8021q notifier's
# e1000_vlan_filter_on_off() synchronizes with it on every "ip link set
# up" (seen on most boots: "ready after" 10-60 s instead of 2 s, an RCU
# stall in CI).  virtio devices keep their MSI-X vectors on every CPU.
append+=" noapic"
# The TSC's rate, measured on the host: the guest's own calibration
# times the PIT, which a busy host stretches (tests/vm/tsckhz.c).
tsckhz=$REPO/build/tsckhz
if [[ ! -x $tsckhz || $tsckhz -ot $REPO/tests/vm/tsckhz.c ]]; then
	mkdir -p "$REPO/build" &&
		cc -O2 -Wall -Wextra -Werror -o "$tsckhz.$$" "$REPO/tests/vm/tsckhz.c" &&
		mv -f "$tsckhz.$$" "$tsckhz"
fi
if khz=$("$tsckhz" 2>/dev/null) && ((khz >= 100000 && khz <= 10000000)); then
	append+=" tsc_early_khz=$khz"
fi
append+=" $VM_APPEND"

if [[ -n $CMD ]]; then
	stdio=(-chardev "stdio,id=out,signal=on,logfile=$OUTPUT")
	exec 3</dev/null	# stdin not a tty: QEMU leaves the terminal alone
else
	stdio=(-chardev "stdio,id=out,signal=off,logfile=$OUTPUT")
	exec 3<&0
	echo "run-vm: interactive shell; kernel log: $CONSOLE (saved to $VM_CONSOLE_LOG); 'exit' powers off" >&2
fi

# shellcheck disable=SC2206 # QEMU_EXTRA is meant to be word-split
qemu=("$QEMU" -nodefaults -no-user-config -display none -no-reboot
	-accel "tcg,$VM_TCG" -cpu max -smp "$VM_SMP" -m "$VM_MEM"
	-kernel "$KIMAGE" -append "$append"
	-chardev "file,id=con,path=$CONSOLE" -serial chardev:con
	-device virtio-serial-pci,id=vser
	"${stdio[@]}" -device virtconsole,chardev=out,name=out
	-chardev "file,id=verdict,path=$CTL/verdict"
	-device virtserialport,chardev=verdict,name=verdict
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=root,mount_tag=/dev/root
	-fsdev "local,id=scratch,path=$VM_SCRATCH,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=scratch,mount_tag=scratch
	-netdev hubport,id=n0,hubid=0 -device e1000,netdev=n0,mac=52:54:00:00:02:01
	-netdev hubport,id=n1,hubid=0 -device e1000,netdev=n1,mac=52:54:00:00:02:02
	-netdev hubport,id=v0,hubid=1 -device virtio-net-pci,netdev=v0,mac=52:54:00:00:03:01
	-netdev hubport,id=v1,hubid=1 -device virtio-net-pci,netdev=v1,mac=52:54:00:00:03:02
	$QEMU_EXTRA)

# The tests' analysis runs natively on the host (host_run in lib.sh).
mkdir "$VM_SCRATCH/$HOSTRUN_Q"
"$REPO/tests/vm/hostrun.sh" "$VM_SCRATCH/$HOSTRUN_Q" "$VM_SCRATCH" /mnt/scratch &
HOSTRUN_PID=$!

start=$SECONDS
rc=0
# The hub deliberately has no host side; drop QEMU's warning about it.
timeout --foreground -k 10 "$VM_TIMEOUT" "${qemu[@]}" <&3 \
	2> >(grep --line-buffered -v 'is not connected to host network' >&2) || rc=$?
elapsed=$((SECONDS - start))
exec 3<&-

if grep -aEq "$BAD_CONSOLE" "$CONSOLE"; then
	echo "run-vm: FAIL: kernel problem in the console log ($VM_CONSOLE_LOG):" >&2
	grep -aEm1 -B5 -A40 "$BAD_CONSOLE" "$CONSOLE" | sed 's/^/run-vm: | /' >&2
	exit 126
fi
if ((rc == 124 || rc == 137)); then
	echo "run-vm: FAIL: timeout after ${VM_TIMEOUT}s (VM_TIMEOUT); console tail:" >&2
	tail -n 20 "$CONSOLE" | sed 's/^/run-vm: | /' >&2
	exit 124
fi
verdict=$(cat "$CTL/verdict")
if [[ $verdict =~ ^NSVM-VERDICT\ ([0-9]+)$ ]]; then
	status=${BASH_REMATCH[1]}
	if ((rc != 0)); then
		echo "run-vm: FAIL: QEMU exited with $rc after a verdict" >&2
		exit 125
	fi
	[[ -n $CMD ]] && ((status != 0)) &&
		echo "run-vm: command exited with status $status (${elapsed}s)" >&2
	exit "$status"
fi
if [[ $verdict == NSVM-ERROR* ]]; then
	echo "run-vm: FAIL: guest setup failed: ${verdict#NSVM-ERROR }" >&2
else
	echo "run-vm: FAIL: no valid verdict (QEMU status $rc, verdict '${verdict:0:80}'); console tail:" >&2
fi
tail -n 20 "$CONSOLE" | sed 's/^/run-vm: | /' >&2
exit 125
