#!/bin/sh
# Command-line tests of nsdump on files made by mkblocks; TAP lines.
# The values are gen.h's: write 1..10 us, tcp 0.1+0.04, nic 10 us.
#
# The cases are tables, as tcpdump's TESTLIST: cases() reads one on its
# standard input and runs its cases in turn, a record each:
#   = NAME     the case's TAP line ($variables expanded once it has run)
#   COMMANDS   the shell lines that run nsdump, with their redirections
#              (by custom its output in $t/out and $t/err); $rc is their
#              status.  A case without them reads what the one before left.
#   ? TERM     a condition that must hold (to the next '?' or '='); the
#              first that does not is named on a "# false:" line.
# Between the tables, plain shell makes the files that they read.
obj=${1:-obj}
here=$(dirname "$0")
NSDUMP=$obj/nsdump
MK=$obj/mkblocks
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
. "$here/../tap.sh"
US=$(printf '\037')	# between a case's terms

# the case read last: its name, commands and terms
run_case() {
	[ -n "$cname" ] || return 0
	if [ -n "$crun" ]; then
		eval "$crun" </dev/null
		rc=$?
	fi
	eval "cname=\"$cname\""
	set -f
	IFS=$US
	set -- $cterms
	IFS=$ifs
	set +f
	for term; do
		eval "$term" </dev/null && continue
		printf '%s\n' "$term" | sed '1s/^/# false: /; 2,$s/^/#        /'
		not_ok "cli: $cname"
		cname=
		return
	done
	ok "cli: $cname"
	cname=
}

# cases <<'END' ... END: a table of cases, run in order
cases() {
	cname= crun= cterms= in_terms=
	while IFS= read -r line; do
		case $line in
		'' | '#'*)
			;;
		'= '*)
			run_case
			cname=${line#= } crun= cterms= in_terms=
			;;
		'? '*)
			cterms=${cterms:+$cterms$US}${line#? }
			in_terms=1
			;;
		*)
			if [ -n "$in_terms" ]; then
				cterms="$cterms
$line"
			else
				crun="${crun:+$crun
}$line"
			fi
			;;
		esac
	done
	run_case
}
ifs=$IFS

cli_skip() {	# cli_skip NAME WHY: a case that cannot run here
	skip "cli: $1" "$2"
}

# jl FILE [EXPR]: FILE's lines all JSON objects (strictly), EXPR's value
jl() {
	python3 "$here/jsonl.py" "$@"
}

row() {		# row FILE REGION: the table's numbers for REGION
	awk -v r="$2" '$1 == r { $1 = ""; sub(/^ /, ""); print }' "$1"
}

$MK -n 10 "$t/ten.ns"
cases <<'END'
= exit 0 on a good file
$NSDUMP -q -r "$t/ten.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
# self-mean: write less its tcp, tcp, ip and link (2520 ticks, 0.84 us)
= write row n 10 mean 5.5 p50 5 p99 10 min 1 max 10 CV 0.522, self 4.66
? [ "$(row "$t/out" write)" = "10 5.500 5.000 10.000 1.000 10.000 0.522 0 4.660" ]
= tcp row sums two records
? [ "$(row "$t/out" tcp)" = "10 0.140 0.140 0.140 0.140 0.140 0.000 0 0.140" ]
= statistics line
? [ "$(tail -1 "$t/err")" = "10 blocks captured, 0 dropped by kernel" ]
= no CALIB: one note, values raw
? [ "$(grep -c . "$t/err")" -eq 2 ]
? [ "$(head -1 "$t/err")" = "nsdump: $t/ten.ns: no calibration in the file: values are raw" ]
= table header says RAW and rdtsc
? grep -q "RAW values, not corrected for macro overhead" "$t/out"
= -q prints no packet lines
? [ "$(grep -c ' cpu ' "$t/out")" -eq 0 ]

= one line per block
TZ=UTC $NSDUMP -r "$t/ten.ns" >"$t/out" 2>/dev/null
? [ "$(grep -c ' cpu ' "$t/out")" -eq 10 ]
= first packet line exact: time of day, no flow (conn), tcp, direction, length, sequence, cpu, regions
? [ "$(head -1 "$t/out")" = \
	"22:13:20.000000 conn 0x2a tcp tx len 1448 seq 1000 cpu 0: write 1.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic 10.000" ]

= -v shows raw ticks per record
$NSDUMP -v -r "$t/ten.ns" >"$t/out" 2>/dev/null
? grep -q '^    \[0\] write   start 0 ticks 3000 ' "$t/out"

= -c 3 stops after 3 blocks
$NSDUMP -c 3 -r "$t/ten.ns" >"$t/out" 2>"$t/err"
? [ "$(tail -1 "$t/err")" = "3 blocks captured, 0 dropped by kernel" ]
= -c 3 table n 3
? [ "$(row "$t/out" write | cut -d' ' -f1-2)" = "3 2.000" ]
END

$MK -n 10 -l 4 -o 5 "$t/loss.ns"
cases <<'END'
= loss items counted as drops
$NSDUMP -r "$t/loss.ns" >"$t/out" 2>"$t/err"
? [ "$(tail -1 "$t/err")" = "10 blocks captured, 10 dropped by kernel" ]
= loss line in place
? grep -qx -- "-- 5 items lost here (cpu 1, first seq 100003) --" "$t/out"
= open records excluded and counted
? [ "$(row "$t/out" nic | cut -d' ' -f1,8)" = "8 2" ]

= -r - reads stdin
cat "$t/ten.ns" | $NSDUMP -q -r - >"$t/out" 2>/dev/null
? [ "$(row "$t/out" write | cut -d' ' -f1-2)" = "10 5.500" ]

= -w: exit 0, nothing on stdout
$NSDUMP -r "$t/loss.ns" -w "$t/copy.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ ! -s "$t/out" ]
= -w then -r gives the same table and counts
$NSDUMP -q -r "$t/copy.ns" >"$t/out2" 2>"$t/err2"
$NSDUMP -q -r "$t/loss.ns" >"$t/out1" 2>/dev/null
? cmp -s "$t/out1" "$t/out2"
= -w copy keeps the drops
? [ "$(tail -1 "$t/err2")" = "10 blocks captured, 10 dropped by kernel" ]
= -w - | -r - pipes a trace
$NSDUMP -r "$t/ten.ns" -w - 2>/dev/null | $NSDUMP -q -r - >"$t/out" 2>/dev/null
? [ "$(row "$t/out" write | cut -d' ' -f1-2)" = "10 5.500" ]

= -w /dev/full: exit 1
$NSDUMP -r "$t/ten.ns" -w /dev/full >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
= -w /dev/full: one clear line
? grep -q "^nsdump: /dev/full: No space left on device" "$t/err"
END

# SIGUSR1 while stdout is blocked in a full pipe: no line lost (SA_RESTART);
# 4 s of trace, so that lines are due (time order) while it reads
$MK -n 2000 "$t/big.ns"
$MK -F 200 "$t/long.ns"
$NSDUMP -r "$t/long.ns" >"$t/want" 2>/dev/null
mkfifo "$t/fifo"
{ exec 4<"$t/fifo"; while [ ! -e "$t/go" ]; do sleep 0.05; done; cat <&4 >"$t/out"; } &
reader=$!
$NSDUMP -r "$t/long.ns" >"$t/fifo" 2>"$t/err" &
pid=$!
blocked=0
for i in $(seq 100); do	# until it waits for the reader (state S)
	[ "$(cat /proc/$pid/comm 2>/dev/null)" = nsdump ] && \
		[ "$(cut -d' ' -f3 /proc/$pid/stat 2>/dev/null)" = S ] && { blocked=1; break; }
	sleep 0.05
done
for i in 1 2 3; do kill -USR1 $pid; sleep 0.1; done
touch "$t/go"
wait $pid; usr1_rc=$?
wait $reader
if [ $blocked = 1 ]; then
	cases <<'END'
= SIGUSR1 during a blocked write: exit 0, every line, statistics
? [ $usr1_rc -eq 0 ]
? cmp -s "$t/want" "$t/out"
? [ "$(grep -c ' captured, ' "$t/err")" -ge 2 ]
END
else
	cli_skip "SIGUSR1 during a blocked write" "nsdump never seen blocked on the pipe in 5 s"
fi

size=$(wc -c <"$t/ten.ns")
cases <<'END'
= missing trailer: exit 1
head -c $((size - 176)) "$t/ten.ns" >"$t/cut.ns"
$NSDUMP -q -r "$t/cut.ns" >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
= missing trailer: warning with the count
? grep -qx "nsdump: $t/cut.ns: truncated: 10 blocks read before the cut" "$t/err"
= cut inside a record names the offset
head -c $((size - 200)) "$t/ten.ns" >"$t/cut.ns"
$NSDUMP -q -r "$t/cut.ns" >/dev/null 2>"$t/err"
? grep -q "cut at offset $((size - 200))" "$t/err"
END

# What mkblocks writes: a head (INFO, FIELDS, XFIELDS: an empty capture
# less its 176-byte trailer), then DATA records of a 16-byte header and
# as many blocks as 64 KiB takes (a block's size: compact, what a file of
# one block adds to the empty one, less its DATA record's header).
$MK -n 0 "$t/empty.ns"
$MK -n 1 "$t/one.ns"
head_len=$(($(wc -c <"$t/empty.ns") - 176))
bsize=$(($(wc -c <"$t/one.ns") - $(wc -c <"$t/empty.ns") - 16))
[ $bsize -lt $($MK -R -n 1 | wc -c) ] || echo "# a block in a file ($bsize B) is not compact" 
per=$((65536 / bsize))
rec=$((16 + per * bsize))
# the blocks of mkblocks -n 2000 there is room for in $1 bytes after a
# head of $2 bytes
fits() {
	left=$((($1 - $2) % rec))
	fit=0
	[ $left -gt 16 ] && fit=$(((left - 16) / bsize))
	echo $((($1 - $2) / rec * per + fit))
}

# A capture cut inside its first DATA record, 90 blocks and a part in
$MK -n 600 "$t/200.ns"	# more than one DATA record
cut=$((head_len + 16 + 90 * bsize + 123))
head -c $cut "$t/200.ns" >"$t/cut.ns"
cases <<'END'
= cut inside DATA: exit 1
$NSDUMP -q -r "$t/cut.ns" >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
= cut inside DATA: where the file ends, 90 blocks recovered
? grep -qx \
	"nsdump: $t/cut.ns: truncated: DATA record at offset $head_len ($rec bytes) cut at offset $cut: its 90 whole items before the cut read (90 blocks), unchecked by its CRC; 90 blocks in all" "$t/err"
= cut inside DATA: 90 blocks captured
? [ "$(tail -1 "$t/err")" = "90 blocks captured, 0 dropped by kernel" ]
# the same cut in a pipe, which the writer cannot cut back
= -w - | head -c: the reader takes the 90 whole blocks of the cut record
$NSDUMP -r "$t/200.ns" -w - 2>/dev/null | head -c $cut | $NSDUMP -q -r - >/dev/null 2>"$t/err"
? [ "$(tail -1 "$t/err")" = "90 blocks captured, 0 dropped by kernel" ]
END

# -w onto a file system that fills: a 200 KiB tmpfs in a mount namespace
# of its own, so that nothing outlives the test (root only)
mkdir "$t/mnt"
if [ "$(id -u)" = 0 ] && unshare -m sh -c 'mount -t tmpfs -o size=200k nsfull "$1" &&
	"$2" -r "$3" -w "$1/out.ns" 2>"$4/err"; echo $? >"$4/rc"
	stat -f -c "%b %S" "$1" >"$4/fs"; cp "$1/out.ns" "$4/full.ns"' \
	_ "$t/mnt" "$NSDUMP" "$t/big.ns" "$t" 2>/dev/null && [ -s "$t/fs" ]; then
	cap=$(($(cut -d' ' -f1 "$t/fs") * $(cut -d' ' -f2 "$t/fs")))
	# nsdump -w's head adds a WRITER record to mkblocks'
	$NSDUMP -q -r "$t/empty.ns" -w "$t/empty-w.ns" 2>/dev/null
	want=$(fits $cap $(($(wc -c <"$t/empty-w.ns") - 176)))
	bytes=$(wc -c <"$t/full.ns")
	cases <<'END'
