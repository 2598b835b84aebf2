#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Calibration and overhead correction (issue 4), in the VM:
#  - NSIOCGCALIB on every CPU (nsioctl.py calib, independent of nsdump's
#    code): NSI, NSS, NST, NSE, NSO, NSA costs positive, the minimum <=
#    the median, samples > 0, CV finite (cv_ppm < 10^7, i.e. 1000%);
#    with cpu-clock chosen, count medians present and positive; bad
#    requests -> EINVAL.  `nsdump --calibrate` prints the same table
#    with no nan/inf.
#  - correction on real traffic (bulk to the peer + loopback ping-pong,
#    nsdump --json gives raw "ticks" and "ticks_corrected" side by side):
#    for every send block, the corrected tcp+ip+link nested inside write
#    do not exceed the corrected write by more than the calibration's own
#    spread (the costs' medians less their minima: a short write whose
#    macros all ran fast has less to take out than the medians say);
#    every corrected value is >= 0 and
#    <= raw; the clamped count matches nsdump's table.
#  - --raw vs default differ by exactly the formula, recomputed by hand for
#    every block on a CPU whose costs were printed: corrected = raw -
#    nmerged * tau_o - K * tau_beta (clamped at 0; a GAP record, a wait
#    timed by no macro pair, is neither corrected nor counted in K), tau_o
#    and tau_beta from the file's CALIB record as printed by
#    `nsdump --calibrate -r file`, K recounted from the records.
# TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
IOC="python3 $REPO/tests/vm/nsioctl.py"
STATS="host_run python3 $REPO/tests/vm/nsstats.py"

comment() { sed 's/^\([^#]\)/# \1/'; }

insmod "$NS_MODULE" || die "insmod $NS_MODULE"
ncpus=$(nproc)

# --- NSIOCGCALIB per CPU, durations and with cpu-clock
check_calib() { # <json lines> <want nevents>
	host_run -i python3 - "$@" <<'EOF'
import json, math, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
want_ev = int(sys.argv[2])
bad = 0
for o in lines:
    if "bad" in o:
        ok = o["errno"] == 22
        print("# NSIOCGCALIB %s: errno %d%s" % (o["bad"], o["errno"],
              "" if ok else " (want EINVAL)"))
        bad += not ok
        continue
    if "interrupted" in o:
        # The wait is interruptible: the call ends with EINTR, not after
        # the whole calibration (how long it took is shown, not judged).
        ok = o["errno"] == 4
        print("# NSIOCGCALIB %s: errno %d after %d ms%s" % (
              o["interrupted"], o["errno"], o["ms"],
              "" if ok else " (want EINTR)"))
        bad += not ok
        continue
    if o["errno"]:
        print("cpu %d: NSIOCGCALIB errno %d" % (o["cpu"], o["errno"]))
        bad += 1
        continue
    khz = o["tsc_khz"]
    row = []
    for m in ("NSI", "NSS", "NST", "NSE", "NSO", "NSA"):
        c = o[m]
        cv = c["cv_ppm"] / 1e6
        ns = c["ticks"] * 1e6 / khz
        row.append("%s %.0fns cv %.2f n %d%s" % (m, ns, cv, c["samples"],
                   " count %s" % c["count"] if want_ev else ""))
        if not (c["ticks"] > 0 and 0 < c["min"] <= c["ticks"]
                and c["samples"] > 0 and math.isfinite(ns)
                and c["cv_ppm"] < 10**7):
            print("cpu %d %s: implausible %s" % (o["cpu"], m, c))
            bad += 1
        if want_ev and (o["nevents"] != want_ev or len(c["count"]) != want_ev
                        or not all(x > 0 for x in c["count"])):
            print("cpu %d %s: counts %s, nevents %d (want %d, > 0)"
                  % (o["cpu"], m, c["count"], o["nevents"], want_ev))
            bad += 1
        if not want_ev and o["nevents"]:
            print("cpu %d: nevents %d without events" % (o["cpu"], o["nevents"]))
            bad += 1
    print("# cpu %d: %s" % (o["cpu"], "; ".join(row)))
ncpu = sum("cpu" in o and "bad" not in o for o in lines)
print("# %d CPUs calibrated" % ncpu)
sys.exit(1 if bad or not ncpu else 0)
EOF
}
$IOC calib >"$W/calib.jsonl" 2>&1
rc=$?
check_calib "$W/calib.jsonl" 0 >"$W/calib.out"
rc2=$?
comment <"$W/calib.out"
((rc == 0 && rc2 == 0)) && [[ $(grep -c '"errno"' "$W/calib.jsonl") -ge $((ncpus + 6)) ]]
tap $? "NSIOCGCALIB on each of $ncpus CPUs: 6 positive costs, min <= median, CV finite; bad requests (reps above 2^16 too) EINVAL; a signal ends the largest with EINTR"

