#!/bin/sh
# Command-line tests of nsdump on files made by mkblocks; TAP lines.
# The values are gen.h's: write 1..10 us, tcp 0.1+0.04, nic 10 us.
obj=${1:-obj}
NSDUMP=$obj/nsdump
MK=$obj/mkblocks
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
n=0
fails=0

# check NAME COND...: COND's status.  check NAME: the status of the command
# before it, for conditions joined by && ("check NAME A && B" tests A only).
check() {
	status=$?
	name=$1; shift
	n=$((n + 1))
	[ $# -eq 0 ] || { "$@"; status=$?; }
	if [ $status -eq 0 ]; then echo "ok - cli: $name"; else echo "not ok - cli: $name"; fails=$((fails + 1)); fi
}

row() {		# row FILE REGION: the table's numbers for REGION
	awk -v r="$2" '$1 == r { $1 = ""; sub(/^ /, ""); print }' "$1"
}

$MK -n 10 "$t/ten.ns"
$NSDUMP -q -r "$t/ten.ns" >"$t/out" 2>"$t/err"; rc=$?
check "exit 0 on a good file" [ $rc -eq 0 ]
# self-mean: write less its tcp, tcp, ip and link (2520 ticks, 0.84 us)
check "write row n 10 mean 5.5 p50 5 p99 10 min 1 max 10 CV 0.522, self 4.66" \
	[ "$(row "$t/out" write)" = "10 5.500 5.000 10.000 1.000 10.000 0.522 0 4.660" ]
check "tcp row sums two records" \
	[ "$(row "$t/out" tcp)" = "10 0.140 0.140 0.140 0.140 0.140 0.000 0 0.140" ]
check "statistics line" [ "$(tail -1 "$t/err")" = "10 blocks captured, 0 dropped by kernel" ]
[ "$(grep -c . "$t/err")" -eq 2 ] && \
	[ "$(head -1 "$t/err")" = "nsdump: $t/ten.ns: no calibration in the file: values are raw" ]
check "no CALIB: one note, values raw"
check "table header says RAW and rdtsc" grep -q "RAW values, not corrected for macro overhead" "$t/out"
check "-q prints no packet lines" [ "$(grep -c ' cpu ' "$t/out")" -eq 0 ]

$NSDUMP -r "$t/ten.ns" >"$t/out" 2>/dev/null
check "one line per block" [ "$(grep -c ' cpu ' "$t/out")" -eq 10 ]
check "first packet line exact" [ "$(head -1 "$t/out")" = \
	"0.000 cpu 0 seq 0 tx len 1448 segs 1 write 1.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic 10.000" ]

$NSDUMP -v -r "$t/ten.ns" >"$t/out" 2>/dev/null
check "-v shows raw ticks per record" grep -q '^    \[0\] write   start 0 ticks 3000 ' "$t/out"

$NSDUMP -c 3 -r "$t/ten.ns" >"$t/out" 2>"$t/err"
check "-c 3 stops after 3 blocks" [ "$(tail -1 "$t/err")" = "3 blocks captured, 0 dropped by kernel" ]
check "-c 3 table n 3" [ "$(row "$t/out" write | cut -d' ' -f1-2)" = "3 2.000" ]

$MK -n 10 -l 4 -o 5 "$t/loss.ns"
$NSDUMP -r "$t/loss.ns" >"$t/out" 2>"$t/err"
check "loss items counted as drops" [ "$(tail -1 "$t/err")" = "10 blocks captured, 10 dropped by kernel" ]
check "loss line in place" grep -qx -- "-- 5 items lost here (cpu 1, first seq 100003) --" "$t/out"
check "open records excluded and counted" [ "$(row "$t/out" nic | cut -d' ' -f1,8)" = "8 2" ]

cat "$t/ten.ns" | $NSDUMP -q -r - >"$t/out" 2>/dev/null
check "-r - reads stdin" [ "$(row "$t/out" write | cut -d' ' -f1-2)" = "10 5.500" ]

$NSDUMP -r "$t/loss.ns" -w "$t/copy.ns" >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && [ ! -s "$t/out" ]
check "-w: exit 0, nothing on stdout"
$NSDUMP -q -r "$t/copy.ns" >"$t/out2" 2>"$t/err2"
$NSDUMP -q -r "$t/loss.ns" >"$t/out1" 2>/dev/null
check "-w then -r gives the same table and counts" cmp -s "$t/out1" "$t/out2"
check "-w copy keeps the drops" [ "$(tail -1 "$t/err2")" = "10 blocks captured, 10 dropped by kernel" ]
$NSDUMP -r "$t/ten.ns" -w - 2>/dev/null | $NSDUMP -q -r - >"$t/out" 2>/dev/null
check "-w - | -r - pipes a trace" [ "$(row "$t/out" write | cut -d' ' -f1-2)" = "10 5.500" ]

$NSDUMP -r "$t/ten.ns" -w /dev/full >/dev/null 2>"$t/err"; rc=$?
check "-w /dev/full: exit 1" [ $rc -eq 1 ]
check "-w /dev/full: one clear line" grep -q "^nsdump: /dev/full: No space left on device" "$t/err"

# SIGUSR1 while stdout is blocked in a full pipe: no line lost (SA_RESTART)
$MK -n 2000 "$t/big.ns"
$NSDUMP -r "$t/big.ns" >"$t/want" 2>/dev/null
mkfifo "$t/fifo"
{ exec 4<"$t/fifo"; while [ ! -e "$t/go" ]; do sleep 0.05; done; cat <&4 >"$t/out"; } &
reader=$!
$NSDUMP -r "$t/big.ns" >"$t/fifo" 2>"$t/err" &
pid=$!
blocked=0
for i in $(seq 100); do	# until it waits for the reader (state S)
	[ "$(cat /proc/$pid/comm 2>/dev/null)" = nsdump ] && \
		[ "$(cut -d' ' -f3 /proc/$pid/stat 2>/dev/null)" = S ] && { blocked=1; break; }
	sleep 0.05
done
for i in 1 2 3; do kill -USR1 $pid; sleep 0.1; done
touch "$t/go"
wait $pid; rc=$?
wait $reader
if [ $blocked = 1 ]; then
	[ $rc -eq 0 ] && cmp -s "$t/want" "$t/out" && [ "$(grep -c 'blocks captured' "$t/err")" -ge 2 ]
	check "SIGUSR1 during a blocked write: exit 0, every line, statistics"
else
	n=$((n + 1))
	echo "ok - cli: SIGUSR1 during a blocked write # SKIP nsdump never seen blocked on the pipe in 5 s"
fi

size=$(wc -c <"$t/ten.ns")
head -c $((size - 176)) "$t/ten.ns" >"$t/cut.ns"
$NSDUMP -q -r "$t/cut.ns" >/dev/null 2>"$t/err"; rc=$?
check "missing trailer: exit 1" [ $rc -eq 1 ]
check "missing trailer: warning with the count" \
	grep -qx "nsdump: $t/cut.ns: truncated: 10 blocks read before the cut" "$t/err"
head -c $((size - 200)) "$t/ten.ns" >"$t/cut.ns"
$NSDUMP -q -r "$t/cut.ns" >/dev/null 2>"$t/err"; rc=$?
check "cut inside a record names the offset" grep -q "cut at offset $((size - 200))" "$t/err"

$NSDUMP -q -r /etc/passwd >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && [ "$(cat "$t/err")" = "nsdump: /etc/passwd: not a NetSlice trace file" ]
check "not a trace file"

NSDUMP_DEV=$t/none $NSDUMP >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && \
	[ "$(cat "$t/err")" = "nsdump: $t/none: no such device (is netslice.ko loaded?)" ]
check "no device: exit 1 and the hint"
if [ "$(id -u)" != 0 ]; then
	touch "$t/locked"; chmod 000 "$t/locked"
	NSDUMP_DEV=$t/locked $NSDUMP >/dev/null 2>"$t/err"
	check "no permission: the hint" grep -q "permission denied (needs root or CAP_NET_ADMIN)" "$t/err"
fi
$NSDUMP -i /dev/null >/dev/null 2>"$t/err"
check "-i on a non-NetSlice device" [ "$(cat "$t/err")" = "nsdump: /dev/null: NSIOCGINFO: not a NetSlice device" ]

$NSDUMP -B 0 >/dev/null 2>&1; rc1=$?
$NSDUMP -B 12x >/dev/null 2>&1; rc2=$?
$NSDUMP -Z >/dev/null 2>&1; rc3=$?
$NSDUMP -c 0 >/dev/null 2>&1; rc4=$?
[ $rc1 -eq 2 ] && [ $rc2 -eq 2 ] && [ $rc3 -eq 2 ] && [ $rc4 -eq 2 ]
check "bad -B, unknown option, -c 0: exit 2"
$NSDUMP -e cycles -r "$t/ten.ns" >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 2 ] && grep -q "^nsdump: -e applies to a device" "$t/err"
check "-e with -r: usage error"
$NSDUMP -e cyclse -i /dev/null >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && \
	[ "$(cat "$t/err")" = "nsdump: cyclse: unknown event; did you mean cycles?" ]