= -w onto a full tmpfs: exit 1
? [ "$(cat "$t/rc")" = 1 ]
= -w onto a full tmpfs: one clear line, all $want blocks there was room for
? grep -qx \
	"nsdump: $t/mnt/out.ns: No space left on device; $want blocks ($bytes bytes) are in the file, which ends without a trailer" "$t/err"
= -w onto a full tmpfs: the file reads back to its last whole record
$NSDUMP -q -r "$t/full.ns" >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
? grep -qx "nsdump: $t/full.ns: truncated: $want blocks read before the cut" "$t/err"
? [ "$(tail -1 "$t/err")" = "$want blocks captured, 0 dropped by kernel" ]
END
else
	cli_skip "-w onto a full tmpfs" "cannot mount a tmpfs here (not root, or no unshare -m)"
fi

cases <<'END'
= not a trace file
$NSDUMP -q -r /etc/passwd >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: /etc/passwd: not a NetSlice trace file" ]

= no device: exit 1 and the hint
NSDUMP_DEV=$t/none $NSDUMP >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: $t/none: no such device (is netslice.ko loaded?)" ]
END
if [ "$(id -u)" != 0 ]; then
	touch "$t/locked"; chmod 000 "$t/locked"
	cases <<'END'
= no permission: the hint
NSDUMP_DEV=$t/locked $NSDUMP >/dev/null 2>"$t/err"
? grep -q "permission denied (needs root or CAP_NET_ADMIN)" "$t/err"
END
fi
cases <<'END'
= --device on a non-NetSlice device
$NSDUMP --device /dev/null >/dev/null 2>"$t/err"
? [ "$(cat "$t/err")" = "nsdump: /dev/null: NSIOCGINFO: not a NetSlice device" ]
= -i with a '/' is a device's path, as before --device
$NSDUMP -i /dev/null >/dev/null 2>"$t/err"
? [ "$(cat "$t/err")" = "nsdump: /dev/null: NSIOCGINFO: not a NetSlice device" ]

= bad -B, unknown option, -c 0, a space or sign before -B's or -c's number: exit 2
$NSDUMP -B 0 >/dev/null 2>&1; rc1=$?
$NSDUMP -B 12x >/dev/null 2>&1; rc2=$?
$NSDUMP -Z >/dev/null 2>&1; rc3=$?
$NSDUMP -c 0 >/dev/null 2>&1; rc4=$?
$NSDUMP -B ' -5' >/dev/null 2>&1; rc5=$?
$NSDUMP -c ' 5' >/dev/null 2>&1; rc6=$?
? [ $rc1 -eq 2 ]
? [ $rc2 -eq 2 ]
? [ $rc3 -eq 2 ]
? [ $rc4 -eq 2 ]
? [ $rc5 -eq 2 ]
? [ $rc6 -eq 2 ]
= -e with -r: usage error
$NSDUMP -e cycles -r "$t/ten.ns" >/dev/null 2>"$t/err"
? [ $rc -eq 2 ]
? grep -q "^nsdump: -e applies to a device" "$t/err"
= -e cyclse: exit 1, one line with the suggestion
$NSDUMP -e cyclse --device /dev/null >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: cyclse: unknown event; did you mean cycles?" ]
= -e five events: too many
$NSDUMP -e cpu-clock,faults,cs,task-clock,cycles --device /dev/null >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: -e cpu-clock,faults,cs,task-clock,cycles: too many events (at most 4)" ]
= -e cycles:u: user-mode only refused
$NSDUMP -e cycles:u --device /dev/null >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
? grep -q "drop the :u modifier" "$t/err"
= -L: exit 0, software events listed
$NSDUMP -L >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? grep -q '^  cpu-clock ' "$t/out"
? grep -q '^  context-switches OR cs ' "$t/out"
END
if [ -e /sys/bus/event_source/devices/cpu ]; then
	cases <<'END'
= -L: a PMU, hardware events listed
? grep -q '^  cycles OR cpu-cycles ' "$t/out"
END
else
	cases <<'END'
= -L: no PMU, said so, no hardware events
? grep -q '^No hardware PMU found' "$t/out"
? ! grep -q '^  cycles' "$t/out"
END
fi

$MK -n 4 -e 2 "$t/ev.ns"
$MK -n 20 -e 2 -N -i 4 "$t/named.ns"
cases <<'END'
= counter columns when nevents > 0: mean p50 p99 each
$NSDUMP -q -r "$t/ev.ns" >"$t/out" 2>/dev/null
? [ "$(row "$t/out" tcp | cut -d' ' -f10-15)" = "42.0 42 42 44.0 44 44" ]
= no EVENTS record: counters named ev0, ev1
? grep -q ' ev0  *p50  *p99  *ev1 ' "$t/out"
= EVENTS record: names in the header, IPC column
$NSDUMP -q -r "$t/named.ns" >"$t/out" 2>/dev/null
? grep -q ' cycles  *p50  *p99  *instructions  *p50  *p99  *IPC$' "$t/out"
= IPC per layer: tcp 44/42
? [ "$(row "$t/out" tcp | awk '{print $NF}')" = "1.05" ]
= INVALID ip records: counters over 15 of 20, 5 readings excluded
? [ "$(row "$t/out" ip | cut -d' ' -f1,10)" = "20 60.0" ]
? grep -q "; 5 invalid counter readings excluded" "$t/out"
= --json: events named, ipc, invalid
$NSDUMP --json -q -r "$t/named.ns" >"$t/out" 2>/dev/null
? grep -q '"events":\["cycles","instructions"\]' "$t/out"
? grep -q '"region":"ip","open":0,"invalid":5,' "$t/out"
? grep -q '"ipc":1.048' "$t/out"

= --json: 10 block lines, 2 loss lines, 1 table
$NSDUMP --json -r "$t/loss.ns" >"$t/out" 2>/dev/null
? [ "$(grep -c '^{"type":"block"' "$t/out")" -eq 10 ]
? [ "$(grep -c '^{"type":"loss"' "$t/out")" -eq 2 ]
? [ "$(tail -1 "$t/out" | cut -c1-16)" = '{"type":"table",' ]
= --json: every line parses: 10 blocks, 2 losses, the table last (10 blocks, 10 lost)
? [ "$(jl "$t/out" '[len(T("block")), len(T("loss")), L[-1]["type"], L[-1]["blocks"], L[-1]["lost"]]')" = '[10, 2, "table", 10, 10]' ]
END

# a recorded trace with the kernel's calibration (gen.h: write - 270 ticks)
$MK -n 10 -e 2 -N -C "$t/cal.ns"
cases <<'END'
= CALIB file: corrected table, no note
$NSDUMP -q -r "$t/cal.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(row "$t/out" write | cut -d' ' -f1-9)" = "10 5.410 4.910 9.910 0.910 9.910 0.531 0 5.500" ]
? [ "$(row "$t/out" tcp | cut -d' ' -f1-2,11,14,17)" = "10 0.120 38.0 38.0 1.00" ]
? [ "$(cat "$t/err")" = "10 blocks captured, 0 dropped by kernel" ]
= CALIB file --raw: raw table, no note
$NSDUMP -q --raw -r "$t/cal.ns" >"$t/out" 2>"$t/err"
? [ "$(row "$t/out" write | cut -d' ' -f1-8)" = "10 5.500 5.000 10.000 1.000 10.000 0.522 0" ]
? grep -q "RAW values" "$t/out"
? [ "$(grep -c . "$t/err")" -eq 1 ]
= -v: raw and corrected side by side, K, counters raw/corrected
$NSDUMP -v -c 1 -r "$t/cal.ns" >"$t/out" 2>/dev/null
? grep -qx '    \[0\] write   start 0 ticks 3000 corrected 2730 K 4 depth 0 cpu 0 nmerged 1 cycles 300/278 instructions 301/274' "$t/out"
= packet line: corrected values
? grep -q ' write 0.910 tcp 0.090+0.030 ip 0.190 ' "$t/out"
= --json: raw and corrected per record, correction in the table
$NSDUMP --json -c 1 -r "$t/cal.ns" >"$t/out" 2>/dev/null
? grep -q '"ticks":3000,.*"k":4,"us_corrected":0.910,"ticks_corrected":2730,"clamped":false,"count_corrected":\[278,274\]' "$t/out"
? grep -q '"corrected":true,"correction":"tau_o=10.0ns, tau_beta=20.0ns"' "$t/out"
= --calibrate -r: the file's Table 2
$NSDUMP --calibrate -r "$t/cal.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? grep -q '^# NetSlice macro costs (Table 2) on Synthetic CPU @ 3.00GHz, tsc_khz 3000000' "$t/out"
? grep -q '^NSA   tau_beta         20.0       60 ' "$t/out"
= --calibrate on a file without CALIB: exit 1
$NSDUMP --calibrate -r "$t/ten.ns" >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
? grep -q "no calibration" "$t/err"
= -w keeps CALIB and EVENTS
$NSDUMP -r "$t/cal.ns" -w "$t/calcopy.ns" 2>/dev/null
$NSDUMP -q -r "$t/calcopy.ns" >"$t/out2" 2>/dev/null
$NSDUMP -q -r "$t/cal.ns" >"$t/out1" 2>/dev/null
? cmp -s "$t/out1" "$t/out2"
END
# text on stdout that cannot be written: one line, exit 1, whichever printer
for args in "-r $t/cal.ns" "--json -r $t/cal.ns" "-q -r $t/cal.ns" \
	    "--calibrate -r $t/cal.ns" "-L"; do
	cases <<'END'
= ${args%% *} >/dev/full: exit 1, one line
$NSDUMP $args >/dev/full 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(grep -c '^nsdump: output: No space left on device$' "$t/err")" -eq 1 ]
END
done
$MK -n 10 -C -P "$t/pp.ns"
cases <<'END'
= --rtt: ping-pong every 6000 ticks, 2 x 750 ticks of macros
$NSDUMP -q --rtt -r "$t/pp.ns" >"$t/out" 2>/dev/null
? grep -qx 'rtt raw       n 8 mean 2.000 p50 2.000 p99 2.000 us' "$t/out"
? grep -qx 'rtt corrected n 8 mean 1.500 p50 1.500 p99 1.500 us' "$t/out"
END

# MAGNeT event records (-M): gen.h's FTP example, times in UTC
$MK -F 10 -G 4 -A -S "$t/ftp.ns"
$MK -F 2 "$t/nosys.ns"
$MK -F 10 -G 4 -A -S -X 30 "$t/ftploss.ns"
cases <<'END'
= -M: exit 0, 290 event lines, 92 packet lines
TZ=UTC $NSDUMP -M -r "$t/ftp.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(grep -c ' MAGNET_[A-Z_]* [0-9]* bytes' "$t/out")" -eq 290 ]
? [ "$(grep -c ' cpu [0-9]*: ' "$t/out")" -eq 92 ]
= -M: first event line, wall clock from SYSINFO
? [ "$(grep -m1 MAGNET_ "$t/out")" = \
	"23:41:07.123456 cpu 0 conn 0x2a MAGNET_SOCK_SEND 10240 bytes [tcp cwnd 10 ssthresh 2147483647 srtt 120us rto 201000us out 3 retr 0/0 snd_wnd 65535 rcv_wnd 65483 wseq 11240 cseq 5000 mss 1448 state ESTABLISHED] [192.0.2.1:43210 > 192.0.2.2:5201]" ]
= -M: the first segment's block between its IP_SEND and DEV_SEND, on the same clock
? [ "$(grep -A1 -m1 MAGNET_IP_SEND "$t/out" | tail -1)" = \
	"23:41:07.123461 192.0.2.1:43210 > 192.0.2.2:5201 tcp tx len 1500 seq 0 cpu 0: tcp 0.200 ip 0.200 nic 1.000" ]
