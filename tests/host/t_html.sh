#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nsdump --html on a synthetic capture (mkblocks -V, see genviews.h),
# read by Python's html.parser: every element closed, nothing fetched,
# the waterfall's rows the blocks it says it drew, each chart's counts and
# percentiles those nsdump --json gives; a file whose names and path need
# escaping; a live capture (fakedev.so standing in for /dev/ns) and an
# empty one, both views; blocks with devices (mkblocks -W, gen.h's
# paths), from a file and live: each row's path and each bar's device.
# t_html_browser.sh renders it.  TAP; exit 0 / 1.
here=$(cd "$(dirname "$0")" && pwd)
obj=$here/obj
make -s --no-print-directory -C "$here" obj/nsdump obj/mkblocks obj/fakedev.so \
	>/dev/null || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$obj/mkblocks" -V 400 "$t/v.ns" || exit 1
"$obj/nsdump" -r "$t/v.ns" --html "$t/v.html" >"$t/out" 2>"$t/err"
echo $? >"$t/rc"
"$obj/nsdump" -r "$t/v.ns" --json -M >"$t/oracle.jsonl" 2>/dev/null || exit 1
# names from the trace (gen.h's GEN_NASTY_*) and a path that are not HTML
nasty="$t/<b>&\"x'.ns"
printf '%s\n' "$nasty" >"$t/nasty.path"
"$obj/mkblocks" -n 20 -e 4 -C -N -Q "$nasty" || exit 1
"$obj/nsdump" -r "$nasty" --html "$t/nasty.html" 2>/dev/null || exit 1
# live: gen.h's 10 blocks and 2 loss items from the device, then ^C
"$obj/mkblocks" -R -n 10 -l 4 "$t/raw" || exit 1
NSDUMP_DEV=$t/raw ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$obj/fakedev.so \
	"$obj/nsdump" --html "$t/live.html" --export chrome-trace "$t/live.json" \
	>"$t/live.out" 2>"$t/live.err"
echo $? >"$t/live.rc"
printf '%s\n' "$t/raw" >"$t/live.path"
# devices: gen.h's three paths, ours in this shell's namespace, every 7th
# block's last record OPEN; from a file (numbers) and live (names of ours)
stat -Lc %i /proc/self/ns/net >"$t/netns"
"$obj/mkblocks" -n 30 -o 7 -W "$(cat "$t/netns")" "$t/dev.ns" || exit 1
"$obj/nsdump" -r "$t/dev.ns" --html "$t/dev.html" 2>/dev/null || exit 1
"$obj/nsdump" -r "$t/dev.ns" --json >"$t/dev.jsonl" 2>/dev/null || exit 1
"$obj/mkblocks" -R -K -n 3 -W "$(cat "$t/netns")" "$t/devraw" || exit 1
devlive() {
	NSDUMP_DEV=$t/devraw ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$obj/fakedev.so \
		"$obj/nsdump" "$@" 2>/dev/null
}
devlive --html "$t/devlive.html" || exit 1
devlive --json >"$t/devlive.jsonl" || exit 1
"$obj/mkblocks" -n 0 "$t/empty.ns" || exit 1
"$obj/nsdump" -r "$t/empty.ns" --html "$t/empty.html" --export chrome-trace \
	"$t/empty.json" 2>/dev/null
echo $? >"$t/empty.rc"
cd "$here" && exec python3 check_html.py static "$t"
