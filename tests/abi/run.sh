#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build abi_test.c as C90 for -m32 and -m64, run both, and check that the
# two ABIs agree.  TAP on stdout, then "N passed, N failed"; exit 0 / 1.
CC=${CC:-cc}
here=$(cd "$(dirname "$0")" && pwd)
inc=${NSL_INCLUDE:-$here/../../include}
out=${OUT:-$here/out}
CFLAGS="-std=c90 -pedantic -Wall -Wextra -Werror -I$inc"
mkdir -p "$out"
rm -f "$out"/dump*.txt "$out"/tap*.txt

n=0 pass=0 fail=0
result() {	# result ok|notok description
	n=$((n + 1))
	if [ "$1" = ok ]; then
		pass=$((pass + 1)); echo "ok $n - $2"
	else
		fail=$((fail + 1)); echo "not ok $n - $2"
	fi
}

for bits in 32 64; do
	bin=$out/abi_test$bits
	if $CC -m$bits $CFLAGS -o "$bin" "$here/abi_test.c" \
	    >"$out/cc$bits.log" 2>&1; then
		result ok "netslice.h compiles as C90 with every ioctl, -m$bits"
	else
		sed 's/^/# /' "$out/cc$bits.log"
		result notok "netslice.h compiles as C90 with every ioctl, -m$bits"
		continue
	fi
	"$bin" >"$out/tap$bits.txt"
	grep -v '^1\.\.' "$out/tap$bits.txt" | sed 's/^\(ok\|not ok\) [0-9]* - //' \
		>"$out/names$bits.txt"
	while IFS= read -r line; do
		case $line in
		"ok "*) result ok "${line#ok * - }";;
		"not ok "*) result notok "${line#not ok * - }";;
		esac
	done <"$out/tap$bits.txt"
	"$bin" --dump >"$out/dump$bits.txt"
done

if [ -s "$out/dump32.txt" ] && [ -s "$out/dump64.txt" ] &&
    cmp -s "$out/dump32.txt" "$out/dump64.txt"; then
	result ok "-m32 and -m64 agree on every size, offset and ioctl"
else
	diff "$out/dump32.txt" "$out/dump64.txt" 2>&1 | sed 's/^/# /'
	result notok "-m32 and -m64 agree on every size, offset and ioctl"
fi

echo "1..$n"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
