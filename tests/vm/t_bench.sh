#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks (issue 4), in the VM, across the namespaces (root ns eth0
# 192.0.2.1 <-> peer ns eth1 192.0.2.2, two e1000s on a QEMU hub):
#  - lat_tcp and tcp_stream run against each other in both directions
#    without error, and their JSON is consistent (n as asked, the server
#    got every byte, the rates positive);
#  - tcp_stream's rate is its own numbers': throughput_mbps is
#    bytes * 8 / elapsed_s, and -t <= send_s <= elapsed_s <= the wall
#    time the shell measured around the client;
#  - tcp_stream's byte count is the wire's: the peer NIC's rx_bytes grow
#    by the bytes tcp_stream says the server received plus the headers of
#    MSS-sized frames (66-70 bytes per 1448: x1.046..1.049), so the ratio
#    must lie in [1.02, 1.08];
#  - tcp_stream measures what a Debian tool measures on the same path:
#    iperf3 (same 128 KiB writes, default socket buffers) root -> peer,
#    each run three times, interleaved (stream, iperf3, stream, ...).
#    Under TCG the two vCPUs are host threads on a loaded host, and one
#    tool's rate over 3 s varies 20-60% from run to run; the medians
#    differed by -11% .. +46% in CI-like runs.  So this is a gross check
#    only, within a factor of 3: the errors it is for (bits against
#    bytes, Mbit against MiB, a wrong time base) are factors of 8 and
#    more.  The exact checks are the two above.
# No NetSlice module: this checks the benchmarks, not the profiler.
# TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
SECS=${BENCH_SECS:-3}
FACTOR=${BENCH_FACTOR:-3}

T="timeout -k 5 60"
# Wait until a server wrote its --port-file (it is listening then).
ready() { # <file>
	local i
	for ((i = 0; i < 200; i++)); do
		[[ -s $1 ]] && return 0
		sleep 0.05
	done
	return 1
}
jq1() { python3 -c 'import json,sys
o = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
for k in sys.argv[2].split("."):
    o = o[k]
print(o)' "$1" "$2"; }

command -v iperf3 >/dev/null || die "iperf3 not installed (make deps)"
sysctl -qw net.ipv6.conf.all.disable_ipv6=1
peer sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null || die "ping $NS_PEER_IP"

# run_pair <server ns: root|peer> <server addr> <name>
run_pair() {
	local sns=$1 addr=$2 name=$3 s=() c=()
	if [[ $sns == peer ]]; then s=(peer); else c=(peer); fi
	rm -f "$W/port"
	"${s[@]}" $T "$BENCH/lat_tcp" -s -n -b "$addr" -p 5601 --port-file "$W/port" >"$W/$name-lsrv.out" 2>&1 &
	local lsrv=$!
	ready "$W/port"
	"${c[@]}" $T "$BENCH/lat_tcp" -c "$addr" -p 5601 -W 50 -N 500 --json >"$W/$name-lat.json" 2>"$W/$name-lat.err"
	local rc=$?
	wait $lsrv
	local rcs=$?
	((rc == 0 && rcs == 0)) && [[ $(jq1 "$W/$name-lat.json" n) == 500 ]] &&
		python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))
sys.exit(not (0 < o["min_us"] <= o["median_us"] <= o["p99_us"] <= o["max_us"]))' "$W/$name-lat.json"
	tap $? "lat_tcp $name: 500 round trips, exit $rc/$rcs, min <= median <= p99 <= max"
	echo "# lat_tcp $name: median $(jq1 "$W/$name-lat.json" median_us) us, p99 $(jq1 "$W/$name-lat.json" p99_us) us"

	rm -f "$W/port"
	"${s[@]}" $T "$BENCH/tcp_stream" -s -n -b "$addr" -p 5602 --port-file "$W/port" --json >"$W/$name-ssrv.json" 2>&1 &
	local ssrv=$!
	ready "$W/port"
	"${c[@]}" $T "$BENCH/tcp_stream" -c "$addr" -p 5602 -t 2 --json >"$W/$name-stream.json" 2>"$W/$name-stream.err"
	rc=$?
	wait $ssrv
	rcs=$?
	((rc == 0 && rcs == 0)) && python3 -c 'import json,sys
c = json.load(open(sys.argv[1])); s = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
ok = c["bytes_sent"] == c["bytes_received_by_server"] == s["bytes_received"] > 0 \
    and c["throughput_mbps"] > 0 and s["throughput_mbps"] > 0
sys.exit(not ok)' "$W/$name-stream.json" "$W/$name-ssrv.json"
	tap $? "tcp_stream $name: exit $rc/$rcs, sent == received by the server, rates > 0"
	echo "# tcp_stream $name: $(jq1 "$W/$name-stream.json" throughput_mbps) Mbit/s (server: $(jq1 "$W/$name-ssrv.json" throughput_mbps))"
}
run_pair peer "$NS_PEER_IP" "root->peer"
run_pair root "$NS_LOCAL_IP" "peer->root"