check "-e cyclse: exit 1, one line with the suggestion"
$NSDUMP -e cpu-clock,faults,cs,task-clock,cycles -i /dev/null >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && \
	[ "$(cat "$t/err")" = "nsdump: -e cpu-clock,faults,cs,task-clock,cycles: too many events (at most 4)" ]
check "-e five events: too many"
$NSDUMP -e cycles:u -i /dev/null >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && grep -q "drop the :u modifier" "$t/err"
check "-e cycles:u: user-mode only refused"
$NSDUMP -L >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && \
	grep -q '^  cpu-clock ' "$t/out" && grep -q '^  context-switches OR cs ' "$t/out"
check "-L: exit 0, software events listed"
if [ -e /sys/bus/event_source/devices/cpu ]; then
	check "-L: a PMU, hardware events listed" grep -q '^  cycles OR cpu-cycles ' "$t/out"
else
	grep -q '^No hardware PMU found' "$t/out" && ! grep -q '^  cycles' "$t/out"
	check "-L: no PMU, said so, no hardware events"
fi

$MK -n 4 -e 2 "$t/ev.ns"
$NSDUMP -q -r "$t/ev.ns" >"$t/out" 2>/dev/null
check "counter columns when nevents > 0: mean p50 p99 each" \
	[ "$(row "$t/out" tcp | cut -d' ' -f10-15)" = "42.0 42 42 44.0 44 44" ]
