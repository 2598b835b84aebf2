#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NetSlice's overhead, as the paper's Table 3, plus its Fig. 5 check.
#
#   bench/overhead.sh [-R rounds] [-N iterations] [-t seconds] [-c I,II,III,IV]
#                     [-o dir] [--allow-stale]
#       drives the VM (tests/vm/run-vm.sh): one fresh VM per configuration
#       per round, interleaved I, II, III, IV, I, II, ... so a slow phase of
#       the host hits every configuration alike; medians per configuration;
#       ratios to I.  Output: a text table on stdout and
#       <dir>/overhead.{txt,json} (default dir build/bench).  It stops
#       when the stock image was built from an older config fragment than
#       the NetSlice one (they must differ in CONFIG_NETSLICE only: e.g.
#       without ACPI the stock guest has 1 CPU and a jiffies clock);
#       --allow-stale runs anyway, with a warning in the table.
#   bench/overhead.sh --local CONFIG [-N iterations] [-t seconds] [--out FILE]
#       runs one configuration's measurements on the running kernel (in the
#       VM, or on bare metal booted into the right kernel) and writes one
#       JSON object to FILE (default stdout).
#
# Configurations:
#   I    stock 6.12, no NetSlice (build/linux-stock/.../bzImage, built
#        here when missing or out of date, or KIMAGE_STOCK=)
#   II   NetSlice core built in, netslice.ko loaded, collection off
#        (insmod netslice.ko enable=0): the cost of the hooks alone
#   III  collecting durations: nsdump -q -w FILE on tmpfs draining /dev/ns
#   IIIn III with the reader woken for every item (wakeup_bytes=1
#        wakeup_us=0), as before batched wake-ups: not in the default set
#   IIIs III sampling 1 in 10 packets at NSI (nsdump --sample 10): what
#        a profiler left on costs; not in the default set
#   IIIf III with an expression no packet of the bench matches ('port 9',
#        run by the kernel at NSI): what NetSlice costs the packets nobody
#        asked about; not in the default set
#   IV   collecting with counters in count mode: nsdump -e cycles,instructions
#        where a PMU exists, -e cpu-clock where not (QEMU TCG)
#   V    the peer a user would pick instead: I's stock image with
#        bpftrace bench/peer.bt timing the same regions (write, ip, link,
#        rx-link, rx-ip, read) with kprobes and hist() while the same
#        measurements run; bpftrace comes from the host (make bench
#        installs it).  Its output (probes attached, events per histogram,
#        the histograms) goes into the result.  The summary sets what V
#        adds to lat_tcp's round trip beside what III and IV add.
#
# Measurements per configuration (bench/lat_tcp, bench/tcp_stream):
#   lat      lat_tcp round trip, 4-byte messages over loopback, N timed
#            round trips after N/10 warm-up: median and mean (us)
#   lo       tcp_stream over loopback, t seconds (Mbit/s)
#   nic      tcp_stream to the peer namespace through the NIC, t seconds
#            (Mbit/s; needs NS_PEER_NS/NS_PEER_IP, as the VM sets them)
#   fig5     (III and IV) the lat_tcp run's round trip as nsdump --rtt derives
#            it from the blocks (formula 5), raw and corrected, against what
#            lat_tcp measured: relative error of the medians
#   peer     (V) bpftrace runs across all three; it must have attached every
#            probe within PEER_ATTACH_S seconds (default 300: under TCG its
#            LLVM compile is slow) or V fails, saying why
#
# Environment: everything tests/vm/run-vm.sh reads (VM_TIMEOUT, VM_SMP, ...);
# KIMAGE_STOCK and KIMAGE_NETSLICE override the two images; BPFTRACE the
# bpftrace binary (V), PEER_ATTACH_S its attach bound.
# Exit status: 0 done (a failed VM run is reported and left out of the
# medians), 1 nothing measured / error, 2 bad usage.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=3 ITERS=2000 SECS=3 CONFIGS=I,II,III,IV,V OUTDIR=$REPO/build/bench
LOCAL= OUT=- ALLOW_STALE=0

usage() {
	sed -n '/^#   bench/,/^#$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
while (($#)); do
	case $1 in
	-R) ROUNDS=$2; shift ;;
	-N) ITERS=$2; shift ;;
	-t) SECS=$2; shift ;;
	-c) CONFIGS=$2; shift ;;
	-o) OUTDIR=$2; shift ;;
	--local) LOCAL=$2; shift ;;
	--out) OUT=$2; shift ;;
	--allow-stale) ALLOW_STALE=1 ;;
	-h|--help) usage ;;
	*) echo "overhead.sh: unknown argument '$1'" >&2; usage ;;
	esac
	shift
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $ITERS =~ ^[1-9][0-9]*$ && $SECS =~ ^[0-9.]+$ ]] ||
	{ echo "overhead.sh: -R, -N, -t must be positive numbers" >&2; exit 2; }

