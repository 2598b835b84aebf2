#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nsdump reads a trace file of NetSlice ABI 1 (data/abi1.nst, written by
# the last ABI-1 build's mkblocks -n 40 -l 13 -o 7 -e 2 -C -N -P): every
# JSON line it prints has, field for field, the values that build printed
# for the same file (data/abi1.json); fields ABI 2 added (the flow) read
# as zero.  TAP; exit 0 / 1.
here=$(cd "$(dirname "$0")" && pwd)
NSDUMP=${NSDUMP:-$here/../../nsdump/nsdump}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$NSDUMP" -r "$here/data/abi1.nst" --json >"$out" 2>/dev/null
rc=$?
python3 - "$here/data/abi1.json" "$out" "$rc" <<'PY'
import json, sys
old = [json.loads(l) for l in open(sys.argv[1])]
new = [json.loads(l) for l in open(sys.argv[2])]
n = 0
def tap(ok, what):
    global n, bad
    n += 1
    print(("ok %d - " if ok else "not ok %d - ") % n + what)
    return ok
bad = 0
bad += not tap(sys.argv[3] == "0", "nsdump -r of an ABI-1 file exits 0 (exit %s)" % sys.argv[3])
bad += not tap(len(new) == len(old), "as many JSON lines as the ABI-1 build printed (%d, %d)" % (len(new), len(old)))
def diff(a, b, path):
    if isinstance(a, dict):
        for k in a:
            if k not in b:
                return "%s.%s missing" % (path, k)
            d = diff(a[k], b[k], path + "." + k)
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items, was %d" % (path, len(b), len(a))
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s is %r, was %r" % (path, b, a)
first = None
for i, (a, b) in enumerate(zip(old, new)):
    d = diff(a, b, "line %d" % (i + 1))
    if d and not first:
        first = d
bad += not tap(first is None, "every field of every line as the ABI-1 build had it" + (": " + first if first else ""))
blocks = [b for b in new if b.get("type") == "block"]
flows = [b for b in blocks if any(b.get(k) for k in ("family", "sport", "dport"))]
bad += not tap(len(blocks) == 40 and not flows, "40 blocks, none with a flow (ABI 1 had none): %d, %d" % (len(blocks), len(flows)))
print("1..%d" % n)
sys.exit(1 if bad else 0)
PY
