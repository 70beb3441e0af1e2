#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Interop with Linux Soft-RoCE: the kernel's rdma_rxe in a qemu guest
(tools/rxe-peer), running rdma-core's unmodified ibv_rc_pingpong, against
dprdmad's built-in client on net_af_packet on the guest's bridge. Both
roles: the guest as server (dprdmad sends first), then the guest as client
(dprdmad answers). Sizes below, at and above the path MTU (1024). The QP
information goes over TCP in ibv_rc_pingpong's own format
(tools/rxe-peer/rc-oob.py); the RoCEv2 frames are dprdma's.

Then through loss: 1% of dprdmad's frames dropped by its fault-injecting
adapter, and separately 1% of the guest's dropped by tc netem in the guest;
both must still complete, with retransmissions to show it. Every frame on
dprdmad's port in both directions is captured (pcapng, switched on at run
time) and checked by dprdma-pcap: no malformed frame, no bad ICRC.

Skipped (77) where qemu cannot run; with CI=true a skip where qemu is
installed is a failure."""

import json
import os
import re
import signal
import subprocess
import time

from rxepeer import GUEST, KIT, NS, OURS, boot, daemon as kit_daemon, kit, \
    cleanup, require_qemu, stop_clean, wire_check, t

PREFIX = "dprt-rxe-%d" % os.getpid()
SIZES = [64, 1024, 4096, 65536]
CAPTURE = "/tmp/dprt-rxe-%d.pcapng" % os.getpid()


def oob(mode, host, qpn, psn):
    return subprocess.Popen(["ip", "netns", "exec", NS, "/usr/bin/python3",
                             os.path.join(KIT, "rc-oob.py"), mode, "--host", host,
                             "--gid-ip", OURS, "--qpn", str(qpn), "--psn", str(psn),
                             "--timeout", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def guest_result(job):
    p = kit("peer-exec.sh", "-w", job, "-t", "120", "p1", check=False, timeout=200)
    return p.returncode, p.stdout


def wait_done(what):
    for _ in range(240):
        s = t.telemetry(PREFIX, "/dprdma/client/status")
        if not s["active"]:
            return s
        time.sleep(0.5)
    t.fail("%s: dprdmad's side did not finish: %r" % (what, s))


def one(size, guest_is_server, iters=10, label=""):
    what = "ibv_rc_pingpong -s %d -n %d, guest as %s%s" % (
        size, iters, "server" if guest_is_server else "client", label)
    c = t.telemetry(PREFIX, "/dprdma/client/setup,1,%d" % (4 << 20))
    cmd = "timeout 90 ibv_rc_pingpong -d rxe0 -g 1 -n %d -s %d" % (iters, size)
    if guest_is_server:
        job = kit("peer-exec.sh", "-b", "p1", cmd + " 2>&1").stdout.strip()
        # the server listens once it is up: retry the exchange until then
        for _ in range(30):
            o = oob("connect", GUEST, c["qpns"], c["psns"])
            out = o.communicate(timeout=90)[0]
            if o.returncode == 0:
                break
            time.sleep(1)
    else:
        o = oob("serve", "10.99.0.1", c["qpns"], c["psns"])
        time.sleep(0.5)
        job = kit("peer-exec.sh", "-b", "p1", cmd + " 10.99.0.1 2>&1").stdout.strip()
        out = o.communicate(timeout=120)[0]
    if o.returncode != 0:
        t.fail("%s: QP exchange failed: %s" % (what, out))
    g = json.loads(out.strip().splitlines()[-1])
    r = t.telemetry(PREFIX, "/dprdma/client/connect,0,%d,%d,%s" %
                    (g["qpn"], g["psn"], g["gid_ipv4"]))
    t.check(r["rc"] == 0, "%s: connected to guest QPN %d" % (what, g["qpn"]))
    r = t.telemetry(PREFIX, "/dprdma/client/pingpong,0,%d,%d,%d" %
                    (size, iters, 1 if guest_is_server else 0))
    s = wait_done(what)
    rc, text = guest_result(job)
    t.log(text)
    m = re.search(r"(\d+) iters in", text)
    t.check(rc == 0 and m and int(m.group(1)) == iters and
            "error" not in text.lower() and "Failed" not in text,
            "%s: the guest's ibv_rc_pingpong finished %d iterations" % (what, iters))
    t.check(s["completed"] == iters and s["recv_done"] == iters and
            s["errors"] == 0 and s["recv_bytes"] == iters * size,
            "%s: dprdmad sent and received %d messages of %d B" %
            (what, iters, size))


def main():
    require_qemu()
    d = None
    try:
        boot()
        d = daemon([])
        p = kit("peer-exec.sh", "p1", "ping -c 3 %s" % OURS, check=False)
        t.check(" 0% packet loss" in p.stdout, "the guest reaches dprdmad (ARP, ping)")
        r = t.telemetry(PREFIX, "/dprdma/capture/start,0," + CAPTURE)
        t.check(r is not None and r.get("capturing") == "yes", "capture on")
        for size in SIZES:
            one(size, True)
            one(size, False)
        wire_check(PREFIX, CAPTURE, 100)
        stop_clean(d)
        d = None

        # 1% of dprdmad's frames lost on the way out (its fault adapter)
        d = daemon(["--faults", "loss=0.01,seed=7"])
        for guest_is_server in (True, False):
            one(4096, guest_is_server, 100, ", 1% loss at dprdmad")
        fa = t.telemetry(PREFIX, "/dprdma/port/faults,0")
        t.check(fa["lost"] > 0, "dprdmad's adapter lost %d of %d frames"
                % (fa["lost"], fa["frames"]))
        d.stop(signal.SIGTERM)
        d = None

        # 1% of the guest's frames lost on the way out (tc netem in the guest)
        d = daemon([])
        kit("peer-exec.sh", "p1", "/sbin/tc qdisc add dev eth0 root netem loss 1%")
        for guest_is_server in (True, False):
            one(4096, guest_is_server, 100, ", 1% netem loss in the guest")
        q = kit("peer-exec.sh", "p1", "/sbin/tc -s qdisc show dev eth0", check=False)
        t.log(q.stdout)
        tr = t.telemetry(PREFIX, "/dprdma/transport/stats,0")
        t.check(tr["nak_seq_tx"] + tr["dup_request_rx"] + tr["out_of_seq_rx"] > 0,
                "the guest's losses showed at dprdmad (%d sequence NAKs, %d "
                "duplicates)" % (tr["nak_seq_tx"], tr["dup_request_rx"]))
        # rxe speaks IBA only: dprdmad asked its QP1 (DprdmaCaps), learnt
        # so, and went back N with it, never sending it a SACK
        peers = t.telemetry(PREFIX, "/dprdma/cm/peers")
        cm = t.telemetry(PREFIX, "/dprdma/cm/stats")
        t.log("peers %r; caps_get_tx %d caps_resp_rx %d caps_timeouts %d"
              % (peers, cm["caps_get_tx"], cm["caps_resp_rx"], cm["caps_timeouts"]))
        t.check(peers and all(" iba (" in x for x in peers) and
                tr["sack_tx"] == 0 and tr["sr_held"] == 0,
                "rxe is taken for IBA only (%s) and sees go-back-N: no SACK, "
                "nothing held" % ", ".join(peers))
        kit("peer-exec.sh", "p1", "/sbin/tc qdisc del dev eth0 root", check=False)
        stop_clean(d)
        d = None
    finally:
        cleanup(d, CAPTURE)
    t.log("PASS")


def daemon(extra):
    return kit_daemon(PREFIX, extra)


if __name__ == "__main__":
    main()
