#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Interop with Linux Soft-RoCE through the drop-in libibverbs: the same
unmodified Debian programs on both sides, rdma-core's and perftest's, the
kernel's rdma_rxe in a qemu guest (tools/rxe-peer) on one side and dprdmad
(net_af_packet on the guest's bridge) with LD_LIBRARY_PATH at
build/drop-in on the other. Each program runs in both directions: the
guest as server with dprdma as client, then the reverse.

  ibv_rc_pingpong at 64 B, 1 KiB (the path MTU), 4 KiB and 64 KiB;
  ib_send_bw, ib_write_bw, ib_read_bw, ib_atomic_bw (FETCH_AND_ADD and
  CMP_AND_SWAP), ib_write_lat, ib_read_lat, ib_send_lat, ib_write_bw -q 4
  (4 KiB, 16 deep when dprdma writes).

Outputs parsed: exit status 0 on both sides, no error line, the iteration
count reported. Every frame of the clean runs is captured on dprdmad's
port and checked by dprdma-pcap (no malformed frame, no bad ICRC either
way). Then with 1% of the guest's frames dropped by tc netem in the guest,
and separately 1% of dprdmad's dropped by its fault-injecting adapter:
ib_write_bw, ib_read_bw and ibv_rc_pingpong must still complete both ways.

Skipped (77) where qemu cannot run; with CI=true a skip where qemu is
installed is a failure. The per-run times are in the log."""

import os
import re
import subprocess
import sys
import time

from rxepeer import BRIDGE, GUEST, NS, OURS, boot, daemon as kit_daemon, kit, \
    cleanup, require_qemu, stop_clean, wire_check, t

PREFIX = "dprt-rxv-%d" % os.getpid()
SOCK = "/tmp/dprt-rxv-%d.sock" % os.getpid()
CAPTURE = "/tmp/dprt-rxv-%d.pcapng" % os.getpid()
DROPIN = os.environ.get("DPR_DROPIN",
                        os.path.join(os.path.dirname(os.path.dirname(t.DPRDMAD)),
                                     "drop-in"))
ERR = re.compile(r"(?i)(\berror\b|\bfail|couldn't|unable to|cannot )")
PORT = [19000 + os.getpid() % 1000]
# Under 1% loss nearly every READ of 64 KiB loses a response, and each
# loss costs a go-back-N replay that rxe under TCG sends at ~10k
# packets/s: 100 READs with 16 outstanding take ~10-20 s
READS_UNDER_LOSS = 100
TIMES = []


def ours(prog, args, background=False):
    """A program on dprdma's side: in the namespace, through the drop-in."""
    cmd = ["ip", "netns", "exec", NS, "env", "LD_LIBRARY_PATH=" + DROPIN,
           "DPRDMA_SOCKET=" + SOCK, "timeout", "120", prog] + args
    if background:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=150)


def guest(cmd, background=False):
    line = "timeout 120 %s 2>&1" % cmd
    if background:
        return kit("peer-exec.sh", "-b", "p1", line).stdout.strip()
    p = kit("peer-exec.sh", "-t", "150", "p1", line, check=False, timeout=200)
    return p.returncode, p.stdout


def guest_wait(job):
    p = kit("peer-exec.sh", "-w", job, "-t", "150", "p1", check=False, timeout=200)
    return p.returncode, p.stdout


def listening(port):
    r = subprocess.run(["ip", "netns", "exec", NS, "ss", "-ltnH",
                        "sport = :%d" % port], capture_output=True, text=True)
    return str(port) in r.stdout


