#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh - loopback self-test of the benchmark workloads
#
#   ./selftest.sh LAT_TCP TCP_STREAM       (make -C bench test runs it on the
#                                           ASan/UBSan builds)
#
# Runs servers and clients on 127.0.0.1 only, with ephemeral ports learnt
# through --port-file, and checks that what they report is sane and
# consistent. Every program runs under timeout(1); the whole run takes a few
# seconds. Prints TAP, then "N passed, N failed"; exits 1 on any failure.

set -u

LAT=${1:?usage: selftest.sh LAT_TCP TCP_STREAM}
STREAM=${2:?usage: selftest.sh LAT_TCP TCP_STREAM}
LIMIT=10			# seconds, for any one program
T=$(mktemp -d "${TMPDIR:-/tmp}/netslice-bench.XXXXXX") || exit 1
SPID=

cleanup()
{
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ASan: report leaks; UBSan: stop on the first report (also -fno-sanitize-recover)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

. "$(dirname "$0")/../tests/tap.sh"

# not_ok_logs DESC FILE...: a failure, with the files that explain it
not_ok_logs()
{
	not_ok "$1"
	shift
	for f in "$@"; do
		[ -s "$f" ] && sed "s|^|# $(basename "$f"): |" "$f"
	done
}

# check DESC CONDITION-COMMAND...: pass when the command succeeds; on failure
# show the outputs of the last run
check()
{
	desc=$1
	shift
	if "$@"; then
		ok "$desc"
	else
		not_ok_logs "$desc" "$T/out" "$T/err" "$T/srv.out" "$T/srv.err"
	fi
}

# jget FILE KEY: the raw value of a top-level key of a flat one-line JSON
jget()
{
	sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1"
}

# num_true 'awk expression': true if it holds
num_true()
{
	awk "BEGIN { exit !($1) }" </dev/null
}

# start_server PROG ARGS...: start a --once server on 127.0.0.1, wait for its
# port file; sets SPID and PORT
start_server()
{
	rm -f "$T/port"
	timeout $LIMIT "$@" -s -b 127.0.0.1 -p 0 -n --port-file "$T/port" \
		>"$T/srv.out" 2>"$T/srv.err" &
	SPID=$!
	i=0
	while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.05
		i=$((i + 1))
	done
	PORT=$(cat "$T/port" 2>/dev/null)
	[ -n "$PORT" ]
}

# wait_server: the server's exit status
wait_server()
{
	wait "$SPID"
	rc=$?
	SPID=
	return $rc
}

# run PROG ARGS...: run a client, stdout in $T/out, stderr in $T/err, status
# in $RC
run()
{
	timeout $LIMIT "$@" >"$T/out" 2>"$T/err"
	RC=$?
}

one_line_err()
{
	[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "$1" "$T/err"
}

echo "# lat_tcp: $LAT"
echo "# tcp_stream: $STREAM"

# ---- lat_tcp: fixed count, JSON, samples -----------------------------------

check "lat_tcp server listens on 127.0.0.1" start_server "$LAT" -v
run "$LAT" -c 127.0.0.1 -p "$PORT" -N 300 -W 50 --json --samples "$T/samples"
check "lat_tcp client -N 300 exits 0" [ "$RC" -eq 0 ]
check "lat_tcp server --once exits 0 after the client" wait_server
check "lat_tcp --json prints one JSON object" \
	sh -c "[ \$(wc -l <'$T/out') -eq 1 ] && grep -q '^{\"benchmark\":\"lat_tcp\",\"schema\":1,.*}\$' '$T/out'"

trips=$(jget "$T/out" n)
mean=$(jget "$T/out" mean_us)
median=$(jget "$T/out" median_us)
p99=$(jget "$T/out" p99_us)
min=$(jget "$T/out" min_us)
max=$(jget "$T/out" max_us)
sd=$(jget "$T/out" stddev_us)
cv=$(jget "$T/out" cv)
: "${n:=-1}" "${mean:=-1}" "${median:=-1}" "${p99:=-1}" "${min:=-1}"
: "${max:=-1}" "${sd:=-1}" "${cv:=-1}"
echo "# n=$trips mean=$mean median=$median p99=$p99 min=$min max=$max sd=$sd cv=$cv"

check "lat_tcp n == iterations (300)" [ "$trips" = 300 ]
check "lat_tcp msg_size == 4 and warmup == 50 by default/flag" \
	sh -c "grep -q '\"msg_size\":4,\"warmup\":50,' '$T/out'"
check "lat_tcp 0 < min <= median <= p99 <= max" \
	num_true "0 < $min && $min <= $median && $median <= $p99 && $p99 <= $max"
check "lat_tcp min <= mean <= max" num_true "$min <= $mean && $mean <= $max"
check "lat_tcp cv == stddev / mean (to rounding)" \
	num_true "$sd >= 0 && $mean > 0 && ($cv - $sd / $mean)^2 < 0.0005^2 + (0.01 * $cv)^2"
[ -f "$T/samples" ] || : >"$T/samples"
check "lat_tcp --samples has n lines" [ "$(wc -l <"$T/samples")" = "$trips" ]
smin=$(sort -n "$T/samples" | head -n 1)
smax=$(sort -n "$T/samples" | tail -n 1)
: "${smin:=0}" "${smax:=0}"
check "lat_tcp --samples min/max match min_us/max_us" \
	num_true "$smin > 0 && ($smin / 1000 - $min)^2 < 0.001^2 && ($smax / 1000 - $max)^2 < 0.001^2"

# ---- lat_tcp: duration mode, other size, text output -----------------------

check "lat_tcp server listens again" start_server "$LAT"
run "$LAT" -c 127.0.0.1 -p "$PORT" -t 0.3 -W 10 -m 1000 --json
check "lat_tcp client -t 0.3 -m 1000 exits 0" [ "$RC" -eq 0 ]
check "lat_tcp server exits 0" wait_server
trips=$(jget "$T/out" n)
el=$(jget "$T/out" elapsed_s)
msz=$(jget "$T/out" msg_size)
: "${trips:=-1}" "${el:=-1}" "${msz:=-1}"
check "lat_tcp -t: n >= 1, 0.3 <= elapsed_s < 5, msg_size 1000" \
	num_true "$trips >= 1 && $el >= 0.3 && $el < 5 && $msz == 1000"

check "lat_tcp server listens again" start_server "$LAT"
run "$LAT" -c 127.0.0.1 -p "$PORT" -N 100 -W 0 -m 64K
check "lat_tcp text output, 64 KiB messages" \
	sh -c "[ $RC -eq 0 ] && grep -q '65536-byte messages, 100 round trips' '$T/out' && grep -q 'median' '$T/out'"
check "lat_tcp server exits 0" wait_server
DEADPORT=$PORT

# ---- lat_tcp: errors -------------------------------------------------------

run "$LAT" -c 127.0.0.1 -p "$DEADPORT" -N 10
check "lat_tcp connection refused: exit 1, one line" \
	sh -c "[ $RC -eq 1 ] && grep -q 'refused' '$T/err' && [ \$(wc -l <'$T/err') -eq 1 ]"
run "$LAT" -c ''
check "lat_tcp bad host: exit 1, one line" \
	sh -c "[ $RC -eq 1 ] && grep -q 'bad host' '$T/err' && [ \$(wc -l <'$T/err') -eq 1 ]"
for bad in 0 4x -1 17M ' 4' 99999999999999999999999; do
	run "$LAT" -c 127.0.0.1 -m "$bad"
	check "lat_tcp bad size '$bad': exit 2, one line" \
		sh -c "[ $RC -eq 2 ] && grep -q 'bad message size' '$T/err' && [ \$(wc -l <'$T/err') -eq 1 ]"
done
run "$LAT" -c 127.0.0.1 -N 10 -t 1
check "lat_tcp -N with -t refused (exit 2)" [ "$RC" -eq 2 ]
run "$LAT" -c 127.0.0.1 -N 0
check "lat_tcp -N 0 refused (exit 2)" [ "$RC" -eq 2 ]
run "$LAT" -s -m 4
check "lat_tcp client option in server mode refused (exit 2)" [ "$RC" -eq 2 ]
run "$LAT" -c 127.0.0.1 stray
check "lat_tcp stray argument refused (exit 2)" [ "$RC" -eq 2 ]

# ---- a client of the wrong kind --------------------------------------------

check "lat_tcp server listens again" start_server "$LAT"
run "$STREAM" -c 127.0.0.1 -p "$PORT" -t 0.2
check "tcp_stream client against lat_tcp server: exit 1, one line" \
	sh -c "[ $RC -eq 1 ] && grep -q 'not a tcp_stream server' '$T/err' && [ \$(wc -l <'$T/err') -eq 1 ]"
wait_server
check "lat_tcp --once server exits non-zero after a bad client" [ $? -ne 0 ]

# ---- tcp_stream: JSON on both sides ----------------------------------------

check "tcp_stream server listens on 127.0.0.1" start_server "$STREAM" --json
run "$STREAM" -c 127.0.0.1 -p "$PORT" -t 1 --json
check "tcp_stream client -t 1 exits 0" [ "$RC" -eq 0 ]
check "tcp_stream server --once exits 0 after the client" wait_server
check "tcp_stream client and server print one JSON object each" \
	sh -c "[ \$(wc -l <'$T/out') -eq 1 ] && [ \$(wc -l <'$T/srv.out') -eq 1 ] &&
	       grep -q '^{\"benchmark\":\"tcp_stream\",\"schema\":1,\"role\":\"client\",.*}\$' '$T/out' &&
	       grep -q '^{\"benchmark\":\"tcp_stream\",\"schema\":1,\"role\":\"server\",.*}\$' '$T/srv.out'"

sent=$(jget "$T/out" bytes_sent)
rbs=$(jget "$T/out" bytes_received_by_server)
recv=$(jget "$T/srv.out" bytes_received)
sends=$(jget "$T/out" sends)
msz=$(jget "$T/out" msg_size)
el=$(jget "$T/out" elapsed_s)
tput=$(jget "$T/out" throughput_mbps)
sel=$(jget "$T/srv.out" elapsed_s)
stput=$(jget "$T/srv.out" throughput_mbps)
pcpu=$(jget "$T/out" cpu_proc_pct)
scpu=$(jget "$T/out" cpu_system_pct)
spcpu=$(jget "$T/srv.out" cpu_proc_pct)
ncpus=$(jget "$T/out" ncpus)
: "${sent:=-1}" "${rbs:=-2}" "${recv:=-3}" "${sends:=-1}" "${msz:=-1}"
: "${el:=-1}" "${tput:=-1}" "${sel:=-1}" "${stput:=-1}" "${pcpu:=-1}"
: "${scpu:=-1}" "${spcpu:=-1}" "${ncpus:=-1}"
echo "# sent=$sent server_received=$recv sends=$sends elapsed=$el Mbit/s=$tput cpu_proc=$pcpu cpu_system=$scpu server_cpu_proc=$spcpu ncpus=$ncpus"

check "tcp_stream bytes received by server == bytes client sent (> 0)" \
	sh -c "[ '$sent' = '$recv' ] && [ '$sent' = '$rbs' ] && [ '$sent' -gt 0 ]"
check "tcp_stream bytes_sent == sends * msg_size (128 KiB default)" \
	sh -c "[ '$msz' = 131072 ] && [ \$(($sends * $msz)) = '$sent' ]"
check "tcp_stream 1 <= elapsed_s < 5" num_true "$el >= 1 && $el < 5"
check "tcp_stream throughput > 0 and == bytes*8/elapsed (client, server)" \
	num_true "$tput > 0 && ($tput - $sent * 8 / $el / 1e6)^2 < (0.001 * $tput)^2 + 0.01^2 &&
		  $stput > 0 && ($stput - $recv * 8 / $sel / 1e6)^2 < (0.001 * $stput)^2 + 0.01^2"
check "tcp_stream CPU figures within range" \
	num_true "$ncpus >= 1 && $pcpu >= 0 && $pcpu <= 100 * $ncpus + 10 &&
		  $spcpu >= 0 && $spcpu <= 100 * $ncpus + 10 && $scpu >= 0 && $scpu <= 100"

# ---- tcp_stream: small odd-sized messages, text output ---------------------

check "tcp_stream server listens again" start_server "$STREAM"
run "$STREAM" -c 127.0.0.1 -p "$PORT" -t 0.3 -m 1000
check "tcp_stream -m 1000 text output, exit 0" \
	sh -c "[ $RC -eq 0 ] && grep -q '1000-byte sends' '$T/out' && grep -q 'Mbit/s' '$T/out'"
check "tcp_stream server exits 0" wait_server
check "tcp_stream text: server's byte count == client's" \
	sh -c "[ -n \"\$(sed -n 's/.*: \([0-9]*\) bytes in.*/\1/p' '$T/out')\" ] &&
	       [ \"\$(sed -n 's/.*: \([0-9]*\) bytes in.*/\1/p' '$T/out')\" = \
		 \"\$(sed -n 's/.*received \([0-9]*\) bytes.*/\1/p' '$T/srv.out')\" ]"
DEADPORT=$PORT

# ---- tcp_stream: errors ----------------------------------------------------

run "$STREAM" -c 127.0.0.1 -p "$DEADPORT" -t 0.2
check "tcp_stream connection refused: exit 1, one line" \
	sh -c "[ $RC -eq 1 ] && grep -q 'refused' '$T/err' && [ \$(wc -l <'$T/err') -eq 1 ]"
run "$STREAM" -c 127.0.0.1 -m 0
check "tcp_stream bad size: exit 2, one line" \
	sh -c "[ $RC -eq 2 ] && grep -q 'bad message size' '$T/err' && [ \$(wc -l <'$T/err') -eq 1 ]"
run "$STREAM" -c 127.0.0.1 -t 0
check "tcp_stream bad duration: exit 2" [ "$RC" -eq 2 ]

check "lat_tcp server listens again" start_server "$LAT"
run "$LAT" -c 127.0.0.1 -p "$PORT" -N 10
check "lat_tcp server still serves after the error tests" \
	sh -c "[ $RC -eq 0 ] && grep -q '10 round trips' '$T/out'"
check "lat_tcp server exits 0" wait_server

tap_plan
tap_summary
[ "$failed" -eq 0 ]
