# SPDX-License-Identifier: GPL-2.0
"""What the VM tests' Python helpers share.

    items(path)        nsdump --json output, as lists by "type" ("block",
                       "event", "loss", "conn", "table", "sysinfo", ...)
    check(cond, desc)  print "ok desc" or "fail desc" (counted in failed())
    note(fmt, args)    print a "# ..." comment line
"""
import collections
import json

_failed = 0


def items(path):
    out = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                o = json.loads(line)
                out[o.get("type")].append(o)
    return out


def check(cond, desc):
    global _failed
    print("%s %s" % ("ok" if cond else "fail", desc))
    if not cond:
        _failed += 1
    return cond


def note(fmt, *args):
    print("# " + (fmt % args if args else fmt))


def failed():
    """How many checks failed so far."""
    return _failed