# ---------------------------------------------------------------- local --

json_get() { python3 -c 'import json,sys
o = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(o[sys.argv[2]])' "$1" "$2" 2>/dev/null; }

wait_port_file() {
	local i
	for ((i = 0; i < 200; i++)); do
		[[ -s $1 ]] && return 0
		sleep 0.05
	done
	return 1
}

# run_lat <outfile>: lat_tcp over loopback
run_lat() {
	local pf=$W/lat.port
	rm -f "$pf"
	"$REPO/bench/lat_tcp" -s -n -b 127.0.0.1 -p 0 --port-file "$pf" >/dev/null 2>&1 &
	local srv=$!
	wait_port_file "$pf" || return 1
	timeout 600 "$REPO/bench/lat_tcp" -c 127.0.0.1 -p "$(cat "$pf")" \
		-W $((ITERS / 10)) -N "$ITERS" --json >"$1"
	local rc=$?
	wait $srv
	return $rc
}

# run_stream <outfile> <addr> [netns]
run_stream() {
	local pf=$W/stream.port pre=()
	[[ -n ${3:-} ]] && pre=(ip netns exec "$3")
	rm -f "$pf"
	"${pre[@]}" "$REPO/bench/tcp_stream" -s -n -b "$2" -p 0 --port-file "$pf" >/dev/null 2>&1 &
	local srv=$!
	wait_port_file "$pf" || return 1
	timeout 120 "$REPO/bench/tcp_stream" -c "$2" -p "$(cat "$pf")" -t "$SECS" --json >"$1"
	local rc=$?
	wait $srv
	return $rc
}

nsdump_start() { # <file> [events]
	local ev=()
	[[ -n ${2:-} ]] && ev=(-e "$2")
	# --cold: the file keeps the cold calibration too, the other bound
	# of Fig. 5's correction.  NSDUMP_ARGS: the configuration's choice
	# of packets (IIIs, IIIf).
	"$NSDUMP" -q --cold "${ev[@]}" "${NSDUMP_ARGS[@]}" -w "$1" 2>"$1.err" &
	NSD=$!
	# Open, events set, calibrated: the file has its header by then.
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -s $1 ]] && break
		kill -0 $NSD 2>/dev/null || return 1
		sleep 0.05
	done
	sleep 0.2
}
nsdump_stop() {
	kill -INT "$NSD" 2>/dev/null
	wait "$NSD"
}

# peer_start <prefix>: bpftrace bench/peer.bt in the background (V), its
# stdout in <prefix>.out, stderr in <prefix>.err.  Returns once every probe
# is attached: bpftrace prints "Attaching N probes..." before it attaches
# them, and, asked by __BPFTRACE_NOTIFY_PROBES_ATTACHED (its own test
# hook, 0.17 on stderr, later on stdout), a line after the last one.
# Returns 1, saying why, when bpftrace exits first or misses the bound.
peer_start() {
	local p=$1 i rc
	PEER=
	BPFTRACE=${BPFTRACE:-$(command -v bpftrace)}
	if [[ -z $BPFTRACE ]]; then
		echo "overhead.sh: config V needs bpftrace, not installed (make bench installs it)" >&2
		return 1
	fi
	# bpftrace reads tracefs (debugfs/tracing first); mount it if missing.
	[[ -e /sys/kernel/debug/tracing/kprobe_events || -e /sys/kernel/tracing/kprobe_events ]] ||
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	__BPFTRACE_NOTIFY_PROBES_ATTACHED=1 "$BPFTRACE" "$REPO/bench/peer.bt" \
		>"$p.out" 2>"$p.err" &
	PEER=$!
	PEER_T0=$SECONDS
	for ((i = 0; i < ${PEER_ATTACH_S:-300} * 10; i++)); do
		grep -qs '^__BPFTRACE_NOTIFY_PROBES_ATTACHED' "$p.err" "$p.out" && {
			PEER_ATTACH=$((SECONDS - PEER_T0))
			return 0
		}
		if ! kill -0 "$PEER" 2>/dev/null; then
			wait "$PEER"
			rc=$?
			PEER=
			echo "overhead.sh: bpftrace exited ($rc) before attaching its probes:" >&2
			grep -v 'WARNING: .* is not traceable' "$p.err" "$p.out" | tail -5 | sed 's/^/  /' >&2
			return 1
		fi
		sleep 0.1
	done
	echo "overhead.sh: bpftrace did not attach within ${PEER_ATTACH_S:-300} s ($(
		grep -h '^Attaching' "$p.out" || echo 'no "Attaching N probes..." line'))" >&2
	peer_stop
	return 1
}
# peer_stop: SIGINT, as ^C: bpftrace detaches, runs END, prints the maps.
peer_stop() {
	local i
	[[ -n ${PEER:-} ]] || return 0
	kill -INT "$PEER" 2>/dev/null
	for ((i = 0; i < 600; i++)); do
		kill -0 "$PEER" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$PEER" 2>/dev/null && {
		echo "overhead.sh: bpftrace still running 60 s after SIGINT, killed" >&2
		kill -KILL "$PEER"
	}
	wait "$PEER"
	PEER_RC=$?
	PEER=
}

