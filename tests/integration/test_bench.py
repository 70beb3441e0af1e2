#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""tools/bench.py --quick --no-rxe runs through: every stage leaves its rows
in results.csv with figures above zero, the latency samples behind the CDF
exist, both workers of the 2-worker daemon carried traffic, the loss stage
lost and resent packets, the shared-box stage ran MPI's NetPIPE both
ways, the CM stage connected, used and tore down 2,000 connections, ratios.md holds each goal's line, and the three
plots are PNG images. No speed is asserted:
the figures are whatever this machine gives."""

import csv
import os
import shutil
import subprocess
import sys
import tempfile

import dprtest as t

BENCH = os.path.join(t.SOURCE_ROOT, "tools", "bench.py")


def main():
    t.require_root_and_netns()
    for prog in ("iperf3", "sockperf"):
        if shutil.which(prog) is None:
            (t.fail if os.environ.get("CI") == "true" else t.skip)(
                "%s missing (tools/setup.sh installs it)" % prog)
    out = tempfile.mkdtemp(prefix="dprt-bench-")
    env = dict(os.environ, DPRDMA_BUILD=os.path.dirname(os.path.dirname(t.DPRDMAD)))
    r = subprocess.run(["/usr/bin/python3", BENCH, "--quick", "--no-rxe", "--out", out],
                       capture_output=True, text=True, timeout=900, env=env)
    sys.stdout.write("".join("  bench| %s\n" % x for x in r.stdout.splitlines()
                             if not x.startswith("  |")))
    t.check(r.returncode == 0, "tools/bench.py --quick exits 0 (%s)" % r.stderr[-500:])
    with open(os.path.join(out, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    by = {}
    for row in rows:
        by.setdefault(row["stage"], []).append(row)
    for stage, n, key in (("raw", 4, "frames_per_s"), ("dprdma", 9, "msg_per_s"),
                          ("gen", 3, "msg_per_s"), ("shim", 4, "msg_per_s"),
                          ("lat", 4, "lat_avg_us"), ("lat2", 2, "lat_p50_us"),
                          ("workers", 1, "msg_per_s"),
                          ("tcp", 2, "gbit_per_s")):
        got = [x for x in by.get(stage, []) if x.get(key)]
        t.check(len(got) == n and all(float(x[key]) > 0 for x in got),
                "stage %s: %d rows with %s > 0 (%s)"
                % (stage, n, key, [x.get(key) for x in by.get(stage, [])]))
    # the shared box: NetPIPE through dprdma and over Open MPI's TCP at
    # 4 sizes, ib_write_lat with yielding and busy workers, the ping-pong
    shared = by.get("shared", [])
    np_rows = [x for x in shared if x["system"].startswith("NetPIPE")]
    t.check(len(np_rows) == 8 and all(float(x["gbit_per_s"]) > 0 and
                                      float(x["lat_avg_us"]) > 0 for x in np_rows) and
            len([x for x in shared if x.get("lat_p50_us")]) == 2 and len(shared) == 11,
            "stage shared: 8 NetPIPE rows, 2 ib_write_lat rows, the ping-pong (%s)"
            % [(x["system"], x["size"]) for x in shared])
    cm = by.get("cm", [])
    t.check(len(cm) == 2 and all(float(x["per_s"]) > 0 for x in cm),
            "stage cm: connections and teardowns per second (%s)"
            % [(x["op"], x.get("per_s")) for x in cm])
    for row in by["lat"]:
        with open(os.path.join(out, row["cdf"])) as f:
            xs = [float(x) for x in f if x.strip()]
        t.check(len(xs) >= 900 and xs == sorted(xs) and xs[0] > 0,
                "%s %s: %d sorted latency samples" % (row["system"], row["op"], len(xs)))
    t.check("2 workers with traffic" in by["workers"][0]["note"],
            "2 workers per daemon: both carried traffic (%s)" % by["workers"][0]["note"])
    with open(os.path.join(out, "ratios.md")) as f:
        md = f.read()
    for goal in (">= 0.8", ">= 40", ">= 3", "<= 0.2", "<= 1.5", "scaling not measured",
                 "(kernel TCP's)", "<= 5", "Open MPI's TCP", ">= 5000"):
        t.check(goal in md, "ratios.md states the goal %r" % goal)
    # through loss: SR auto and off, loss-free and 1%, and TCP at both;
    # the 64 B latencies at 0 and 0.1%
    loss = by.get("loss", [])
    bw = [x for x in loss if x.get("gbit_per_s")]
    t.check(len(bw) == 6 and all(float(x["gbit_per_s"]) > 0 for x in bw) and
            len([x for x in loss if x.get("lat_p99_us")]) == 2,
            "stage loss: 6 goodput rows and 2 latency rows (%s)"
            % [(x["system"], x["loss"], x.get("gbit_per_s")) for x in loss])
    lossy = [x for x in bw if x["system"] == "dprdma SR auto" and float(x["loss"]) > 0]
    t.check(len(lossy) == 1 and float(lossy[0]["resent"]) > 0 and
            float(lossy[0]["lost"]) > 0,
            "1%% loss was real: %s lost, %s sent again" %
            (lossy[0]["lost"], lossy[0]["resent"]) if lossy else "no lossy row")
    for png in ("bandwidth.png", "msgrate.png", "latency_cdf.png"):
        with open(os.path.join(out, png), "rb") as f:
            head = f.read(8)
        t.check(head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(os.path.join(out, png)) > 10000,
                "%s is a PNG image" % png)
    shutil.rmtree(out)
    t.log("tools/bench.py: all checks passed")


if __name__ == "__main__":
    main()