$IOC calib --event cpu-clock >"$W/calib-cc.jsonl" 2>&1
rc=$?
check_calib "$W/calib-cc.jsonl" 1 >"$W/calib-cc.out"
rc2=$?
comment <"$W/calib-cc.out"
((rc == 0 && rc2 == 0))
tap $? "NSIOCGCALIB with cpu-clock: count medians present and positive on every CPU"

"$NSDUMP" --calibrate >"$W/nsd-calib.txt" 2>&1
rc=$?
comment <"$W/nsd-calib.txt"
((rc == 0)) && ! grep -qiE 'nan|inf' "$W/nsd-calib.txt" &&
	[[ $(grep -cE '^(NSI|NSS|NST|NSE|NSO|NSA) ' "$W/nsd-calib.txt") -ge 6 ]]
tap $? "nsdump --calibrate: the six macros, no nan/inf"
"$NSDUMP" --calibrate -e cpu-clock >"$W/nsd-calib-cc.txt" 2>&1
rc=$?
comment <"$W/nsd-calib-cc.txt"
((rc == 0)) && grep -q 'cpu-clock' "$W/nsd-calib-cc.txt" &&
	! grep -E '^NS[ISTEOA] ' "$W/nsd-calib-cc.txt" | awk '{ print $8 }' | grep -qvE '^[1-9][0-9]*$'
tap $? "nsdump --calibrate -e cpu-clock: a cpu-clock column, every median a positive count"

# Warm and cold, in count mode (whose counter reads touch the most memory):
# the cold figures bound the macros' cost from above, every CPU's.
"$NSDUMP" --calibrate --json -e cpu-clock >"$W/warm.json" 2>&1 &&
	"$NSDUMP" --calibrate --cold --json -e cpu-clock >"$W/cold.json" 2>&1
tap $? "nsdump --calibrate [--cold] --json -e cpu-clock"
tap_lines < <(host_run -i python3 - "$W/warm.json" "$W/cold.json" <<'PY' || echo "fail the check of warm against cold crashed"
import json, sys
warm, cold = (json.load(open(f)) for f in sys.argv[1:3])
print("%s warm is marked warm, cold cold" % ("ok" if (warm["cold"], cold["cold"]) == (False, True) else "fail"))
wc = {c["cpu"]: c["costs"] for c in warm["cpus"]}
# QEMU TCG models no cache: there cold and warm differ by the run's noise
# alone (seen: a cold NSE median 8% under the warm one), so a cold cost
# may fall short of the warm one by 20%; on hardware, not at all.
tol = 0.2 if "QEMU" in (warm.get("model") or "") else 0.0
bad, rows = [], []
for c in cold["cpus"]:
    for w, k in zip(wc[c["cpu"]], c["costs"]):
        rows.append("cpu %d %s %.1f/%.1f" % (c["cpu"], k["macro"], w["ns"], k["ns"]))
        # NSO's span runs on what START's lookup warmed: not bounded.
        if k["macro"] != "NSO" and k["ticks"] < w["ticks"] * (1 - tol):
            bad.append(rows[-1])
print("# warm/cold ns: " + ", ".join(rows))
print("%s every cold cost but NSO >= the warm one (less %d%%) on %d CPUs%s" % (
    "fail" if bad or not cold["cpus"] else "ok", tol * 100, len(cold["cpus"]),
    (": " + ", ".join(bad)) if bad else ""))
PY
)