local_run() {
	local cfg=$1 ko ev= lat_ok=1
	NSDUMP_ARGS=()
	NSDUMP=${NS_NSDUMP:-$REPO/nsdump/nsdump}
	ko=${NS_MODULE:-$REPO/kernel/ns_module/netslice.ko}
	W=$(mktemp -d /dev/shm/nsbench.XXXXXX 2>/dev/null || mktemp -d)
	case $cfg in
	I|V)
		if [[ -e /dev/ns ]] || grep -q '^netslice ' /proc/modules; then
			echo "overhead.sh: config $cfg wants a kernel without NetSlice: unload netslice.ko, boot the stock image" >&2
			return 1
		fi ;;
	II)
		grep -q '^netslice ' /proc/modules && rmmod netslice
		insmod "$ko" enable=0 || return 1 ;;
	IIIn)
		# III as before batched wake-ups: the reader woken per item.
		grep -q '^netslice ' /proc/modules && rmmod netslice
		insmod "$ko" wakeup_bytes=1 wakeup_us=0 || return 1 ;;
	III|IV|IIIs|IIIf)
		grep -q '^netslice ' /proc/modules || insmod "$ko" || return 1
		NSDUMP_ARGS=()
		[[ $cfg == IIIs ]] && NSDUMP_ARGS=(--sample 10)
		[[ $cfg == IIIf ]] && NSDUMP_ARGS=('port 9')
		if [[ $cfg == IV ]]; then
			if [[ -d /sys/bus/event_source/devices/cpu ]]; then
				ev=cycles,instructions
			else
				ev=cpu-clock
			fi
		fi ;;
	*) echo "overhead.sh: unknown configuration '$cfg' (I, II, III, IIIn, IIIs, IIIf, IV, V)" >&2; return 2 ;;
	esac
	if [[ -n ${NS_PEER_IP:-} ]]; then
		sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
		ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null 2>&1
	fi

	local collect=0 peer=0
	[[ $cfg == III* || $cfg == IV ]] && collect=1
	[[ $cfg == V ]] && peer=1
	# V: one bpftrace across the three measurements.
	PEER_ATTACH=null PEER_RC=null
	((peer)) && { peer_start "$W/peer" || return 1; }
	# lat_tcp, captured on its own so --rtt sees only the ping-pong.
	((collect)) && { nsdump_start "$W/lat.nst" "$ev" || return 1; }
	run_lat "$W/lat.json" || lat_ok=0
	((collect)) && nsdump_stop
	# The streams, captured together (their blocks are not analysed).
	((collect)) && { nsdump_start "$W/stream.nst" "$ev" || return 1; }
	run_stream "$W/lo.json" 127.0.0.1
	local lo_rc=$? nic_rc=1
	if [[ -n ${NS_PEER_IP:-} && -n ${NS_PEER_NS:-} ]]; then
		run_stream "$W/nic.json" "$NS_PEER_IP" "$NS_PEER_NS"
		nic_rc=$?
	fi
	((collect)) && nsdump_stop
	((peer)) && peer_stop
	local rtt=null drops=null bytes=null
	if ((collect)); then
		# Fig. 5 pairs a packet with the next one: not for a sample.
		if [[ $cfg != IIIs && $cfg != IIIf ]] &&
			"$NSDUMP" -r "$W/lat.nst" --rtt --json -q >"$W/rtt.json" 2>/dev/null; then
			rtt=$(grep '"type":"rtt"' "$W/rtt.json" | tail -1)
		fi
		[[ -n $rtt ]] || rtt=null
		drops=$(cat "$W/lat.nst.err" "$W/stream.nst.err" 2>/dev/null |
			awk '/dropped by kernel/ { c += $1; for (i = 2; i <= NF; i++) if ($i == "dropped") d += $(i - 1) }
			     END { printf "{\"captured\":%d,\"dropped\":%d}", c, d }')
		# What a block costs in the trace (and in the ring): bytes
		# per block item, by direction and number of regions.
		bytes=$(python3 - "$REPO/tests/vm" "$W/lat.nst" "$W/stream.nst" <<'PY' 2>/dev/null
import json, sys
sys.path.insert(0, sys.argv[1])
import nspath
by = {}
for path in sys.argv[2:]:
    try:
        for kind, it in nspath.items(path):
            if kind not in (nspath.NSL_ITEM_BLOCK, nspath.NSL_ITEM_CBLOCK):
                continue
            b = nspath.decode_block(kind, it)
            key = "%s%d" % ("rx" if b["dir"] else "tx", b["nrec"])
            n, tot = by.get(key, (0, 0))
            by[key] = (n + 1, tot + len(it))
    except (OSError, SystemExit):
        pass
n = sum(v[0] for v in by.values())
print(json.dumps({"blocks": n,
                  "mean": sum(v[1] for v in by.values()) / n if n else None,
                  "by_dir_regions": {k: v[1] // v[0] for k, v in by.items()},
                  "n_by_dir_regions": {k: v[0] for k, v in by.items()}}))
PY
)
	fi
	python3 - "$cfg" "$ev" "$lat_ok" "$W/lat.json" "$lo_rc" "$W/lo.json" \
		"$nic_rc" "$W/nic.json" "$rtt" "$drops" "$peer" "$W/peer" \
		"$PEER_ATTACH" "$PEER_RC" "${bytes:-null}" <<'EOF' >"$W/result.json"
import json, os, platform, re, sys
(cfg, ev, lat_ok, lat, lo_rc, lo, nic_rc, nic, rtt, drops,
 peer, peer_p, peer_attach, peer_rc, block_bytes) = sys.argv[1:]
def load(ok, path):
    try:
        return json.loads(open(path).read().strip().splitlines()[-1]) if ok else None
    except (OSError, ValueError, IndexError):
        return None
l = load(lat_ok == "1", lat)
s_lo = load(lo_rc == "0", lo)
s_nic = load(nic_rc == "0", nic)
model = ""
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        model = line.split(":", 1)[1].strip()
        break
out = {"config": cfg, "events": ev or None, "kernel": platform.release(),
       "cpu_model": model, "ncpus": os.cpu_count(),
       "lat_median_us": l and l["median_us"], "lat_mean_us": l and l["mean_us"],
       "lat_min_us": l and l["min_us"], "lat_n": l and l["n"],
       "lo_mbps": s_lo and s_lo["throughput_mbps"],
       "nic_mbps": s_nic and s_nic["throughput_mbps"],
       "rtt": json.loads(rtt), "capture": json.loads(drops),
       "block_bytes": json.loads(block_bytes)}
if peer == "1":
    # bpftrace's text: "Attaching N probes...", then per map "@name:" and
    # hist() lines "[lo, hi)  count |@@@|".
    text = open(peer_p + ".out", errors="replace").read()
    err = open(peer_p + ".err", errors="replace").read()
    m = re.search(r"^Attaching (\d+) probes?\.\.\.", text, re.M)
    events, name = {}, None
    for line in text.splitlines():
        h = re.match(r"^@(\w+):", line)
        if h:
            name = h.group(1)
            events[name] = 0
            continue
        b = re.match(r"^[\[(][^\])]*[\])]\s+(\d+)\s+\|", line)
        if b and name:
            events[name] += int(b.group(1))
    out["peer"] = {"tool": "bpftrace bench/peer.bt",
                   "probes": int(m.group(1)) if m else None,
                   "attach_s": json.loads(peer_attach), "exit": json.loads(peer_rc),
                   "events": events,
                   "lost": sum(int(x) for x in re.findall(r"Lost (\d+) events", text + err)),
                   "errors": [l for l in err.splitlines()
                              if l.strip() and "is not traceable" not in l
                              and not l.startswith("__BPFTRACE_NOTIFY")][:20],
                   "output": text}
print(json.dumps(out))
EOF
	if [[ $OUT == - ]]; then cat "$W/result.json"; else cp "$W/result.json" "$OUT"; fi
	# V: bpftrace's own output beside the result (FILE.peer.txt).
	((peer)) && [[ $OUT != - ]] && cat "$W/peer.out" "$W/peer.err" >"${OUT%.json}.peer.txt"
	rm -rf "$W"
	[[ $cfg == II ]] && rmmod netslice 2>/dev/null
	return 0
}

if [[ -n $LOCAL ]]; then
	local_run "$LOCAL"
	exit $?
fi

# ----------------------------------------------------------------- host --

# Images given in the environment are used as they are; the default ones
# are brought up to date first (incremental: seconds when nothing changed,
# one cold kernel build the first time).
KIMAGE_STOCK=${KIMAGE_STOCK:-}
KIMAGE_NETSLICE=${KIMAGE_NETSLICE:-}
need_image() { # flavour step given-image
	local img=$3
	if [[ -n $img ]]; then
		[[ -f $img ]] && return 0
		echo "overhead.sh: $img ($1 kernel) is missing" >&2
		exit 1
	fi
	env -u KOBJ -u KIMAGE FLAVOUR="$1" "$REPO/kernel/build-kernel.sh" "$2" >&2 ||
		{ echo "overhead.sh: building the $1 kernel failed" >&2; exit 1; }
}
IFS=', ' read -r -a cfgs <<<"$CONFIGS"
need_stock= need_netslice=
for c in "${cfgs[@]}"; do
	case $c in
	I|V) need_stock=1 ;;
	II|III|IIIn|IIIs|IIIf|IV) need_netslice=1 ;;
	*) echo "overhead.sh: unknown configuration '$c' (I, II, III, IIIn, IIIs, IIIf, IV, V)" >&2; exit 2 ;;
	esac
