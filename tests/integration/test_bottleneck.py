#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""DCQCN through a bottleneck (issue 47): two dprdmad joined by net_memif,
B's port behind the fault adapter's bottleneck model -- a 1 Gbit/s link, a
FIFO of 1 MiB before it (tail drop past it), ECN CE on ECN-capable frames
while more than 64 KiB wait (DCTCP-style step marking). dprdma-perf
write_bw streams 64 KiB WRITEs on 4, then 16 QPs from B to A: A's
notification point answers the marks with CNPs, B's reaction point cuts
and paces each QP. Measured over a window after the start, from B's
telemetry: each QP's packets (Jain's fairness index over the QPs), the
bottleneck's bytes (its utilisation), the backlog frames found (its 99th
percentile) and its drops.

Asserted: every stream completes, the marks, the CNPs and the cuts happen;
the QPs share the link fairly (Jain >= 0.95 with 4, >= 0.90 with 16) and
the paced QPs keep it busy (>= 0.8: a pacer that starved the link would
show here). Printed, not asserted: the backlog and the drops. Issue 47's
goals not met here with ConnectX's defaults at this rate (five runs at
the QPs' first window of min_inflight: 4 QPs Jain 1.000, utilisation
0.97, no drop, backlog p99 500-670 KiB; 16 QPs Jain 0.98-0.99,
utilisation 1.00, 73-105k drops, the buffer full): alpha -- updated every
microsecond, dce_tcp_rtt 1 -- stays near 0 and a cut takes little off,
and the QPs' in-flight windows, not their rates, bound the queue
(doc/architecture.rst, "Congestion control"). Then the 16 QPs again with
the reaction point off, for the comparison."""

import os
import subprocess
import sys
import time

import dprtest as t

PID = os.getpid()
MEMIF = "/tmp/dprt-bn-%d.sock" % PID
PA, PB = "dprt-bna-%d" % PID, "dprt-bnb-%d" % PID
PERF = os.environ.get("DPR_PERF", "build/app/dprdma-perf")
CTL = os.path.join(os.path.dirname(t.DPRDMAD), "dprdmactl")
PORT = [19900 + PID % 1000]
RATE_MBPS, QUEUE_KB, MARK_KB = 1000, 1024, 64
WARM_S, WINDOW_S = 1.5, 2.0


def qp_packets(prefix):
    """The RC QPs of dprdma-perf on B: {qpn: req_packets} (a QP listed and
    gone before it is asked for, as a finished run's, is passed over)."""
    out = {}
    for q in t.telemetry(prefix, "/dprdma/qps,0"):
        info = t.telemetry(prefix, "/dprdma/qp,0,%d" % q)
        if info is not None and info.get("type") == "RC" and \
                "dprdma-perf" in info.get("owner", ""):
            out[q] = info["req_packets"]
    return out


def faults(prefix):
    return t.telemetry(prefix, "/dprdma/port/faults,0")


def run(a, b, nqp, seconds):
    """write_bw -q nqp, server on A, client on B; the window's figures."""
    PORT[0] += 1
    args = ["write_bw", "-s", "65536", "-q", str(nqp), "-D", str(seconds),
            "--yield", "-p", str(PORT[0])]
    srv = subprocess.Popen([PERF] + args, env=dict(os.environ, DPRDMA_SOCKET=a.socket),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(0.3)
    cli = subprocess.Popen([PERF] + args + ["127.0.0.1"],
                           env=dict(os.environ, DPRDMA_SOCKET=b.socket),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(WARM_S)
        p0, f0, t0 = qp_packets(PB), faults(PB), time.time()
        time.sleep(WINDOW_S)
        p1, f1, t1 = qp_packets(PB), faults(PB), time.time()
        out = cli.communicate(timeout=seconds + 60)[0]
        sout = srv.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        cli.kill()
        srv.kill()
        t.fail("write_bw -q %d: timed out" % nqp)
    for who, o in (("server", sout), ("client", out)):
        sys.stdout.write("".join("  %s| %s\n" % (who, x) for x in o.splitlines()))
    t.check(srv.returncode == 0 and cli.returncode == 0,
            "write_bw -q %d: both exit 0 (%d, %d)" % (nqp, srv.returncode, cli.returncode))
    x = [p1[q] - p0[q] for q in p1 if q in p0]
    jain = sum(x) ** 2 / (len(x) * sum(v * v for v in x)) if x and sum(x) else 0
    util = (f1["bn_sent_bytes"] - f0["bn_sent_bytes"]) * 8 / \
        (RATE_MBPS * 1e6 * (t1 - t0))
    return {"qps": len(x), "jain": jain, "util": util,
            "drops": f1["bn_dropped"] - f0["bn_dropped"],
            "marked": f1["bn_marked"] - f0["bn_marked"],
            "p99": f1["bn_backlog_p99"], "max": f1["bn_backlog_max"],
            "per_qp": x}


def main():
    t.require_root_and_netns()
    spec = "loss=0,rate_mbps=%d,queue_kb=%d,mark_kb=%d" % (RATE_MBPS, QUEUE_KB, MARK_KB)
    a = t.memif_daemon(PA, "server", "10.94.0.1/24", MEMIF)
    # B's worker on CPU 0, A's on CPU 1, as two boxes have them: on one
    # CPU the two workers' spins yield to each other every few
    # microseconds, A answers marks in twice as many CNPs and the 4 QPs'
    # shares swung (Jain 0.94-0.999 in four runs; 0.997-1.000 apart)
    b = t.memif_daemon(PB, "client", "10.94.0.2/24", MEMIF, extra=["--faults", spec],
                       lcores="0@1,1@0")
    try:
        time.sleep(1)
        for nqp in (4, 16):
            c0 = t.telemetry(PB, "/dprdma/transport/stats,0")
            r = run(a, b, nqp, int(WARM_S + WINDOW_S + 2))
            c1 = t.telemetry(PB, "/dprdma/transport/stats,0")
            t.log("%d QPs: Jain %.3f, utilisation %.3f, backlog p99 %d B (max %d), "
                  "%d marked, %d dropped; B: %d CNPs, %d cuts; per QP %s"
                  % (nqp, r["jain"], r["util"], r["p99"], r["max"], r["marked"],
                     r["drops"], c1["cnp_rx"] - c0["cnp_rx"], c1["cc_cuts"] - c0["cc_cuts"],
                     r["per_qp"]))
            t.check(r["qps"] == nqp, "%d QPs sending (%d seen)" % (nqp, r["qps"]))
            t.check(c1["cc_cuts"] > c0["cc_cuts"] and r["marked"] > 0,
                    "%d QPs: the bottleneck marked, B cut its rates" % nqp)
            # 16 QPs: 0.90, under the goal's 0.95 -- 0.98-0.99 measured
            # here, 0.96 under ASan; 0.87 with QPs that started at the
            # full window (1,024 packets each: 16 MiB into 1 MiB)
            want = 0.95 if nqp == 4 else 0.90
            t.check(r["jain"] >= want, "%d QPs: Jain's fairness index %.3f >= %.2f"
                    % (nqp, r["jain"], want))
            t.check(r["util"] >= 0.8, "%d QPs: the bottleneck %.3f used (>= 0.8)"
                    % (nqp, r["util"]))
        # the same 16 QPs with the reaction point off, for the comparison
        t.run([CTL, "-p", PB, "congestion", "react", "off"])
        r = run(a, b, 16, int(WARM_S + WINDOW_S + 2))
        t.log("16 QPs, react off: Jain %.3f, utilisation %.3f, backlog p99 %d B "
              "(max %d), %d dropped" % (r["jain"], r["util"], r["p99"], r["max"],
                                        r["drops"]))

    finally:
        rcs = t.stop_and_close((b, a), ())
    t.check(rcs == [0, 0], "both daemons stop cleanly")
    t.log("PASS")


if __name__ == "__main__":
    main()
