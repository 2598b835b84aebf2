#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nsdump --export chrome-trace on a synthetic capture (mkblocks -V, see
# genviews.h) parsed by Python's json and checked against the Trace Event
# Format and against what nsdump --json says of the same file: every
# event's required fields, each block's slices nested, one slice per
# record, every thread's slices nested, arrows between the send and the
# receive part of a packet; blocks with devices (mkblocks -W, gen.h's
# paths): each record's device and each packet's path in args, as the
# ABI's rule assigns them, and none in blocks without.  The option
# errors.  TAP; exit 0 / 1.
here=$(cd "$(dirname "$0")" && pwd)
obj=$here/obj
make -s --no-print-directory -C "$here" obj/nsdump obj/mkblocks >/dev/null || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$obj/mkblocks" -V 400 "$t/v.ns" || exit 1
"$obj/nsdump" -r "$t/v.ns" --export chrome-trace "$t/trace.json" >"$t/out" 2>"$t/err"
echo $? >"$t/rc"
"$obj/nsdump" -r "$t/v.ns" --json -M >"$t/oracle.jsonl" 2>/dev/null || exit 1
# gen.h's three device paths, ours in this shell's namespace; every 7th
# block's last record OPEN (not drawn)
stat -Lc %i /proc/self/ns/net >"$t/netns"
"$obj/mkblocks" -n 30 -o 7 -W "$(cat "$t/netns")" "$t/dev.ns" || exit 1
"$obj/nsdump" -r "$t/dev.ns" --export chrome-trace "$t/dev.json" 2>/dev/null || exit 1
"$obj/nsdump" -r "$t/dev.ns" --json >"$t/dev.jsonl" 2>/dev/null || exit 1
# the option's errors: exit 2, one line
"$obj/nsdump" -r "$t/v.ns" --export chrome-trace >/dev/null 2>"$t/e1"; echo $? >"$t/rc1"
"$obj/nsdump" -r "$t/v.ns" --export svg "$t/x" >/dev/null 2>"$t/e2"; echo $? >"$t/rc2"
"$obj/nsdump" -r "$t/v.ns" --export chrome-trace - --html - >/dev/null 2>"$t/e3"; echo $? >"$t/rc3"
"$obj/nsdump" -r "$t/v.ns" --export chrome-trace /nonexistent/x.json >/dev/null 2>"$t/e4"; echo $? >"$t/rc4"
"$obj/nsdump" -r "$t/v.ns" --export chrome-trace - 2>/dev/null | python3 -c 'import json,sys; json.load(sys.stdin)'
echo $? >"$t/rc5"
cd "$here" && exec python3 check_chrome.py "$t"