done
[[ -z $need_stock ]] || need_image stock build "$KIMAGE_STOCK"
[[ -z $need_netslice ]] || need_image netslice module "$KIMAGE_NETSLICE"
KIMAGE_STOCK=${KIMAGE_STOCK:-$REPO/build/linux-stock/arch/x86/boot/bzImage}
KIMAGE_NETSLICE=${KIMAGE_NETSLICE:-$REPO/build/linux-netslice/arch/x86/boot/bzImage}
# I and II must differ in CONFIG_NETSLICE only: every line of the
# fragment but those must be in both .configs.
stale=
frag=$REPO/kernel/ns_core/config/netslice.config
stock_cfg=$(dirname "$(dirname "$(dirname "$(dirname "$KIMAGE_STOCK")")")")/.config
if [[ " ${cfgs[*]} " == *" "[IV]" "* && -f $frag && -f $stock_cfg ]]; then
	stale=$(grep -vE '^(#|$)|NETSLICE' "$frag" | while read -r l; do
		grep -qxF "$l" "$stock_cfg" || printf '%s ' "$l"; done)
fi
if [[ -n $stale ]]; then
	echo "overhead.sh: the stock image is stale: its .config lacks $stale(from $frag); rebuild it: make kernel FLAVOUR=stock" >&2
	((ALLOW_STALE)) || exit 1
