#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""fuzz-seeds-rx.py OUTDIR: seeds of fuzz_transport_rx for its completer:
ACK/NAK/response streams against the work the target's requester has in
flight (see tests/fuzz/fuzz_transport_rx.c: READ 8 KiB at PSNs 200-207,
WRITE 3000 B at 208-210, SEND 1500 B at 211-212, FETCH_ADD 213, CMP_SWAP
214, SEND with immediate 215), in the target's record format
[flags:1][len:2 LE][BTH...]. Written beside the request seeds already in
tests/fuzz/corpus/fuzz_transport_rx."""

import hashlib
import os
import struct
import sys

OUR_QP, POLL, RSP_PSN, UD = 0x01, 0x04, 0x10, 0x20
UD_SEND, UD_SEND_IMM = 0x64, 0x65
RD_FIRST, RD_MIDDLE, RD_LAST, RD_ONLY, ACK, ATOMIC_ACK = range(0x0d, 0x13)
SYN_ACK, SYN_RNR, SYN_SEQ, SYN_INV, SYN_ACC, SYN_OP = (
    0x1f, 0x21, 0x60, 0x61, 0x62, 0x63)


def bth(op, psn):
    return struct.pack("!BBHB3sB3s", op, 0, 0xffff, 0, b"\0\0\0", 0,
                       (psn & 0xffffff).to_bytes(3, "big"))


def aeth(syn, msn=0):
    return bytes([syn]) + msn.to_bytes(3, "big")


def rec(body, flags=OUR_QP | POLL):
    return struct.pack("<BH", flags, len(body)) + body


def ack(psn, syn=SYN_ACK, msn=0):
    return rec(bth(ACK, psn) + aeth(syn, msn))


def atomic_ack(psn, orig=0x1122334455667788):
    return rec(bth(ATOMIC_ACK, psn) + aeth(SYN_ACK) + struct.pack("!Q", orig))


def read_responses(first=200, n=8, size=1024, flags=OUR_QP | POLL,
                   last_size=None):
    out = b""
    for i in range(n):
        op = RD_ONLY if n == 1 else RD_FIRST if i == 0 else \
            RD_LAST if i == n - 1 else RD_MIDDLE
        ext = aeth(SYN_ACK) if op != RD_MIDDLE else b""
        pay = size if op != RD_LAST or last_size is None else last_size
        out += rec(bth(op, first + i) + ext + bytes([i]) * pay, flags)
    return out


def ud(size, op=UD_SEND, flags=OUR_QP | UD | POLL, qkey=0, sqpn=0x99):
    """A UD datagram (the target writes its Q_Key over qkey with UD)."""
    body = bth(op, 1) + struct.pack("!I", qkey) + (sqpn & 0xffffff).to_bytes(4, "big")
    if op == UD_SEND_IMM:
        body += struct.pack("!I", 0xabcdef01)
    return rec(body + bytes([0x5a]) * size, flags)


def seeds():
    happy_tail = ack(210) + ack(212) + atomic_ack(213) + atomic_ack(214) + ack(215)
    yield "all work completes", read_responses() + happy_tail
    yield "responses and ACKs, PSNs by the target", \
        read_responses(flags=OUR_QP | POLL | RSP_PSN) + happy_tail
    yield "one ACK for everything (implied NAK for the READ and atomics)", ack(215)
    yield "PSN sequence NAK at the WRITE", read_responses() + ack(208, SYN_SEQ) + \
        happy_tail
    yield "RNR NAK at the SEND, then ACKs", read_responses() + ack(210) + \
        ack(211, SYN_RNR) + ack(212) + atomic_ack(213) + atomic_ack(214) + ack(215)
    yield "remote access error at the WRITE", read_responses() + ack(208, SYN_ACC)
    yield "remote operational error at the FETCH_ADD", read_responses() + \
        ack(212) + ack(213, SYN_OP)
    yield "invalid request at the READ", ack(200, SYN_INV)
    yield "READ responses doubled and out of order", \
        read_responses(n=2) + read_responses(first=203, n=1) + \
        read_responses(first=201, n=3)
    yield "READ LAST response short", read_responses(last_size=100)
    yield "atomic ACK where a WRITE is", read_responses() + atomic_ack(210)
    yield "ACKs behind and far ahead", ack(199) + ack(5000) + ack(0xffffff)
    yield "ACK with credits", read_responses() + ack(210, 0x05, 3)
    yield "UD: one that fits the short WQE, then a long one", ud(24) + ud(1024, UD_SEND_IMM)
    yield "UD: too long for the first WQE, no WQE for the third", \
        ud(100) + ud(8) + ud(8) + ud(0)
    yield "UD: wrong Q_Key, then to the RC QP", \
        ud(8, flags=OUR_QP | POLL, qkey=0x1234) + rec(bth(UD_SEND, 1) + bytes(8) + bytes(8))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for _, blob in seeds():
        open(os.path.join(out, hashlib.sha1(blob).hexdigest()), "wb").write(blob)
        n += 1
    print("%d seeds" % n)


if __name__ == "__main__":
    main()