check "no EVENTS record: counters named ev0, ev1" grep -q ' ev0  *p50  *p99  *ev1 ' "$t/out"
$MK -n 20 -e 2 -N -i 4 "$t/named.ns"
$NSDUMP -q -r "$t/named.ns" >"$t/out" 2>/dev/null
check "EVENTS record: names in the header, IPC column" \
	grep -q ' cycles  *p50  *p99  *instructions  *p50  *p99  *IPC$' "$t/out"
check "IPC per layer: tcp 44/42" [ "$(row "$t/out" tcp | awk '{print $NF}')" = "1.05" ]
[ "$(row "$t/out" ip | cut -d' ' -f1,10)" = "20 60.0" ] && \
	grep -q "; 5 invalid counter readings excluded" "$t/out"
check "INVALID ip records: counters over 15 of 20, 5 readings excluded"
$NSDUMP --json -q -r "$t/named.ns" >"$t/out" 2>/dev/null
grep -q '"events":\["cycles","instructions"\]' "$t/out" && \
	grep -q '"region":"ip","open":0,"invalid":5,' "$t/out" && grep -q '"ipc":1.048' "$t/out"
check "--json: events named, ipc, invalid"

$NSDUMP --json -r "$t/loss.ns" >"$t/out" 2>/dev/null
[ "$(grep -c '^{"type":"block"' "$t/out")" -eq 10 ] && \
	[ "$(grep -c '^{"type":"loss"' "$t/out")" -eq 2 ] && \
	[ "$(tail -1 "$t/out" | cut -c1-16)" = '{"type":"table",' ]
check "--json: 10 block lines, 2 loss lines, 1 table"
if command -v jq >/dev/null 2>&1; then
	check "--json: every line parses" jq -e . "$t/out" >/dev/null
fi

# a recorded trace with the kernel's calibration (gen.h: write - 270 ticks)
$MK -n 10 -e 2 -N -C "$t/cal.ns"
$NSDUMP -q -r "$t/cal.ns" >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && \
	[ "$(row "$t/out" write | cut -d' ' -f1-9)" = "10 5.410 4.910 9.910 0.910 9.910 0.531 0 5.500" ] && \
	[ "$(row "$t/out" tcp | cut -d' ' -f1-2,11,14,17)" = "10 0.120 38.0 38.0 1.00" ] && \
	[ "$(cat "$t/err")" = "10 blocks captured, 0 dropped by kernel" ]
