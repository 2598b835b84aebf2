#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# netslice.ko and /dev/ns, in the VM: bad ioctl/read input gets the
# documented errno, read() returns whole items, every block is read or
# counted as dropped and marked by a loss item (ioctl_test check); the
# module cannot go while /dev/ns is open and unloads cleanly under traffic.
# TAP on stdout; exit 0 pass, 1 fail.

. "${NS_REPO:?}/tests/vm/lib.sh"
KO=${NS_MODULE:-$REPO/kernel/ns_module/netslice.ko}
MK=$REPO/tests/vm/t_ioctl.mk
HELPER=$REPO/build/tests/bin/ioctl_test

if ! make -s -q -f "$MK" 2>/dev/null; then
	# Not built on the host (make -f tests/vm/t_ioctl.mk): the host's
	# compiler is right here on the 9p root, which is read-only.
	HELPER=/tmp/ioctl_test
	make -s -f "$MK" OUT=/tmp >&2
fi
tap $? "helper $HELPER ready"
[[ -x $HELPER && -f $KO ]] || { tap 1 "module $KO exists"; tap_finish; }

grep -q '^netslice ' /proc/modules && rmmod netslice
insmod "$KO"
tap $? "insmod $KO"

for ((i = 0; i < 20; i++)); do
	[[ -c /dev/ns ]] && break
	sleep 0.1
done
if [[ ! -c /dev/ns && -r /sys/class/misc/ns/dev ]]; then
	IFS=: read -r major minor </sys/class/misc/ns/dev
	mknod -m 600 /dev/ns c "$major" "$minor"
	export NSL_DEV_MADE=1
fi
[[ -c /dev/ns ]]
tap $? "/dev/ns exists"

"$HELPER" check >/tmp/ioctl_test.tap 2>&1
status=$?
tap_pipe </tmp/ioctl_test.tap
tap $status "ioctl_test check exit status $status"

exec 3</dev/ns
rmmod netslice 2>/dev/null
rc=$?
exec 3<&-
[[ $rc != 0 ]]
tap $? "rmmod refused while /dev/ns is open"

"$HELPER" traffic 4 &
traffic=$!
sleep 1
rmmod netslice
tap $? "rmmod under loopback TCP traffic"
wait $traffic
tap $? "traffic went on undisturbed"
! grep -q '^netslice ' /proc/modules
tap $? "module gone"

insmod "$KO" enable=0
tap $? "insmod enable=0"
[[ $(cat /sys/module/netslice/parameters/enable 2>/dev/null) == N ]]
tap $? "parameter enable reads N"
"$HELPER" traffic 1
rmmod netslice
tap $? "rmmod"

# Reloaded after an unload under traffic, it collects again.
insmod "$KO"
tap $? "insmod again"
# nsdump listens first: its start (a calibration per CPU) can outlast a
# short burst of traffic on a loaded host.
nsdump_bg "$W/reload.err" -q -c 50 || echo "# nsdump did not start"
"$HELPER" traffic 3
timeout 60 tail --pid=$nsd -f /dev/null || kill -INT $nsd
wait $nsd
rc=$?
out=$(cat "$W/reload.err")
echo "$out" | tail -1 | sed 's/^/# /'
((rc == 0)) && [[ $out == *"50 blocks captured"* ]]
tap $? "reloaded module: nsdump -c 50 collects 50 blocks"

# -w onto a file system that fills under traffic: one clear line, exit
# 1, and a file that reads back to its last whole record.  Traffic goes
# on until nsdump has filled it and exited (at most three minutes): a
# fixed burst did not fill it on the debug kernel of a loaded host (979
# blocks), nor did a minute of traffic with two debug VMs beside it.
mkdir -p "$W/full"
mount -t tmpfs -o size=256k nsfull "$W/full" || die "mount a 256 KiB tmpfs"
nsdump_bg "$W/full.err" -q -w "$W/full/out.ns" || echo "# nsdump did not start"
for ((i = 0; i < 180; i++)); do
	kill -0 $nsd 2>/dev/null || break
	"$HELPER" traffic 1
done &
traffic=$!
timeout 180 tail --pid=$nsd -f /dev/null || kill -INT $nsd
wait $nsd
rc=$?
wait $traffic
msg=$(grep -m1 "No space left" "$W/full.err")
echo "# exit $rc: $msg"
re='^nsdump: .*/out\.ns: No space left on device; ([0-9]+) blocks \(([0-9]+) bytes\) are in the file'
((rc == 1)) && [[ $msg =~ $re ]] && ((BASH_REMATCH[2] == $(stat -c %s "$W/full/out.ns")))
tap $? "-w onto a full tmpfs under traffic: exit 1, one line saying how many blocks and bytes the file holds"
want=${BASH_REMATCH[1]:-none}
"$NSDUMP" -q -r "$W/full/out.ns" >/dev/null 2>"$W/full-r.err"
rc=$?
tail -2 "$W/full-r.err" | sed 's/^/# /'
((rc == 1)) && grep -q "truncated: $want blocks read before the cut" "$W/full-r.err" &&
	[[ $(tail -1 "$W/full-r.err") =~ ^$want\ blocks\ captured, ]]
tap $? "-w onto a full tmpfs: the file reads back, its $want blocks up to the last whole record"
umount "$W/full"

rmmod netslice
tap $? "rmmod"

rm -rf "$W"
tap_finish