fi
for t in lat_tcp tcp_stream; do
	[[ -x $REPO/bench/$t ]] || { echo "overhead.sh: bench/$t not built: make -C bench" >&2; exit 1; }
done
# V runs the host's bpftrace in the guest (its root is the host's /).
if [[ " ${cfgs[*]} " == *" V "* ]] && ! command -v bpftrace >/dev/null; then
	echo "overhead.sh: config V needs bpftrace on the host: apt-get install bpftrace (make bench does)" >&2
	exit 1
fi

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
RUNDIR=$OUTDIR/overhead-runs
rm -rf "$RUNDIR"
mkdir -p "$RUNDIR/scratch"
start=$SECONDS
echo "overhead.sh: $ROUNDS rounds x ${#cfgs[@]} configurations, lat_tcp -N $ITERS, tcp_stream -t $SECS; logs in $RUNDIR" >&2
for ((r = 1; r <= ROUNDS; r++)); do
	for c in "${cfgs[@]}"; do
		img=$KIMAGE_NETSLICE
		[[ $c == I || $c == V ]] && img=$KIMAGE_STOCK
		t0=$SECONDS
		KIMAGE=$img VM_SCRATCH=$RUNDIR/scratch \
		VM_CONSOLE_LOG=$RUNDIR/r$r-$c.console.log VM_OUTPUT_LOG=$RUNDIR/r$r-$c.output.log \
			"$REPO/tests/vm/run-vm.sh" \
			"$REPO/bench/overhead.sh --local $c -N $ITERS -t $SECS --out /mnt/scratch/r$r-$c.json" \
			>/dev/null 2>"$RUNDIR/r$r-$c.harness.log"
		rc=$?
		if ((rc == 0)) && [[ -s $RUNDIR/scratch/r$r-$c.json ]]; then
			cp "$RUNDIR/scratch/r$r-$c.json" "$RUNDIR/r$r-$c.json"
			[[ -f $RUNDIR/scratch/r$r-$c.peer.txt ]] &&
				cp "$RUNDIR/scratch/r$r-$c.peer.txt" "$RUNDIR/r$r-$c.peer.txt"
			echo "overhead.sh: round $r config $c: $(cat "$RUNDIR/r$r-$c.json") ($((SECONDS - t0)) s)" >&2
		else
			echo "overhead.sh: round $r config $c: VM run failed (exit $rc), see $RUNDIR/r$r-$c.*.log" >&2
			# What the guest side said about it (bpftrace's error for V).
			grep -A5 '^overhead.sh:' "$RUNDIR/r$r-$c.output.log" 2>/dev/null | head -8 | sed 's/^/  /' >&2
		fi
	done
done

