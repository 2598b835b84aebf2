#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Check include/netslice.h's ABI for -m32 and -m64 without running either
# build (the host's kernel may not execute 32-bit binaries): abi_test.c is
# compiled as C90 with every row checked by the compiler, then again to
# assembly with every row's value as an immediate; the rows are compared
# with the value they must have and between the two ABIs.
# TAP on stdout, then "N passed, N failed"; exit 0 / 1.
CC=${CC:-cc}
here=$(cd "$(dirname "$0")" && pwd)
inc=${NSL_INCLUDE:-$here/../../include}
out=${OUT:-$here/out}
CFLAGS="-std=c90 -pedantic -Wall -Wextra -Werror -I$inc"
mkdir -p "$out"
rm -f "$out"/rows*.txt "$out"/*.s "$out"/*.o

. "$here/../tap.sh"
result() {	# result ok|notok description
	if [ "$1" = ok ]; then ok "$2"; else not_ok "$2"; fi
}

# compile <bits> <what> <cc args...>: one TAP line; the log on failure.
compile() {
	bits=$1 what=$2
	shift 2
	if $CC -m"$bits" $CFLAGS "$@" >"$out/cc$bits.log" 2>&1; then
		result ok "$what, -m$bits"
		return 0
	fi
	sed 's/^/# /' "$out/cc$bits.log"
	result notok "$what, -m$bits"
	return 1
}

for bits in 32 64; do
	compile "$bits" "every ioctl expands and every row holds at compile time (C90)" \
		-c -o "$out/abi$bits.o" "$here/abi_test.c"
	compile "$bits" "rows dumped to assembly" \
		-S -DABI_DUMP -o "$out/abi$bits.s" "$here/abi_test.c" || continue
	# "@ABI <expr> = gh gl wh wl" -> "<expr> = <got> <want>"
	sed -n 's/^[[:space:]]*@ABI \(.*\) = \([0-9]*\) \([0-9]*\) \([0-9]*\) \([0-9]*\)$/\1|\2|\3|\4|\5/p' \
		"$out/abi$bits.s" |
	while IFS='|' read -r expr gh gl wh wl; do
		echo "$expr|$((gh * 65536 + gl))|$((wh * 65536 + wl))"
	done >"$out/rows$bits.txt"
	if [ ! -s "$out/rows$bits.txt" ]; then
		result notok "rows found in the -m$bits assembly"
		continue
	fi
	while IFS='|' read -r expr got want; do
		if [ "$got" = "$want" ]; then
			result ok "$expr == $want (-m$bits)"
		else
			result notok "$expr is $got, want $want (-m$bits)"
		fi
	done <"$out/rows$bits.txt"
done

if [ -s "$out/rows32.txt" ] && [ -s "$out/rows64.txt" ] &&
    cmp -s "$out/rows32.txt" "$out/rows64.txt"; then
	result ok "-m32 and -m64 agree on every size, offset and ioctl ($(wc -l <"$out/rows64.txt") rows)"
else
	diff "$out/rows32.txt" "$out/rows64.txt" 2>&1 | sed 's/^/# /'
	result notok "-m32 and -m64 agree on every size, offset and ioctl"
fi

tap_plan
tap_summary
[ "$failed" -eq 0 ]
