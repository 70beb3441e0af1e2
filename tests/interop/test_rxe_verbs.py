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
  ibv_ud_pingpong at 64 B and 1 KiB (the port MTU), ib_send_lat -c UD;
  ibv_uc_pingpong at 4 KiB (4 packets a message);
  ibv_srq_pingpong at 2 KiB (16 QPs on one SRQ);
  ib_send_bw, ib_write_bw, ib_read_bw, ib_atomic_bw (FETCH_AND_ADD and
  CMP_AND_SWAP), ib_write_lat, ib_read_lat, ib_send_lat, ib_write_bw -q 4
  (4 KiB, 16 deep when dprdma writes).

Outputs parsed: exit status 0 on both sides, no error line, the iteration
count reported. Every frame of the clean runs is captured on dprdmad's
port and checked by dprdma-pcap (no malformed frame, no bad ICRC either
way). Then with 1% of the guest's frames dropped by tc netem in the guest,
and separately 1% of dprdmad's dropped by its fault-injecting adapter:
ib_write_bw, ib_read_bw and a SEND ping-pong (dprdma-perf send_lat, run
in the guest too: ibv_rc_pingpong's client leaves before the last ACK is
safe) must still complete both ways.

perftest in the guest sometimes cannot calibrate its clock under TCG
(rxepeer.perftest_run: such a run, and only such, goes again).

When something fails, the test says why: a program still running after
STALL_S seconds has both sides' per-QP state printed while it still runs
(dprdmad's transport state of every QP and the shim's rings through
telemetry; the guest's `rdma res show qp` and rxe's counters), and every
capture is kept under build/interop-failures/rxe_verbs-PID/ (dprdmad's
port, full frames for the clean runs; the guest's NIC, 128 bytes of each
frame, one file per program run).

Then the same over IPv6 GIDs (the guest's NIC given IPv6 and fd99::2, the
daemon fd99::10): ibv_rc_pingpong, ibv_ud_pingpong, ibv_uc_pingpong,
ib_write_bw and ib_read_lat both ways, over the link-local GIDs (index 0)
and the global ones, with ping6 and neighbour discovery both ways first.

To loop one case (a flaky one, or after a change to the transport):
  DPR_RXV_ONLY='ib_write_bw -q 4' DPR_RXV_REPEAT=20 meson test -C build rxe_verbs
runs only the PERF entries (or ibv_rc_pingpong, ibv_ud_pingpong,
ibv_uc_pingpong, ibv_srq_pingpong) whose command line holds
the text, REPEAT times each way, and skips the loss phases;
DPR_RXV_ONLY=ipv6 runs the IPv6 phase alone.