# Image sizes, I vs II.
sizes() { # <build dir>
	local d=$1 text=null lines=null
	if [[ -f $d/vmlinux ]] && command -v size >/dev/null; then
		text=$(size "$d/vmlinux" 2>/dev/null | awk 'NR == 2 { print $4 }')
	fi
	[[ -f $d/System.map ]] && lines=$(wc -l <"$d/System.map")
	printf '{"bzImage":%s,"vmlinux":%s,"text_data_bss":%s,"system_map_lines":%s}' \
		"$(stat -c %s "$d/arch/x86/boot/bzImage" 2>/dev/null || echo null)" \
		"$(stat -c %s "$d/vmlinux" 2>/dev/null || echo null)" "${text:-null}" "$lines"
}
size_I=$(sizes "$(dirname "$(dirname "$(dirname "$(dirname "$KIMAGE_STOCK")")")")")
size_II=$(sizes "$(dirname "$(dirname "$(dirname "$(dirname "$KIMAGE_NETSLICE")")")")")

tcg=no
grep -q ' kvm ' /proc/modules 2>/dev/null && [[ -w /dev/kvm ]] || tcg=yes
python3 - "$RUNDIR" "$OUTDIR" "$ROUNDS" "$ITERS" "$SECS" "$CONFIGS" \
	"$size_I" "$size_II" "$tcg" "$((SECONDS - start))" "$stale" <<'EOF'
import glob, json, os, platform, statistics, sys, time
rundir, outdir, rounds, iters, secs, configs, size_i, size_ii, tcg, took, stale = sys.argv[1:]
cfgs = configs.replace(" ", "").split(",")
runs = {c: [] for c in cfgs}
for p in sorted(glob.glob(os.path.join(rundir, "r*-*.json"))):
    o = json.load(open(p))
    runs.setdefault(o["config"], []).append(o)

def med(c, key):
    xs = [r[key] for r in runs.get(c, []) if r.get(key) is not None]
    return statistics.median(xs) if xs else None

host_model = ""
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        host_model = line.split(":", 1)[1].strip()
        break
guest = next((r for c in cfgs for r in runs[c]), {})
res = {"benchmark": "netslice-overhead", "schema": 1,
       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "host": {"cpu_model": host_model, "kernel": platform.release(),
                "ncpus": os.cpu_count()},
       "vm": {"accel": "tcg" if tcg == "yes" else "kvm?",
              "cpu_model": guest.get("cpu_model"), "ncpus": guest.get("ncpus"),
              "kernels": sorted({r["kernel"] for c in cfgs for r in runs[c]})},
       "rounds": int(rounds), "lat_iterations": int(iters),
       "stream_seconds": float(secs), "seconds": int(took),
       "configs": {}, "image_sizes": {"I": json.loads(size_i),
                                      "II": json.loads(size_ii)}}
keys = (("lat_median_us", "lat_tcp median (us)", -1),
        ("lat_mean_us", "lat_tcp mean (us)", -1),
        ("lat_min_us", "lat_tcp minimum (us), median of the rounds'", -1),
        ("lo_mbps", "tcp_stream lo (Mbit/s)", 1),
        ("nic_mbps", "tcp_stream NIC (Mbit/s)", 1))
for c in cfgs:
    d = {"runs": len(runs[c]), "events": runs[c][0]["events"] if runs[c] else None}
    for k, _, _ in keys:
        d[k] = med(c, k)
        base = med("I", k)
        d[k + "_ratio"] = d[k] / base if d[k] and base else None
        d[k + "_all"] = [r.get(k) for r in runs[c]]
    # Fig. 5: lat_tcp against formula 5 on the blocks.
    f5 = []
    for r in runs[c]:
        rtt = r.get("rtt")
        if not rtt or not r.get("lat_median_us"):
            continue
        lat = r["lat_median_us"]
        e = {"lat_median_us": lat}
        for kind in ("raw", "corrected", "corrected_cold"):
            s = rtt.get(kind)
            if s and s.get("n"):
                e[kind + "_p50_us"] = s["p50"]
                e[kind + "_rel_err"] = (s["p50"] - lat) / lat
        f5.append(e)
    if f5:
        d["fig5"] = f5
        for kind in ("raw", "corrected"):
            xs = [e[kind + "_rel_err"] for e in f5 if kind + "_rel_err" in e]
            d["fig5_%s_rel_err_median" % kind] = statistics.median(xs) if xs else None
    d["capture"] = [r.get("capture") for r in runs[c]]
    # V: what bpftrace attached and counted, per round (the histograms
    # themselves stay in the runs' JSON and r<round>-V.peer.txt).
    peers = [dict((k, v) for k, v in r["peer"].items() if k != "output")
             for r in runs[c] if r.get("peer")]
    if peers:
        d["peer"] = peers
    res["configs"][c] = d

names = {"I": "I   stock 6.12", "II": "II  core + module, idle",
         "III": "III collecting (nsdump -w tmpfs)",
         "IIIn": "IIIn III, woken per item",
         "IIIs": "IIIs III, 1 in 10 sampled at NSI",
         "IIIf": "IIIf III, no packet passes 'port 9'",
         "IV": "IV  collecting + counters",
         "V": "V   bpftrace peer.bt (stock)"}
