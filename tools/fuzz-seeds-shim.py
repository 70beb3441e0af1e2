#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""fuzz-seeds-shim.py OUTDIR: the seed corpus of fuzz_shim_ctrl: short
client sessions in the target's record format (see
tests/fuzz/fuzz_shim_ctrl.c): open, objects made, a QP connected and
work posted into its ring, objects destroyed; a completion channel; raw
garbage. Used to make tests/fuzz/corpus/fuzz_shim_ctrl."""

import os
import struct
import sys

OPS = {"open": 1, "query_port": 2, "alloc_pd": 3, "dealloc_pd": 4,
       "reg_mr": 5, "dereg_mr": 6, "create_channel": 7, "destroy_channel": 8,
       "create_cq": 9, "destroy_cq": 10, "create_qp": 11, "modify_qp": 12,
       "query_qp": 13, "destroy_qp": 14, "list_devices": 15,
       "create_srq": 16, "modify_srq": 17, "query_srq": 18, "destroy_srq": 19}


def msg(op, body=b"", fd=0):
    b = bytes([OPS[op]]) + body
    return struct.pack("<HB", len(b), 0x80 | fd) + b


def raw(b, fd=0):
    return struct.pack("<HB", len(b), fd) + b


def wqe(step, opcode, flags, nsge, raddr=0, rkey=0):
    # struct dpr_shm_swqe (lib/shm/dpr_shm.h): header, remote address and
    # key, then the SGEs
    w = struct.pack("<QIIII Q II", 7, opcode, flags, 0, nsge, raddr, rkey, 0)
    w += struct.pack("<QII", 0x1000, 64, 0x100)
    b = bytes([step]) + w
    return struct.pack("<HB", len(b), 0x40) + b


def qp_attr(state, **kw):
    f = dict(qp_state=state, cur=0, mtu=3, rq_psn=0, sq_psn=0, dqpn=0x11,
             access=14)
    f.update(kw)
    a = struct.pack("<7I", f["qp_state"], f["cur"], f["mtu"], f["rq_psn"],
                    f["sq_psn"], f["dqpn"], f["access"])
    gid = bytes(10) + b"\xff\xff" + bytes([10, 77, 0, 2])
    a += gid + struct.pack("<I", 0) + bytes([1, 64, 0, 1]) + struct.pack("<HH", 0, 0)
    a += bytes([16, 16, 12, 1, 14, 7, 7, 0])
    return a


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    open_ = msg("open", struct.pack("<I", 0))
    base = (open_ + msg("alloc_pd") + msg("create_cq", struct.pack("<Ii", 16, -1)) +
            msg("create_qp", struct.pack("<10I", 1, 2, 2, 2, 0, 16, 16, 1, 1, 16)))
    seeds = {
        "session": base +
        msg("reg_mr", struct.pack("<IIQQQQQ", 1, 15, 0x1000, 4096, 0, 4096, 0), 1) +
        msg("modify_qp", struct.pack("<II", 3, 1 | 16 | 32 | 8) + qp_attr(1)) +
        msg("modify_qp", struct.pack("<II", 3, 1 | 128 | 256 | 4096 | 1048576 |
                                     131072 | 32768) + qp_attr(2)) +
        msg("modify_qp", struct.pack("<II", 3, 1 | 512 | 1024 | 2048 | 65536 |
                                     8192) + qp_attr(3)) +
        wqe(1, 0, 2, 1, 0x2000, 0x100) + wqe(1, 2, 2 | 8, 16) +
        wqe(200, 4, 2, 1, 0x2000, 0x100) +
        msg("query_qp", struct.pack("<I", 3)) + msg("destroy_qp", struct.pack("<I", 3)) +
        msg("dereg_mr", struct.pack("<I", 4)) + msg("destroy_cq", struct.pack("<I", 2)) +
        msg("dealloc_pd", struct.pack("<I", 1)),
        "channel": open_ + msg("create_channel", b"", 2) +
        msg("create_cq", struct.pack("<Ii", 8, 1)) + msg("destroy_channel", struct.pack("<I", 1)) +
        msg("destroy_cq", struct.pack("<I", 2)),
        "leave": base + msg("reg_mr", struct.pack("<IIQQQQQ", 1, 1, 0, 65536, 0, 65536, 0), 1),
        "refusals": open_ + msg("alloc_pd") +
        msg("reg_mr", struct.pack("<IIQQQQQ", 1, 1, 0, 4096, 0, 4096, 0), 4) +
        msg("reg_mr", struct.pack("<IIQQQQQ", 1, 1, 0, 4096, 0, 4096, 0), 8) +
        msg("create_qp", struct.pack("<10I", 1, 2, 2, 4, 0, 16, 16, 1, 1, 0)) +
        msg("open", struct.pack("<I", 0)) + msg("list_devices") + msg("query_port"),
        # an SRQ (handle 3) and an RC and a UD QP on it, its limit, then
        # the SRQ destroyed while in use and after
        "srq": open_ + msg("alloc_pd") + msg("create_cq", struct.pack("<Ii", 16, -1)) +
        msg("create_srq", struct.pack("<4I", 1, 16, 1, 4)) +
        msg("create_qp", struct.pack("<11I", 1, 2, 2, 2, 0, 16, 16, 1, 1, 16, 3)) +
        msg("create_qp", struct.pack("<11I", 1, 2, 2, 4, 0, 16, 0, 1, 1, 0, 3)) +
        msg("modify_srq", struct.pack("<4I", 3, 2, 0, 8)) +
        msg("modify_srq", struct.pack("<4I", 3, 1, 32, 0)) +
        msg("query_srq", struct.pack("<I", 3)) + msg("destroy_srq", struct.pack("<I", 3)) +
        msg("destroy_qp", struct.pack("<I", 4)) + msg("destroy_qp", struct.pack("<I", 5)) +
        msg("destroy_srq", struct.pack("<I", 3)),
        "garbage": raw(b"\x01\x02\x03") + raw(bytes(256)) +
        raw(struct.pack("<IHHIi", 0x31525044, 9, 1, 1, 0) + bytes(240)),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("%d seeds in %s" % (len(seeds), out))


if __name__ == "__main__":
    main()