check "CALIB file: corrected table, no note"
$NSDUMP -q --raw -r "$t/cal.ns" >"$t/out" 2>"$t/err"
[ "$(row "$t/out" write | cut -d' ' -f1-8)" = "10 5.500 5.000 10.000 1.000 10.000 0.522 0" ] && \
	grep -q "RAW values" "$t/out" && [ "$(grep -c . "$t/err")" -eq 1 ]
check "CALIB file --raw: raw table, no note"
$NSDUMP -v -c 1 -r "$t/cal.ns" >"$t/out" 2>/dev/null
check "-v: raw and corrected side by side, K, counters raw/corrected" \
	grep -qx '    \[0\] write   start 0 ticks 3000 corrected 2730 K 4 depth 0 cpu 0 nmerged 1 cycles 300/278 instructions 301/274' "$t/out"
check "packet line: corrected values" grep -q ' write 0.910 tcp 0.090+0.030 ip 0.190 ' "$t/out"
$NSDUMP --json -c 1 -r "$t/cal.ns" >"$t/out" 2>/dev/null
grep -q '"ticks":3000,.*"k":4,"us_corrected":0.910,"ticks_corrected":2730,"clamped":false,"count_corrected":\[278,274\]' "$t/out" && \
	grep -q '"corrected":true,"correction":"tau_o=10.0ns, tau_beta=20.0ns"' "$t/out"
check "--json: raw and corrected per record, correction in the table"
$NSDUMP --calibrate -r "$t/cal.ns" >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && \
	grep -q '^# NetSlice macro costs (Table 2) on Synthetic CPU @ 3.00GHz, tsc_khz 3000000' "$t/out" && \
	grep -q '^NSA   tau_beta         20.0       60 ' "$t/out"
check "--calibrate -r: the file's Table 2"
$NSDUMP --calibrate -r "$t/ten.ns" >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no calibration" "$t/err"
check "--calibrate on a file without CALIB: exit 1"
$NSDUMP -r "$t/cal.ns" -w "$t/calcopy.ns" 2>/dev/null
$NSDUMP -q -r "$t/calcopy.ns" >"$t/out2" 2>/dev/null
$NSDUMP -q -r "$t/cal.ns" >"$t/out1" 2>/dev/null
check "-w keeps CALIB and EVENTS" cmp -s "$t/out1" "$t/out2"
# text on stdout that cannot be written: one line, exit 1, whichever printer
for args in "-r $t/cal.ns" "--json -r $t/cal.ns" "-q -r $t/cal.ns" \
	    "--calibrate -r $t/cal.ns" "-L"; do
	$NSDUMP $args >/dev/full 2>"$t/err"; rc=$?
	[ $rc -eq 1 ] && [ "$(grep -c '^nsdump: output: No space left on device$' "$t/err")" -eq 1 ]
	check "${args%% *} >/dev/full: exit 1, one line"
done
$MK -n 10 -C -P "$t/pp.ns"
$NSDUMP -q --rtt -r "$t/pp.ns" >"$t/out" 2>/dev/null
grep -qx 'rtt raw       n 8 mean 2.000 p50 2.000 p99 2.000 us' "$t/out" && \
	grep -qx 'rtt corrected n 8 mean 1.500 p50 1.500 p99 1.500 us' "$t/out"
check "--rtt: ping-pong every 6000 ticks, 2 x 750 ticks of macros"

# MAGNeT event records (-M): gen.h's FTP example, times in UTC
$MK -F 10 -G 4 -A -S "$t/ftp.ns"
TZ=UTC $NSDUMP -M -r "$t/ftp.ns" >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && \
	[ "$(grep -c ' MAGNET_[A-Z_]* [0-9]* bytes' "$t/out")" -eq 290 ] && \
	[ "$(grep -c ' cpu .* seq ' "$t/out")" -eq 92 ]
check "-M: exit 0, 290 event lines, 92 packet lines"
check "-M: first event line, wall clock from SYSINFO" [ "$(grep -m1 MAGNET_ "$t/out")" = \
	"2026-11-21 23:41:07.123456789 cpu 0 conn 0x2a MAGNET_SOCK_SEND 10240 bytes [tcp cwnd 10 ssthresh 2147483647 srtt 120us rto 201000us out 3 retr 0/0 snd_wnd 65535 rcv_wnd 65483 wseq 11240 cseq 5000 mss 1448 state ESTABLISHED] [192.0.2.1:43210 > 192.0.2.2:5201]" ]