Skipped (77) where qemu cannot run; with CI=true a skip where qemu is
installed is a failure. The per-run times are in the log."""

import json
import os
import re
import shutil
import subprocess
import sys
import time

from rxepeer import BRIDGE, CLOCK_RETRIES, GUEST, NS, OURS, GuestCapture, \
    artifacts, boot, daemon as kit_daemon, describe, guest_install, kit, \
    cleanup, perftest_run, require_qemu, stop_clean, wire_check, t

PREFIX = "dprt-rxv-%d" % os.getpid()
SOCK = "/tmp/dprt-rxv-%d.sock" % os.getpid()
KEEP = artifacts("rxe_verbs")
CAPTURE = os.path.join(KEEP, "dprdma-clean.pcapng")
# programs run under `timeout 120`: one still running after this long has
# stalled, and both sides are described while it is still there to see
STALL_S = 90
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
RUNS = [0]
STALLS = []
KEEP_ALL = [False]


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


def guest_poll(job):
    """(rc, output) of a finished guest job, None while it runs."""
    p = kit("peer-exec.sh", "-w", job, "-t", "0", "p1", check=False, timeout=30)
    if p.returncode == 124 and "peer-exec: timeout" in p.stderr:
        return None
    return p.returncode, p.stdout


def settle(what, procs, jobs):
    """Wait for our programs (Popen) and the guest's jobs to end. One still
    running after STALL_S: both sides are described, while it still runs.
    Returns their outputs: [(rc, out)] for procs, then for jobs."""
    t0 = time.time()
    done = {}
    described = False
    while True:
        for j in jobs:
            if j not in done:
                r = guest_poll(j)
                if r is not None:
                    done[j] = r
        if all(p.poll() is not None for p in procs) and len(done) == len(jobs):
            break
        if not described and time.time() - t0 > STALL_S:
            describe(PREFIX, "%s: still running after %d s" % (what, STALL_S))
            STALLS.append(what)
            described = True
        time.sleep(0.3)
    return [(p.returncode, p.communicate()[0]) for p in procs] + \
        [done[j] for j in jobs]


def listening(port):
    r = subprocess.run(["ip", "netns", "exec", NS, "ss", "-ltnH",
                        "sport = :%d" % port], capture_output=True, text=True)
    return str(port) in r.stdout


def pair(prog, args, guest_is_server, guest_args=None, guest_prog=None):
    """Run prog on both sides (the guest with @guest_args where given, and
    @guest_prog: its path there where it is not the same); returns (server
    rc, out, client rc, out)."""
    PORT[0] += 1
    a = args + ["-p", str(PORT[0])]
    ga = (args if guest_args is None else guest_args) + ["-p", str(PORT[0])]
    gdev = ["-d", "rxe0"]
    what = "%s %s, guest as %s" % (prog, " ".join(args),
                                   "server" if guest_is_server else "client")
    start = time.time()
    RUNS[0] += 1
    cap = GuestCapture(os.path.join(KEEP, "guest-%03d-%s-%s.pcapng" % (
        RUNS[0], os.path.basename(prog), "gs" if guest_is_server else "gc")))
    gprog = guest_prog or prog
    if guest_is_server:
        job = guest(" ".join([gprog] + gdev + ga), background=True)
        for _ in range(30):
            c = ours(prog, a + [GUEST], background=True)
            (crc, cout), = settle(what, [c], [])
            if "Couldn't connect" not in cout and "Unable to open" not in cout:
                break
            time.sleep(1)     # the guest's server is not listening yet
        (src, sout), = settle(what, [], [job])
    else:
        srv = ours(prog, a, background=True)
        t.wait_for(lambda: listening(PORT[0]), 30, "%s listening" % prog)
        job = guest(" ".join([gprog] + gdev + ga + [BRIDGE]), background=True)
        (src, sout), (crc, cout) = settle(what, [srv], [job])
    cap.stop()
    TIMES.append((prog + " " + " ".join(args), guest_is_server,
                  time.time() - start))
    for name, out in (("server", sout), ("client", cout)):
        sys.stdout.write("".join("  %s| %s\n" % (name, x)
                                 for x in out.splitlines()))
    if src == 0 and crc == 0:
        os.unlink(cap.path)    # kept only where something went wrong
    return src, sout, crc, cout


def perftest_cq_mod(extra):
    """perftest 4.5's completion moderation: -Q (default 100), at most the
    send queue depth -t (default 128)."""
    def opt(name, default):
        return int(extra[extra.index(name) + 1]) if name in extra else default
    return min(opt("-Q", 100), opt("-t", 128))


def run_pingpong(size, iters, guest_is_server, label="", prog="ibv_rc_pingpong",
                 gid=(1, 1)):
    """One of the ibv_*_pingpong programs both ways (ibv_ud_pingpong: rxe's
    GRH and DETH in, ours out, address handles from the GIDs the two
    exchange; ibv_uc_pingpong: no ACKs either way), from GID index gid[0]
    on our side, gid[1] in the guest."""
    what = "%s -s %d -n %d, guest as %s%s" % (
        prog, size, iters, "server" if guest_is_server else "client", label)
    rest = ["-s", str(size), "-n", str(iters)]
    src, sout, crc, cout = pair(prog, ["-g", str(gid[0])] + rest,
                                guest_is_server, ["-g", str(gid[1])] + rest)
    for side, rc, out in (("server", src, sout), ("client", crc, cout)):
        m = re.search(r"(\d+) iters in", out)
        t.check(rc == 0 and m is not None and int(m.group(1)) == iters and
                not ERR.search(out), "%s: %s (%s) did %d iterations" %
                (what, side, "rxe" if (side == "server") == guest_is_server
                 else "dprdma", iters))


def run_perf(prog, extra, iters, guest_is_server, label="", gid=(1, 1)):
    what = "%s %s, guest as %s%s" % (prog, " ".join(extra),
                                    "server" if guest_is_server else "client",
                                    label)
    qps = int(extra[extra.index("-q") + 1]) if "-q" in extra else 1
    if qps > 1 and iters % perftest_cq_mod(extra) != 0:
        # Debian 12's perftest (4.5+0.17) counts the last, shorter batch of
        # completions of a QP as a whole cq_mod; with several QPs the sum
        # reaches the total while one QP still waits for its last
        # completion, and the program stops polling its CQ for good
        # (fixed upstream in 2023, perftest 5ff3afa). Seen as a stall in
        # both directions; iterations a multiple of cq_mod avoid it.
        t.fail("%s: -n %d is not a multiple of perftest's cq_mod %d with "
               "%d QPs: Debian's perftest would hang" %
               (what, iters, perftest_cq_mod(extra), qps))
    rest = ["-n", str(iters)] + extra

    def go():
        return pair(prog, ["-x", str(gid[0])] + rest, guest_is_server,
                    ["-x", str(gid[1])] + rest)
    src, sout, crc, cout = perftest_run(go, guest_is_server, what)
    t.check(src == 0 and crc == 0, "%s: both sides exit 0 (%d, %d)" %
            (what, src, crc))
    t.check(not ERR.search(sout) and not ERR.search(cout),
            "%s: no error line" % what)
    m = re.search(r"#bytes\s+#iterations.*\n\s*(\d+)\s+(\d+)\s", cout)
    t.check(m is not None and int(m.group(2)) == iters * qps,
            "%s: the client reports %d iterations" % (what, iters * qps))


DPRDMA_PERF = os.path.join(os.path.dirname(t.DPRDMAD), "dprdma-perf")


def run_send_lat(size, iters, guest_is_server, label, test="send_lat"):
    """A SEND ping-pong under loss, dprdma-perf send_lat on both sides (in
    the guest over rxe) -- or another dprdma-perf TEST: data checked, and
    it ends cleanly -- each side
    waits for its last SEND's completion and the two close over TCP, so a
    lost ACK of the last SEND is repaired before either QP goes.
    (ibv_rc_pingpong's client leaves after its last receive: a lost ACK of
    the server's last SEND then ends the server in RETRY_EXC_ERR, on an
    RNIC as here.)"""
    what = "dprdma-perf %s -s %d -n %d, guest as %s%s" % (
        test, size, iters, "server" if guest_is_server else "client", label)
    args = ["-x", "1", "-s", str(size), "-n", str(iters), "--json"]
    # (the test's name first: the guest's command line has -d after it)
    src, sout, crc, cout = pair(DPRDMA_PERF, [test] + args, guest_is_server,
                                guest_args=args,
                                guest_prog=guest_install(DPRDMA_PERF) + " " + test)
    res = [json.loads(x) for x in cout.splitlines() if x.startswith("{")]
    t.check(src == 0 and crc == 0 and len(res) == 1 and
            res[0]["iterations"] == iters,
            "%s: both sides exit 0, %d iterations, the data checked (%r)"
            % (what, iters, res))


def daemon(extra):
    return kit_daemon(PREFIX, ["--socket", SOCK, "--ipv6", OURS6 + "/64"] + extra)


# Atomics with 16 outstanding (-o 16) rather than the 128 both devices
# allow: rxe under TCG drops some of a burst of 128 atomic responses inside
# the guest, and its go-back-N then resends all 128, again and again
# (rxe's completer_retry_err counts it; the wire shows every response
# sent once, in order).
# -q 4 runs 4 KiB messages 16 deep both ways: perftest's default of 4 QPs
# x 128 x 64 KiB puts 2,048 packets in flight (dprdma's window is 512 per
# QP) into an emulated guest that drops most of such a burst (pacing a
# requester to a slow peer is congestion control's work, a later issue).
# Its 192 iterations are a multiple of cq_mod (16 with -t 16): Debian's
# perftest hangs otherwise (run_perf refuses such a count; the stall this
# avoids, seen both ways, was perftest's, not the transport's: every WQE
# acknowledged, the last completion in the CQ ring, never polled).
# (program, options, iterations)
PERF = [("ib_send_bw", [], 200), ("ib_write_bw", [], 200),
        ("ib_read_bw", [], 200),
        ("ib_atomic_bw", ["-A", "FETCH_AND_ADD", "-o", "16"], 200),
        ("ib_atomic_bw", ["-A", "CMP_AND_SWAP", "-o", "16"], 200),
        ("ib_write_lat", [], 200), ("ib_read_lat", [], 200),
        ("ib_send_lat", [], 200),
        ("ib_write_bw", ["-q", "4", "-s", "4096", "-t", "16"], 192),
        # UD, ping-pong: a datagram the emulated guest drops is gone for
        # good (no retries), which would hang ib_send_bw -c UD's receiver
        ("ib_send_lat", ["-c", "UD"], 200)]


GUEST6, OURS6 = "fd99::2", "fd99::10"


def guest_gid_index(prefix):
    """The index of the guest's rxe GID whose sysfs text starts with
    @prefix, or None."""
    rc, out = guest("grep -l '^%s' /sys/class/infiniband/rxe0/ports/1/gids/*"
                    % prefix)
    m = re.search(r"gids/(\d+)", out)
    return int(m.group(1)) if m else None


def ipv6_phase():
    """RoCEv2 over IPv6 GIDs with rxe: the guest's NIC gets IPv6 (off for
    the runs before: no neighbour discovery or MLD noise) and a global
    address; each side finds the other's MAC by neighbour discovery. The
    link-local GIDs (index 0 on both sides) and the global ones (2 on
    ours, whatever index rxe gives fd99::2)."""
    guest("sh -c 'echo 0 > /proc/sys/net/ipv6/conf/eth0/disable_ipv6; "
          "/sbin/ip -6 addr add %s/64 dev eth0 nodad'" % GUEST6)
    ll = t.telemetry(PREFIX, "/dprdma/port/info,0")["ipv6_link_local"]
    gidx = None
    for _ in range(60):
        gidx = guest_gid_index("fd99")
        rc, out = guest("/sbin/ip -6 addr show dev eth0")
        if gidx is not None and "fe80" in out and "tentative" not in out:
            break
        time.sleep(0.5)
    t.check(gidx is not None, "rxe lists fd99::2 as GID %s" % gidx)
    for addr, opt in ((OURS6, ""), (ll, "-I eth0 ")):
        rc, out = guest("ping -6 -c 3 %s%s" % (opt, addr))
        t.check(" 0% packet loss" in out,
                "the guest pings dprdmad at %s (neighbour discovery, ICMPv6 "
                "echo)" % addr)
    for guest_is_server in (True, False):
        run_pingpong(4096, 20, guest_is_server, ", IPv6 link-local", gid=(0, 0))
        run_pingpong(1024, 20, guest_is_server, ", IPv6 global", gid=(2, gidx))
        run_pingpong(1024, 20, guest_is_server, ", IPv6 link-local",
                     prog="ibv_ud_pingpong", gid=(0, 0))
        run_pingpong(4096, 20, guest_is_server, ", IPv6 global",
                     prog="ibv_uc_pingpong", gid=(2, gidx))
        run_perf("ib_write_bw", [], 200, guest_is_server, ", IPv6 global",
                 gid=(2, gidx))
        run_perf("ib_read_lat", [], 200, guest_is_server, ", IPv6 link-local",
                 gid=(0, 0))
    ps = t.telemetry(PREFIX, "/dprdma/port/stats,0")
    t.log("neighbour discovery: %r" % {k: v for k, v in ps.items()
                                        if k.startswith("nd_") or "icmp6" in k or
                                        "ipv6" in k})
    t.check(ps["nd_solicit_rx"] > 0 and ps["nd_advert_tx"] > 0 and
            ps["rx_drop_ipv6_malformed"] == 0 and ps["rx_drop_icmp6_malformed"] == 0,
            "dprdmad answered the guest's neighbour solicitations; no "
            "malformed IPv6 or ICMPv6 frame")


def keep_on_failure():
    """A failing run leaves its captures behind, and says where."""
    KEEP_ALL[0] = True
    t.log("captures kept in %s: %s" % (KEEP, " ".join(sorted(os.listdir(KEEP)))))


def loop_only(only, repeat):
    """DPR_RXV_ONLY / DPR_RXV_REPEAT: the matching cases, REPEAT times each
    way, timed."""
    if only == "ipv6":
        ipv6_phase()
        return
    cases = [(p, e, n) for p, e, n in PERF if only in " ".join([p] + e)]
    pingpong = only in "ibv_rc_pingpong"
    ud = only in "ibv_ud_pingpong"
    uc = only in "ibv_uc_pingpong"
    srq = only in "ibv_srq_pingpong"
    if not cases and not pingpong and not ud and not uc and not srq:
        t.fail("DPR_RXV_ONLY=%r matches no case" % only)
    for guest_is_server in (True, False):
        t1 = time.time()
        for i in range(repeat):
            if pingpong:
                run_pingpong(4096, 20, guest_is_server, ", run %d" % (i + 1))
            if ud:
                run_pingpong(1024, 20, guest_is_server, ", run %d" % (i + 1),
                             "ibv_ud_pingpong")
            if uc:
                run_pingpong(4096, 20, guest_is_server, ", run %d" % (i + 1),
                             "ibv_uc_pingpong")
            if srq:
                run_pingpong(2048, 20, guest_is_server, ", run %d" % (i + 1),
                             "ibv_srq_pingpong")
            for prog, extra, iters in cases:
                run_perf(prog, extra, iters, guest_is_server, ", run %d" % (i + 1))
        t.log("%d runs of %r, guest as %s: %.0f s" % (
            repeat, only, "server" if guest_is_server else "client",
            time.time() - t1))


def main():
    require_qemu()
    if not os.path.exists(os.path.join(DROPIN, "libibverbs.so.1")):
        t.fail("the drop-in libibverbs is not built in " + DROPIN)
    t.on_fail(keep_on_failure)
    only = os.environ.get("DPR_RXV_ONLY")
    repeat = int(os.environ.get("DPR_RXV_REPEAT", "1"))
    t0 = time.time()
    d = None
    try:
        boot()
        d = daemon([])
        rc, out = guest("ping -c 3 %s" % OURS)
        t.check(" 0% packet loss" in out, "the guest reaches dprdmad (ARP, ping)")
        r = t.telemetry(PREFIX, "/dprdma/capture/start,0," + CAPTURE)
        t.check(r is not None and r.get("capturing") == "yes", "capture on")
        if only:
            loop_only(only, repeat)
            t.telemetry(PREFIX, "/dprdma/capture/stop,0")
            stop_clean(d)
            d = None
            return
        for guest_is_server in (True, False):
            for size in (64, 1024, 4096, 65536):
                run_pingpong(size, 20, guest_is_server)
            for size in (64, 1024):
                run_pingpong(size, 20, guest_is_server, prog="ibv_ud_pingpong")
            run_pingpong(4096, 20, guest_is_server, prog="ibv_uc_pingpong")
            # its 16 QPs (the default) receiving from one SRQ, messages
            # of 2 packets
            run_pingpong(2048, 20, guest_is_server, prog="ibv_srq_pingpong")
            for prog, extra, iters in PERF:
                run_perf(prog, extra, iters, guest_is_server)
        ipv6_phase()
        tr = wire_check(PREFIX, CAPTURE, 1000)

        # 1% of the guest's frames dropped (tc netem in the guest); the
        # capture from here on keeps the headers only
        t.telemetry(PREFIX, "/dprdma/capture/start,0,128," +
                    os.path.join(KEEP, "dprdma-netem-loss.pcapng"))
        kit("peer-exec.sh", "p1", "/sbin/tc qdisc add dev eth0 root netem loss 1%")
        for guest_is_server in (True, False):
            run_send_lat(4096, 100, guest_is_server, ", 1% netem loss in the guest")
            run_perf("ib_write_bw", [], 200, guest_is_server, ", 1% netem loss")
            run_perf("ib_read_bw", ["-o", "16"], READS_UNDER_LOSS,
                     guest_is_server, ", 1% netem loss")
        # READs of rxe whose responses the guest loses, the data checked:
        # dprdmad keeps the responses past a lost one and asks rxe for the
        # rest of that READ alone (a duplicate READ from the hole on), not
        # for every READ after it
        run_send_lat(65536, READS_UNDER_LOSS, True, ", 1% netem loss", test="read_bw")
        kit("peer-exec.sh", "p1", "/sbin/tc qdisc del dev eth0 root", check=False)
        tr2 = t.telemetry(PREFIX, "/dprdma/transport/stats,0")
        t.check(tr2["sr_read_asks"] > tr["sr_read_asks"] and
                tr2["sr_read_placed"] > tr["sr_read_placed"],
                "READ responses past those rxe lost kept (%d) and the rest of "
                "those READs asked of rxe again (%d times), the data checked"
                % (tr2["sr_read_placed"] - tr["sr_read_placed"],
                   tr2["sr_read_asks"] - tr["sr_read_asks"]))
        t.check(tr2["nak_seq_tx"] + tr2["dup_request_rx"] + tr2["out_of_seq_rx"] +
                tr2["retransmits"] > tr["nak_seq_tx"] + tr["dup_request_rx"] +
                tr["out_of_seq_rx"] + tr["retransmits"],
                "the guest's losses showed at dprdmad and were repaired")
        stop_clean(d)
        d = None

        # 1% of dprdmad's frames dropped (its fault-injecting adapter)
        d = daemon(["--faults", "loss=0.01,seed=11"])
        t.telemetry(PREFIX, "/dprdma/capture/start,0,128," +
                    os.path.join(KEEP, "dprdma-port-loss.pcapng"))
        for guest_is_server in (True, False):
            run_send_lat(4096, 100, guest_is_server, ", 1% loss at dprdmad")
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
        cleanup(d, SOCK)
        if not KEEP_ALL[0]:
            shutil.rmtree(KEEP, ignore_errors=True)
    for what, gs, secs in TIMES:
        t.log("time: %-40s guest as %-6s %5.1f s" %
              (what, "server" if gs else "client", secs))
    if STALLS:
        t.fail("stalled (and later finished): %s" % "; ".join(STALLS))
    t.log("perftest clock retries: %d" % CLOCK_RETRIES[0])
    t.log("suite time: %.0f s" % (time.time() - t0))
    t.log("PASS")


if __name__ == "__main__":
    main()