= -M: Table III after the latency table
? [ "$(awk '$1 == "MAGNET_TCP_SEND"' "$t/out")" = "  MAGNET_TCP_SEND         80     1280.0      104     1448     2279.544    2.774      0" ]
? [ "$(awk '$1 == "MAGNET_SOCK_RECV" && NF == 8' "$t/out")" = "  MAGNET_SOCK_RECV         4     4344.0     4344     4344     5000.000    0.000      0" ]
? [ "$(grep -n '^# per-layer' "$t/out" | cut -d: -f1)" -lt "$(grep -n '^# application vs wire' "$t/out" | cut -d: -f1)" ]
= -M: statistics count event records
? [ "$(tail -1 "$t/err")" = "92 blocks and 290 event records captured, 0 dropped by kernel" ]
= -M -q: no event lines, tables kept
TZ=UTC $NSDUMP -M -q -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(grep -c ' bytes ' "$t/out")" -eq 0 ]
? grep -q '^conn 0x2b local 192.0.2.1:43211 remote 192.0.2.2:5201$' "$t/out"
= without -M: no Table III
$NSDUMP -q -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(grep -c 'MAGNET' "$t/out")" -eq 0 ]
= -M -tttt: no SYSINFO: wall clock from the file's INFO
TZ=UTC $NSDUMP -M -tttt -r "$t/nosys.ns" >"$t/out" 2>/dev/null
? [ "$(grep -m1 MAGNET_ "$t/out" | cut -d' ' -f1-2)" = "2023-11-14 22:13:20.123456" ]
= -M: loss marker kept among the event lines
TZ=UTC $NSDUMP -M -r "$t/ftploss.ns" >"$t/out" 2>/dev/null
? grep -qx -- "-- 5 items lost here (cpu 0, first seq 30) --" "$t/out"
= -M --json: 290 event objects, a sysinfo, 2 conn objects after the table
TZ=UTC $NSDUMP -M --json -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(grep -c '^{"type":"event",' "$t/out")" -eq 290 ]
? [ "$(grep -c '^{"type":"sysinfo",' "$t/out")" -eq 1 ]
? [ "$(tail -2 "$t/out" | grep -c '^{"type":"conn",')" -eq 2 ]
= -M --json: every line parses; the first event, the connections
? [ "$(jl "$t/out" '[T("event")[0][k] for k in ("event", "bytes", "saddr", "dport", "time")] + [c["lport"] for c in T("conn")]')" = \
	  '["MAGNET_SOCK_SEND", 10240, "192.0.2.1", 5201, "2026-11-21 23:41:07.123456789", 43210, 43211]' ]

= -p 43210.5201: the sender only, in both tables
$NSDUMP -M -q -p 43210.5201 -r "$t/ftp.ns" >"$t/out" 2>"$t/err"
? [ "$(row "$t/out" tcp | cut -d' ' -f1)" = 80 ]
? [ -z "$(row "$t/out" rx-tcp)" ]
? grep -q '^conn 0x2a ' "$t/out"
? ! grep -q '^conn 0x2b ' "$t/out"
? [ "$(grep -c . "$t/err")" -eq 2 ]
= -p 43211.5201: 12 rx packet lines, 40 event lines
TZ=UTC $NSDUMP -M -p 43211.5201 -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(grep -c ' rx len ' "$t/out")" -eq 12 ]
? [ "$(grep -c ' tx len ' "$t/out")" -eq 0 ]
? [ "$(grep -c ' conn 0x2b MAGNET_' "$t/out")" -eq 40 ]
? [ "$(grep -c ' conn 0x2a MAGNET_' "$t/out")" -eq 0 ]
= -p twice: both
$NSDUMP -p 43210.5201 -p 43211.5201 -q -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(row "$t/out" tcp | cut -d' ' -f1)" = 80 ]
? [ "$(row "$t/out" rx-tcp | cut -d' ' -f1)" = 12 ]
= --dir rx: receive blocks and events only
TZ=UTC $NSDUMP -M --dir rx -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(grep -c ' rx len ' "$t/out")" -eq 12 ]
? [ "$(grep -c ' tx len ' "$t/out")" -eq 0 ]
? [ "$(grep -c '_SEND [0-9]* bytes' "$t/out")" -eq 0 ]
? [ "$(grep -c '_RECV [0-9]* bytes' "$t/out")" -eq 40 ]
= --dir tx without events: the blocks' own direction
$NSDUMP -q --dir tx -r "$t/ten.ns" >"$t/out" 2>/dev/null
? [ "$(row "$t/out" write | cut -d' ' -f1)" = 10 ]
END
$MK -F 3 -G 2 "$t/noaddr.ns"
cases <<'END'
= -p without address information: said once, nothing matched
$NSDUMP -q -p 43210.5201 -r "$t/noaddr.ns" >"$t/out" 2>"$t/err"
? [ "$(grep -c 'no event record carried ports' "$t/err")" -eq 1 ]
? [ "$(grep -c '^tcp ' "$t/out")" -eq 0 ]
= bad -p, bad --dir, six t's: exit 2
$NSDUMP -p 80 -r "$t/ftp.ns" >/dev/null 2>&1; rc1=$?
$NSDUMP --dir up -r "$t/ftp.ns" >/dev/null 2>&1; rc2=$?
$NSDUMP -tttttt -r "$t/ftp.ns" >/dev/null 2>"$t/err"; rc3=$?
? [ $rc1 -eq 2 ]
? [ $rc2 -eq 2 ]
? [ $rc3 -eq 2 ]
? [ "$(cat "$t/err")" = "nsdump: -t: at most five (-ttttt: since the first line)" ]

= -w then -r -M: events, SYSINFO and loss identical
$NSDUMP -r "$t/ftploss.ns" -w "$t/ftpcopy.ns" 2>/dev/null
TZ=UTC $NSDUMP -M -r "$t/ftploss.ns" >"$t/out1" 2>/dev/null
TZ=UTC $NSDUMP -M -r "$t/ftpcopy.ns" >"$t/out2" 2>"$t/err2"
? cmp -s "$t/out1" "$t/out2"
? [ "$(tail -1 "$t/err2")" = "92 blocks and 290 event records captured, 5 dropped by kernel" ]
END

# the live path, with fakedev.so standing in for /dev/ns
$MK -R -n 10 -l 4 "$t/raw"
live() {
	NSDUMP_DEV=${DEV:-$t/raw} NSFAKE_LOG=$t/log NSFAKE_DROPS=${DROPS:-7} \
	ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$(pwd)/$obj/fakedev.so \
	"$@"
}
cases <<'END'
= live: exit 0 after SIGINT at the end
rm -f "$t/log"
live $NSDUMP -B 1M >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
= live: 10 packet lines, 2 loss lines
? [ "$(grep -c ' cpu ' "$t/out")" -eq 10 ]
? [ "$(grep -c '^-- 5 items lost here' "$t/out")" -eq 2 ]
= live: drops from NSIOCGDROPS
? [ "$(tail -1 "$t/err")" = "10 blocks captured, 7 dropped by kernel" ]
= live: says where it listens, first, and nothing else
? [ "$(wc -l <"$t/err")" -eq 2 ]
? head -1 "$t/err" | grep -Eqx "nsdump: listening on $t/raw, [1-9][0-9]* CPUs, [0-9]+ KiB ring per CPU, duration mode \(TSC only\)"
= live: -B 1M, no events: duration mode, calibration per CPU, then collection on and off
? [ "$(head -7 "$t/log" | tr '\n' ' ')" = "rcvbuf 1048576 events 0 mode 0 calib 0 calib 1 state 1 state 0 " ]
# self: (write - 270) less the four leaves, each less tau_o: 2670 ticks
= live: table corrected by the kernel's calibration (write - 270 ticks)
? [ "$(row "$t/out" write)" = "10 5.410 4.910 9.910 0.910 9.910 0.531 0 5.500 4.610" ]
# -B as tcpdump's: KiB, or k/M/G
= -B 2048, 64k, 3M, 1G: KiB as tcpdump's, then k, M, G (NSIOCSRCVBUF bytes)
got=
for b in 2048 64k 3M 1G; do
	rm -f "$t/log"
	live $NSDUMP -q -B $b >/dev/null 2>&1
	got="$got$(head -1 "$t/log" | tr '\n' ' ')"
done
? [ "$got" = "rcvbuf 2097152 rcvbuf 65536 rcvbuf 3145728 rcvbuf 1073741824 " ]
= live: header names tau_o and tau_beta
? grep -q "corrected for macro overhead (tau_o=10.0ns, tau_beta=20.0ns)" "$t/out"
= live: --raw: the raw table
live $NSDUMP -q --raw >"$t/out" 2>"$t/err"
? [ "$(row "$t/out" write)" = "10 5.500 5.000 10.000 1.000 10.000 0.522 0 4.660" ]
? grep -q "RAW values, not corrected" "$t/out"
= live: no NSIOCGCALIB (ENOTTY): raw, one note
NSFAKE_CALIB_ERR=25 live $NSDUMP -q >"$t/out" 2>"$t/err"
? [ "$(head -1 "$t/err")" = "nsdump: no calibration from the kernel: values are raw" ]
? [ "$(row "$t/out" write)" = "10 5.500 5.000 10.000 1.000 10.000 0.522 0 4.660" ]
= live: -e cpu-clock,page-faults: encodings sent, count mode
rm -f "$t/log"
live $NSDUMP -q -e cpu-clock,page-faults >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(head -2 "$t/log" | tr '\n' ' ')" = "events 2 4294967296 4294967298 mode 1 " ]
= live: --calibrate prints the kernel's table, captures nothing
live $NSDUMP --calibrate >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? grep -q '^NSO   tau_o            10.0       30 ' "$t/out"
? [ ! -s "$t/err" ]
= live: -w stores the calibration (CALIB) for -r
live $NSDUMP -w "$t/livecal.ns" 2>/dev/null
$NSDUMP --calibrate -r "$t/livecal.ns" >"$t/out2" 2>/dev/null
? [ "$(tail -6 "$t/out2")" = "$(tail -6 "$t/out")" ]
= live: NSIOCSEVENT EOPNOTSUPP names the events
NSFAKE_EVENT_ERR=95 live $NSDUMP -q -e cpu-clock >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: $t/raw: NSIOCSEVENT cpu-clock: this netslice.ko cannot count events (durations only) (EOPNOTSUPP)" ]
= live: -c 4
live $NSDUMP -q -c 4 >"$t/out" 2>"$t/err"
? [ "$(tail -1 "$t/err")" = "4 blocks captured, 7 dropped by kernel" ]
= live: blocks the kernel could not make are reported, before the summary
NSFAKE_NOMEM=3 live $NSDUMP -q -c 4 >"$t/out" 2>"$t/err"
? [ "$(tail -2 "$t/err" | head -1)" = "3 blocks not made by the kernel (no memory for them)" ]
? [ "$(tail -1 "$t/err")" = "4 blocks captured, 7 dropped by kernel" ]
= live: -w writes quietly
live $NSDUMP -w "$t/live.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ ! -s "$t/out" ]
= live: -w file reads back, drops from its loss items
$NSDUMP -q -r "$t/live.ns" >"$t/out" 2>"$t/err"
? [ "$(tail -1 "$t/err")" = "10 blocks captured, 10 dropped by kernel" ]
END
# the reader of the output goes away (EPIPE): collection off, statistics,
# exit 0, as tcpdump; head -c 100000 takes more than the file's header
# (4 KiB) and less than the 400 KB of blocks: the pipe breaks mid-capture
$MK -R -n 1000 "$t/rawbig"
for bytes in 1000 100000; do
	cases <<'END'