[ "$(awk '$1 == "MAGNET_TCP_SEND"' "$t/out")" = "  MAGNET_TCP_SEND         80     1280.0      104     1448     2279.544    2.774      0" ] && \
	[ "$(awk '$1 == "MAGNET_SOCK_RECV" && NF == 8' "$t/out")" = "  MAGNET_SOCK_RECV         4     4344.0     4344     4344     5000.000    0.000      0" ] && \
	[ "$(grep -n '^# per-layer' "$t/out" | cut -d: -f1)" -lt "$(grep -n '^# application vs wire' "$t/out" | cut -d: -f1)" ]
check "-M: Table III after the latency table"
check "-M: statistics count event records" \
	[ "$(tail -1 "$t/err")" = "92 blocks and 290 event records captured, 0 dropped by kernel" ]
TZ=UTC $NSDUMP -M -q -r "$t/ftp.ns" >"$t/out" 2>/dev/null
[ "$(grep -c ' bytes ' "$t/out")" -eq 0 ] && \
	grep -q '^conn 0x2b local 192.0.2.1:43211 remote 192.0.2.2:5201$' "$t/out"
check "-M -q: no event lines, tables kept"
$NSDUMP -q -r "$t/ftp.ns" >"$t/out" 2>/dev/null
check "without -M: no Table III" [ "$(grep -c 'MAGNET' "$t/out")" -eq 0 ]
$MK -F 2 "$t/nosys.ns"
TZ=UTC $NSDUMP -M -r "$t/nosys.ns" >"$t/out" 2>/dev/null
check "-M: no SYSINFO: wall clock from the file's INFO" \
	[ "$(grep -m1 MAGNET_ "$t/out" | cut -d' ' -f1-2)" = "2023-11-14 22:13:20.123456789" ]
$MK -F 10 -G 4 -A -S -X 30 "$t/ftploss.ns"
TZ=UTC $NSDUMP -M -r "$t/ftploss.ns" >"$t/out" 2>/dev/null
check "-M: loss marker kept among the event lines" \
	grep -qx -- "-- 5 items lost here (cpu 0, first seq 30) --" "$t/out"
TZ=UTC $NSDUMP -M --json -r "$t/ftp.ns" >"$t/out" 2>/dev/null
[ "$(grep -c '^{"type":"event",' "$t/out")" -eq 290 ] && \
	[ "$(grep -c '^{"type":"sysinfo",' "$t/out")" -eq 1 ] && \
	[ "$(tail -2 "$t/out" | grep -c '^{"type":"conn",')" -eq 2 ]
check "-M --json: 290 event objects, a sysinfo, 2 conn objects after the table"
if command -v jq >/dev/null 2>&1; then
	check "-M --json: every line parses" jq -e . "$t/out" >/dev/null
fi

$NSDUMP -M -q -p 43210.5201 -r "$t/ftp.ns" >"$t/out" 2>"$t/err"
[ "$(row "$t/out" tcp | cut -d' ' -f1)" = 80 ] && [ -z "$(row "$t/out" rx-tcp)" ] && \
	grep -q '^conn 0x2a ' "$t/out" && ! grep -q '^conn 0x2b ' "$t/out" && \
	[ "$(grep -c . "$t/err")" -eq 2 ]
check "-p 43210.5201: the sender only, in both tables"
TZ=UTC $NSDUMP -M -p 43211.5201 -r "$t/ftp.ns" >"$t/out" 2>/dev/null
[ "$(grep -c ' rx len ' "$t/out")" -eq 12 ] && [ "$(grep -c ' tx len ' "$t/out")" -eq 0 ] && \
	[ "$(grep -c ' conn 0x2b MAGNET_' "$t/out")" -eq 40 ] && \
	[ "$(grep -c ' conn 0x2a MAGNET_' "$t/out")" -eq 0 ]
check "-p 43211.5201: 12 rx packet lines, 40 event lines"
$NSDUMP -p 43210.5201 -p 43211.5201 -q -r "$t/ftp.ns" >"$t/out" 2>/dev/null
[ "$(row "$t/out" tcp | cut -d' ' -f1)" = 80 ] && \
	[ "$(row "$t/out" rx-tcp | cut -d' ' -f1)" = 12 ]
