#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""shoot.py PAGE PNG [ID [HEIGHT]]: a screenshot of an nsdump --html page
in headless Chromium (cdp.py), 1400 px wide: from the top, or from the
element with id ID ("": the top), HEIGHT px high (default 1100).  How doc/'s pictures
were made:

    tests/host/obj/mkblocks -V 2000 capture.ns
    nsdump -r capture.ns --html report.html
    tests/host/shoot.py report.html doc/nsdump-html.png "" 1500
    tests/host/shoot.py report.html doc/nsdump-html-packets.png packets 900
"""
import os
import sys

import cdp

page, png = sys.argv[1], sys.argv[2]
anchor = sys.argv[3] if len(sys.argv) > 3 else None
height = int(sys.argv[4]) if len(sys.argv) > 4 else 1100
with cdp.Browser(os.environ.get("CHROMIUM", "/usr/bin/chromium")) as b:
    b.load("file://" + os.path.abspath(page), width=1400)
    y = 0
    if anchor:
        y = b.evaluate("document.getElementById(%r).getBoundingClientRect().top"
                       " + scrollY - 8" % anchor)
    shot = b.screenshot((0, y, 1400, height))
    if b.errors:
        sys.exit("shoot.py: %s" % b.errors)
with open(png, "wb") as f:
    f.write(shot)