= live: -w - | head -c $bytes: exit 0, collection off
rm -f "$t/log"
{ DEV=$t/rawbig live $NSDUMP -w - 2>"$t/err"; echo $? >"$t/rc"; } | head -c $bytes >"$t/out"
? [ "$(cat "$t/rc")" = 0 ]
? [ "$(wc -c <"$t/out")" -eq $bytes ]
? [ "$(tail -1 "$t/log")" = "state 0" ]
END
done
cases <<'END'
= live: -w - | head -c 100000: statistics, nothing else
? [ "$(grep -c . "$t/err")" -eq 2 ]
? tail -1 "$t/err" | grep -Eqx '[0-9]+ blocks captured, 7 dropped by kernel'
= live: nsdump | head -c 1000: exit 0, collection off, statistics
rm -f "$t/log"
{ DEV=$t/rawbig live $NSDUMP 2>"$t/err"; echo $? >"$t/rc"; } | head -c 1000 >"$t/out"
? [ "$(cat "$t/rc")" = 0 ]
? [ "$(tail -1 "$t/log")" = "state 0" ]
? [ "$(grep -c . "$t/err")" -eq 2 ]
? tail -1 "$t/err" | grep -Eqx '[0-9]+ blocks captured, 7 dropped by kernel'
END

# SIGHUP and SIGTERM stop it as SIGINT does (NSFAKE_HOLD: the device
# idles until then).  SIGHUP's default action is restored for nsdump:
# under nohup(1), as a test run in the background may be, nsdump keeps
# it ignored, as tcpdump does.
for sig in HUP TERM; do
	cases <<'END'
= live: SIG$sig: exit 0, collection off, the whole file
rm -f "$t/log"
env --default-signal=HUP \
	NSDUMP_DEV=$t/raw NSFAKE_LOG=$t/log NSFAKE_HOLD=1 ASAN_OPTIONS=verify_asan_link_order=0 \
	LD_PRELOAD=$(pwd)/$obj/fakedev.so $NSDUMP -q -w "$t/$sig.ns" 2>/dev/null &
pid=$!	# nsdump's: live's would be a subshell's
for i in $(seq 100); do
	grep -q '^state 1' "$t/log" 2>/dev/null && break
	sleep 0.05
done
kill -$sig $pid
wait $pid; sig_rc=$?
$NSDUMP -q -r "$t/$sig.ns" >/dev/null 2>"$t/err"
? [ $sig_rc -eq 0 ]
? [ "$(tail -1 "$t/log")" = "state 0" ]
? [ "$(tail -1 "$t/err")" = "10 blocks captured, 10 dropped by kernel" ]
END
done

cases <<'END'
= live: ABI mismatch refused
NSFAKE_ABI=1 live $NSDUMP >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: $t/raw: kernel speaks NetSlice ABI 1, this nsdump $(sed -n 's/^#define NSL_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$here/../../include/netslice.h")" ]
= live: an ABI 5 module is read (its items are ABI 6's)
NSFAKE_ABI=5 live $NSDUMP -q >/dev/null 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(tail -1 "$t/err")" = "10 blocks captured, 7 dropped by kernel" ]
END

# ---- sampling in the kernel: --sample, --sample-flows ----
for bad in "--sample 0" "--sample 16777217" "--sample 4x" "--sample -4" \
	   "--sample-flows 0" "--sample= 4"; do
	cases <<'END'
= $bad: exit 2, the range said
$NSDUMP $bad >"$t/out" 2>"$t/err"
? [ $rc -eq 2 ]
? [ ! -s "$t/out" ]
? grep -q "^nsdump: --sample.*: expected 1 in n \(packets\|flows\), n from 1 to 16777216$" "$t/err"
END
done
cases <<'END'
= --sample and --sample-flows: exit 2, one or the other
$NSDUMP --sample 4 --sample-flows 4 >/dev/null 2>"$t/err"
? [ $rc -eq 2 ]
? [ "$(cat "$t/err")" = "nsdump: --sample and --sample-flows: one or the other" ]
= --sample-flows with -r: exit 2, a file's sampling is its own
$NSDUMP --sample-flows 4 -r "$t/ten.ns" >/dev/null 2>"$t/err"
? [ $rc -eq 2 ]
? [ "$(cat "$t/err")" = "nsdump: --sample-flows applies to a device; a file's sampling is what it was written with" ]
= --json --sample 0: exit 2, the error as JSON
$NSDUMP --json --sample 0 >"$t/out" 2>/dev/null
? [ $rc -eq 2 ]
? [ "$(jl "$t/out" 'L[0]["error"]')" = "--sample 0: expected 1 in n packets, n from 1 to 16777216" ]

= live --sample 4: NSIOCSSAMPLE 4, then the kernel's counts on a line before the summary (awk \$9 taken, \$11 passed over)
rm -f "$t/log"
NSFAKE_TAKEN=512 NSFAKE_SKIPPED=1530 live $NSDUMP -q --sample 4 >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(grep '^sample' "$t/log")" = "sample 4 0" ]
? [ "$(tail -2 "$t/err" | head -1)" = "1 in 4 packets sampled in the kernel: 512 taken, 1530 passed over" ]
? [ "$(awk '/sampled in the kernel/ { print $3, $4, $9, $11 }' "$t/err")" = "4 packets 512 1530" ]
? [ "$(tail -1 "$t/err")" = "10 blocks captured, 7 dropped by kernel" ]
= live --sample 4: the report says so once, at its top; the table's n is the sampled count (10)
? [ "$(head -1 "$t/out")" = "# sampled: 1 in 4 packets (512 taken, 1530 passed over): counts are of sampled packets; x3.99 estimates all" ]
? [ "$(row "$t/out" write | cut -d' ' -f1)" = 10 ]
? [ "$(grep -c '^# sampled' "$t/out")" -eq 1 ]
= live --sample-flows 8 -w: NSIOCSSAMPLE 8 with NSL_SAMPLE_FLOWS, the flows' line
rm -f "$t/log"
NSFAKE_TAKEN=512 NSFAKE_SKIPPED=1530 live $NSDUMP --sample-flows 8 -w "$t/sampled.ns" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(grep '^sample' "$t/log")" = "sample 8 1" ]
? [ "$(tail -2 "$t/err" | head -1)" = "1 in 8 flows sampled in the kernel: 512 taken, 1530 passed over" ]
= -r of a sampled file, --json: the table's sample object (Python's json)
$NSDUMP --json -q -r "$t/sampled.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[[s["rate"], s["flows"], s["taken"], s["skipped"], abs(s["scale"] - 2042 / 512) < 1e-4] for s in [t["sample"] for t in T("table")]]')" = \
	  '[[8, true, 512, 1530, true]]' ]
= -r of a sampled file: the report's line, the file's counts; no kernel line
$NSDUMP -q -r "$t/sampled.ns" >"$t/out" 2>"$t/err"
? [ "$(head -1 "$t/out")" = "# sampled: 1 in 8 flows (512 taken, 1530 passed over): counts are of the sampled flows' packets; x3.99 estimates all" ]
? [ "$(tail -1 "$t/err")" = "10 blocks captured, 10 dropped by kernel" ]
? ! grep -q 'sampled in the kernel' "$t/err"
= -w: TRAILER sample_taken 512, sample_skipped 1530 beside the totals
python3 "$here/tracecount.py" "$t/sampled.ns" | python3 -c '
import json, sys
o = json.load(sys.stdin)["trailer"]
print(o["sample_taken"], o["sample_skipped"], o["blocks"])' >"$t/out"
? [ "$(cat "$t/out")" = "512 1530 10" ]
= -r sampled -w copy: the copy keeps the sampling
$NSDUMP -r "$t/sampled.ns" -w "$t/copy.ns" 2>/dev/null
$NSDUMP --json -q -r "$t/copy.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[[s["rate"], s["flows"], s["taken"], s["skipped"]] for s in [t["sample"] for t in T("table")]]')" = '[[8, true, 512, 1530]]' ]
= -r of a file without sampling: no sample object, no line
$NSDUMP --json -q -r "$t/live.ns" >"$t/out" 2>/dev/null
$NSDUMP -q -r "$t/live.ns" >"$t/out2" 2>/dev/null
? [ "$(jl "$t/out" '"sample" in T("table")[0]')" = false ]
? ! grep -q '^# sampled' "$t/out2"
= live --sample 1: set (every packet), counted, no scale line
rm -f "$t/log"
live $NSDUMP -q --sample 1 >"$t/out" 2>"$t/err"
? [ "$(grep '^sample' "$t/log")" = "sample 1 0" ]
? [ "$(tail -2 "$t/err" | head -1)" = "1 in 1 packets sampled in the kernel: 0 taken, 0 passed over" ]
? ! grep -q '^# sampled' "$t/out"
= live --sample 4, ABI 5 module: exit 1, the module's ABI named
NSFAKE_ABI=5 live $NSDUMP -q --sample 4 >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: $t/raw: --sample 4: this netslice.ko speaks ABI 5 and cannot sample (NSIOCSSAMPLE: Inappropriate ioctl for device); sampling in the kernel needs ABI 6" ]
= live --sample-flows 2, EINVAL from an ABI 6 module: exit 1, its ABI named
NSFAKE_ABI=6 NSFAKE_SAMPLE_ERR=22 live $NSDUMP -q --sample-flows 2 >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: $t/raw: --sample-flows 2: this netslice.ko (ABI 6) refused it: NSIOCSSAMPLE: Invalid argument" ]
END

# live event records: NSIOCSRECORDS on with -M / -p, off at the end
$MK -R -F 2 -G 1 -A -S "$t/evraw"
evlive() {
	NSDUMP_DEV=$t/evraw NSFAKE_LOG=$t/log ASAN_OPTIONS=verify_asan_link_order=0 \
	LD_PRELOAD=$(pwd)/$obj/fakedev.so TZ=UTC "$@"
}
cases <<'END'
= live -M: records on with TCP and IP (7), off (0) at exit
rm -f "$t/log"
evlive $NSDUMP -M >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(grep '^records' "$t/log" | tr '\n' ' ')" = "records 7 records 0 " ]
= live -M: event lines and Table III from the device
? [ "$(grep -c ' MAGNET_[A-Z_]* [0-9]* bytes' "$t/out")" -eq 60 ]
? grep -q '^conn 0x2a ' "$t/out"
? [ "$(tail -1 "$t/err")" = "19 blocks and 60 event records captured, 0 dropped by kernel" ]
= live -M --addr: records and the blocks' addresses (31); -p alone: ports only (9); --addr alone: FLOWADDR (16)
rm -f "$t/log"
evlive $NSDUMP -M --addr -q >/dev/null 2>&1
evlive $NSDUMP -p 43210.5201 -q >"$t/out" 2>/dev/null
evlive $NSDUMP --addr -q >/dev/null 2>&1
? [ "$(grep '^records' "$t/log" | tr '\n' ' ')" = "records 31 records 0 records 9 records 0 records 16 records 0 " ]
? [ "$(row "$t/out" tcp | cut -d' ' -f1)" = 16 ]
= live: NSIOCSRECORDS ENOTTY: one line, capture goes on, not switched off
rm -f "$t/log"
NSFAKE_RECORDS_ERR=25 evlive $NSDUMP -M -q >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(grep -c 'kernel does not produce event records' "$t/err")" -eq 1 ]
? [ "$(row "$t/out" tcp | cut -d' ' -f1)" = 16 ]
? [ "$(grep '^records' "$t/log" | tr '\n' ' ')" = "records 7 " ]
= live: NSIOCSRECORDS EPERM: exit 1 with the reason
NSFAKE_RECORDS_ERR=1 evlive $NSDUMP -M -q >/dev/null 2>"$t/err"
? [ $rc -eq 1 ]
? grep -q 'NSIOCSRECORDS: Operation not permitted' "$t/err"
= live without -M or -p: NSIOCSRECORDS not called
rm -f "$t/log"
evlive $NSDUMP -q >/dev/null 2>&1
? [ "$(grep -c '^records' "$t/log")" -eq 0 ]
= live -w: the file keeps the event records
evlive $NSDUMP -M -w "$t/evlive.ns" 2>/dev/null
TZ=UTC $NSDUMP -M -q -r "$t/evlive.ns" >"$t/out" 2>"$t/err"
? [ "$(tail -1 "$t/err")" = "19 blocks and 60 event records captured, 0 dropped by kernel" ]
? grep -q '^  MAGNET_SOCK_SEND         2    10240.0 ' "$t/out"
END

