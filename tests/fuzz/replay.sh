#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# replay.sh OBJ TARGET...: every input of corpus/<t>/ and crashes/<t>/
# once through obj/replay-<t>; a TAP line per target with the count, then
# "N passed, N failed".  A target that dies (a sanitizer report, a failed
# property) or has no input is not ok.  First, the replay's own test: a
# planted overflow (canary.c) must fail it.
obj=$1; shift
here=$(dirname "$0")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
. "$here/../tap.sh"

printf 'overflow' >"$obj/canary-input"
if "$obj/replay-canary" "$obj/canary-input" >"$log" 2>&1; then
	not_ok "fuzz replay: a planted heap overflow went unnoticed"
elif grep -q 'heap-buffer-overflow' "$log"; then
	ok "fuzz replay: a planted heap overflow fails the replay"
else
	not_ok "fuzz replay: the planted overflow failed without an ASan report"
	sed 's/^/# /' "$log"
fi

for t in "$@"; do
	set --
	for d in corpus crashes; do
		[ -d "$here/$d/$t" ] && set -- "$@" "$here/$d/$t"
	done
	if [ $# -eq 0 ]; then
		not_ok "fuzz replay: $t: no corpus/$t or crashes/$t"
		continue
	fi
	"$obj/replay-$t" "$@" >"$log" 2>&1; rc=$?
	total=$(sed -n 's/^replayed \([0-9]*\) inputs$/\1/p' "$log")
	counts=$(sed -n 's|^.*/\([a-z]*\)/[^/]*: \([0-9]*\) inputs$|\1 \2|p' "$log" |
		 paste -sd, - | sed 's/,/, /g')
	if [ $rc -eq 0 ] && [ "${total:-0}" -gt 0 ]; then
		ok "fuzz replay: $t: $total inputs ($counts)"
	else
		not_ok "fuzz replay: $t: exit $rc after ${total:-?} inputs"
		tail -n 30 "$log" | sed 's/^/# /'
		grep '^replay: ' "$log" | tail -n 1 | sed 's/^replay:/# the input:/'
	fi
done
tap_summary
[ $failed -eq 0 ]
