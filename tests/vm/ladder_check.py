#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks one round of bench/sameboot.sh -L: its table and nsdump's counts.

ladder_check.py OUT ERR WANT -- OUT the script's stdout, ERR its stderr,
WANT the fewest blocks III must have captured.  TAP lines on stdout.
"""
import re
import sys

from tap import check

CONFIGS = ["II", "none", "carry", "clock", "records", "III"]


def main():
    out = open(sys.argv[1]).read()
    err = open(sys.argv[2]).read()
    want = int(sys.argv[3])
    rows = {m.group(1): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^(\S+)\s+1\s+([\d.]+) us\s+([\d.]+) us",
                                 out, re.M)}
    check(list(rows) == CONFIGS, "ladder: a row for each of %s (%s)"
        % (" ".join(CONFIGS), " ".join(rows)))
    for cfg, (med, low) in rows.items():
        check(0 < low <= med, "ladder %s: 0 < minimum %.1f <= median %.1f us"
            % (cfg, low, med))
    cap = {m.group(1): int(m.group(2))
           for m in re.finditer(r"^# (\S+): (\d+) blocks captured", err, re.M)}
    for cfg in CONFIGS[1:5]:
        check(cap.get(cfg) == 0, "ladder %s: no block delivered (%s captured)"
            % (cfg, cap.get(cfg)))
    check(cap.get("III", 0) >= want, "ladder III: a block per message at least "
        "(%s captured >= %d)" % (cap.get("III"), want))


if __name__ == "__main__":
    main()