# ---- --json: every line of every mode is JSON, and says the truth ----
# (parsed by Python's json module, strictly: jsonl.py)
cases <<'END'
= --json -v: blocks' records in order, exact ticks and times
$NSDUMP --json -v -r "$t/ten.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[[r["region"] for r in T("block")[0]["records"]], T("block")[0]["records"][0]["ticks"], T("block")[3]["time_us"], T("block")[3]["records"][0]["us"]]')" = \
	  '[["write", "tcp", "tcp", "ip", "link", "nic"], 3000, 3.0, 4.0]' ]
= --json: the table's numbers as the text table's (write n 10 mean 5.5 p99 10 cv 0.522)
? [ "$(jl "$t/out" '[[r[k] for k in ("region", "n", "mean", "p99", "cv", "self_mean")] for r in T("table")[0]["regions"]][0]')" = \
	  '["write", 10, 5.5, 10.0, 0.5222, 4.66]' ]
= --json -q -c 3: one line, the table of 3 blocks
$NSDUMP --json -q -c 3 -r "$t/ten.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[len(L), L[0]["type"], L[0]["blocks"]]')" = '[1, "table", 3]' ]
= --json --rtt: raw 2 us, corrected 1.5 us over 8 samples
$NSDUMP --json -q --rtt -r "$t/pp.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[T("rtt")[0]["raw"], T("rtt")[0]["corrected"]["mean"]]')" = \
	  '[{"n": 8, "mean": 2.0, "p50": 2.0, "p99": 2.0}, 1.5]' ]
= --json -M -p: 12 rx blocks, 40 events, one connection
TZ=UTC $NSDUMP --json -M -p 43211.5201 -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[len(T("block")), len(T("event")), [c["conn"] for c in T("conn")]]')" = '[12, 40, [43]]' ]
= --json --dir tx: the table of the 80 send blocks
$NSDUMP --json --dir tx -q -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[r["n"] for r in T("table")[0]["regions"] if r["region"] == "tcp"]')" = '[80]' ]
= --calibrate --json: one line, every CPU's Table 2
$NSDUMP --calibrate --json -r "$t/cal.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ ! -s "$t/err" ]
? [ "$(jl "$t/out" '[len(L), L[0]["model"], L[0]["events"], [c["cpu"] for c in L[0]["cpus"]], L[0]["cpus"][1]["costs"][5]]')" = \
	  '[1, "Synthetic CPU @ 3.00GHz", ["cycles", "instructions"], [0, 1], {"macro": "NSA", "symbol": "tau_beta", "ns": 20.0, "ticks": 60, "min_ns": 19.0, "cv_pct": 0.4, "samples": 1000, "counts": [5, 6], "what": "a START/STOP pair, seen around it"}]' ]
= -L --json: a line per event (or note), software events with perf's alias
$NSDUMP -L --json >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(jl "$t/out" '[o["kind"] for o in T("event") if o["name"] == "context-switches"] + [o["alias"] for o in T("event") if o["name"] == "context-switches"]')" = \
	  '["software", "cs"]' ]
? [ "$(jl "$t/out" 'len(L) == len(T("event")) + len(T("note"))')" = true ]
= --version --json: version.h's version ($want), netslice.h's ABI ($abi), format $fmt, libpfm4
$NSDUMP --version --json >"$t/out" 2>/dev/null
want=$(sed -n 's/^#define NSDUMP_VERSION[[:space:]]*"\(.*\)"$/\1/p' "$here/../../nsdump/source/version.h")
abi=$(sed -n 's/^#define NSL_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$here/../../include/netslice.h")
fmt=$(sed -n 's/^#define NSF_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$here/../../nsdump/source/file.h")
? [ -n "$want" ]
? [ -n "$abi" ]
? [ -n "$fmt" ]
? [ "$(jl "$t/out" '[L[0]["version"], L[0]["abi"], L[0]["file_format"], L[0]["libpfm4"]]')" = "[\"$want\", $abi, $fmt, true]" ]
= --version: first line as tcpdump's, the version
? [ "$($NSDUMP --version | head -1)" = "nsdump version $want" ]

# errors under --json: {"error": ...} on stdout, nothing else there
= --json after a bad -c: exit 2, the error as JSON on stdout
$NSDUMP -c 0 --json >"$t/out" 2>"$t/err"
? [ $rc -eq 2 ]
? [ "$(jl "$t/out" L)" = '[{"error": "-c 0: count must be a positive integer"}]' ]
? ! grep -q '^nsdump:' "$t/err"
= --json -Z: unknown option as JSON
$NSDUMP --json -Z --dir >"$t/out" 2>/dev/null
? [ $rc -eq 2 ]
? [ "$(jl "$t/out" L)" = '[{"error": "unknown option -Z"}]' ]
= --json --dir without its argument: said as JSON
$NSDUMP --json -r "$t/ten.ns" --dir >"$t/out" 2>/dev/null
? [ $rc -eq 2 ]
? [ "$(jl "$t/out" L)" = '[{"error": "--dir needs an argument"}]' ]
= --json -r a path with a quote, a backslash, a control and a bad byte: one JSON error
bad=$(printf '%s/no\\such"\001\377file' "$t")
$NSDUMP --json -r "$bad" >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? [ ! -s "$t/err" ]
? [ "$(jl "$t/out" 'L == [{"error": b2s(b"'"$t"'/no\\such\"\x01\xfffile: No such file or directory")}]')" = true ]
= --json, a file cut inside a DATA record: the error with the offset, then the table of the 9 whole blocks
head -c $((size - 200)) "$t/ten.ns" >"$t/cutjson.ns"
$NSDUMP --json -q -r "$t/cutjson.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? [ "$(jl "$t/out" '[o.get("type") or " cut at offset '$((size - 200))': " in o["error"] for o in L] + [T("table")[0]["blocks"]]')" = '[true, "table", 9]' ]
= --json -w -: stdout is the trace, so the error goes to stderr, as JSON
$NSDUMP --json -w - -r "$bad" >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? [ ! -s "$t/out" ]
? [ "$(jl "$t/err" 'len(L)')" = 1 ]
= --calibrate --json without a calibration: exit 1, the error as JSON
$NSDUMP --json --calibrate -r "$t/ten.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? [ ! -s "$t/err" ]
? [ "$(jl "$t/out" L)" = '[{"error": "no calibration (the kernel offers none, or the file has no CALIB record)"}]' ]
END

# a file whose names hold quotes, backslashes, controls, bad UTF-8
$MK -n 4 -e 4 -N -C -Q "$t/nasty.ns"
names='[b2s(b"cyc\"les\\"), b2s(b"in\x01st\x1f\n\t"), b2s(b"\xff\xfe bad \xc3( \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf \xe2\x82"), b2s(b"ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f")]'
cases <<'END'
= --json: event names from the file, escaped, bad UTF-8 replaced as Python does, good UTF-8 kept
$NSDUMP --json -r "$t/nasty.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" 'T("table")[0]["events"] == '"$names")" = true ]
? [ "$(jl "$t/out" 'T("table")[0]["events"][3]')" = "ok é € 😀 $(printf '\177')" ]
= --calibrate --json: the CPU's and the events' names, every byte accounted for
$NSDUMP --json --calibrate -r "$t/nasty.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[L[0]["model"] == b2s(b"Model \"X\" \\ \x1b[31m \xc0\xaf\xf8"), L[0]["events"] == '"$names"']')" = '[true, true]' ]
END
for args in "-v" "-q" "-M" "-c 2" "--raw -v" "--rtt"; do
	cases <<'END'
= --json $args on the crafted file: every line parses
TZ=UTC $NSDUMP --json $args -r "$t/nasty.ns" >"$t/out" 2>/dev/null
? jl "$t/out"
END
done

# the device's path under --json (fakedev)
cases <<'END'
= live --json -q: the table, corrected
live $NSDUMP --json -q >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(jl "$t/out" '[len(L), L[0]["blocks"], L[0]["lost"], L[0]["corrected"]]')" = '[1, 10, 10, true]' ]
= live --json: NSIOCSEVENT refused, the error as JSON
NSFAKE_EVENT_ERR=95 live $NSDUMP --json -q -e cpu-clock >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? [ ! -s "$t/err" ]
? [ "$(jl "$t/out" L)" = "[{\"error\": \"$t/raw: NSIOCSEVENT cpu-clock: this netslice.ko cannot count events (durations only) (EOPNOTSUPP)\"}]" ]
= live --calibrate --json: the kernel's tau_o
live $NSDUMP --json --calibrate >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[c["ticks"] for c in L[0]["cpus"][0]["costs"] if c["macro"] == "NSO"]')" = '[30]' ]
END

# ---- pcap-filter expressions: gen.h's flows (IPv4 and IPv6, TCP, UDP,
# ICMP, one without IP) over 100 blocks; what each expression takes is
# counted by flows.py's own predicates from mkblocks -D's listing
$MK -f -n 100 "$t/flows.ns"
$MK -f -n 100 -D >"$t/flows.jsonl"
packets() { grep -c ' cpu [0-9]*: ' "$1"; }	# block lines
want_of() { python3 "$here/flows.py" "$t/flows.jsonl" "$@"; }
for expr in 'tcp' 'udp' 'ip' 'ip6' 'tcp port 5201 and host 192.0.2.2' \
	    'src port 80' 'net 10.0.0.0/8' 'dst host 2001:db8::2' 'icmp or icmp6' \
	    'not tcp' 'udp and dst port 53' 'portrange 5000-6000' 'greater 1000' \
	    'ip6 multicast' 'tcp and less 100'; do
	cases <<'END'
= expression '$expr': the $nwant of 100 blocks the flows say, and tcpdump's counts
nwant=$(want_of "$expr")
$NSDUMP -r "$t/flows.ns" "$expr" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(packets "$t/out")" = "$nwant" ]
? [ "$nwant" -gt 0 ]
? [ "$nwant" -lt 100 ]
? [ "$(tail -1 "$t/err")" = "$nwant blocks captured, 100 received by filter, 0 dropped by kernel" ]
END
done
cases <<'END'
= expression in several words, as tcpdump joins them
$NSDUMP -r "$t/flows.ns" tcp port 5201 and host 192.0.2.2 >"$t/out" 2>/dev/null
? [ "$(packets "$t/out")" = "$(want_of 'tcp port 5201 and host 192.0.2.2')" ]
= 'not tcp' leaves out the block without IP (no flow matches nothing)
$NSDUMP -r "$t/flows.ns" 'not tcp' >"$t/out" 2>/dev/null
? [ "$(grep -c ' conn 0x0 tx len 42 ' "$t/out")" -eq 0 ]
= blocks without a flow (ABI 1, family 0): 'tcp' takes none
$NSDUMP -q -r "$t/ten.ns" tcp >"$t/out" 2>"$t/err"
? [ "$(tail -1 "$t/err")" = "0 blocks captured, 10 received by filter, 0 dropped by kernel" ]
END
$MK -f -Z -n 100 "$t/noaddr.ns"
cases <<'END'
= blocks without addresses (no --addr): ports match, hosts never
$NSDUMP -r "$t/noaddr.ns" 'port 5201' >"$t/out" 2>/dev/null
$NSDUMP -r "$t/noaddr.ns" 'host 192.0.2.1' >"$t/out2" 2>/dev/null
? [ "$(packets "$t/out")" = "$(want_of 'port 5201')" ]
? [ "$(packets "$t/out2")" -eq 0 ]
? [ "$(want_of 'host 192.0.2.1')" -gt 0 ]