ncpus = {c: sorted({r["ncpus"] for r in runs[c]}) for c in cfgs if runs[c]}
res["vm"]["ncpus_by_config"] = ncpus
L = []
L.append("NetSlice overhead (the paper's Table 3), %s" % res["date"])
L.append("host: %s, %d CPUs, Linux %s; VM: QEMU %s, %s (%s), guest %s"
         % (host_model, os.cpu_count(), platform.release(),
            "TCG (emulated TSC, no PMU)" if tcg == "yes" else "accelerated?",
            ", ".join("%s %s vCPU" % (c, "/".join(map(str, v)))
                      for c, v in ncpus.items()), guest.get("cpu_model"),
            ", ".join(res["vm"]["kernels"])))
res["warnings"] = []
if stale:
    res["warnings"].append("stock image built from an older config: lacks " + stale)
if len({tuple(v) for v in ncpus.values()}) > 1:
    res["warnings"].append("the configurations ran with different CPU counts %s: "
                           "the ratios compare different machines" % ncpus)
for w in res["warnings"]:
    L.append("WARNING: " + w)
L.append("%s rounds interleaved %s; lat_tcp 4 B loopback -N %s; "
         "tcp_stream -t %s; medians over rounds, ratio to I; %s s"
         % (rounds, ",".join(cfgs), iters, secs, took))
L.append("")
L.append("%-34s %16s %16s %18s %18s" % ("configuration", "lat_tcp p50 us",
                                        "lat_tcp mean us", "stream lo Mbit/s",
                                        "stream NIC Mbit/s"))
def cell(v, r):
    if v is None:
        return "-"
    return "%.1f (%s)" % (v, "%.3f" % r if r else "-")
for c in cfgs:
    d = res["configs"][c]
    label = names.get(c, c)
    if d.get("events"):
        label += " [-e %s]" % d["events"]
    L.append("%-34s %16s %16s %18s %18s  n=%d" % (
        label[:34], cell(d["lat_median_us"], d["lat_median_us_ratio"]),
        cell(d["lat_mean_us"], d["lat_mean_us_ratio"]),
        cell(d["lo_mbps"], d["lo_mbps_ratio"]),
        cell(d["nic_mbps"], d["nic_mbps_ratio"]), d["runs"]))
L.append("(value (ratio to I); latency ratio > 1 and throughput ratio < 1 are costs)")
# NetSlice against the peer: what each adds to lat_tcp's round trip.
base = res["configs"].get("I", {}).get("lat_median_us")
added = {c: res["configs"][c]["lat_median_us"] - base for c in cfgs
         if base and c != "I" and res["configs"][c].get("lat_median_us")}
res["lat_added_us"] = added
if "V" in added:
    for c in cfgs:
        if c in added and c.startswith(("III", "IV")):
            L.append("lat_tcp p50 added to I: %s %+.1f us, V (bpftrace) %+.1f us: "
                     "%s costs %.2fx what V does" % (c, added[c], added["V"], c,
                                                    added[c] / added["V"] if added["V"] else float("nan")))
# The targets collecting everything is held to (issue 11), judged on
# this run: met or missed, never left out because they were missed.  One
# boot's round trip under TCG can be half or twice another's, so fewer
# than 3 rounds give values but no verdict.
judged = int(rounds) >= 3
def target(what, value, ok, fmt="%.3f"):
    met = value is not None and ok(value)
    res.setdefault("targets", []).append(
        {"target": what, "value": value, "met": met if judged else None})
    L.append("target %-44s %s  %s" % (what, "-" if value is None else fmt % value,
                                       "not measured" if value is None else
                                       "no verdict from %s round(s)" % rounds
                                       if not judged else
                                       "met" if met else "MISSED"))
if "I" in cfgs and "III" in cfgs:
    d = res["configs"]["III"]
    target("III lat_tcp p50 / I <= 1.10", d["lat_median_us_ratio"], lambda r: r <= 1.10)
    target("III lat_tcp minimum / I <= 1.10", d["lat_min_us_ratio"], lambda r: r <= 1.10)
    target("III tcp_stream lo / I >= 0.95", d["lo_mbps_ratio"], lambda r: r >= 0.95)
    target("III tcp_stream NIC / I >= 0.95", d["nic_mbps_ratio"], lambda r: r >= 0.95)
    if "V" in added and "III" in added and added["V"] > 0:
        target("III's added p50 / V's <= 1/3", added["III"] / added["V"],
               lambda r: r <= 1 / 3)
    caps = [x for x in d["capture"] if x]
    target("III blocks dropped == 0", sum(x["dropped"] for x in caps) if caps else None,
           lambda n: n == 0, "%d")
