#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nsdump --html rendered by a real browser: headless Chromium, driven over
# its DevTools pipe (cdp.py).  No script error and nothing fetched; a row
# per block drawn; block 0's bars (genviews.h) where its ticks put them,
# nested ones inside their parent; a chart per region; hovering works;
# screenshots that are pictures (their PNG pixels read with zlib), kept
# in build/tests/.  Chromium comes from `make deps-browser`; where it
# cannot be had the test is skipped, saying why (exit 4).  TAP; exit 0 / 1.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
obj=$here/obj
chromium=${CHROMIUM:-/usr/bin/chromium}
if ! make -s --no-print-directory -C "$top" deps-browser >"${TMPDIR:-/tmp}/deps-browser.$$" 2>&1; then
	tail -n 3 "${TMPDIR:-/tmp}/deps-browser.$$"
	rm -f "${TMPDIR:-/tmp}/deps-browser.$$"
	echo "SKIP: Chromium cannot be installed here (make deps-browser failed)"
	exit 4
fi
rm -f "${TMPDIR:-/tmp}/deps-browser.$$"
if [ ! -x "$chromium" ]; then
	echo "SKIP: no $chromium after make deps-browser"
	exit 4
fi
make -s --no-print-directory -C "$here" obj/nsdump obj/mkblocks >/dev/null || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$obj/mkblocks" -V 400 "$t/v.ns" || exit 1
"$obj/nsdump" -r "$t/v.ns" --html "$t/v.html" 2>/dev/null || exit 1
"$obj/nsdump" -r "$t/v.ns" --json -M >"$t/oracle.jsonl" 2>/dev/null || exit 1
mkdir -p "$top/build/tests"
cd "$here" && SHOTS=$top/build/tests exec python3 check_html.py browser "$t" "$chromium"
