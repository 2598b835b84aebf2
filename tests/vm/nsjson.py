# SPDX-License-Identifier: GPL-2.0
"""nsdump's --json item stream, as the tests read it (host and VM side).

    items(path)         nsdump --json output, as lists by "type" ("block",
                        "event", "loss", "conn", "table", "sysinfo", ...)
    nsdump_json(path)   every line, each parsed strictly
    strict_json(text)   json.loads without NaN or Infinity
"""
import collections
import json


def items(path):
    out = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                o = json.loads(line)
                out[o.get("type")].append(o)
    return out


def _reject(constant):
    raise ValueError("not JSON: " + constant)


def strict_json(text):
    """json.loads without NaN or Infinity, which JSON does not have."""
    return json.loads(text, parse_constant=_reject)


def nsdump_json(path):
    """The JSON lines nsdump printed, each parsed strictly."""
    with open(path, encoding="utf-8") as f:
        return [strict_json(line) for line in f]
