# SPDX-License-Identifier: GPL-2.0
"""TAP lines from Python checks (ok / not ok, the plan, an exit status),
and strict JSON for reading what nsdump wrote."""
import json
import sys


class Tap:
    def __init__(self):
        self.n = self.failed = 0

    def ok(self, cond, what, detail=None):
        self.n += 1
        print("%sok %d - %s" % ("" if cond else "not ", self.n, what))
        if not cond:
            self.failed += 1
            if detail is not None:
                print("# " + str(detail).replace("\n", "\n# "))
        sys.stdout.flush()
        return cond

    def eq(self, got, want, what):
        return self.ok(got == want, what, "got %r, want %r" % (got, want))

    def done(self):
        print("1..%d" % self.n)
        return 1 if self.failed else 0


def _reject(constant):
    raise ValueError("not JSON: " + constant)


def strict_json(text):
    """json.loads without NaN or Infinity, which JSON does not have."""
    return json.loads(text, parse_constant=_reject)


def nsdump_json(path):
    """The JSON lines nsdump printed, each parsed strictly."""
    with open(path, encoding="utf-8") as f:
        return [strict_json(line) for line in f]
