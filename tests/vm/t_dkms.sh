#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packages at work: netslice.ko as DKMS built it from netslice-dkms
# against the linux-headers package of this kernel (tests/deb/run.sh, the
# deb phase of make check, leaves it in build/tests/deb/), loaded in
# place of the tree's, and the packaged nsdump (unpacked there too)
# capturing lat_tcp over loopback: blocks with their send and receive
# regions, read back with nsdump --json and Python's json.
# TAP on stdout; exit 0 pass, 1 fail, 4 skip (no packages built).
. "${NS_REPO:?}/tests/vm/lib.sh"
DEB=$REPO/build/tests/deb
KO=$DEB/netslice.ko
PKG_NSDUMP=$DEB/root/usr/bin/nsdump
if [[ ! -f $KO || ! -x $PKG_NSDUMP ]]; then
	echo "SKIP: no DKMS-built module or packaged nsdump in build/tests/deb (tests/run-tests.sh deb builds them)"
	exit 4
fi
NSDUMP=$PKG_NSDUMP

vermagic=$(modinfo -F vermagic "$KO")
[[ $vermagic == "$(uname -r) "* ]]
tap $? "the DKMS module was built for this kernel: vermagic $vermagic, running $(uname -r)"
! grep -qw netslice /proc/modules
tap $? "no netslice module loaded before"
insmod "$KO" || die "insmod $KO"
tap 0 "insmod the DKMS-built $KO"
[[ -c /dev/ns ]]
tap $? "/dev/ns is there"

"$BENCH/lat_tcp" -s -n -b 127.0.0.1 -p 5321 >/dev/null 2>&1 &
srv=$!
wait_listen 5321 || die "lat_tcp server did not start"
nsdump_bg "$W/nsdump.err" -w "$W/dkms.ns" -c 100 'tcp port 5321' || die "the packaged nsdump did not start"
"$BENCH/lat_tcp" -c 127.0.0.1 -p 5321 -W 10 -N 200 >/dev/null
tap $? "lat_tcp over loopback, 200 round trips"
timeout 60 tail --pid="$nsd" -f /dev/null || kill -INT "$nsd"
wait "$nsd"
rc=$?
wait "$srv"
sed 's/^/# /' "$W/nsdump.err"
[[ $rc == 0 ]]
tap $? "the packaged nsdump -c 100 -w ended (exit $rc)"

"$NSDUMP" -r "$W/dkms.ns" --json >"$W/dkms.json" 2>"$W/json.err"
tap $? "nsdump -r --json reads the capture back"
host_run -i python3 - "$W/dkms.json" >"$W/check.out" <<'EOF' || echo "fail the check of the capture crashed" >>"$W/check.out"
import json, sys
blocks = []
for line in open(sys.argv[1]):
    if line.startswith("{"):
        o = json.loads(line)
        if o.get("type") == "block":
            blocks.append(o)
print("# %d blocks" % len(blocks))
print(("ok" if len(blocks) == 100 else "fail") + " 100 blocks captured, as -c 100 asked: %d" % len(blocks))
def regions(b):
    return {r.get("region") for r in b.get("records", [])}
# Over loopback one block holds a message's whole journey, from the
# sender's write to the receiver's socket (a pure ACK has no send side).
journey = {"write", "tcp", "ip", "link", "nic", "rx-link", "rx-ip", "rx-tcp"}
sent = [b for b in blocks if "write" in regions(b)]
whole = [b for b in sent if journey <= regions(b)]
print(("ok" if sent and len(whole) == len(sent) else "fail") +
      " every one of the %d send blocks holds the whole journey (%s): %d" %
      (len(sent), " ".join(sorted(journey)), len(whole)))
EOF
tap_lines <"$W/check.out"
rmmod netslice
tap $? "rmmod netslice"
tap_finish
