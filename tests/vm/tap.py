# SPDX-License-Identifier: GPL-2.0
"""TAP from the tests' Python, host and VM side, in the two forms their
harnesses read:

    Tap()              numbered: t.ok(cond, what) prints "ok N - what" or
                       "not ok N - what", t.done() the plan and an exit
                       status (tests/host/run.sh, tap_pipe in lib.sh)
    check(cond, desc)  "ok desc" or "fail desc", counted in failed()
                       (tap_lines in lib.sh numbers them)
    note(fmt, args)    a "# ..." comment line
    run(main, *args)   main(*args)'s exit status: what the helpers print
                       becomes TAP, so a crash must print a failure, or the
                       assertions it never reached would pass unseen
"""
import os
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


_failed = 0


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


def run(main, *args):
    """main(*args)'s exit status; a crash printed as "fail ..." and 1."""
    try:
        return main(*args)
    except Exception as e:  # pylint: disable=broad-except
        print("fail %s %s: %s: %s" % (os.path.basename(sys.argv[0]),
                                      " ".join(sys.argv[1:2]),
                                      type(e).__name__, e))
        return 1