def pair(prog, args, guest_is_server):
    """Run prog on both sides; returns (server rc, out, client rc, out)."""
    PORT[0] += 1
    a = args + ["-p", str(PORT[0])]
    gdev = ["-d", "rxe0"]
    start = time.time()
    if guest_is_server:
        job = guest(" ".join([prog] + gdev + a), background=True)
        for _ in range(30):
            c = ours(prog, a + [GUEST])
            cout = c.stdout + c.stderr
            if "Couldn't connect" not in cout and "Unable to open" not in cout:
                break
            time.sleep(1)     # the guest's server is not listening yet
        src, sout = guest_wait(job)
        crc = c.returncode
    else:
        srv = ours(prog, a, background=True)
        t.wait_for(lambda: listening(PORT[0]), 30, "%s listening" % prog)
        crc, cout = guest(" ".join([prog] + gdev + a + [BRIDGE]))
        sout = srv.communicate(timeout=150)[0]
        src = srv.returncode
    TIMES.append((prog + " " + " ".join(args), guest_is_server,
                  time.time() - start))
    for name, out in (("server", sout), ("client", cout)):
        sys.stdout.write("".join("  %s| %s\n" % (name, x)
                                 for x in out.splitlines()))
    return src, sout, crc, cout


def run_pingpong(size, iters, guest_is_server, label=""):
    what = "ibv_rc_pingpong -s %d -n %d, guest as %s%s" % (
        size, iters, "server" if guest_is_server else "client", label)
    src, sout, crc, cout = pair("ibv_rc_pingpong",
                                ["-g", "1", "-s", str(size), "-n", str(iters)],
                                guest_is_server)
    for side, rc, out in (("server", src, sout), ("client", crc, cout)):
        m = re.search(r"(\d+) iters in", out)
        t.check(rc == 0 and m is not None and int(m.group(1)) == iters and
                not ERR.search(out), "%s: %s (%s) did %d iterations" %
                (what, side, "rxe" if (side == "server") == guest_is_server
                 else "dprdma", iters))


def run_perf(prog, extra, iters, guest_is_server, label=""):
    what = "%s %s, guest as %s%s" % (prog, " ".join(extra),
                                    "server" if guest_is_server else "client",
                                    label)
    src, sout, crc, cout = pair(prog, ["-x", "1", "-n", str(iters)] + extra,
                                guest_is_server)
    if not guest_is_server and "Can't produce a report" in cout:
        # perftest in the guest could not calibrate its cycle counter
        # (r^2 of TSC against gettimeofday < 0.9: TCG emulation) and left
        # before the closing exchange: not the data path's doing; once more
        t.log("%s: the guest's perftest could not calibrate its clock "
              "under emulation; run again" % what)
        src, sout, crc, cout = pair(prog, ["-x", "1", "-n", str(iters)] + extra,
                                    guest_is_server)
    qps = int(extra[extra.index("-q") + 1]) if "-q" in extra else 1
    t.check(src == 0 and crc == 0, "%s: both sides exit 0 (%d, %d)" %
            (what, src, crc))
    t.check(not ERR.search(sout) and not ERR.search(cout),
            "%s: no error line" % what)
    m = re.search(r"#bytes\s+#iterations.*\n\s*(\d+)\s+(\d+)\s", cout)
    t.check(m is not None and int(m.group(2)) == iters * qps,
            "%s: the client reports %d iterations" % (what, iters * qps))


def daemon(extra):
    return kit_daemon(PREFIX, ["--socket", SOCK] + extra)


# Atomics with 16 outstanding (-o 16) rather than the 128 both devices
# allow: rxe under TCG drops some of a burst of 128 atomic responses inside
# the guest, and its go-back-N then resends all 128, again and again
# (rxe's completer_retry_err counts it; the wire shows every response
# sent once, in order). For the same reason -q 4 with dprdma as the
# requester (the guest as server) runs 4 KiB messages 16 deep: 4 QPs of
# perftest's default 128 x 64 KiB put 2,048 packets in flight (dprdma's
# window is 512 per QP) into an emulated guest that drops most of such a
# burst; on a loaded machine the resends found no room for 7 timeouts in
# a row and the QP ended in RETRY_EXC_ERR (once, in a CI run). Pacing the
# requester to a slow peer is congestion control's work (a later issue).
# The other way keeps perftest's defaults: with -t 16 the guest's perftest
# over rxe stopped for good in 4 of 6 runs while dprdmad saw nothing
# amiss (no drop, NAK or retransmission), and 5 of 5 defaults passed.
# The third element: options added when dprdma is the requester.
PERF = [("ib_send_bw", []), ("ib_write_bw", []), ("ib_read_bw", []),
        ("ib_atomic_bw", ["-A", "FETCH_AND_ADD", "-o", "16"]),
        ("ib_atomic_bw", ["-A", "CMP_AND_SWAP", "-o", "16"]),
        ("ib_write_lat", []), ("ib_read_lat", []), ("ib_send_lat", []),
        ("ib_write_bw", ["-q", "4"], ["-s", "4096", "-t", "16"])]


