#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nsdump --export pcapng read back by Debian's tshark with the Lua
# dissector (contrib/wireshark/netslice.lua), against nsdump --json of the
# same file (generated traces, and one the VM's kernel made): a frame per
# block, its fields the block's (regions, flags,
# devices, flow, length, counters, time within 1 us), event records and
# losses; display filters on the dissector's fields and on the made-up
# headers select what nsdump's own values and filter say; editcap and
# mergecap keep it all.  The option's errors: no file, a file that
# cannot be made, a full disk (/dev/full); a reader gone is none.
# tshark comes with `make hosttest` (HOST_PKGS); without it the test is
# skipped, saying why (exit 4).  TAP; exit 0 / 1.
here=$(cd "$(dirname "$0")" && pwd)
obj=$here/obj
for tool in tshark editcap mergecap capinfos; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: no $tool here (Debian's tshark package; make hosttest installs it)"
		exit 4
	fi
done
make -s --no-print-directory -C "$here" obj/nsdump obj/mkblocks >/dev/null || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ns=$obj/nsdump
# gen.h's views capture: losses, MAGNeT records, counters, a queue's tail
"$obj/mkblocks" -V 400 "$t/v.ns" || exit 1
"$ns" -r "$t/v.ns" --export pcapng "$t/v.pcapng" >"$t/out" 2>"$t/err"
echo $? >"$t/rc"
"$ns" -r "$t/v.ns" --json -M >"$t/v.jsonl" 2>/dev/null || exit 1
# gen.h's device paths (ABI 6), every 7th block's last record OPEN, raw
stat -Lc %i /proc/self/ns/net >"$t/netns"
"$obj/mkblocks" -n 30 -o 7 -f -W "$(cat "$t/netns")" "$t/dev.ns" || exit 1
"$ns" -r "$t/dev.ns" --raw --export pcapng "$t/dev.pcapng" 2>/dev/null || exit 1
"$ns" -r "$t/dev.ns" --raw --json >"$t/dev.jsonl" 2>/dev/null || exit 1
# a capture of the NetSlice kernel in the VM (data/vm.nst: lat_tcp over
# loopback, iperf3 and UDP through the e1000 to the peer, --addr)
"$ns" -r "$here/data/vm.nst" --export pcapng "$t/vm.pcapng" 2>/dev/null || exit 1
"$ns" -r "$here/data/vm.nst" --json >"$t/vm.jsonl" 2>/dev/null || exit 1
# after nsdump's filter: what its --json keeps under the same expression
"$ns" -r "$t/v.ns" --export pcapng "$t/f.pcapng" udp or tcp port 7000 2>/dev/null || exit 1
"$ns" -r "$t/v.ns" --json udp or tcp port 7000 >"$t/f.jsonl" 2>/dev/null || exit 1
# the files rewritten by Wireshark's own tools
editcap "$t/v.pcapng" "$t/edit.pcapng" || exit 1
mergecap -w "$t/merged.pcapng" "$t/v.pcapng" "$t/dev.pcapng" || exit 1
# the option's errors
"$ns" -r "$t/v.ns" --export pcapng >/dev/null 2>"$t/e1"; echo $? >"$t/rc1"
"$ns" -r "$t/v.ns" --export pcapng /nonexistent/x.pcapng >/dev/null 2>"$t/e2"; echo $? >"$t/rc2"
"$ns" -r "$t/v.ns" --export pcapng /dev/full >/dev/null 2>"$t/e3"; echo $? >"$t/rc3"
"$ns" -r "$t/v.ns" --export pcapng - 2>"$t/e4" | head -c 100 >/dev/null; echo $? >"$t/rc4"
cd "$here" && exec python3 check_pcapng.py "$t" "$here/../../contrib/wireshark/netslice.lua"
