#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""dprdma-gen against a real dprdmad over net_memif, and against itself.

  raw   dprdma-gen --mode raw into --mode sink: the sink counts every frame
        the sender put on the link, of the size asked; with --rate the
        sender stays within its budget.
  ping  --mode ping against --mode echo: every frame comes back, latency
        figures reported.
  rc    dprdma-gen as the requester of 2 QPs into dprdmad's built-in
        client: WRITE 64 B and 5000 B (5 packets a message) and READ 3000 B
        with --count: every message acknowledged or answered, the daemon's
        transport counted as many request packets, and the bytes in the
        daemon's MR are the generator's pattern (CRC-32 over telemetry);
        SEND 100 B into posted receives (received count and bytes checked);
        a wrong rkey: NAK (remote access error), the QP ended, exit 1;
        1024 QPs at once (the client's connect_range): every message of
        every QP acknowledged, samples of their regions hold the pattern;
        bad options: exit 2 with the usage. No speed is asserted."""

import json
import os
import subprocess
import sys
import time
import zlib

import dprtest as t

PID = os.getpid()
MEMIF = "/tmp/dprt-gen-%d.sock" % PID
PA = "dprt-ga-%d" % PID
GEN = os.environ.get("DPR_GEN", "build/app/dprdma-gen")
STRIDE = 65536


def gen_cmd(prefix, role, lcore, args):
    """dprdma-gen on one end (memif role) of the test's link."""
    return [GEN, "-l", lcore, "--no-pci", "--no-huge", "-m", "256",
            "--file-prefix", prefix, "--log-level", "*:error", "--vdev",
            "net_memif0,role=%s,socket=%s,socket-abstract=no" % (role, MEMIF),
            "--"] + args


def gen(prefix, role, args, lcore="0", timeout=120, check=True):
    r = subprocess.run(gen_cmd(prefix, role, lcore, args), capture_output=True,
                       text=True, timeout=timeout)
    sys.stdout.write("".join("  gen| %s\n" % x for x in
                             (r.stdout + r.stderr).splitlines()[-4:]))
    if check and r.returncode != 0:
        t.fail("dprdma-gen %s: exit %d" % (" ".join(args), r.returncode))
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    return r.returncode, json.loads(lines[-1]) if lines else None, r


def pattern(n):
    return bytes((i * 7 + 1) & 0xff for i in range(n))


def against(receiver, args, prefix):
    """dprdma-gen ARGS (the memif client) against a --mode RECEIVER (sink
    or echo) on the server end: both JSON reports."""
    # a memif server cannot listen where an old socket file lies
    if os.path.exists(MEMIF):
        os.unlink(MEMIF)
    rx = subprocess.Popen(gen_cmd("dprt-gs-%d" % PID, "server", "1",
                                  ["--mode", receiver, "--seconds", "30", "--json"]),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the memif server's port started first: a client that comes before
    # it is refused ("ID not found") and DPDK's memif client does not try
    # again (the gen test failed so in CI, the sink still making its mbufs)
    first = t.wait_stderr_line(rx, "port 0 started", 60, "the " + receiver)
    _, tx, _ = gen(prefix, "client", args)
    out, err = rx.communicate(timeout=60)
    err = first + err
    lines = [x for x in out.splitlines() if x.startswith("{")]
    if not lines:
        t.fail("the %s printed nothing (exit %d): %s" % (receiver, rx.returncode, err[-1500:]))
    return tx, json.loads(lines[-1])


def test_raw():
    for size, rate in ((64, 0), (1082, 0), (128, 20000)):
        args = ["--mode", "raw", "--ip", "10.94.0.2/24", "--dst", "10.94.0.1",
                "--dst-mac", "02:00:00:00:00:01", "--size", str(size),
                "--seconds", "2", "--json"]
        if rate:
            args += ["--rate", str(rate)]
        tx, rx = against("sink", args, "dprt-gt-%d" % PID)
        t.check(tx["tx_frames"] > 0 and rx["rx_frames"] == tx["tx_frames"] and
                rx["rx_bytes"] == tx["tx_frames"] * size,
                "raw %d B%s: the sink counted every frame sent (%d of %d, %d bytes)"
                % (size, " at %d/s" % rate if rate else "", rx["rx_frames"],
                   tx["tx_frames"], rx["rx_bytes"]))
        if rate:
            t.check(tx["tx_frames"] <= rate * 2 + 32 and
                    tx["tx_frames"] >= rate * 2 // 2,
                    "raw at --rate %d for 2 s: %d frames, within the budget"
                    % (rate, tx["tx_frames"]))


def test_ping():
    """ping against echo: every round trip comes back, its time reported."""
    j, e = against("echo", ["--mode", "ping", "--ip", "10.94.0.2/24", "--dst",
                            "10.94.0.1", "--dst-mac", "02:00:00:00:00:01", "--size",
                            "138", "--count", "2000", "--json"], "dprt-gp-%d" % PID)
    t.check(j["tx_frames"] == 2000 and j["rx_frames"] == 2000 and j["timeouts"] == 0 and
            e["rx_frames"] == 2000 and e["tx_frames"] == 2000 and
            0 < j["lat_p50_us"] <= j["lat_p99_us"] and j["lat_avg_us"] > 0,
            "ping 138 B x 2000 against echo: every frame back, half the round "
            "trip p50 %.2f us, p99 %.2f us" % (j["lat_p50_us"], j["lat_p99_us"]))


def setup(d, nq):
    c = t.telemetry(PA, "/dprdma/client/setup,%d,%d" % (nq, 4 << 20))
    qpns, _ = t.client_qpns(PA, nq)
    for i in range(nq):
        r = t.telemetry(PA, "/dprdma/client/connect,%d,%d,%d,10.94.0.2"
                        % (i, 0x100 + i, (i * 0x10000) & 0xffffff))
        t.check(r["rc"] == 0, "client QP %d connected to the generator's" % i)
    return c, qpns


def rc_args(c, qpns, op, size, count, extra=()):
    return ["--mode", "rc", "--ip", "10.94.0.2/24", "--dst", "10.94.0.1",
            "--qps", str(len(qpns)), "--rqpn", ",".join(map(str, qpns)),
            "--rkey", str(c["rkey"]), "--va", str(c["mr_va"]), "--stride",
            str(STRIDE), "--op", op, "--size", str(size), "--count", str(count),
            "--json"] + list(extra)


def tstats():
    return t.telemetry(PA, "/dprdma/transport/stats,0")


def test_rc(d):
    for op, size, count in (("write", 64, 20000), ("write", 5000, 2000),
                            ("read", 3000, 2000)):
        c, qpns = setup(d, 2)
        if op == "read":
            for q in range(2):
                t.telemetry(PA, "/dprdma/client/fill,%d,%d,%d" % (q * STRIDE, size, 5 + q))
        s0 = tstats()
        _, j, _ = gen("dprt-gr-%d" % PID, "client", rc_args(c, qpns, op, size, count))
        # the generator stops once every message is answered; frames it
        # resent may still sit in the daemon's RX ring (a slow sanitized
        # daemon on a busy machine): counted once the daemon has read them
        end = time.time() + 10
        while True:
            s1 = tstats()
            if s1["rx_frames"] - s0["rx_frames"] >= j["tx_frames"] or time.time() > end:
                break
            time.sleep(0.1)
        ppm = (size + 1023) // 1024
        t.check(j["messages"] == 2 * count and j["qps_dead"] == 0 and
                j["naks_other"] == 0,
                "%s %d B x %d on 2 QPs: every message done (%d), no error NAK"
                % (op, size, count, j["messages"]))
        got = s1["rx_frames"] - s0["rx_frames"]
        want = 2 * count * (1 if op == "read" else ppm)
        t.check(got == j["tx_frames"] and got >= want,
                "%s: the daemon received the %d frames sent (%d; %d needed)"
                % (op, j["tx_frames"], got, want))
        if op == "read":
            t.check(j["read_responses"] >= 2 * count * ppm,
                    "read: %d response packets for %d messages of %d packets"
                    % (j["read_responses"], 2 * count, ppm))
        else:
            for q in range(2):
                crc = t.telemetry(PA, "/dprdma/client/checksum,%d,%d"
                                  % (q * STRIDE, size))["crc32"]
                t.check(crc == zlib.crc32(pattern(size)),
                        "%s: QP %d's region holds the generator's %d bytes"
                        % (op, q, size))

    # SEND into receives posted by the daemon's client
    c, qpns = setup(d, 1)
    t.telemetry(PA, "/dprdma/client/recv,0,3000,%d,4096" % STRIDE)
    _, j, _ = gen("dprt-gr-%d" % PID, "client", rc_args(c, qpns, "send", 100, 3000))
    t.wait_for(lambda: t.telemetry(PA, "/dprdma/client/status")["recv_done"] >= 3000,
               10, "3000 receives done")
    st = t.telemetry(PA, "/dprdma/client/status")
    crc = t.telemetry(PA, "/dprdma/client/checksum,%d,100" % STRIDE)["crc32"]
    t.check(j["messages"] == 3000 and st["recv_bytes"] == 300000 and
            st["recv_errors"] == 0 and crc == zlib.crc32(pattern(100)),
            "send 100 B x 3000: 3000 received, 300000 bytes, the pattern in the "
            "receive buffer (RNR NAKs while receives ran short: %d)" % j["naks_rnr"])

    # a wrong rkey: NAK remote access error, the QP ended, exit 1; 1 KiB
    # frames, so that the daemon is still copying them when the generator
    # goes (it crashed in the memif PMD then, before lib/engine/dpr_quiesce.c)
    c, qpns = setup(d, 1)
    c["rkey"] ^= 0x5a5a00
    rc, j, _ = gen("dprt-gr-%d" % PID, "client", rc_args(c, qpns, "write", 1024, 5000),
                   check=False)
    t.check(rc == 1 and j["qps_dead"] == 1 and j["naks_other"] >= 1 and
            "ACCESS" in j["last_nak"].upper(),
            "write with a wrong rkey: NAK %s, QP ended, exit %d"
            % (j["last_nak"], rc))


def test_usage():
    for bad in ([], ["--"], ["--", "--mode", "x"], ["--", "--mode", "rc"],
                ["--", "--mode", "rc", "--ip", "10.0.0.1", "--dst", "10.0.0.2"],
                ["--", "--mode", "rc", "--ip", "10.0.0.1", "--dst", "10.0.0.2",
                 "--qps", "2", "--rqpn", "17"],
                ["--", "--mode", "raw", "--ip", "10.0.0.1", "--dst", "10.0.0.2",
                 "--size", "20"],
                ["--", "--mode", "rc", "--mtu", "1000"], ["--", "--bogus"],
                ["--", "--mode", "rc", "--op", "xor"],
                ["--", "--mode", "ping", "--ip", "10.0.0.1"],
                ["--", "--mode", "ping", "--ip", "10.0.0.1", "--dst", "10.0.0.2",
                 "--size", "20"]):
        r = subprocess.run([GEN] + bad, capture_output=True, text=True, timeout=10)
        t.check(r.returncode == 2 and "usage:" in r.stderr,
                "dprdma-gen %s: exit 2 with the usage (%s)"
                % (" ".join(bad), r.stderr.splitlines()[0] if r.stderr else ""))


def test_many_qps(d):
    nq, stride, count = 1024, 4096, 20
    c = t.telemetry(PA, "/dprdma/client/setup,%d,%d" % (nq, nq * stride))
    qpns, _ = t.client_qpns(PA, nq)
    steps = {(b - a) & 0xffffff for a, b in zip(qpns, qpns[1:])}
    t.check("qpns" not in c and len(set(qpns)) == nq and len(steps) > nq - 10,
            "setup of %d QPs: the list too long for setup's answer, paged "
            "through /dprdma/client/qpns; %d distinct QPNs, %d distinct steps "
            "between them (unpredictable)" % (nq, len(set(qpns)), len(steps)))
    r = t.telemetry(PA, "/dprdma/client/connect_range,0,%d,%d,0,%d,10.94.0.2"
                    % (nq, 0x100, 0x10000))
    t.check(r["rc"] == 0, "connect_range: %d QPs to the generator's" % nq)
    bad = t.telemetry(PA, "/dprdma/client/connect_range,1000,100,256,0,0,10.94.0.2")
    t.check(bad["rc"] != 0 and "expected" in bad.get("error", ""),
            "connect_range past the last QP: refused (%s)" % bad.get("error"))
    s0 = tstats()
    _, j, _ = gen("dprt-gm-%d" % PID, "client",
                  ["--mode", "rc", "--ip", "10.94.0.2/24", "--dst", "10.94.0.1",
                   "--qps", str(nq), "--rqpn", ",".join(map(str, qpns)),
                   "--rkey", str(c["rkey"]), "--va", str(c["mr_va"]), "--stride",
                   str(stride), "--op", "write", "--size", "64", "--count",
                   str(count), "--json"])
    s1 = tstats()
    t.check(j["messages"] == nq * count and j["qps_dead"] == 0 and j["naks_other"] == 0,
            "write 64 B x %d on each of %d QPs: every message done (%d)"
            % (count, nq, j["messages"]))
    t.check(s1["rx_frames"] - s0["rx_frames"] >= nq * count,
            "the daemon received them (%d frames)" % (s1["rx_frames"] - s0["rx_frames"]))
    for q in (0, 1, 511, nq - 1):
        crc = t.telemetry(PA, "/dprdma/client/checksum,%d,64" % (q * stride))["crc32"]
        t.check(crc == zlib.crc32(pattern(64)),
                "QP %d of %d: its region holds the generator's 64 bytes" % (q, nq))


def main():
    t.require_root_and_netns()
    test_usage()
    test_raw()
    test_ping()
    if os.path.exists(MEMIF):
        os.unlink(MEMIF)
    d = t.Daemon(["--lcores", "0@1,1@1", "--no-pci", "--no-huge", "-m", "512",
                  "--file-prefix", PA, "--vdev",
                  "net_memif0,role=server,socket=%s,socket-abstract=no" % MEMIF,
                  "--", "--ip", "10.94.0.1/24", "--idle", "yield"], prefix=PA)
    try:
        test_rc(d)
        test_many_qps(d)
        # each generator that went took its memif region with it: unmapped
        # on the daemon's interrupt thread only after its worker left any
        # burst on it (lib/engine/dpr_quiesce.c; without, a generator that
        # exits while the daemon still copies its frames, as the wrong
        # rkey's does, crashed the daemon in the memif PMD)
        info = t.telemetry(PA, "/dprdma/info")
        t.check(info["unmap_grace_waits"] > 0 and info["unmap_grace_timeouts"] == 0,
                "generators gone: %d unmappings waited for the worker, %d timed out"
                % (info["unmap_grace_waits"], info["unmap_grace_timeouts"]))
    finally:
        d.stop()
    t.log("dprdma-gen: all tests passed")


if __name__ == "__main__":
    main()
