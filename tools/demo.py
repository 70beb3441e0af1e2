#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""tools/demo.py PREFIX_A PREFIX_B [SECONDS]: drive two running dprdmad
boxes through their built-in clients over telemetry: connect two QPs, then
RDMA WRITE, READ and SEND streams of 64 KiB messages for SECONDS each (5),
a live line a second (messages/s, Gbit/s, retransmissions), and a summary
in which the receiving box's CRC of its memory must equal the sender's."""

import json
import socket
import sys
import time

A, B = sys.argv[1], sys.argv[2]
SECS = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
SIZE = 65536
MR = 64 << 20


def tel(prefix, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix)
    hello = json.loads(s.recv(16384).decode())
    s.send(cmd.encode())
    r = json.loads(s.recv(hello["max_output_len"]).decode())
    s.close()
    r = r[cmd.split(",")[0]]
    if r is None:
        sys.exit("demo: %s: %s: no answer (the box did not run it in time)"
                 % (prefix, cmd))
    if isinstance(r, dict) and r.get("rc", 0) != 0:
        sys.exit("demo: %s: %s -> %r" % (prefix, cmd, r))
    return r


def stream(label, runner, cmd, verify):
    start = tel(runner, "/dprdma/transport/stats,0")["retransmits"]
    tel(runner, cmd)
    t0 = time.time()
    while True:
        time.sleep(1)
        s = tel(runner, "/dprdma/client/status")
        rt = tel(runner, "/dprdma/transport/stats,0")["retransmits"] - start
        print("   %-5s %7d messages  %9d msg/s  %6.2f Gbit/s  %d retransmitted"
              % (label, s["completed"], s["msgs_per_s"],
                 s["mbit_per_s"] / 1000.0, rt), flush=True)
        if time.time() - t0 >= SECS and s["active"]:
            tel(runner, "/dprdma/client/stop")
        if not s["active"]:
            break
    if s["errors"]:
        sys.exit("demo: %s: %d errors" % (label, s["errors"]))
    ok = verify()
    print("   %-5s done: %d messages, %.1f MiB, %s" %
          (label, s["completed"], s["bytes"] / 1048576.0,
           "data verified" if ok else "DATA DIFFERS"), flush=True)
    return ok, s


def main():
    ca = tel(A, "/dprdma/client/setup,2,%d" % MR)
    cb = tel(B, "/dprdma/client/setup,2,%d" % MR)
    aq, bq = ca["qpns"].split(","), cb["qpns"].split(",")
    ap, bp = ca["psns"].split(","), cb["psns"].split(",")
    for i in range(2):
        tel(A, "/dprdma/client/connect,%d,%s,%s,%s" % (i, bq[i], bp[i],
                                                      cb["gid_ipv4"]))
        tel(B, "/dprdma/client/connect,%d,%s,%s,%s" % (i, aq[i], ap[i],
                                                      ca["gid_ipv4"]))
    print("   box A %s: QPs %s, MR %d MiB at 0x%x rkey 0x%x" %
          (ca["gid_ipv4"], ca["qpns"], MR >> 20, ca["mr_va"], ca["rkey"]))
    print("   box B %s: QPs %s, MR %d MiB at 0x%x rkey 0x%x" %
          (cb["gid_ipv4"], cb["qpns"], MR >> 20, cb["mr_va"], cb["rkey"]))
    results = []

    crc = tel(A, "/dprdma/client/fill,0,%d,1" % SIZE)["crc32"]
    results.append(stream(
        "WRITE", A, "/dprdma/client/run,0,write,%d,100000000,0,%d,%d,64" %
        (SIZE, cb["mr_va"], cb["rkey"]),
        lambda: tel(B, "/dprdma/client/checksum,0,%d" % SIZE)["crc32"] == crc))

    crc2 = tel(B, "/dprdma/client/fill,%d,%d,2" % (1 << 20, SIZE))["crc32"]
    results.append(stream(
        "READ", A, "/dprdma/client/run,1,read,%d,100000000,%d,%d,%d,64" %
        (SIZE, 2 << 20, cb["mr_va"] + (1 << 20), cb["rkey"]),
        lambda: tel(A, "/dprdma/client/checksum,%d,%d" % (2 << 20, SIZE))
        ["crc32"] == crc2))

    tel(A, "/dprdma/client/recv,0,100000000,%d,%d" % (4 << 20, SIZE))
    crc3 = tel(B, "/dprdma/client/fill,%d,%d,3" % (3 << 20, SIZE))["crc32"]
    results.append(stream(
        "SEND", B, "/dprdma/client/run,0,send,%d,100000000,%d,0,0,64" %
        (SIZE, 3 << 20),
        lambda: tel(A, "/dprdma/client/checksum,%d,%d" % (4 << 20, SIZE))
        ["crc32"] == crc3))
    if not all(ok for ok, _ in results):
        sys.exit("demo: data differs")


if __name__ == "__main__":
    main()
