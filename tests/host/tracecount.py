#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tracecount.py FILE

What a trace file (nsdump -w) holds, read here from its bytes (file.h's
layout), not by nsdump: each record's CRC checked (zlib's CRC-32), the
blocks and loss items counted in its DATA records, the TRAILER's named
values, the WRITER record's text (NUL padding and all).  Prints
{"blocks": n, "kinds": [record kinds in order], "loss_items": n,
"lost": n, "trailer": {...}, "writer": "..."}.
"""
import json
import os
import struct
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))
from nstrace import DATA, TRAILER, WRITER, records  # noqa: E402

ITEM_BLOCK, ITEM_LOSS, ITEM_CBLOCK = 1, 2, 5	# NSL_ITEM_*; a block is CBLOCK since ABI 4


def main():
    data = open(sys.argv[1], "rb").read()
    out = {"blocks": 0, "kinds": [], "loss_items": 0, "lost": 0,
           "trailer": None, "writer": None}
    for _, kind, payload in records(data):
        out["kinds"].append(kind)
        if kind == WRITER:
            out["writer"] = payload.decode()
        elif kind == DATA:
            pos = 0
            while pos < len(payload):
                ikind, size = struct.unpack_from("<HH", payload, pos)
                if ikind in (ITEM_BLOCK, ITEM_CBLOCK):
                    out["blocks"] += 1
                elif ikind == ITEM_LOSS:
                    out["loss_items"] += 1
                    out["lost"] += struct.unpack_from("<Q", payload, pos + 8)[0]
                pos += size
        elif kind == TRAILER:
            out["trailer"] = {
                name.rstrip(b"\0").decode(): value
                for name, value in struct.iter_unpack("<24sQ", payload)
            }
    print(json.dumps(out, sort_keys=True))


main()
