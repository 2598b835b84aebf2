# SPDX-License-Identifier: GPL-2.0
"""The entry point of the tests' Python helpers: what they print becomes
TAP (tap_lines in lib.sh), so a crash must print a failure, or the
assertions it never reached would pass unseen."""
import os
import sys


def run(main, *args):
    """main(*args)'s exit status; a crash printed as "fail ..." and 1."""
    try:
        return main(*args)
    except Exception as e:  # pylint: disable=broad-except
        print("fail %s %s: %s: %s" % (os.path.basename(sys.argv[0]),
                                      " ".join(sys.argv[1:2]),
                                      type(e).__name__, e))
        return 1