# the same through the JSON lines, and their flow fields
= --json ip6: every block IPv6, as many as the flows say
$NSDUMP --json -r "$t/flows.ns" ip6 >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[len(T("block")), sorted(set(b["family"] for b in T("block")))]')" = "[$(want_of ip6), [6]]" ]
= --json: flow fields, addresses as strings only where known
$NSDUMP --json -c 12 -r "$t/flows.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[{k: b.get(k) for k in ("family", "proto", "sport", "dport", "saddr", "daddr")} for b in [T("block")[i] for i in (0, 5, 8, 9)]] + ["saddr" in T("block")[9]]')" = \
	  '[{"family": 4, "proto": 6, "sport": 43210, "dport": 5201, "saddr": "192.0.2.1", "daddr": "192.0.2.2"}, {"family": 6, "proto": 6, "sport": 80, "dport": 43211, "saddr": "2001:db8::2", "daddr": "2001:db8::1"}, {"family": 4, "proto": 1, "sport": 0, "dport": 0, "saddr": "192.0.2.1", "daddr": "198.51.100.7"}, {"family": null, "proto": 0, "sport": null, "dport": null, "saddr": null, "daddr": null}, false]' ]
= --json, no addresses: no saddr or daddr keys
$NSDUMP --json -c 2 -r "$t/noaddr.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[sorted(k for k in b if k.endswith("addr") or k.endswith("port")) for b in T("block")]')" = \
	  '[["dport", "sport"], ["dport", "sport"]]' ]

# -c counts what passed; -w keeps only that, its trailer the truth
= -c 3 udp: three udp blocks, the filter saw the blocks up to the third
$NSDUMP -c 3 -r "$t/flows.ns" udp >"$t/out" 2>"$t/err"
? [ "$(packets "$t/out")" -eq 3 ]
? [ "$(tail -1 "$t/err")" = "3 blocks captured, $(want_of udp --upto 3) received by filter, 0 dropped by kernel" ]
= -w with an expression: the $nwant matching blocks in DATA, the trailer says $nwant (read by tracecount.py)
nwant=$(want_of 'tcp port 5201')
$NSDUMP -r "$t/flows.ns" -w "$t/w5201.ns" 'tcp port 5201' >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ ! -s "$t/out" ]
? [ "$(python3 "$here/tracecount.py" "$t/w5201.ns" | python3 -c 'import json,sys; o = json.load(sys.stdin); print(o["blocks"], o["loss_items"], o["trailer"])')" = \
	  "$nwant 0 {'blocks': $nwant, 'data_records': 1, 'event_records': 0, 'loss_items': 0, 'lost': 0}" ]
= -w with an expression: nsdump -r reads back those $nwant, each of port 5201
$NSDUMP -r "$t/w5201.ns" >"$t/out" 2>"$t/err"
? [ "$(packets "$t/out")" = "$nwant" ]
? [ "$(grep -c ':5201 ' "$t/out")" = "$nwant" ]
? [ "$(tail -1 "$t/err")" = "$nwant blocks captured, 0 dropped by kernel" ]
= -c 4 -w ip6: a file of the first 4 IPv6 blocks
$NSDUMP -r "$t/flows.ns" -c 4 -w "$t/wc.ns" ip6 2>/dev/null
? [ "$($NSDUMP --json -r "$t/wc.ns" 2>/dev/null | python3 "$here/jsonl.py" /dev/stdin '[b["family"] for b in T("block")]')" = '[6, 6, 6, 6]' ]
END
$MK -f -n 100 -l 10 "$t/flowloss.ns"
cases <<'END'
= -w with an expression keeps every loss item: 10 of 5 items
$NSDUMP -r "$t/flowloss.ns" -w "$t/wl.ns" udp 2>/dev/null
? [ "$(python3 "$here/tracecount.py" "$t/wl.ns" | python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["loss_items"], o["lost"], o["trailer"]["lost"], o["blocks"] == o["trailer"]["blocks"])')" = "10 50 50 True" ]

# a bad expression: libpcap's reason, exit 2; in JSON too
= bad expression: exit 2, one line with libpcap's reason
$NSDUMP -r "$t/flows.ns" 'tcp prot 80' >"$t/out" 2>"$t/err"
? [ $rc -eq 2 ]
? [ ! -s "$t/out" ]
? [ "$(cat "$t/err")" = "nsdump: expression 'tcp prot 80': can't parse filter expression: syntax error" ]
= --json, a link-layer expression on raw IP: exit 2, the error as JSON
$NSDUMP --json -r "$t/flows.ns" 'ether host 1:2:3:4:5:6' >"$t/out" 2>/dev/null
? [ $rc -eq 2 ]
? [ "$(jl "$t/out" 'L[0]["error"].startswith("expression '"'"'ether host 1:2:3:4:5:6'"'"': ethernet addresses")')" = true ]

# -i: the blocks of one interface (this machine's index for the name)
= -i lo: the $nwant blocks on ifindex $lo
lo=$(cat /sys/class/net/lo/ifindex)
nwant=$(python3 -c 'import json,sys; print(sum(json.loads(l)["ifindex"] == int(sys.argv[2]) for l in open(sys.argv[1])))' "$t/flows.jsonl" "$lo")
$NSDUMP -i lo -r "$t/flows.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(packets "$t/out")" = "$nwant" ]
? [ "$nwant" -gt 0 ]
? [ "$(tail -1 "$t/err")" = "$nwant blocks captured, 100 received by filter, 0 dropped by kernel" ]
= -i lo tcp: both conditions
$NSDUMP -i lo -r "$t/flows.ns" tcp >"$t/out" 2>/dev/null
? [ "$(packets "$t/out")" = "$(want_of tcp --ifindex "$lo")" ]
= -i any: every block, no filter
$NSDUMP -i any -q -r "$t/flows.ns" >/dev/null 2>"$t/err"
? [ "$(tail -1 "$t/err")" = "100 blocks captured, 0 dropped by kernel" ]
= -i an unknown interface: exit 2, said so
$NSDUMP -i nosuch0 -r "$t/flows.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 2 ]
? [ ! -s "$t/out" ]
? [ "$(cat "$t/err")" = "nsdump: -i nosuch0: no such interface here (ip link lists them; the device's path goes with --device)" ]
END

# time stamps: block i at 1700000000 s + i us (gen_info's reference)
stamps() {	# stamps ARGS...: the first three lines' stamps, '|' after each
	TZ=${TZ_:-UTC} $NSDUMP -c 3 "$@" -r "$t/flows.ns" 2>/dev/null | head -3 | sed 's/192\.0\.2\..*\|\[2001.*\|conn .*//' | tr '\n' '|'
}
cases <<'END'
= default: time of day in UTC
? [ "$(stamps)" = "22:13:20.000000 |22:13:20.000001 |22:13:20.000002 |" ]
= default: local time (TZ=JST-9)
? [ "$(TZ_=JST-9 stamps)" = "07:13:20.000000 |07:13:20.000001 |07:13:20.000002 |" ]
= -t: no stamp
? [ "$(stamps -t)" = "|||" ]
= -tt: seconds since the epoch, whatever TZ
? [ "$(TZ_=JST-9 stamps -tt)" = "1700000000.000000 |1700000000.000001 |1700000000.000002 |" ]
= -ttt: since the line before
? [ "$(stamps -ttt)" = " 00:00:00.000000 | 00:00:00.000001 | 00:00:00.000001 |" ]
= -tttt: date and time
? [ "$(stamps -tttt)" = "2023-11-14 22:13:20.000000 |2023-11-14 22:13:20.000001 |2023-11-14 22:13:20.000002 |" ]
= -ttttt: since the first line
? [ "$(stamps -ttttt)" = " 00:00:00.000000 | 00:00:00.000001 | 00:00:00.000002 |" ]
# events and blocks on one clock, in time order: the FTP example's
# SYSINFO (23:41:07.123456789 for its first event), -tt parsed; the
# last: write 9's last DEV_SEND, 180 ms + 89 + 1 us after the first
= -M -tt: 382 stamped lines (92 blocks), in time order, from 1795304467.123456, over 180.090 ms
TZ=UTC $NSDUMP -M -tt -r "$t/ftp.ns" >"$t/out" 2>/dev/null
python3 - "$t/out" >"$t/res" <<'PY'
import re, sys
stamps = [l.split(" ", 1) for l in open(sys.argv[1]) if re.match(r"\d+\.\d{6} ", l)]
t = [int(s.replace(".", "")) for s, _ in stamps]
print(len(t), sum(bool(re.search(r" cpu \d+: ", r)) for _, r in stamps),
      t == sorted(t), stamps[0][0], t[-1] - t[0])
PY
? [ "$(cat "$t/res")" = "382 92 True 1795304467.123456 180090" ]
= -M -ttt: the first DEV_SEND 1 us after its block
TZ=UTC $NSDUMP -M -ttt -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(grep -m1 MAGNET_DEV_SEND "$t/out" | cut -c1-17)" = " 00:00:00.000001 " ]
END

# expressions on the live path (fakedev): the blocks' addresses asked for
$MK -R -f -n 100 "$t/flowsraw"
# where the kernel runs it: NSL_FILTER_FLOW (1) for what reads the flow alone
filters() {	# the flags of the NSIOCSFILTER calls logged, '|' after each
	awk '$1 == "filter" { printf "%s|", $3 }' "$t/log"
}
cases <<'END'
= live expression: $nwant blocks; NSL_REC_FLOWADDR (16) asked for, off at the end
rm -f "$t/log"
nwant=$(want_of 'udp and dst port 53')
DEV=$t/flowsraw DROPS=0 live $NSDUMP 'udp and dst port 53' >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(packets "$t/out")" = "$nwant" ]
? [ "$(grep '^records' "$t/log" | tr '\n' ' ')" = "records 16 records 0 " ]
? [ "$(tail -1 "$t/err")" = "$nwant blocks captured, 100 received by filter, 0 dropped by kernel" ]
= live -M with an expression: records with TCP and IP, the blocks' addresses (23); the receiver's 3 blocks and 10 event records
rm -f "$t/log"
DEV=$t/evraw DROPS=0 live $NSDUMP -M -q 'port 43211' >"$t/out" 2>"$t/err"
? [ "$(grep '^records' "$t/log" | tr '\n' ' ')" = "records 23 records 0 " ]
? [ "$(tail -1 "$t/err")" = "3 blocks and 10 event records captured, 19 blocks and 60 event records received by filter, 0 dropped by kernel" ]
= live 'udp and dst port 53': proved flow-only, NSL_FILTER_FLOW; -v: at NSI
rm -f "$t/log"
NSFAKE_FILTER=1 DEV=$t/flowsraw live $NSDUMP -v -q 'udp and dst port 53' >/dev/null 2>"$t/err"
? [ "$(filters)" = "1|" ]
? grep -qx "nsdump: $t/flowsraw: the kernel filters at NSI: packets of other flows get no block at all" "$t/err"
= live 'udp and greater 100': reads the length, no flag; -v: before the ring
rm -f "$t/log"
NSFAKE_FILTER=1 DEV=$t/flowsraw live $NSDUMP -v -q 'udp and greater 100' >/dev/null 2>"$t/err"
? [ "$(filters)" = "0|" ]
? grep -qx "nsdump: $t/flowsraw: the kernel filters before the ring: the expression reads lengths or TCP sequence numbers, which NSI does not know" "$t/err"
= live, a module refusing the flag (EINVAL): the program again without it, the capture as before
rm -f "$t/log"
NSFAKE_ABI=6 NSFAKE_FILTER=5 DEV=$t/flowsraw DROPS=0 live $NSDUMP -v -q 'udp and dst port 53' >/dev/null 2>"$t/err"
? [ "$(filters)" = "1|0|" ]
? grep -q "filters before the ring: this netslice.ko (ABI 6) cannot filter at NSI" "$t/err"
? [ "$(tail -1 "$t/err")" = "$(want_of 'udp and dst port 53') blocks captured, 100 received by filter, 0 dropped by kernel" ]
= live, an ABI 5 module: the flag not even tried
rm -f "$t/log"
NSFAKE_FILTER=1 NSFAKE_ABI=5 DEV=$t/flowsraw live $NSDUMP -q 'udp and dst port 53' >/dev/null 2>&1
? [ "$(filters)" = "0|" ]
END