# --- correction on real traffic
sysctl -qw net.ipv6.conf.all.disable_ipv6=1
peer sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ping -q -c 2 -i 0.2 "$NS_PEER_IP" >/dev/null || die "ping $NS_PEER_IP"
# Every process bounded in time: a hang is a failure, not a VM timeout.
T="timeout -k 5 60"
peer $T "$BENCH/tcp_stream" -s -n -p 5501 >"$W/srv.out" 2>&1 &
srv=$!
$T "$BENCH/lat_tcp" -s -n -b 127.0.0.1 -p 5502 >"$W/lsrv.out" 2>&1 &
lsrv=$!
wait_listen 5501 peer && wait_listen 5502 || die "servers did not start"
nsdump_bg "$W/t.err" -q --cold -w "$W/t.nst" || die "nsdump did not start"
$T "$BENCH/tcp_stream" -c "$NS_PEER_IP" -p 5501 -t 2 >"$W/cli.out" 2>&1 &
cli=$!
$T "$BENCH/lat_tcp" -c 127.0.0.1 -p 5502 -W 50 -N 500 >"$W/lat.out" 2>&1
rc1=$?
wait $cli
rc2=$?
wait $srv
rc3=$?
wait $lsrv
rc4=$?
echo "# exit status: lat_tcp $rc1, tcp_stream $rc2, servers $rc3 $rc4"
((rc1 == 0 && rc2 == 0 && rc3 == 0 && rc4 == 0))
tap $? "lat_tcp on loopback and tcp_stream to the peer, at once"
sleep 0.5
kill -INT $nsd
wait $nsd
tap $? "capture of a bulk transfer and a ping-pong ($(tail -1 "$W/t.err"))"
host_run -o "$X/cor.json" "$NSDUMP" -r "$W/t.nst" --json 2>/dev/null &&
	host_run -o "$X/raw.json" "$NSDUMP" -r "$W/t.nst" --json --raw 2>/dev/null &&
	"$NSDUMP" -r "$W/t.nst" --calibrate >"$W/file-calib.txt" 2>&1
tap $? "nsdump -r: --json, --json --raw, --calibrate"
echo "# the file's CALIB record:"
comment <"$W/file-calib.txt"
$STATS nest "$X/cor.json" "$W/file-calib.txt" >"$W/nest.out"
rc=$?
comment <"$W/nest.out"
tap $rc "every send block: corrected tcp+ip+link <= corrected write (within the calibration's median - min spread); corrected in [0, raw]; clamped count as in the table"
$STATS formula "$X/raw.json" "$X/cor.json" "$W/file-calib.txt" >"$W/formula.out"
rc=$?
comment <"$W/formula.out"
tap $rc "--raw vs default: raw - nmerged*tau_o - K*tau_beta, by hand, for every block"

# The file written with --cold keeps both calibrations; --rtt corrects by
# each: the cold one (dearer macros) can only take out more.
"$NSDUMP" -r "$W/t.nst" --calibrate --cold --json >"$W/file-cold.json" 2>&1 &&
	host_run -o "$X/rtt.json" "$NSDUMP" -r "$W/t.nst" --rtt --json -q 2>"$W/rtt.err"
tap $? "nsdump -r: --calibrate --cold, --rtt"
tap_lines < <(host_run -i python3 - "$W/file-calib.txt" "$W/file-cold.json" "$X/rtt.json" <<'PY' || echo "fail the check of --cold and --rtt crashed"
import json, sys
cold = json.load(open(sys.argv[2]))
rtt = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
rtt = [o for o in rtt if o.get("type") == "rtt"]
print("%s the file's cold calibration is marked cold, %d CPUs" % (
    "ok" if cold["cold"] and cold["cpus"] else "fail", len(cold["cpus"])))
if not rtt or "corrected_cold" not in rtt[0]:
    print("fail --rtt gives no corrected_cold: %s" % rtt)
    sys.exit()
r = rtt[0]
raw, warm, cc = r["raw"], r["corrected"], r["corrected_cold"]
print("# rtt p50 us: raw %.1f, corrected (warm) %.1f, corrected (cold) %.1f; n %d"
      % (raw["p50"], warm["p50"], cc["p50"], raw["n"]))
print("%s --rtt: cold-corrected p50 <= warm-corrected p50 <= raw p50, one sample set (n %d %d %d)" % (
    "ok" if cc["n"] == warm["n"] == raw["n"] > 0 and cc["p50"] <= warm["p50"] <= raw["p50"] else "fail",
    raw["n"], warm["n"], cc["n"]))
PY
)

rmmod netslice
tap $? "rmmod netslice"
rm -rf "$W"
echo "1..$n"
((failed == 0))