# --- tcp_stream against iperf3, root -> peer, interleaved
peer iperf3 -s -p 5610 -D -I "$W/iperf3.pid" --logfile "$W/iperf3-srv.log" ||
	die "iperf3 -s in $NS_PEER_NS"
wait_listen 5610 peer || die "iperf3 -s did not start"
ts=() ip=()
for round in $(seq 1 "${BENCH_ROUNDS:-3}"); do
	rm -f "$W/port"
	peer $T "$BENCH/tcp_stream" -s -n -p 5611 --port-file "$W/port" >/dev/null 2>&1 &
	srv=$!
	ready "$W/port"
	rx0=$(peer cat "/sys/class/net/$NS_PEER_IF/statistics/rx_bytes")
	t0=$(date +%s%N)
	$T "$BENCH/tcp_stream" -c "$NS_PEER_IP" -p 5611 -t "$SECS" --json >"$W/ts$round.json" 2>&1
	rc=$?
	t1=$(date +%s%N)
	wait $srv
	rx1=$(peer cat "/sys/class/net/$NS_PEER_IF/statistics/rx_bytes")
	((rc == 0)) || sed 's/^/# tcp_stream: /' "$W/ts$round.json"
	python3 -c 'import json,sys
o = json.load(open(sys.argv[1])); wall = int(sys.argv[2]) / 1e9
rate = o["bytes_sent"] * 8 / o["elapsed_s"] / 1e6
print("# round %s: %d bytes in %.6f s (sending %.6f s, -t %g, wall %.6f s): "
      "%.2f Mbit/s, reported %.2f" % (sys.argv[3], o["bytes_sent"],
      o["elapsed_s"], o["send_s"], o["duration_s"], wall, rate,
      o["throughput_mbps"]))
sys.exit(not (abs(rate - o["throughput_mbps"]) <= 0.01 and
              o["duration_s"] <= o["send_s"] <= o["elapsed_s"] <= wall))' \
		"$W/ts$round.json" $((t1 - t0)) "$round"
	tap $? "round $round: tcp_stream's rate is bytes * 8 / elapsed, -t <= send <= elapsed <= wall time"
	if ((round == 1)); then
		b=$(jq1 "$W/ts$round.json" bytes_received_by_server 2>/dev/null)
		python3 -c 'import sys; w, b = int(sys.argv[1]), int(sys.argv[2])
r = w / b if b else 0
print("# wire: %s rx_bytes grew by %d for %d bytes received: x%.4f" % (sys.argv[3], w, b, r))
sys.exit(not 1.02 <= r <= 1.08)' $((rx1 - rx0)) "${b:-0}" "$NS_PEER_IF"
		tap $? "tcp_stream's byte count against the peer NIC's rx_bytes (x1.02..1.08 for headers)"
	fi
	v=$(jq1 "$W/ts$round.json" throughput_mbps 2>/dev/null)
	tap $rc "round $round: tcp_stream -t $SECS to $NS_PEER_IP: $v Mbit/s"
	ts+=("${v:-0}")
	$T iperf3 -c "$NS_PEER_IP" -p 5610 -t "$SECS" -J >"$W/ip$round.json" 2>&1
	rc=$?
	((rc == 0)) || tail -5 "$W/ip$round.json" | sed 's/^/# iperf3: /'
	v=$(python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))
print("%.1f" % (o["end"]["sum_received"]["bits_per_second"] / 1e6))' "$W/ip$round.json" 2>/dev/null)
	tap $rc "round $round: iperf3 -t $SECS to $NS_PEER_IP: $v Mbit/s (receiver)"
	ip+=("${v:-0}")
done
kill "$(cat "$W/iperf3.pid")" 2>/dev/null
python3 - "$FACTOR" "${ts[@]}" "${ip[@]}" <<'EOF'
import statistics, sys
factor = float(sys.argv[1])
v = [float(x) for x in sys.argv[2:]]
ts, ip = v[:len(v) // 2], v[len(v) // 2:]
mt, mi = statistics.median(ts), statistics.median(ip)
ratio = mt / mi if mi else float("inf")
print("# tcp_stream %s -> median %.1f Mbit/s; iperf3 %s -> median %.1f Mbit/s; "
      "tcp_stream/iperf3 = %.3f (%+.1f%%; gross check: within a factor of %g)"
      % (ts, mt, ip, mi, ratio, (ratio - 1) * 100, factor))
sys.exit(0 if mt > 0 and mi > 0 and 1 / factor <= ratio <= factor else 1)
EOF
tap $? "tcp_stream's throughput is iperf3's on the same path to within a factor of $FACTOR (medians)"

rm -rf "$W"
echo "1..$n"
((failed == 0))