check "-p twice: both"
TZ=UTC $NSDUMP -M --dir rx -r "$t/ftp.ns" >"$t/out" 2>/dev/null
[ "$(grep -c ' rx len ' "$t/out")" -eq 12 ] && [ "$(grep -c ' tx len ' "$t/out")" -eq 0 ] && \
	[ "$(grep -c '_SEND [0-9]* bytes' "$t/out")" -eq 0 ] && [ "$(grep -c '_RECV [0-9]* bytes' "$t/out")" -eq 40 ]
check "--dir rx: receive blocks and events only"
$NSDUMP -q --dir tx -r "$t/ten.ns" >"$t/out" 2>/dev/null
check "--dir tx without events: the blocks' own direction" [ "$(row "$t/out" write | cut -d' ' -f1)" = 10 ]
$MK -F 3 -G 2 "$t/noaddr.ns"
$NSDUMP -q -p 43210.5201 -r "$t/noaddr.ns" >"$t/out" 2>"$t/err"
[ "$(grep -c 'no event record carried ports' "$t/err")" -eq 1 ] && \
	[ "$(grep -c '^tcp ' "$t/out")" -eq 0 ]
check "-p without address information: said once, nothing matched"
$NSDUMP -p 80 -r "$t/ftp.ns" >/dev/null 2>&1; rc1=$?
$NSDUMP --dir up -r "$t/ftp.ns" >/dev/null 2>&1; rc2=$?
$NSDUMP --addr -r "$t/ftp.ns" >/dev/null 2>&1; rc3=$?
[ $rc1 -eq 2 ] && [ $rc2 -eq 2 ] && [ $rc3 -eq 2 ]
check "bad -p, bad --dir, --addr without -M: exit 2"

$NSDUMP -r "$t/ftploss.ns" -w "$t/ftpcopy.ns" 2>/dev/null
TZ=UTC $NSDUMP -M -r "$t/ftploss.ns" >"$t/out1" 2>/dev/null
TZ=UTC $NSDUMP -M -r "$t/ftpcopy.ns" >"$t/out2" 2>"$t/err2"
cmp -s "$t/out1" "$t/out2" && \
	[ "$(tail -1 "$t/err2")" = "92 blocks and 290 event records captured, 5 dropped by kernel" ]
check "-w then -r -M: events, SYSINFO and loss identical"

# the live path, with fakedev.so standing in for /dev/ns
$MK -R -n 10 -l 4 "$t/raw"
live() {
	NSDUMP_DEV=${DEV:-$t/raw} NSFAKE_LOG=$t/log NSFAKE_DROPS=${DROPS:-7} \
	ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$(pwd)/$obj/fakedev.so \
	"$@"
}
rm -f "$t/log"
live $NSDUMP -B 1M >"$t/out" 2>"$t/err"; rc=$?
check "live: exit 0 after SIGINT at the end" [ $rc -eq 0 ]
[ "$(grep -c ' cpu ' "$t/out")" -eq 10 ] && \
	[ "$(grep -c '^-- 5 items lost here' "$t/out")" -eq 2 ]
check "live: 10 packet lines, 2 loss lines"
check "live: drops from NSIOCGDROPS" [ "$(tail -1 "$t/err")" = "10 blocks captured, 7 dropped by kernel" ]
[ "$(wc -l <"$t/err")" -eq 2 ] && \
	head -1 "$t/err" | grep -Eqx "nsdump: listening on $t/raw, [1-9][0-9]* CPUs, [0-9]+ KiB ring per CPU, duration mode \(TSC only\)"
check "live: says where it listens, first, and nothing else"
check "live: -B 1M, no events: duration mode, calibration per CPU, then collection on and off" \
	[ "$(head -7 "$t/log" | tr '\n' ' ')" = "rcvbuf 1048576 events 0 mode 0 calib 0 calib 1 state 1 state 0 " ]
# self: (write - 270) less the four leaves, each less tau_o: 2670 ticks
check "live: table corrected by the kernel's calibration (write - 270 ticks)" \
	[ "$(row "$t/out" write)" = "10 5.410 4.910 9.910 0.910 9.910 0.531 0 5.500 4.610" ]
check "live: header names tau_o and tau_beta" \
	grep -q "corrected for macro overhead (tau_o=10.0ns, tau_beta=20.0ns)" "$t/out"
live $NSDUMP -q --raw >"$t/out" 2>"$t/err"
[ "$(row "$t/out" write)" = "10 5.500 5.000 10.000 1.000 10.000 0.522 0 4.660" ] && \
	grep -q "RAW values, not corrected" "$t/out"
