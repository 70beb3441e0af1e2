#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""tools/bench-shim.py [SECONDS]: what posting and polling through the
shared-memory shim costs against the built-in in-process client, in one
run (not pass/fail).

One dprdmad (a net_null port: nothing leaves the box) with one busy worker
on CPU 1; two of its QPs connected to each other (the worker loops the
frames back), 64 B RDMA WRITEs kept 64 deep, every one signalled:
  1. posted and polled by the built-in client, inside the worker;
  2. posted and polled by a libdprdma client (dprdma-shim-test bench) on
     CPU 0 through the rings, the worker draining them.
Alternated three times; the best of each. The worker is the bottleneck in
both: the ratio is the cost of the shim's path on the worker (doorbell,
WQE copy and check, CQE into shared memory) against the built-in client's.
Prints a table; writes build/bench/shim.csv. Needs root."""

import csv
import json
import os
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DPRDMA_BUILD", os.path.join(TOP, "build"))
SECS = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
import dprtest as t  # noqa: E402

PREFIX = "bench-shim"
SOCK = "/tmp/dprdma-bench-shim-%d.sock" % os.getpid()


def builtin(c):
    t.telemetry(PREFIX, "/dprdma/client/run,0,write,64,1000000000,0,%d,%d,64"
                % (c["mr_va"], c["rkey"]))
    time.sleep(SECS)
    t.telemetry(PREFIX, "/dprdma/client/stop")
    while True:
        s = t.telemetry(PREFIX, "/dprdma/client/status")
        if not s["active"]:
            break
        time.sleep(0.05)
    if s["errors"]:
        sys.exit("bench: built-in client: %d errors" % s["errors"])
    return s["msgs_per_s"]


def shim():
    r = subprocess.run(["taskset", "-c", "0",
                        os.path.join(BUILD, "tests", "dprdma-shim-test"), "bench",
                        SOCK, str(SECS), "64", "64"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit("bench: shim client failed: " + r.stdout + r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])["msgs_per_s"]


def main():
    if os.geteuid() != 0:
        sys.exit("bench: needs root")
    d = t.Daemon(["--lcores", "0@1,1@1", "--no-pci", "--in-memory",
                  "--file-prefix", PREFIX, "--vdev", "net_null0", "--",
                  "--ip", "10.91.0.1/24", "--idle", "busy", "--socket", SOCK],
                 prefix=PREFIX)
    try:
        c = t.telemetry(PREFIX, "/dprdma/client/setup,2,%d" % (16 << 20))
        q, p = c["qpns"].split(","), c["psns"].split(",")
        for i in (0, 1):
            t.telemetry(PREFIX, "/dprdma/client/connect,%d,%s,%s,%s" %
                        (i, q[1 - i], p[1 - i], c["gid_ipv4"]))
        b, s = [], []
        for _ in range(3):
            b.append(builtin(c))
            s.append(shim())
            print("  built-in %.2f Mmsg/s, shim %.2f Mmsg/s" %
                  (b[-1] / 1e6, s[-1] / 1e6), flush=True)
    finally:
        d.stop()
    rows = [("built-in client, in the worker", "%.2f Mmsg/s" % (max(b) / 1e6), "1.00"),
            ("libdprdma client through the shim", "%.2f Mmsg/s" % (max(s) / 1e6),
             "%.2f (cost %.2fx)" % (max(s) / max(b), max(b) / max(s)))]
    print("| 64 B RDMA WRITE, 64 deep, loopback | rate | ratio |")
    print("|---|---|---|")
    for r in rows:
        print("| %s |" % " | ".join(r))
    os.makedirs(os.path.join(BUILD, "bench"), exist_ok=True)
    with open(os.path.join(BUILD, "bench", "shim.csv"), "w") as f:
        w = csv.writer(f)
        w.writerow(["measurement", "rate", "ratio"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
