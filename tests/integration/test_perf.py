#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""dprdma-perf between two dprdmad joined by net_memif (yielding workers,
clients with --yield or -e: the 2-core machines have no core to spare).

Every test (write, read, send, atomic; bandwidth and latency) runs short:
both ends exit 0, the client reports the iterations it was asked for (per
QP, times the QPs; a timed run: the count the daemon saw), its own data
check passed (it fails the run otherwise), and the client's daemon took
exactly that many send WQEs. --json is parsed; -a covers every size. Bad
options exit 2 with the usage; a client asking a server for another test
is refused by it (exit 1, the reason printed). No speed is asserted."""

import json
import os
import re
import subprocess
import sys
import time

import dprtest as t

PID = os.getpid()
MEMIF = "/tmp/dprt-perf-%d.sock" % PID
PA, PB = "dprt-pa-%d" % PID, "dprt-pb-%d" % PID
PERF = os.environ.get("DPR_PERF", "build/app/dprdma-perf")
PORT = [19600 + PID % 1000]


def daemon(prefix, role, ip):
    return t.memif_daemon(prefix, role, ip, MEMIF)


def send_wqes(prefix):
    return t.telemetry(prefix, "/dprdma/shim/stats")["send_wqes"]


def pair(a, b, args, timeout=120):
    """Server on A, client on B: (server rc, server out, client rc, out)."""
    PORT[0] += 1
    p = ["-p", str(PORT[0])]
    srv = subprocess.Popen([PERF] + args + p, env=dict(os.environ, DPRDMA_SOCKET=a.socket),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cli = subprocess.Popen([PERF] + args + p + ["127.0.0.1"],
                           env=dict(os.environ, DPRDMA_SOCKET=b.socket),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out = cli.communicate(timeout=timeout)[0]
        sout = srv.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        # what each side's QPs and the shim hold, for whoever reads the log
        for pre in (PA, PB):
            for line in t.dprdma_state(pre):
                t.log("%s %s" % (pre, line))
        for proc, who in ((cli, "client"), (srv, "server")):
            proc.kill()
            o = proc.communicate()[0] or ""
            sys.stdout.write("".join("  %s| %s\n" % (who, x) for x in o.splitlines()))
        t.fail("dprdma-perf %s: timed out" % " ".join(args))
    for who, o in (("server", sout), ("client", out)):
        sys.stdout.write("".join("  %s| %s\n" % (who, x) for x in o.splitlines()))
    return srv.returncode, sout, cli.returncode, out


def rows(out):
    """The result rows of the table: (bytes, iterations)."""
    return [(int(m.group(1)), int(m.group(2)))
            for m in re.finditer(r"^ (\d+)\s+(\d+)\s+[\d.]+", out, re.M)]


def main():
    t.require_root_and_netns()
    a = daemon(PA, "server", "10.93.0.1/24")
    b = daemon(PB, "client", "10.93.0.2/24")
    try:
        time.sleep(1)
        cases = [
            (["write_bw", "-n", "3000", "--yield"], 3000),
            (["write_bw", "-n", "1000", "-q", "4", "-l", "8", "-s", "4096", "--yield"], 4000),
            (["write_bw", "-n", "2000", "-s", "64", "-I", "64", "-e"], 2000),
            (["read_bw", "-n", "2000", "-s", "8192", "--yield"], 2000),
            (["send_bw", "-n", "4000", "-s", "1500", "-q", "2", "--yield"], 8000),
            (["atomic_bw", "-n", "3000", "--yield"], 3000),
            (["atomic_bw", "-n", "1000", "-A", "CMP_AND_SWAP", "-q", "3", "--yield"], 3000),
            (["write_lat", "-n", "500", "--yield"], 500),
            (["write_lat", "-n", "200", "-s", "5000", "--yield"], 200),
            (["send_lat", "-n", "500", "-s", "100", "--yield"], 500),
            (["send_lat", "-n", "200", "-e"], 200),
            (["read_lat", "-n", "300", "-s", "2048", "--yield"], 300),
            (["atomic_lat", "-n", "300", "--yield"], 300),
        ]
        for args, n in cases:
            what = "dprdma-perf " + " ".join(args)
            w0 = send_wqes(PB)
            src, _, crc, out = pair(a, b, args)
            t.check(src == 0 and crc == 0, "%s: both exit 0 (%d, %d)" % (what, src, crc))
            r = rows(out)
            t.check(len(r) == 1 and r[0][1] == n, "%s: %d iterations reported (%s)"
                    % (what, n, r))
            took = send_wqes(PB) - w0
            t.check(took == n, "%s: the client's daemon took %d send WQEs (%d)"
                    % (what, n, took))

        # every size, 2 B .. 8 MiB
        src, _, crc, out = pair(a, b, ["write_bw", "-a", "-n", "20", "--yield",
                                       "--report_gbits"])
        r = rows(out)
        t.check(src == 0 and crc == 0 and [x[0] for x in r] ==
                [1 << k for k in range(1, 24)] and all(x[1] == 20 for x in r),
                "write_bw -a: 23 sizes 2 B .. 8 MiB, 20 each")

        # a timed run, JSON: the count reported is the count the daemon took
        w0 = send_wqes(PB)
        d0 = t.telemetry(PB, "/dprdma/shim/stats")["doorbells"]
        src, _, crc, out = pair(a, b, ["send_bw", "-D", "2", "-s", "512", "-q", "2",
                                       "-l", "4", "--json", "--yield"])
        j = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
        took = send_wqes(PB) - w0
        # a QP that keeps posting stays on its worker's list: its client
        # rings a doorbell when the worker has let it go, not per post
        rang = t.telemetry(PB, "/dprdma/shim/stats")["doorbells"] - d0
        t.check(0 < rang and rang * 1000 < took,
                "send_bw -D 2: %d doorbells rung for %d send WQEs" % (rang, took))
        t.check(src == 0 and crc == 0 and len(j) == 1 and
                j[0]["iterations"] == took and j[0]["iterations"] > 0 and
                1.9 < j[0]["seconds"] < 10 and j[0]["qps"] == 2,
                "send_bw -D 2 --json: %s; the daemon took %d send WQEs" % (j, took))

        # the client's parameters rule; a server of another test refuses
        PORT[0] += 1
        srv = subprocess.Popen([PERF, "write_lat", "-p", str(PORT[0])],
                               env=dict(os.environ, DPRDMA_SOCKET=a.socket),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        cli = subprocess.run([PERF, "write_bw", "-p", str(PORT[0]), "127.0.0.1"],
                             env=dict(os.environ, DPRDMA_SOCKET=b.socket),
                             capture_output=True, text=True, timeout=60)
        sout = srv.communicate(timeout=30)[0]
        t.check(cli.returncode == 1 and "refused" in cli.stderr and
                srv.returncode == 1 and "write_bw" in sout,
                "write_bw client against a write_lat server: both refuse "
                "(%r, %r)" % (cli.stderr.strip(), sout.strip()))

        # no daemon: a clear error
        r = subprocess.run([PERF, "write_bw", "-p", "1", "127.0.0.1"],
                           env=dict(os.environ, DPRDMA_SOCKET="/nonexistent/sock"),
                           capture_output=True, text=True, timeout=30)
        t.check(r.returncode == 1 and r.stderr.startswith("dprdma-perf:"),
                "without a reachable server or daemon: exit 1 with a reason (%r)"
                % r.stderr.strip())

        for bad in (["foo_bw"], ["write_bw", "-s", "0"], ["write_bw", "-q", "65"],
                    ["atomic_bw", "-s", "16"], ["write_lat", "-q", "2"],
                    ["write_lat", "-D", "3"], ["write_bw", "-l", "200", "-t", "100"],
                    ["write_bw", "-A", "XOR"], ["write_bw", "-e", "--yield"],
                    ["read_bw", "-I", "64"], ["atomic_lat", "-I", "8"],
                    ["write_bw", "--bogus"], ["write_bw", "a", "b"], []):
            r = subprocess.run([PERF] + bad, capture_output=True, text=True, timeout=10)
            t.check(r.returncode == 2 and "usage:" in r.stderr and
                    "dprdma-perf" in r.stderr,
                    "dprdma-perf %s: exit 2 with the usage (%s)"
                    % (" ".join(bad), r.stderr.splitlines()[0] if r.stderr else ""))
    finally:
        b.stop()
        a.stop()
    t.log("dprdma-perf: all tests passed")


if __name__ == "__main__":
    main()