check "live: --raw: the raw table"
NSFAKE_CALIB_ERR=25 live $NSDUMP -q >"$t/out" 2>"$t/err"
[ "$(head -1 "$t/err")" = "nsdump: no calibration from the kernel: values are raw" ] && \
	[ "$(row "$t/out" write)" = "10 5.500 5.000 10.000 1.000 10.000 0.522 0 4.660" ]
check "live: no NSIOCGCALIB (ENOTTY): raw, one note"
rm -f "$t/log"
live $NSDUMP -q -e cpu-clock,page-faults >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && \
	[ "$(head -2 "$t/log" | tr '\n' ' ')" = "events 2 4294967296 4294967298 mode 1 " ]
check "live: -e cpu-clock,page-faults: encodings sent, count mode"
live $NSDUMP --calibrate >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && \
	grep -q '^NSO   tau_o            10.0       30 ' "$t/out" && [ ! -s "$t/err" ]
check "live: --calibrate prints the kernel's table, captures nothing"
live $NSDUMP -w "$t/livecal.ns" 2>/dev/null
$NSDUMP --calibrate -r "$t/livecal.ns" >"$t/out2" 2>/dev/null
check "live: -w stores the calibration (CALIB) for -r" \
	[ "$(tail -6 "$t/out2")" = "$(tail -6 "$t/out")" ]
NSFAKE_EVENT_ERR=95 live $NSDUMP -q -e cpu-clock >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && \
	[ "$(cat "$t/err")" = "nsdump: $t/raw: NSIOCSEVENT cpu-clock: this netslice.ko cannot count events (durations only) (EOPNOTSUPP)" ]
check "live: NSIOCSEVENT EOPNOTSUPP names the events"
live $NSDUMP -q -c 4 >"$t/out" 2>"$t/err"
check "live: -c 4" [ "$(tail -1 "$t/err")" = "4 blocks captured, 7 dropped by kernel" ]
NSFAKE_NOMEM=3 live $NSDUMP -q -c 4 >"$t/out" 2>"$t/err"
[ "$(tail -2 "$t/err" | head -1)" = "3 blocks not made by the kernel (no memory for them)" ] && \
	[ "$(tail -1 "$t/err")" = "4 blocks captured, 7 dropped by kernel" ]
check "live: blocks the kernel could not make are reported, before the summary"
live $NSDUMP -w "$t/live.ns" >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && [ ! -s "$t/out" ]
check "live: -w writes quietly"
$NSDUMP -q -r "$t/live.ns" >"$t/out" 2>"$t/err"
check "live: -w file reads back, drops from its loss items" \
	[ "$(tail -1 "$t/err")" = "10 blocks captured, 10 dropped by kernel" ]
# the reader of the output goes away (EPIPE): collection off, statistics,
# exit 0, as tcpdump; head -c 100000 takes more than the file's header
# (4 KiB) and less than the 400 KB of blocks: the pipe breaks mid-capture
$MK -R -n 1000 "$t/rawbig"
for bytes in 1000 100000; do
	rm -f "$t/log"
	{ DEV=$t/rawbig live $NSDUMP -w - 2>"$t/err"; echo $? >"$t/rc"; } | head -c $bytes >"$t/out"
	[ "$(cat "$t/rc")" = 0 ] && [ "$(wc -c <"$t/out")" -eq $bytes ] && \
		[ "$(tail -1 "$t/log")" = "state 0" ]
	check "live: -w - | head -c $bytes: exit 0, collection off"
done
[ "$(grep -c . "$t/err")" -eq 2 ] && \
	tail -1 "$t/err" | grep -Eqx '[0-9]+ blocks captured, 7 dropped by kernel'
check "live: -w - | head -c 100000: statistics, nothing else"
rm -f "$t/log"
{ DEV=$t/rawbig live $NSDUMP 2>"$t/err"; echo $? >"$t/rc"; } | head -c 1000 >"$t/out"
[ "$(cat "$t/rc")" = 0 ] && [ "$(tail -1 "$t/log")" = "state 0" ] && \
	[ "$(grep -c . "$t/err")" -eq 2 ] && \
	tail -1 "$t/err" | grep -Eqx '[0-9]+ blocks captured, 7 dropped by kernel'
check "live: nsdump | head -c 1000: exit 0, collection off, statistics"

