# SPDX-License-Identifier: GPL-2.0
"""nsdump trace files (nsdump/source/file.h) walked from their bytes, not
by nsdump, for the tests that check what nsdump wrote (host and VM side).

    records(data)        (offset, kind, payload) of every record, its
                         CRC checked; the records must end with the file
    items(data)          (item kind, bytes) of every item in DATA records
    record(kind, payload)  one record's bytes, CRC and all
    DATA, TRAILER, WRITER  record kinds

A file that breaks the layout raises TraceError, which exits with its
message when nothing catches it.
"""
import struct
import zlib

MAGIC = b"NSLTRACE"
HEADER = 16		# magic, version, byte-order mark
REC_HDR = struct.Struct("=IIII")	# kind, len, crc, 0
DATA, TRAILER, WRITER = 5, 6, 64


class TraceError(SystemExit):
    pass


def records(data):
    if data[:8] != MAGIC:
        raise TraceError("not a trace file (magic %r)" % data[:8])
    off = HEADER
    while off < len(data):
        if off + REC_HDR.size > len(data):
            raise TraceError("a record header cut short at %d" % off)
        kind, ln, crc, _ = REC_HDR.unpack_from(data, off)
        if ln < REC_HDR.size or off + ln > len(data):
            raise TraceError("the record at %d runs past the end" % off)
        rec = bytearray(data[off:off + ln])
        rec[8:12] = b"\0\0\0\0"
        if zlib.crc32(rec) != crc:
            raise TraceError("bad CRC in the record at %d" % off)
        yield off, kind, data[off + REC_HDR.size:off + ln]
        off += ln


def items(data):
    for off, kind, payload in records(data):
        if kind != DATA:
            continue
        pos = 0
        while pos < len(payload):
            if pos + 8 > len(payload):
                raise TraceError("an item header cut short in the record at %d" % off)
            ikind, size = struct.unpack_from("=HH", payload, pos)
            if size < 8 or pos + size > len(payload):
                raise TraceError("bad item at %d of the record at %d" % (pos, off))
            yield ikind, payload[pos:pos + size]
            pos += size


def record(kind, payload):
    head = REC_HDR.pack(kind, REC_HDR.size + len(payload), 0, 0)
    crc = zlib.crc32(payload, zlib.crc32(head))
    return REC_HDR.pack(kind, REC_HDR.size + len(payload), crc, 0) + payload