# Loss and bytes per block, from the collecting configurations' traces.
for c in cfgs:
    caps = [x for x in res["configs"][c]["capture"] if x]
    if caps:
        L.append("%-4s capture: %d blocks captured, %d dropped (all rounds)"
                 % (c, sum(x["captured"] for x in caps), sum(x["dropped"] for x in caps)))
    bb = [r["block_bytes"] for r in runs[c] if r.get("block_bytes") and r["block_bytes"].get("blocks")]
    if bb:
        b = bb[-1]
        common = sorted(b["n_by_dir_regions"].items(), key=lambda kv: -kv[1])[:4]
        L.append("%-4s bytes per block in the trace: mean %.0f; %s"
                 % (c, b["mean"], ", ".join("%s regions %s: %d B (n %d)"
                                            % (k[:2], k[2:], b["by_dir_regions"][k], n)
                                            for k, n in common)))
        res["configs"][c]["block_bytes"] = b
for c in cfgs:
    for i, p in enumerate(res["configs"][c].get("peer", [])):
        L.append("%-4s round %d: bpftrace attached %s probes in %s s (exit %s); events: %s%s"
                 % (c, i + 1, p.get("probes"), p.get("attach_s"), p.get("exit"),
                    " ".join("%s %d" % kv for kv in sorted(p.get("events", {}).items()))
                    or "none",
                    "; lost %d" % p["lost"] if p.get("lost") else ""))
L.append("")
si, sii = res["image_sizes"]["I"], res["image_sizes"]["II"]
L.append("kernel image, I vs II:")
for k in ("bzImage", "vmlinux", "text_data_bss", "system_map_lines"):
    a, b = si.get(k), sii.get(k)
    if a and b:
        L.append("  %-18s %12d %12d  %+.2f%%" % (k, a, b, (b / a - 1) * 100))
L.append("")
L.append("Fig. 5: lat_tcp's round trip vs nsdump --rtt on the blocks (formula 5), medians")
for c in cfgs:
    d = res["configs"][c]
    for i, e in enumerate(d.get("fig5", [])):
        L.append("  %-4s round %d: lat_tcp %.1f us; blocks raw %s us (%s), corrected %s us (%s), cold %s us"
                 % (c, i + 1, e["lat_median_us"],
                    "%.1f" % e["raw_p50_us"] if "raw_p50_us" in e else "-",
                    "%+.1f%%" % (100 * e["raw_rel_err"]) if "raw_rel_err" in e else "-",
                    "%.1f" % e["corrected_p50_us"] if "corrected_p50_us" in e else "-",
                    "%+.1f%%" % (100 * e["corrected_rel_err"]) if "corrected_rel_err" in e else "-",
                    "%.1f" % e["corrected_cold_p50_us"] if "corrected_cold_p50_us" in e else "-"))
    if d.get("fig5"):
        L.append("  %-4s median relative error: raw %s, corrected %s" % (
            c, *("%+.1f%%" % (100 * d["fig5_%s_rel_err_median" % k])
                 if d.get("fig5_%s_rel_err_median" % k) is not None else "-"
                 for k in ("raw", "corrected"))))
# The corrected trip estimates the trip without the macros, so it is
# not lat_tcp of the same configuration (which pays for them) that it
# should match, but the corrected trip of the other mode: III and IV
# collect alike and differ in their macros only.
# The warm calibration (macro after macro on a cached block) takes out
# too little, the cold one (TLB and block cold before each sample) too
# much: the trip without the macros lies between the two.
for kind, what in (("corrected", "warm"), ("corrected_cold", "cold")):
    cm = {}
    for c in cfgs:
        xs = [e[kind + "_p50_us"] for e in res["configs"][c].get("fig5", [])
              if kind + "_p50_us" in e]
        if xs:
            cm[c] = statistics.median(xs)
    if "III" in cm and "IV" in cm:
        key = "fig5_%s_iv_vs_iii" % kind
        res[key] = cm["IV"] / cm["III"] - 1
        L.append("  corrected (%s calibration), the trip without the macros: III %.1f us, IV %.1f us (%+.1f%%): "
                 "IV's correction leaves in (+) or takes out too much (-) of the counters' cost"
                 % (what, cm["III"], cm["IV"], 100 * res[key]))
    elif cm:
        L.append("  corrected (%s calibration): %s" % (what, ", ".join(
            "%s %.1f us" % kv for kv in sorted(cm.items()))))
text = "\n".join(L) + "\n"
sys.stdout.write(text)
open(os.path.join(outdir, "overhead.txt"), "w").write(text)
json.dump(res, open(os.path.join(outdir, "overhead.json"), "w"), indent=1)
print("\nwritten: %s/overhead.txt, %s/overhead.json" % (outdir, outdir))
sys.exit(0 if any(runs[c] for c in cfgs) else 1)
EOF