def main():
    require_qemu()
    if not os.path.exists(os.path.join(DROPIN, "libibverbs.so.1")):
        t.fail("the drop-in libibverbs is not built in " + DROPIN)
    t0 = time.time()
    d = None
    try:
        boot()
        d = daemon([])
        rc, out = guest("ping -c 3 %s" % OURS)
        t.check(" 0% packet loss" in out, "the guest reaches dprdmad (ARP, ping)")
        r = t.telemetry(PREFIX, "/dprdma/capture/start,0," + CAPTURE)
        t.check(r is not None and r.get("capturing") == "yes", "capture on")
        for guest_is_server in (True, False):
            for size in (64, 1024, 4096, 65536):
                run_pingpong(size, 20, guest_is_server)
            for prog, extra, *ours_req in PERF:
                run_perf(prog, extra + (ours_req[0] if ours_req and
                                        guest_is_server else []),
                         200, guest_is_server)
        tr = wire_check(PREFIX, CAPTURE, 1000)

        # 1% of the guest's frames dropped (tc netem in the guest)
        kit("peer-exec.sh", "p1", "/sbin/tc qdisc add dev eth0 root netem loss 1%")
        for guest_is_server in (True, False):
            run_pingpong(4096, 100, guest_is_server, ", 1% netem loss in the guest")
            run_perf("ib_write_bw", [], 200, guest_is_server, ", 1% netem loss")
            run_perf("ib_read_bw", ["-o", "16"], READS_UNDER_LOSS,
                     guest_is_server, ", 1% netem loss")
        kit("peer-exec.sh", "p1", "/sbin/tc qdisc del dev eth0 root", check=False)
        tr2 = t.telemetry(PREFIX, "/dprdma/transport/stats,0")
        t.check(tr2["nak_seq_tx"] + tr2["dup_request_rx"] + tr2["out_of_seq_rx"] +
                tr2["retransmits"] > tr["nak_seq_tx"] + tr["dup_request_rx"] +
                tr["out_of_seq_rx"] + tr["retransmits"],
                "the guest's losses showed at dprdmad and were repaired")
        stop_clean(d)
        d = None

        # 1% of dprdmad's frames dropped (its fault-injecting adapter)
        d = daemon(["--faults", "loss=0.01,seed=11"])
        for guest_is_server in (True, False):
            run_pingpong(4096, 100, guest_is_server, ", 1% loss at dprdmad")
            run_perf("ib_write_bw", [], 200, guest_is_server, ", 1% loss at dprdmad")
            run_perf("ib_read_bw", ["-o", "16"], READS_UNDER_LOSS,
                     guest_is_server, ", 1% loss at dprdmad")
        fa = t.telemetry(PREFIX, "/dprdma/port/faults,0")
        tr = t.telemetry(PREFIX, "/dprdma/transport/stats,0")
        t.check(fa["lost"] > 0, "dprdmad's adapter lost %d of %d frames; %d "
                "retransmissions" % (fa["lost"], fa["frames"], tr["retransmits"]))
        stop_clean(d)
        d = None
    finally:
        cleanup(d, CAPTURE, SOCK)
    for what, gs, secs in TIMES:
        t.log("time: %-40s guest as %-6s %5.1f s" %
              (what, "server" if gs else "client", secs))
    t.log("suite time: %.0f s" % (time.time() - t0))
    t.log("PASS")


if __name__ == "__main__":
    main()
