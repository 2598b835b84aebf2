#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Always on (issue 27), in one VM:
#  - the module's aggregate mode against the blocks themselves
#    (nsagg.py kernel, independent of the module's C): NSIOCSAGG's checks;
#    with every block delivered too, the histograms equal, bucket for
#    bucket and sum for sum, the ones the blocks read make, and count
#    every block the core emitted; a fixed threshold on the span and the
#    running p99 deliver only blocks above them, and as many as the
#    histograms hold there; NSIOCGAGG gives /dev/ns-hist's bytes; off
#    delivers every block again;
#  - aggregation outlives its reader and the module does not: on with
#    /dev/ns closed, rmmod succeeds, and the next load starts anew (a new
#    load_id, no histograms).
# TAP on stdout; exit 0 pass, 1 fail.
. "${NS_REPO:?}/tests/vm/lib.sh"
AGG="python3 $REPO/tests/vm/nsagg.py"

insmod "$NS_MODULE" || die "insmod $NS_MODULE"

$AGG kernel > >(tap_pipe)
tap $? "nsagg.py kernel"
wait

# --- aggregation with no reader, and a reload
$AGG on reset && ping -c 3 -i 0.2 127.0.0.1 >/dev/null && $AGG snap >"$W/before.json"
tap $? "on, /dev/ns closed, some traffic, a snapshot"
rmmod netslice
tap $? "rmmod while aggregating, /dev/ns closed"
insmod "$NS_MODULE"
tap $? "insmod again"
$AGG snap >"$W/after.json"
python3 - "$W/before.json" "$W/after.json" <<'PY' | tap_lines
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print("%s the new load has a new load_id (%x, was %x), is off and empty" % (
    "ok" if a["head"]["load_id"] != b["head"]["load_id"] and
    b["head"]["flags"] == 0 and not b["hists"] else "fail",
    b["head"]["load_id"], a["head"]["load_id"]))
print("%s the old one was on (%#x)" % (
    "ok" if a["head"]["flags"] & 1 else "fail", a["head"]["flags"]))
PY

rmmod netslice
tap $? "rmmod netslice"
rm -rf "$W"
echo "1..$n"
((failed == 0))
