#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""RDMA CM between two dprdmad joined by net_memif, through the drop-in
librdmacm and libibverbs (LD_LIBRARY_PATH=build/drop-in): the unmodified
Debian programs, server on A and client on B, then both on A (QP1 looped
back inside the daemon):

  rping -V (the data of every ping verified), ucmatose with 8
  connections (and 1,000 from one program), dprdma-cm-rate
  (tests/integration/cm_rate.c: 2,000 connections at once, each used and
  torn down), udaddy (UD endpoints found by SIDR), fi_pingpong -p verbs
  (libfabric's UD, RC and RDM endpoints, data checked), ib_send_bw -R,
  ib_read_bw -R, ib_write_lat -R, qperf
  -cm1 rc_bw, rc_lat, rc_rdma_read_bw (its control connection over
  kernel TCP on lo in a namespace holding both addresses);
  a librpma server and client (tests/integration/rpma_test.c: read,
  write + flush, messages, private data);
  dprdma-cm-test (tests/integration/cm_test.c) for the rest: private data
  both ways (REQ and REP), a listener that rejects (REJECTED, reason 28,
  with its private data), a port nobody listens on (REJECTED, reason 8),
  a disconnect from the passive side, a listener killed after the
  request came (REJECTED: its daemon answers for it), an address nobody
  answers (UNREACHABLE, -ETIMEDOUT, after B's [cm] retries), teardown
  under other threads (rdma_destroy_id waits for the acks of its events,
  a destroyed channel's reader stays blocked).

Then each daemon's CM counters: MADs both ways, no MAD dropped, the
connections counted, no ID left once the programs are gone."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import dprtest as t

PID = os.getpid()
MEMIF = "/tmp/dprt-cm-%d.sock" % PID
PA, PB = "dprt-cma-%d" % PID, "dprt-cmb-%d" % PID
NS = "dprt-cm-%d" % PID
IP_A, IP_B, NOBODY = "10.85.0.1", "10.85.0.2", "10.85.0.99"
DROPIN = os.environ.get("DPR_DROPIN", "build/drop-in")
CM_TEST = os.environ.get("DPR_CM_TEST", "build/tests/dprdma-cm-test")
CM_RATE = os.environ.get("DPR_CM_RATE", "build/tests/dprdma-cm-rate")
RPMA_TEST = os.environ.get("DPR_RPMA_TEST", "build/tests/dprdma-rpma-test")
PORT = [21000 + PID % 1000]
ERR = re.compile(r"(?i)(\berror\b|\bfail|couldn't|unable to|cannot )")


def cmd(d, args, timeout=60):
    """A program in the test's namespace, through the drop-ins, against
    daemon @d."""
    return ["ip", "netns", "exec", NS, "env", "LD_LIBRARY_PATH=" + DROPIN,
            "DPRDMA_SOCKET=" + d.socket, "timeout", str(timeout)] + list(args)


def start(d, args, timeout=60):
    return subprocess.Popen(["stdbuf", "-oL"] + cmd(d, args, timeout),
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def run(d, args, timeout=60):
    p = subprocess.run(cmd(d, args, timeout), capture_output=True, text=True,
                       timeout=timeout + 30)
    return p.returncode, p.stdout + p.stderr


def show(name, out):
    sys.stdout.write("".join("  %s| %s\n" % (name, x) for x in out.splitlines()))


def pair(prog, srv_args, cli_args, ds, dc, timeout=60, port=None):
    """@prog as server on daemon @ds, as client on @dc."""
    s = start(ds, [prog] + srv_args, timeout)
    if port is not None:
        t.wait_for(lambda: t.cm_listening(ds.prefix, port), 20, "%s listening" % prog)
    else:
        time.sleep(1)
    crc, cout = run(dc, [prog] + cli_args, timeout)
    try:
        sout, _ = s.communicate(timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        s.kill()
        sout, _ = s.communicate()
    show("server", sout)
    show("client", cout)
    return s.returncode, sout, crc, cout


def where(ds, dc):
    return "A to A" if ds is dc else "B to A"


def test_rping(ds, dc, count=20):
    PORT[0] += 1
    p = ["-a", IP_A, "-p", str(PORT[0]), "-C", str(count)]
    src, sout, crc, cout = pair("rping", ["-s", "-v"] + p, ["-c", "-v", "-V"] + p,
                                ds, dc, port=PORT[0])
    pings = re.findall(r"^ping data: rdma-ping-(\d+)", cout, re.M)
    t.check(src == 0 and crc == 0 and len(pings) == count and
            not ERR.search(sout + cout),
            "rping -V -C %d (%s): %d pings verified, both exit 0 (%d, %d)"
            % (count, where(ds, dc), len(pings), src, crc))


def test_ucmatose(ds, dc, conns=8, msgs=20):
    PORT[0] += 1
    p = ["-p", str(PORT[0]), "-c", str(conns), "-C", str(msgs)]
    src, sout, crc, cout = pair("ucmatose", p, p + ["-s", IP_A], ds, dc,
                                port=PORT[0])
    t.check(src == 0 and crc == 0 and "test complete" in sout and
            "test complete" in cout and not ERR.search(sout + cout),
            "ucmatose, %d connections x %d messages (%s): both complete"
            % (conns, msgs, where(ds, dc)))


def test_cm_rate(ds, dc, conns):
    """@conns connections at once from one program (dprdma-cm-rate), each
    used (64 B each way, checked) and torn down; the rate printed (the
    bench has the row)."""
    PORT[0] += 1
    p = [str(PORT[0]), str(conns)]
    src, sout, crc, cout = pair(CM_RATE, ["serve"] + p, ["connect", IP_A] + p,
                                ds, dc, port=PORT[0], timeout=120)
    res = [json.loads(x) for x in cout.splitlines() if x.startswith("{")]
    r = res[0] if res else {}
    t.check(src == 0 and crc == 0 and r.get("established") == conns and
            r.get("used") == conns and r.get("torn_down") == conns,
            "dprdma-cm-rate, %d connections at once (%s): all established, "
            "used and torn down, both exit 0 (%d, %d)"
            % (conns, where(ds, dc), src, crc))
    t.log("dprdma-cm-rate %d: established in %.2f s (%.0f/s), torn down in "
          "%.2f s (%.0f/s)" % (conns, r["established_s"], r["connect_per_s"],
                               r["teardown_s"], r["teardown_per_s"]))


def test_udaddy(ds, dc, conns=4, msgs=10):
    """UD over RDMA CM (SIDR): udaddy's fixed port, 7174."""
    p = ["-c", str(conns), "-C", str(msgs)]
    src, sout, crc, cout = pair("udaddy", p, ["-s", IP_A] + p, ds, dc, port=7174)
    t.check(src == 0 and crc == 0 and "test complete" in sout and
            "test complete" in cout and not ERR.search(sout + cout),
            "udaddy, %d UD endpoints x %d messages (%s): both complete"
            % (conns, msgs, where(ds, dc)))


def test_fi_pingpong(ep, ds, dc, iters=100, size=1024):
    """libfabric's verbs provider through the drop-ins: fi_pingpong's
    UD endpoint (dgram), its RC one (msg: RDMA CM, the provider binds
    localhost first, then takes the device's addresses from the
    interfaces) and a reliable datagram one (rdm: ofi_rxm over the RC
    endpoints), data checked on both sides (-c). FI_VERBS_IFACE names
    dpr0, which holds both boxes' addresses in the test's namespace; the
    program's control link is TCP."""
    PORT[0] += 1
    env = ["env", "FI_VERBS_IFACE=dpr0", "fi_pingpong"]
    p = ["-p", "verbs", "-e", ep, "-I", str(iters), "-S", str(size), "-c",
         "-P", str(PORT[0])]
    srv = ["-p", "verbs", "-e", ep, "-I", str(iters), "-S", str(size), "-c",
           "-B", str(PORT[0])]
    s = start(ds, env + srv, 60)
    time.sleep(1)
    crc, cout = run(dc, env + p + [IP_A], 60)
    sout, _ = s.communicate(timeout=60)
    show("server", sout)
    show("client", cout)
    pat = r"^\S+\s+%d\s+=%d\s" % (iters, iters)
    t.check(s.returncode == 0 and crc == 0 and re.search(pat, sout, re.M) and
            re.search(pat, cout, re.M),
            "fi_pingpong -p verbs -e %s, %d x %d B, data checked (%s): both "
            "complete" % (ep, iters, size, where(ds, dc)))


def test_perftest(prog, ds, dc, iters=500):
    PORT[0] += 1
    p = ["-R", "-n", str(iters), "-p", str(PORT[0])]
    src, sout, crc, cout = pair(prog, p, p + [IP_A], ds, dc, port=PORT[0])
    t.check(src == 0 and crc == 0 and not ERR.search(sout + cout) and
            re.search(r"^\s*\d+\s+%d\s" % iters, sout + cout, re.M),
            "%s -R -n %d (%s): both exit 0 with results" % (prog, iters,
                                                            where(ds, dc)))


def test_qperf(ds, dc):
    PORT[0] += 1
    lp = ["-lp", str(PORT[0])]
    s = start(ds, ["qperf"] + lp, 120)
    time.sleep(1)
    # -to 30: qperf's 5 s for its messages is short for two busy-polling
    # processes and two daemons on this machine's 2 cores
    rc, out = run(dc, ["qperf"] + lp + ["-cm1", "-to", "30", "-t", "2", IP_A, "rc_bw",
                                        "rc_lat", "rc_rdma_read_bw"], 120)
    # SIGTERM: timeout(1) passes it on to the qperf server (SIGKILL would
    # leave it holding the pipe)
    s.terminate()
    s.communicate(timeout=30)
    show("qperf", out)
    got = re.findall(r"^(rc_\w+):\s*\n\s*\w+\s*=\s*([\d.]+) (\S+)", out, re.M)
    t.check(rc == 0 and len(got) == 3 and all(float(v) > 0 for _, v, _u in got),
            "qperf -cm1 rc_bw rc_lat rc_rdma_read_bw (%s): %s" % (
                where(ds, dc), ", ".join("%s %s %s" % g for g in got)))


def test_rpma(ds, dc):
    """librpma 1.2 (Debian's), unmodified, through the drop-ins: a server
    and a client of our own (tests/integration/rpma_test.c) -- read to
    volatile memory, write + flush to visibility, a message, the server's
    MR in the private data; librpma registers a MAP_SHARED | MAP_ANONYMOUS
    page for each connection's flushes."""
    PORT[0] += 1
    src, sout, crc, cout = pair(RPMA_TEST, ["server", IP_A, str(PORT[0])],
                                ["client", IP_A, str(PORT[0])], ds, dc,
                                port=PORT[0])
    t.check(src == 0 and crc == 0 and "server: ok" in sout and
            "client: ok" in cout,
            "librpma (%s): READ to volatile memory, WRITE + flush, a message, "
            "private data; both ok (%d, %d)" % (where(ds, dc), src, crc))


def test_cm_cases(a, b):
    # private data both ways, the active side disconnects
    PORT[0] += 1
    port = str(PORT[0])
    src, sout, crc, cout = pair(CM_TEST, ["listen", port, "accept"],
                                ["connect", IP_A, port], a, b, port=PORT[0])
    t.check(src == 0 and crc == 0 and
            "CONNECT_REQUEST status 0 data hello-from-client" in sout and
            "ESTABLISHED status 0 data hello-from-server" in cout and
            "DISCONNECTED" in sout and "DISCONNECTED" in cout,
            "private data of the REQ and the REP arrive; the client's "
            "disconnect reaches the server")
    # the passive side disconnects
    PORT[0] += 1
    port = str(PORT[0])
    src, sout, crc, cout = pair(CM_TEST, ["listen", port, "accept-disconnect"],
                                ["connect", IP_A, port, "wait-disconnect"], a, b,
                                port=PORT[0])
    t.check(src == 0 and crc == 0 and "DISCONNECTED" in cout,
            "a disconnect from the passive side reaches the client")
    # a listener that rejects
    PORT[0] += 1
    port = str(PORT[0])
    src, sout, crc, cout = pair(CM_TEST, ["listen", port, "reject"],
                                ["connect", IP_A, port], a, b, port=PORT[0])
    t.check(src == 0 and crc == 2 and
            "REJECTED status 28 data go-away" in cout,
            "a listener's reject: REJECTED, reason 28 (consumer), its data")
    # nobody listens
    PORT[0] += 1
    rc, out = run(b, [CM_TEST, "connect", IP_A, str(PORT[0])])
    show("client", out)
    t.check(rc == 2 and "REJECTED status 8" in out,
            "no listener: REJECTED, reason 8 (invalid service ID)")
    # the listener dies once the request is in: its daemon rejects for it
    PORT[0] += 1
    port = str(PORT[0])
    s = start(a, [CM_TEST, "listen", port, "hold"])
    t.wait_for(lambda: t.cm_listening(a.prefix, PORT[0]), 20, "listener up")
    c = start(b, [CM_TEST, "connect", IP_A, port], 60)
    t.wait_for(lambda: any(" req_rcvd " in x for x in
                           t.telemetry(a.prefix, "/dprdma/cm/conns")), 20,
               "the request waiting at A")
    s.terminate()       # timeout(1) passes SIGTERM on: the listener dies
    s.communicate(timeout=30)
    cout, _ = c.communicate(timeout=60)
    show("client", cout)
    t.check(c.returncode == 2 and "REJECTED" in cout,
            "a listener killed mid-handshake: the client is rejected, not left "
            "waiting")
    # teardown under other threads, as the kernel's rdma_cm: rdma_destroy_id
    # waits for the ID's events to be acknowledged; a reader of a channel
    # destroyed under it stays blocked (not woken with an error)
    rc, out = run(b, [CM_TEST, "teardown", IP_A], 60)
    show("teardown", out)
    t.check(rc == 0 and "FAIL" not in out and
            "the reader of the destroyed channel is still blocked" in out,
            "rdma_destroy_id waits for its events' acks; a destroyed "
            "channel's reader stays blocked")
    # nobody at the address: the REQ is sent again, then UNREACHABLE
    t0 = time.time()
    rc, out = run(b, [CM_TEST, "connect", NOBODY, "7000"], 60)
    show("client", out)
    t.check(rc == 2 and "UNREACHABLE status -110" in out,
            "an address nobody answers: UNREACHABLE, -ETIMEDOUT, after %.1f s"
            % (time.time() - t0))


def cm_stats(d):
    return t.telemetry(d.prefix, "/dprdma/cm/stats")


def main():
    t.require_root_and_netns()
    for f in (os.path.join(DROPIN, "librdmacm.so.1"), CM_TEST, CM_RATE):
        if not os.path.exists(f):
            t.fail("%s missing: build first (librdmacm-dev)" % f)
    if os.path.exists(MEMIF):
        os.unlink(MEMIF)
    conf = "/tmp/dprt-cm-%d.conf" % PID
    with open(conf, "w") as f:
        f.write("[cm]\nresponse_timeout_ms = 300\nmax_retries = 3\n")
    t.run(["ip", "netns", "add", NS])
    a = b = None
    try:
        # the boxes' addresses on an interface of their own (a veth
        # pair; this kernel has no dummy links): libfabric's verbs
        # provider finds a device's addresses with getifaddrs() and skips
        # lo (FI_VERBS_IFACE=dpr0 names it)
        t.run(["ip", "-n", NS, "link", "add", "dpr0", "type", "veth",
               "peer", "name", "dpr1"])
        for ip in (IP_A, IP_B):
            t.run(["ip", "-n", NS, "addr", "add", ip + "/32", "dev", "dpr0"])
        t.run(["ip", "-n", NS, "addr", "add", "127.0.0.1/8", "dev", "lo"],
              check_rc=False)
        for dev in ("lo", "dpr1", "dpr0"):
            t.run(["ip", "-n", NS, "link", "set", dev, "up"])
        a = t.memif_daemon(PA, "server", IP_A + "/24", MEMIF, extra=["-f", conf])
        b = t.memif_daemon(PB, "client", IP_B + "/24", MEMIF, extra=["-f", conf])
        for ds, dc in ((a, b), (a, a)):
            test_rping(ds, dc)
            test_ucmatose(ds, dc)
            test_udaddy(ds, dc)
            test_fi_pingpong("dgram", ds, dc)
            test_fi_pingpong("msg", ds, dc)
            test_fi_pingpong("rdm", ds, dc)
            test_perftest("ib_send_bw", ds, dc)
            test_perftest("ib_read_bw", ds, dc)
            test_perftest("ib_write_lat", ds, dc)
            test_qperf(ds, dc)
            if os.path.exists(RPMA_TEST):
                test_rpma(ds, dc)
        # many IDs made before one event is read: 1,000 connections in one
        # program (a PD, two CQs and a QP each; thousands of events queue
        # up in its channel, which holds 160: dprdmad holds the rest back,
        # in order), more than the program answers within [cm]
        # response_timeout_ms (300 ms here): the REQs and REPs sent again
        # are answered with MRAs, as Linux does, and none times out
        t0 = time.time()
        test_ucmatose(a, b, conns=1000, msgs=1)
        t.log("ucmatose -c 1000: %.1f s, %.0f connections/s"
              % (time.time() - t0, 1000 / (time.time() - t0)))
        # and 2,000 at once from a program that answers its events at
        # once: each used, every one torn down
        test_cm_rate(a, b, 2000)
        test_cm_cases(a, b)
        sa, sb = cm_stats(a), cm_stats(b)
        t.log("A: %r" % sa)
        t.log("B: %r" % sb)
        # (a MAD sent again after [cm] response_timeout_ms can be answered
        # twice; the second answer finds the ID moved on and is counted in
        # mad_late -- 200 connections at once on 2 cores make the CM retry
        # -- never more often than the other side sent again)
        t.check(sa["mad_late"] <= sb["mads_retried"] and
                sb["mad_late"] <= sa["mads_retried"],
                "late answers (A %d, B %d) no more than MADs sent again "
                "(B %d, A %d)" % (sa["mad_late"], sb["mad_late"],
                                  sb["mads_retried"], sa["mads_retried"]))
        dropped = [k for k in ("mad_short", "mad_base_version", "mad_class",
                               "mad_class_version", "mad_method", "mad_attr",
                               "mad_unknown_id", "mad_wrong_state", "mads_rx_dropped",
                               "mads_tx_dropped", "events_lost")
                   if sa[k] or sb[k]]
        t.check(not dropped, "no MAD dropped, no event lost on either "
                "daemon (%s)" % (dropped or "none"))
        t.check(sa["timeouts"] == 0, "no connection of A's timed out (%d; "
                "B's REQ to nowhere is the one of B's)" % sa["timeouts"])
        t.check(sa["connections"] >= 2 * (1 + 8 + 4 + 3 + 3) + 2 and
                sa["sidr_req_rx"] >= 8 and
                sb["mads_retried"] >= 3 and sb["timeouts"] >= 1 and
                sa["req_no_listener"] >= 1,
                "A counted %d connections; B sent its REQ to nowhere again "
                "%d times" % (sa["connections"], sb["mads_retried"]))
        # time-wait ends; no ID outlives its program
        t.wait_for(lambda: not t.telemetry(PA, "/dprdma/cm/conns") and
                   not t.telemetry(PB, "/dprdma/cm/conns"), 30,
                   "every CM ID gone on both daemons")
        rcs = [d.stop() for d in (b, a)]
        a = b = None
        t.check(rcs == [0, 0], "both daemons stop cleanly (%r)" % rcs)
        # connections per source, on two new daemons: A takes 4 from an
        # address (a listener that answers nothing holds them); B's fifth
        # and sixth are rejected at once (REJ 3, no resources); once the
        # listener is gone, A takes 4 again
        with open(conf, "a") as f:
            f.write("connections_per_source = 4\n")
        a = t.memif_daemon(PA, "server", IP_A + "/24", MEMIF, extra=["-f", conf])
        b = t.memif_daemon(PB, "client", IP_B + "/24", MEMIF, extra=["-f", conf])
        PORT[0] += 1
        lst = start(a, [CM_TEST, "count", str(PORT[0]), "4"], 30)
        t.wait_for(lambda: t.cm_listening(a.prefix, PORT[0]), 20, "the listener up")
        cli = []
        for i in range(6):
            cli.append(start(b, [CM_TEST, "connect", IP_A, str(PORT[0])], 30))
            if i < 3:
                t.wait_for(lambda: cm_stats(a)["req_rx"] >= i + 1, 10, "REQ %d in" % (i + 1))
        outs = [c.communicate(timeout=60)[0] for c in cli]
        lout = lst.communicate(timeout=30)[0]
        show("listener", lout)
        rej3 = sum("REJECTED status 3" in o for o in outs)
        st = cm_stats(a)
        t.check(rej3 == 2 and "requests 4" in lout and st["req_rejected_source"] == 2,
                "[cm] connections_per_source = 4: of 6 connections from one "
                "address the listener was handed 4, 2 were rejected at once "
                "(REJECTED status 3: %d; req_rejected_source %d)"
                % (rej3, st["req_rejected_source"]))
        t.wait_for(lambda: any("connections_per_source" in x for x in a.lines), 10,
                   "A's log to name connections_per_source")
        test_ucmatose(a, b, conns=4, msgs=2)
        t.check(cm_stats(a)["req_rejected_source"] == 2,
                "the source's connections released with their IDs: 4 more taken")
    finally:
        rcs = [d.stop() if d else 0 for d in (b, a)]
        t.run(["ip", "netns", "del", NS], check_rc=False)
        os.unlink(conf)
    t.check(rcs == [0, 0], "both daemons stop cleanly (%r)" % rcs)
    t.log("PASS")


if __name__ == "__main__":
    main()