# SIGHUP stops it as SIGINT does (NSFAKE_HOLD: the device idles until then)
rm -f "$t/log"
NSDUMP_DEV=$t/raw NSFAKE_LOG=$t/log NSFAKE_HOLD=1 ASAN_OPTIONS=verify_asan_link_order=0 \
	LD_PRELOAD=$(pwd)/$obj/fakedev.so $NSDUMP -q -w "$t/hup.ns" 2>/dev/null &
pid=$!	# nsdump's: live's would be a subshell's
for i in $(seq 100); do
	grep -q '^state 1' "$t/log" 2>/dev/null && break
	sleep 0.05
done
kill -HUP $pid
wait $pid; rc=$?
$NSDUMP -q -r "$t/hup.ns" >/dev/null 2>"$t/err"
[ $rc -eq 0 ] && [ "$(tail -1 "$t/log")" = "state 0" ] && \
	[ "$(tail -1 "$t/err")" = "10 blocks captured, 10 dropped by kernel" ]
check "live: SIGHUP: exit 0, collection off, the whole file"

NSFAKE_ABI=2 live $NSDUMP >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && \
	[ "$(cat "$t/err")" = "nsdump: $t/raw: kernel speaks NetSlice ABI 2, this nsdump 1" ]
check "live: ABI mismatch refused"

# live event records: NSIOCSRECORDS on with -M / -p, off at the end
$MK -R -F 2 -G 1 -A -S "$t/evraw"
evlive() {
	NSDUMP_DEV=$t/evraw NSFAKE_LOG=$t/log ASAN_OPTIONS=verify_asan_link_order=0 \
	LD_PRELOAD=$(pwd)/$obj/fakedev.so TZ=UTC "$@"
}
rm -f "$t/log"
evlive $NSDUMP -M >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && \
	[ "$(grep '^records' "$t/log" | tr '\n' ' ')" = "records 7 records 0 " ]
check "live -M: records on with TCP and IP (7), off (0) at exit"
[ "$(grep -c ' MAGNET_[A-Z_]* [0-9]* bytes' "$t/out")" -eq 60 ] && grep -q '^conn 0x2a ' "$t/out" && \
	[ "$(tail -1 "$t/err")" = "19 blocks and 60 event records captured, 0 dropped by kernel" ]
check "live -M: event lines and Table III from the device"
rm -f "$t/log"
evlive $NSDUMP -M --addr -q >/dev/null 2>&1
evlive $NSDUMP -p 43210.5201 -q >"$t/out" 2>/dev/null
[ "$(grep '^records' "$t/log" | tr '\n' ' ')" = "records 15 records 0 records 9 records 0 " ] && \
	[ "$(row "$t/out" tcp | cut -d' ' -f1)" = 16 ]
check "live --addr: 15; -p alone: ports only (9)"
rm -f "$t/log"
NSFAKE_RECORDS_ERR=25 evlive $NSDUMP -M -q >"$t/out" 2>"$t/err"; rc=$?
[ $rc -eq 0 ] && \
	[ "$(grep -c 'kernel does not produce event records' "$t/err")" -eq 1 ] && \
	[ "$(row "$t/out" tcp | cut -d' ' -f1)" = 16 ] && \
	[ "$(grep '^records' "$t/log" | tr '\n' ' ')" = "records 7 " ]
check "live: NSIOCSRECORDS ENOTTY: one line, capture goes on, not switched off"
NSFAKE_RECORDS_ERR=1 evlive $NSDUMP -M -q >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && \
	grep -q 'NSIOCSRECORDS: Operation not permitted' "$t/err"
check "live: NSIOCSRECORDS EPERM: exit 1 with the reason"
rm -f "$t/log"
evlive $NSDUMP -q >/dev/null 2>&1
check "live without -M or -p: NSIOCSRECORDS not called" [ "$(grep -c '^records' "$t/log")" -eq 0 ]
evlive $NSDUMP -M -w "$t/evlive.ns" 2>/dev/null
TZ=UTC $NSDUMP -M -q -r "$t/evlive.ns" >"$t/out" 2>"$t/err"
[ "$(tail -1 "$t/err")" = "19 blocks and 60 event records captured, 0 dropped by kernel" ] && \
	grep -q '^  MAGNET_SOCK_SEND         2    10240.0 ' "$t/out"
check "live -w: the file keeps the event records"

exit $((fails > 0))