# ---- packaging: --help, the man page, the completion, make install ----
top=$here/../..
complete_for() {	# complete_for WORD...: what the completion offers for the last
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _nsdump; echo "${COMPREPLY[*]}"' \
		_ "$top/doc/nsdump.bash" "$@"
}
cases <<'END'
= --help: the synopsis, then each option of the table as before, byte for byte (data/help.txt)
$NSDUMP --help >"$t/help"
? cmp -s "$t/help" "$here/data/help.txt"
= --help: a line for each of the 32 options
grep -E '^  -' "$t/help" | sed 's/^  //; s/  .*//; s/ [^-].*//; s/, /\n/' | sort >"$t/help.opts"
? [ "$(wc -l <"$t/help.opts")" -eq 32 ]
= man -l nsdump.8: renders without a warning
MANWIDTH=80 man --warnings -l "$top/doc/nsdump.8" >"$t/man" 2>"$t/manwarn"
? [ ! -s "$t/manwarn" ]
? [ -s "$t/man" ]
= man page: an entry for every option of --help${missing:+ (missing:$missing)}
missing=
for o in $(cat "$t/help.opts"); do
	grep -qE -- "(^       |^       -h, )$o([ ,]|\$)" "$t/man" || missing="$missing $o"
done
? [ -z "$missing" ]
= man page: exit codes, the file format, environment, files${missing:+ (missing:$missing)}
missing=
for s in "EXIT STATUS" "Trace file format" ENVIRONMENT FILES; do
	grep -q "^ *$s\$" "$t/man" || missing="$missing '$s'"
done
? [ -z "$missing" ]
= bash completion: the options of --help, no more, no fewer
sed -n '/local opts="/,/"$/p' "$top/doc/nsdump.bash" | tr -s ' \t"=' '\n' |
	grep -E '^-' | sort >"$t/comp.opts"
? cmp -s "$t/help.opts" "$t/comp.opts"
= bash completion: --ca, --dir r, --by c, --export c, -e cycles,page-f complete
? [ "$(complete_for nsdump --ca)" = --calibrate ]
? [ "$(complete_for nsdump --dir r)" = rx ]
? [ "$(complete_for nsdump --by c)" = "conn cpu" ]
? [ "$(complete_for nsdump --export c)" = chrome-trace ]
? [ "$(complete_for nsdump --export p)" = pcapng ]
? [ "$(PATH=$(pwd)/$obj:$PATH complete_for nsdump -e cycles,page-f)" = cycles,page-faults ]
= bash completion: -i an interface here or any, --device a path
? [ "$(complete_for nsdump -i lo)" = lo ]
? [ "$(complete_for nsdump -i an)" = any ]
? [ "$(complete_for nsdump --device /dev/nul)" = /dev/null ]
? [ "$(complete_for nsdump -ttt)" = "" ]

# make install: PREFIX and DESTDIR, the four files and nothing else
= make install DESTDIR PREFIX=/usr: bin, share/man/man8, share/bash-completion/completions, Wireshark's Lua plugins
make -s --no-print-directory -C "$top" install DESTDIR="$t/root" PREFIX=/usr \
	>"$t/out" 2>&1
lua=./usr/lib/$(cc -print-multiarch)/wireshark/plugins/netslice.lua
? [ $rc -eq 0 ]
? [ "$(cd "$t/root" && find . -type f | sort | tr '\n' ' ')" = \
	"./usr/bin/nsdump $lua ./usr/share/bash-completion/completions/nsdump ./usr/share/man/man8/nsdump.8 " ]
= make install: the binary runs (its --version), man page and completion as in doc/
? [ -x "$t/root/usr/bin/nsdump" ]
? cmp -s "$top/doc/nsdump.8" "$t/root/usr/share/man/man8/nsdump.8"
? cmp -s "$top/doc/nsdump.bash" "$t/root/usr/share/bash-completion/completions/nsdump"
? cmp -s "$top/contrib/wireshark/netslice.lua" "$t/root/$lua"
? [ "$("$t/root/usr/bin/nsdump" --version | head -1)" = "nsdump version $want" ]
= make install: PREFIX defaults to /usr/local
make -s --no-print-directory -C "$top" install DESTDIR="$t/root2" >/dev/null 2>&1
? [ -x "$t/root2/usr/local/bin/nsdump" ]

# every trace file nsdump writes says who wrote it (a WRITER record, kind
# 64) in a record this nsdump's own reader skips by length
= -w: a WRITER record after the layout, before EVENTS and CALIB, CRC right (zlib's), its text exact
$NSDUMP -r "$t/cal.ns" -w "$t/w.ns" 2>/dev/null
python3 "$here/tracecount.py" "$t/w.ns" | python3 -c '
import json, sys
o, text = json.load(sys.stdin), "program=nsdump\nversion=%s\n" % sys.argv[1]
print(o["kinds"], o["writer"] == text + "\0" * (-len(text) % 8))' "$want" >"$t/out"
? [ "$(cat "$t/out")" = "[1, 2, 7, 64, 3, 4, 5, 6] True" ]
END

# ---- a build without libpfm4 (its header hidden): files, durations, and
# -e and -L that say why not
mkdir -p "$t/poison/perfmon"
echo '#error libpfm4 hidden by the test' >"$t/poison/perfmon/pfmlib_perf_event.h"
NOPFM=$t/nopfm/nsdump
cases <<'END'
= no libpfm4: nsdump builds (detected at compile time), not linked to libpfm
make -s --no-print-directory -C "$top/nsdump" O="$t/nopfm" CPPFLAGS="-I$t/poison" \
	"$t/nopfm/nsdump" >"$t/out" 2>&1
? [ $rc -eq 0 ]
? grep -q "building without libpfm4" "$t/out"
? ! readelf -d "$t/nopfm/nsdump" | grep -q 'NEEDED.*libpfm'
= no libpfm4: reads a file (events named by its EVENTS), the same table
$NOPFM -q -r "$t/cal.ns" >"$t/out1" 2>&1
$NSDUMP -q -r "$t/cal.ns" >"$t/out2" 2>&1
? cmp -s "$t/out1" "$t/out2"
= no libpfm4: -e says so, exit 1 (usage errors still 2)
$NOPFM -e cycles -r "$t/ten.ns" >/dev/null 2>&1; rc1=$?
$NOPFM -e cycles --device /dev/null >/dev/null 2>"$t/err"; rc2=$?
? [ $rc1 -eq 2 ]
? [ $rc2 -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: -e cycles: this nsdump was built without libpfm4, which names counter events: install libpfm4-dev and rebuild for -e and -L" ]
= no libpfm4: -L says so, exit 1
$NOPFM -L >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? [ ! -s "$t/out" ]
? grep -q '^nsdump: -L: this nsdump was built without libpfm4' "$t/err"
= no libpfm4: -L --json, the error as JSON
$NOPFM --json -L >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" 'L[0]["error"].startswith("-L: this nsdump was built without libpfm4")')" = true ]
= --version says whether libpfm4 is in
? [ "$($NOPFM --version | sed -n 3p)" = "libpfm4: no (built without it: no -e, no -L)" ]
? [ "$($NSDUMP --version | sed -n 3p)" = "libpfm4: yes" ]
= no libpfm4: the device in duration mode, corrected
rm -f "$t/log"
live $NOPFM -q >"$t/out" 2>/dev/null
? [ "$(row "$t/out" write | cut -d' ' -f1-2)" = "10 5.410" ]
END

# ---- distributions: p50, p90, p99, p99.9, max; --by conn|cpu|dir ----
$MK -n 100000 "$t/many.ns"
cases <<'END'
= dist: write 1..10 us: p50 5 p90 9 p99 p99.9 max 10, exact (no ~)
$NSDUMP -q -r "$t/ten.ns" >"$t/out" 2>/dev/null
? [ "$(awk '$1 == "dist" && $2 == "write" { $1 = $2 = ""; print }' "$t/out" | tr -s ' ' | sed 's/^ //')" = \
	  "10 5.500 5.000 9.000 10.000 10.000 10.000" ]
= dist: 100000 blocks, past the store: the histogram's p90 8.997 us for 9 (27000 ticks kept as 26992, 0.03 % below), the others on counter edges
$NSDUMP -q -r "$t/many.ns" >"$t/out" 2>/dev/null
? [ "$(awk '$1 == "dist" && $2 == "write" { $1 = $2 = ""; print }' "$t/out" | tr -s ' ' | sed 's/^ //')" = \
	  "100000 5.500 5.000~ 8.997~ 10.000~ 10.000~ 10.000" ]
? grep -q '^# ~: percentile from the log-linear histogram (past 65536 values per region), within 0.098 % of the true one$' "$t/out"
= --by cpu: blocks 0, 2, .. on cpu 0 (1, 3, .. 9 us), the others on cpu 1 (2 .. 10 us)
$NSDUMP -q --by cpu -r "$t/ten.ns" >"$t/out" 2>/dev/null
? [ "$(awk '$1 == "by" && $4 == "write"' "$t/out" | tr -s ' ')" = \
"by cpu 0 write 5 5.000 5.000~ 9.000~ 9.000~ 9.000~ 9.000
by cpu 1 write 5 6.000 6.000~ 10.000~ 10.000~ 10.000~ 10.000" ]
= --by dir: the FTP example's 80 send and 12 receive blocks, each region's mean
TZ=UTC $NSDUMP -q --by dir -r "$t/ftp.ns" >"$t/out" 2>/dev/null
? [ "$(awk '$1 == "by" { print $3, $4, $5, $6 }' "$t/out" | tr '\n' ' ')" = \
	"tx tcp 80 0.200 tx ip 80 0.200 tx nic 80 1.000 rx rx-nic 12 0.100 rx rx-ip 12 0.200 rx rx-tcp 12 0.300 " ]
= --by conn: the ping-pong's two connections, 5 blocks each
$NSDUMP -q --by conn --rtt -r "$t/pp.ns" >"$t/out" 2>/dev/null
? [ "$(awk '$1 == "by" && $4 == "write" { print $3, $5 }' "$t/out" | tr '\n' ' ')" = "0x41 5 0x42 5 " ]
= --by cpu --json: a line per CPU after the table, the regions' percentiles
$NSDUMP --json -q --by cpu -r "$t/ten.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[[o["key"], o["regions"][0]["region"], o["regions"][0]["p90"], o["regions"][0]["max"]] for o in T("by")] + [L[0]["type"], L[0]["regions"][0]["p90"], L[0]["regions"][0]["p999"]]')" = \
	  '[[0, "write", 9.0, 9.0], [1, "write", 10.0, 10.0], "table", 9.0, 10.0]' ]
= --by dev: write's n per ifindex of a file (no names: another host's; no devices: namespace unknown) as the flows say ($want)
$NSDUMP -q --by dev -r "$t/flows.ns" >"$t/out" 2>/dev/null
want=$(python3 -c 'import json,sys,collections; c=collections.Counter(json.loads(l)["ifindex"] for l in open(sys.argv[1])); print(" ".join("%s %d" % ("if%d" % k if k else "none", n) for k, n in sorted(c.items())))' "$t/flows.jsonl")
got=$(awk '$1 == "by" && $4 == "write" { print $3, $5 }' "$t/out" | tr '\n' ' ' | sed 's/ $//')
? [ "$got" = "$want" ]
= --by host: exit 2, what is expected
$NSDUMP --by host -r "$t/ten.ns" >/dev/null 2>"$t/err"
? [ $rc -eq 2 ]
? grep -q "^nsdump: --by host: expected conn, cpu, dir or dev$" "$t/err"
END

