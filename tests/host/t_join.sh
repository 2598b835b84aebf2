#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nsdump -r a -r b, the join of two hosts' files, on pairs mkpair writes
# with what the join must find (mkpair.c): every pair exactly (TCP
# retransmissions, a spurious one, a duplicate, a TSO send, GRO merges,
# UDP with a loss and a duplicate), every block left unmatched counted
# by its reason, the clock offset recovered (with an asymmetric wire:
# off by half the asymmetry, within the uncertainty), the drift over a
# longer capture, UDP alone, an offset added to one file recovered to
# the tick; the per-direction tables and --by, the Chrome trace (a
# process per host, an arrow per joined packet) and the HTML page; the
# option's errors.  Checked in Python (check_join.py).  TAP; exit 0 / 1.
here=$(cd "$(dirname "$0")" && pwd)
obj=$here/obj
make -s --no-print-directory -C "$here" obj/nsdump obj/mkpair >/dev/null || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
run() {	# run NAME MKPAIR-OPTIONS: the pair, its JSON join and text
	"$obj/mkpair" $2 "$t/$1.a" "$t/$1.b" "$t/$1.truth" || exit 1
	"$obj/nsdump" --json -r "$t/$1.a" -r "$t/$1.b" >"$t/$1.jsonl" 2>"$t/$1.err"
	echo $? >"$t/$1.rc"
}
run sym ""
run asym "-a 20000"
run drift "-d 20 -t 20"
run udp "-u"
"$obj/mkpair" -s 9000000000 "$t/sym.b" "$t/shift.b" || exit 1
"$obj/nsdump" --json -r "$t/sym.a" -r "$t/shift.b" >"$t/shift.jsonl" 2>/dev/null
"$obj/nsdump" -q --by dir -r "$t/sym.a" -r "$t/sym.b" >"$t/text" 2>/dev/null
"$obj/nsdump" -q -r "$t/sym.a" -r "$t/sym.b" --export chrome-trace "$t/trace.json" \
	--html "$t/page.html" 2>/dev/null
echo $? >"$t/views.rc"
# errors: exit 2, one line each
"$obj/nsdump" -r "$t/sym.a" -r "$t/sym.b" -r "$t/sym.a" >/dev/null 2>"$t/e1"; echo $? >"$t/rc1"
"$obj/nsdump" -r "$t/sym.a" -r "$t/sym.b" -w "$t/x" >/dev/null 2>"$t/e2"; echo $? >"$t/rc2"
"$obj/nsdump" -r - -r "$t/sym.b" >/dev/null 2>"$t/e3" </dev/null; echo $? >"$t/rc3"
cd "$here" && exec python3 check_join.py "$t"
