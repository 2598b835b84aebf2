#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# seeds.sh MKBLOCKS DATA DIR: first inputs of each target, into
# DIR/<target>/: trace files and raw streams of tests/host's generator
# (gen.h says what they hold), the trace files kept in DATA (an ABI 1
# capture: another layout, translated), and command lines.
mk=$1 data=$2 dir=$3
set -e
mkdir -p "$dir/file" "$dir/stream" "$dir/opts"
cp "$data"/*.nst "$dir/file/"

i=0
# the last: blocks naming the devices they crossed (ABI 6), whole with -R
for args in "-n 0" "-n 3" "-n 3 -l 2 -o 2 -i 3 -e 2 -C -N" "-n 4 -P -e 4 -C" "-n 12 -f" \
	    "-F 1 -G 1 -A -S -X 3" "-F 1 -T -S" "-n 6 -e 2 -W 4026531840"; do
	i=$((i + 1))
	"$mk" $args "$dir/file/gen$i.ns"
	"$mk" -R $args "$dir/stream/gen$i.raw"
	"$mk" -R -K $args "$dir/stream/gen$i-compact.raw"
done
# a file cut inside its DATA record, and one without its trailer
"$mk" -n 5 -l 2 "$dir/file/whole.ns"
size=$(wc -c <"$dir/file/whole.ns")
head -c $((size - 176 - 300)) "$dir/file/whole.ns" >"$dir/file/cut-data.ns"
head -c $((size - 176)) "$dir/file/whole.ns" >"$dir/file/no-trailer.ns"
rm "$dir/file/whole.ns"

# opts: the first byte picks the parser (fuzz_opts.c), NUL between args
printf '\000-B\00064k\000-c\0005\000-p\00043210.5201\000--dir\000rx' >"$dir/opts/line"
printf '\000-qv\000-r\000f.ns\000-w\000-\000--json\000--raw\000--rtt' >"$dir/opts/line2"
printf '\000-M\000--addr\000-e\000cycles\000-i\000/dev/ns\000-B4M\000-h' >"$dir/opts/line3"
printf '\001640k' >"$dir/opts/size"
printf '\00118446744073709551615' >"$dir/opts/size-max"
printf '\00243210.5201\0000.5201\00065535.0' >"$dir/opts/ports"
printf '\003tx' >"$dir/opts/dir"
