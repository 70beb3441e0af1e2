#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""fuzz-seeds.py OUTDIR PCAP...: write a libFuzzer seed corpus for
fuzz_wire_parse from captures: up to 4 frames per RoCEv2 opcode, each as
one file whose first byte is the target's control byte (bit 0: path MTU
1024; bit 1: split into two segments at a place derived from the byte).
Used to make tests/fuzz/corpus/fuzz_wire_parse from tests/data/captures
and 'dprdma-pcap --generate'."""

import hashlib
import os
import struct
import sys


def frames(path):
    data = open(path, "rb").read()
    e = "<" if struct.unpack("<I", data[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(e + "I", data[off + 8:off + 12])[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def opcode(f):
    off = 14
    if f[12:14] == b"\x81\x00":
        off = 18
    etype = f[off - 2:off]
    if etype == b"\x08\x00":
        off += (f[off] & 0xf) * 4
    elif etype == b"\x86\xdd":
        off += 40
    else:
        return None
    if len(f) < off + 9 or f[off + 2:off + 4] != b"\x12\xb7":
        return None
    return f[off + 8]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    per_op = {}
    n = 0
    for path in sys.argv[2:]:
        for f in frames(path):
            op = opcode(f)
            if op is None or per_op.get(op, 0) >= 4:
                continue
            per_op[op] = per_op.get(op, 0) + 1
            for ctl in (0x00, 0x03 if per_op[op] == 1 else None):
                if ctl is None:
                    continue
                blob = bytes([ctl]) + f
                name = hashlib.sha1(blob).hexdigest()
                open(os.path.join(out, name), "wb").write(blob)
                n += 1
    print("%d seeds, %d opcodes" % (n, len(per_op)))


if __name__ == "__main__":
    main()