# ---- the devices a packet crossed (ABI 6): gen.h's three paths, ours in
# this shell's network namespace
ns=$(stat -Lc %i /proc/self/ns/net)
ct=4026532253
$MK -n 9 -W "$ns" "$t/dev.ns"
$MK -R -K -n 3 -W "$ns" "$t/devraw"
byrow() { awk -v k="$1" -v r="$2" '$1 == "by" && $3 == k && $4 == r { print $5, $6 }' "$t/out"; }
cases <<'END'
= devices: the line view's path, numbers from a file (if<index>@<netns>/<dir>, '>' between)
TZ=UTC $NSDUMP -r "$t/dev.ns" >"$t/out" 2>/dev/null
? [ "$(sed -n 1p "$t/out")" = "22:13:20.000000 conn 0x2a tcp tx len 1448 seq 1000 dev if9@$ns/tx>if1@$ns/tx cpu 0: write 1.000 tcp 0.100+0.040 ip 0.200 link 0.500+0.300 nic 10.000" ]
? [ "$(sed -n 2p "$t/out" | cut -d' ' -f10-11)" = "dev if8@$ns/tx>if2@$ct/rx" ]
? [ "$(sed -n 3p "$t/out" | cut -d' ' -f10-11)" = "dev if6@$ns/tx" ]
= devices: -v lists each device and its records
$NSDUMP -v -c 1 -r "$t/dev.ns" >"$t/out" 2>/dev/null
? grep -qx "    dev 0 if9@$ns tx ifindex 9 netns $ns first 4: \[0\] write \[1\] tcp \[2\] tcp \[3\] ip \[4\] link" "$t/out"
? grep -qx "    dev 1 if1@$ns tx ifindex 1 netns $ns first 5: \[5\] link \[6\] nic" "$t/out"
= devices --json: the devices array, each record's device
$NSDUMP --json -c 2 -r "$t/dev.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[[[d["ifindex"], d["netns"], d["dir"], d["first"], "name" in d] for d in o["devices"]] + [[r.get("dev") for r in o["records"]]] for o in T("block")]')" = \
	  "[[[9, $ns, \"tx\", 4, false], [1, $ns, \"tx\", 5, false], [0, 0, 0, 0, 0, 1, 1]], [[8, $ns, \"tx\", 4, false], [2, $ct, \"rx\", 5, false], [0, 0, 0, 0, 0, 1]]]" ]
= devices --json: a block without devices: an empty array, no record's dev
$NSDUMP --json -c 1 -r "$t/ten.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[T("block")[0]["devices"], ["dev" in r for r in T("block")[0]["records"]].count(True)]')" = "[[], 0]" ]
= devices: -i lo takes the 3 blocks that crossed ifindex 1 here, not the last device's alone
$NSDUMP -i lo -r "$t/dev.ns" >"$t/out" 2>"$t/err"
? [ "$(packets "$t/out")" = 3 ]
? [ "$(grep -c "dev if9@$ns/tx>if1@$ns/tx cpu" "$t/out")" = 3 ]
= devices: -i if2@$ct, a container's device as the lines print it
$NSDUMP -i "if2@$ct" -r "$t/dev.ns" >"$t/out" 2>/dev/null
? [ "$(packets "$t/out")" = 3 ]
? [ "$(grep -c "dev if8@$ns/tx>if2@$ct/rx cpu" "$t/out")" = 3 ]
= devices: -i if2@<ours>: another namespace's ifindex 2 is not ours
$NSDUMP -i "if2@$ns" -q -r "$t/dev.ns" >/dev/null 2>"$t/err"
? [ "$(tail -1 "$t/err")" = "0 blocks captured, 9 received by filter, 0 dropped by kernel" ]
= --by dev: each device its own device regions: VLAN link 0.5 us, lo under it link 0.3 and nic 10, the container's rx-link 0.2; no device takes write or ip
$NSDUMP -q --by dev -r "$t/dev.ns" >"$t/out" 2>/dev/null
? [ "$(byrow "if9@$ns" link)" = "3 0.500" ]
? [ "$(byrow "if1@$ns" link)" = "3 0.300" ]
? [ "$(byrow "if1@$ns" nic)" = "3 10.000" ]
? [ "$(byrow "if9@$ns" nic)" = "" ]
? [ "$(byrow "if1@$ns" write)" = "" ]
? [ "$(byrow "if9@$ns" write)" = "" ]
? [ "$(byrow "if9@$ns" ip)" = "" ]
? [ "$(byrow "if2@$ct" rx-link)" = "3 0.200" ]
? [ "$(byrow "if8@$ns" rx-link)" = "" ]
= --by dev: the heading says how records are attributed
? grep -q "^# by dev: a block under each device it crossed, with that device's records only" "$t/out"
= --by dev --json: key, ifindex, netns per device
$NSDUMP --json -q --by dev -r "$t/dev.ns" >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[[o["key"], o["ifindex"], o["netns"], [g["region"] for g in o["regions"]]] for o in T("by") if o["ifindex"] in (1, 2)]')" = \
	  "[[\"if1@$ns\", 1, $ns, [\"link\", \"nic\"]], [\"if2@$ct\", 2, $ct, [\"rx-link\"]]]" ]
= devices live: a device of ours by its name (lo), the others by number
DEV=$t/devraw live $NSDUMP -v >"$t/out" 2>/dev/null
? [ "$(grep -c "dev if9@$ns/tx>lo/tx cpu" "$t/out")" = 1 ]
? [ "$(grep -c "dev if8@$ns/tx>if2@$ct/rx cpu" "$t/out")" = 1 ]
? grep -q "^    dev 1 lo tx ifindex 1 netns $ns first 5:" "$t/out"
= devices live --json: name only where it resolves
DEV=$t/devraw live $NSDUMP --json -c 1 >"$t/out" 2>/dev/null
? [ "$(jl "$t/out" '[d.get("name") for d in T("block")[0]["devices"]]')" = '[null, "lo"]' ]
= a format-3 file still reads
cp "$t/ten.ns" "$t/v3.ns"
printf '\003' | dd of="$t/v3.ns" bs=1 seek=8 conv=notrunc 2>/dev/null
$NSDUMP -q -r "$t/v3.ns" >"$t/out" 2>/dev/null
? [ "$(row "$t/out" write | cut -d' ' -f1-2)" = "10 5.500" ]
END

# ---- --serve: its options, its socket, the device set up and let go ----
"$obj/mkagg" "$t/a.agg" >/dev/null || exit 1
"$obj/mkagg" -z "$t/none.agg" >/dev/null || exit 1
serve_bg() {	# serve_bg COMMAND...: in the background, stderr in $t/serr; $spid, $port
	# A server before this one left its port in $t/serr, and the child's
	# redirection may truncate it only after the loop below has read it:
	# gone first, the file holds this server's words or nothing.
	rm -f "$t/serr"
	"$@" >/dev/null 2>"$t/serr" &
	spid=$!
	# Up to 30 s: an ASan build started under a loaded host (a kernel
	# building beside make check) once took more than 5.
	for i in $(seq 600); do
		grep -qs "serving http" "$t/serr" && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.05
	done
	port=$(sed -n 's|.*serving http://.*:\([0-9]*\)/metrics.*|\1|p' "$t/serr")
}
serve_end() {	# SIGTERM to $spid; its status in $rc
	kill -TERM $spid 2>/dev/null
	wait $spid
	rc=$?
}
cases <<'END'
= live while the kernel aggregates (a --serve before): the capture says it gets only exemplars
NSDUMP_AGG="$t/a.agg" live $NSDUMP -q >/dev/null 2>"$t/err"
? [ $rc -eq 0 ]
? grep -qx "nsdump: $t/raw: aggregate mode is on (nsdump --serve): the kernel folds every block into its histograms, and this capture gets no block" "$t/err"
= live, the kernel not aggregating: not a word of it
NSDUMP_AGG="$t/none.agg" live $NSDUMP -q >/dev/null 2>"$t/err"
? ! grep -q "aggregate mode" "$t/err"
END

cases <<'END'
= --serve localhost:x: exit 2, the form said
$NSDUMP --serve localhost:x >"$t/out" 2>"$t/err"
? [ $rc -eq 2 ]
? grep -q "^nsdump: --serve localhost:x: expected \[ADDR:\]PORT" "$t/err"
= --serve ::1:9 (no brackets), 70000: exit 2
$NSDUMP --serve ::1:9 2>/dev/null; a=$?; $NSDUMP --serve 70000 2>/dev/null
? [ $a -eq 2 ] && [ $rc -eq 2 ]
= --exemplars without --serve, a bad spec, -w without --exemplars, --serve -r: exit 2, each said
$NSDUMP --exemplars all 2>"$t/e1"; a=$?
$NSDUMP --serve 0 --exemplars 'foo>p99' 2>"$t/e2"; b=$?
$NSDUMP --serve 0 -w "$t/x.ns" 2>"$t/e3"; c=$?
$NSDUMP --serve 0 -r "$t/ten.ns" 2>"$t/e4"
? [ $a$b$c$rc = 2222 ]
? grep -q "exemplars goes with --serve" "$t/e1"
? grep -q "expected all, REGION>p99 or REGION>TIME" "$t/e2"
? grep -q "^nsdump: -w with --serve applies to the exemplars' capture: add --exemplars" "$t/e3"
? grep -q "not with -r" "$t/e4"
= --serve on a port in use: exit 1, the address and why
serve_bg env NSDUMP_AGG="$t/a.agg" NSDUMP_DEV=/nonexistent $NSDUMP --serve 0
NSDUMP_AGG="$t/a.agg" $NSDUMP --serve "127.0.0.1:$port" >"$t/out" 2>"$t/err"; busy=$?
serve_end
? [ -n "$port" ] && [ $busy -eq 1 ]
? [ "$(cat "$t/err")" = "nsdump: --serve 127.0.0.1:$port: 127.0.0.1 port $port: Address already in use" ]
? [ $rc -eq 0 ]
= --serve on an address not of this host: exit 1
NSDUMP_AGG="$t/a.agg" $NSDUMP --serve 192.0.2.1:0 >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? grep -q "192.0.2.1 port 0: Cannot assign requested address" "$t/err"
= --serve without the module (no NSDUMP_AGG): exit 1, the device named
NSDUMP_AGG= NSDUMP_DEV=$t/nodev $NSDUMP --serve 0 >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? grep -q "^nsdump: $t/nodev: no such device" "$t/err"
= live --serve: NSIOCSAGG on, collection on and left on, the device let go; 404 elsewhere
rm -f "$t/log"
serve_bg env NSDUMP_AGG="$t/a.agg" NSDUMP_DEV=$t/raw NSFAKE_LOG=$t/log ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$(pwd)/$obj/fakedev.so $NSDUMP --serve 0
code=$(curl -s --retry 3 --retry-connrefused -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/nothing")
curl -s --retry 3 --retry-connrefused "http://127.0.0.1:$port/metrics" >"$t/out"
serve_end
? [ $rc -eq 0 ]
? [ "$(grep -v '^calib' "$t/log" | tr '\n' '|')" = "agg 1 0 0|state 1|" ]
? [ "$code" = 404 ] || { echo "# /nothing: HTTP code $code"; false; }
? grep -qx "netslice_up 1" "$t/out"
= live --serve, an ABI 6 module: exit 1, aggregate mode needs ABI 7
NSFAKE_ABI=6 NSDUMP_AGG= live $NSDUMP --serve 0 >"$t/out" 2>"$t/err"
? [ $rc -eq 1 ]
? grep -q "this netslice.ko speaks ABI 6: aggregate mode needs ABI 7" "$t/err"
= live --serve --exemplars 'queue>50us' -w: NSIOCSAGG with them, the stream's 10 blocks in the file; at its end (SIGINT) exemplars off, collection left on
rm -f "$t/log"
NSDUMP_AGG="$t/a.agg" live $NSDUMP --serve 0 --exemplars 'queue>50us' -w "$t/ex.ns" >"$t/out" 2>"$t/err"
? [ $rc -eq 0 ]
? [ "$(grep '^agg\|^state' "$t/log" | tr '\n' '|')" = "agg 1 10 50000|state 1|agg 1 0 0|" ]
? $NSDUMP -q -r "$t/ex.ns" 2>&1 | grep -q "^10 blocks captured"
END

exit $((failed > 0))
