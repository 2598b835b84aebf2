#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""jsonl.py FILE [EXPR]

Every line of FILE must be one JSON object: strict UTF-8, strict JSON (no
NaN or Infinity), each line ended by a newline, at least one line.  If
not, say which line and why, and exit 1.  With EXPR, print its value as
JSON (a string as it is), evaluated with L the list of objects, T(type)
those of that "type", and b2s(b) the text a decoder makes of bytes b
(ill-formed UTF-8 replaced as Python replaces it).
"""
import json
import os
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))
from nsjson import strict_json  # noqa: E402  (nsdump's JSON, one reader)


def objects(path):
    data = open(path, "rb").read()
    if not data:
        sys.exit(f"{path}: no lines")
    if not data.endswith(b"\n"):
        sys.exit(f"{path}: last line not ended by a newline")
    out = []
    for n, raw in enumerate(data[:-1].split(b"\n"), 1):
        try:
            obj = strict_json(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            sys.exit(f"{path}:{n}: {e}: {raw[:300]!r}")
        if not isinstance(obj, dict):
            sys.exit(f"{path}:{n}: not an object: {raw[:300]!r}")
        out.append(obj)
    return out


def main():
    lines = objects(sys.argv[1])
    if len(sys.argv) < 3:
        return
    env = {
        "L": lines,
        "T": lambda t: [o for o in lines if o.get("type") == t],
        "b2s": lambda b: b.decode("utf-8", "replace"),
    }
    value = eval(sys.argv[2], env)
    print(value if isinstance(value, str) else json.dumps(value))


main()
